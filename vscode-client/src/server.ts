// Which program runs the language server.
import * as vscode from 'vscode';
import * as path from 'path';
import { execFile } from 'child_process';
import { executableSetting } from './settings';

export interface ServerCommand {
  command: string;
  args: string[];
  cwd: string;
  /** where the choice came from, for the logs */
  origin: string;
}

const MIN_PYTHON: [number, number] = [3, 10];

/** `major.minor` of a Python, or undefined if it does not run. */
function pythonVersion(argv: string[]): Promise<[number, number] | undefined> {
  return new Promise((resolve) => {
    execFile(argv[0], [...argv.slice(1), '-I', '-c', 'import sys; print("%d.%d" % sys.version_info[:2])'],
      { timeout: 15000 }, (err, stdout) => {
        const m = /^(\d+)\.(\d+)/.exec((stdout ?? '').trim());
        resolve(err || !m ? undefined : [Number(m[1]), Number(m[2])]);
      });
  });
}

const newEnough = (v: [number, number]) => v[0] > MIN_PYTHON[0] || (v[0] === MIN_PYTHON[0] && v[1] >= MIN_PYTHON[1]);

/** The Python extension's selected interpreter for this resource, if that extension is installed. */
async function selectedInterpreter(resource: vscode.Uri | undefined, log: vscode.LogOutputChannel): Promise<string[] | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) {
    return undefined;
  }
  try {
    const api = await ext.activate();
    const env = api?.environments?.getActiveEnvironmentPath?.(resource);
    if (env?.path) {
      const resolved = await api.environments.resolveEnvironment?.(env);
      const exe = resolved?.executable?.uri?.fsPath ?? env.path;
      return [exe];
    }
    const details = api?.settings?.getExecutionDetails?.(resource);
    if (details?.execCommand?.length) {
      return details.execCommand as string[];
    }
  } catch (e) {
    log.warn(`bprop-lsp: could not ask the Python extension for its interpreter: ${e}`);
  }
  return undefined;
}

export async function resolveServerCommand(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): Promise<ServerCommand | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const resource = folder?.uri;
  const cwd = folder?.uri.scheme === 'file' ? folder.uri.fsPath : context.extensionPath;

  // 1. an installed bprop-lsp named by bprop-lsp.path (user settings only in an untrusted workspace)
  const exe = executableSetting('path', resource);
  if (exe.length) {
    return { command: exe[0], args: [...exe.slice(1), 'serve'], cwd, origin: 'bprop-lsp.path' };
  }

  // 2. the bundled server on some Python >= 3.10
  const entry = path.join(context.extensionPath, 'bundled', 'tool', 'bprop_lsp_server.py');
  const candidates: Array<{ argv: string[]; origin: string }> = [];
  const configured = executableSetting('interpreter', resource);
  if (configured.length) {
    candidates.push({ argv: configured, origin: 'bprop-lsp.interpreter' });
  } else {
    // the Python extension's choice may come from workspace settings: use it in trusted workspaces only
    const selected = vscode.workspace.isTrusted ? await selectedInterpreter(resource, log) : undefined;
    if (selected) {
      candidates.push({ argv: selected, origin: "the Python extension's selected interpreter" });
    }
    for (const name of process.platform === 'win32' ? ['py', 'python'] : ['python3', 'python']) {
      candidates.push({ argv: [name], origin: `${name} on PATH` });
    }
  }
  for (const c of candidates) {
    const v = await pythonVersion(c.argv);
    if (!v) {
      log.info(`bprop-lsp: ${c.origin} (${c.argv.join(' ')}) does not run`);
      continue;
    }
    if (!newEnough(v)) {
      log.info(`bprop-lsp: ${c.origin} (${c.argv.join(' ')}) is Python ${v.join('.')}; the server needs >= ${MIN_PYTHON.join('.')}`);
      continue;
    }
    return { command: c.argv[0], args: [...c.argv.slice(1), '-I', entry], cwd, origin: `${c.origin}, Python ${v.join('.')}` };
  }
  const msg = configured.length
    ? `bprop-lsp: bprop-lsp.interpreter (${configured.join(' ')}) is not a Python >= ${MIN_PYTHON.join('.')}.`
    : `bprop-lsp: no Python >= ${MIN_PYTHON.join('.')} found (tried the Python extension's interpreter and python3 on PATH). Set bprop-lsp.interpreter.`;
  log.error(msg);
  void vscode.window.showErrorMessage(msg, 'Show Logs').then((pick) => pick && log.show());
  return undefined;
}
