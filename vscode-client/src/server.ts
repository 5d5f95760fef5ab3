// Which program runs the language server.
import * as vscode from 'vscode';
import * as path from 'path';
import { execFile } from 'child_process';
import { executableSetting } from './settings';
import { findOnPath } from './resolve';

export interface ServerCommand {
  command: string;
  args: string[];
  cwd: string;
  /** where the choice came from, for the logs */
  origin: string;
}

const MIN_PYTHON: [number, number] = [3, 10];

/** `major.minor` of a Python, or undefined if it does not run. `cwd` is never a workspace folder. */
function pythonVersion(argv: string[], cwd: string): Promise<[number, number] | undefined> {
  return new Promise((resolve) => {
    execFile(argv[0], [...argv.slice(1), '-I', '-c', 'import sys; print("%d.%d" % sys.version_info[:2])'],
      { timeout: 15000, cwd }, (err, stdout) => {
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
  // The server never runs in a workspace folder: whatever it (or a library it loads) might look up relative to
  // its working directory, or on a PATH holding `.` or an empty entry, would be the workspace's. It reads the
  // workspace through the folders the client names, not through its cwd.
  const cwd = context.extensionPath;

  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  // a bare program name is looked up on PATH by us (never in a workspace folder, never relative to the cwd)
  const absolute = (argv: string[]): string[] | undefined => {
    if (vscode.workspace.isTrusted && folder?.uri.scheme === 'file' && /[\\/]/.test(argv[0]) && !path.isAbsolute(argv[0])) {
      return [path.resolve(folder.uri.fsPath, argv[0]), ...argv.slice(1)];  // trusted: relative to the folder
    }
    const found = findOnPath(argv[0], { pathEnv: process.env.PATH ?? '', workspaceFolders: folders, pathExt: process.env.PATHEXT });
    return found ? [found, ...argv.slice(1)] : undefined;
  };

  // 1. an installed bprop-lsp named by bprop-lsp.path (user settings only in an untrusted workspace)
  const exeSetting = executableSetting('path', resource);
  if (exeSetting.problem) {
    log.warn(`bprop-lsp: ${exeSetting.problem}`);
  }
  if (exeSetting.argv.length) {
    const exe = absolute(exeSetting.argv);
    if (exe) {
      return { command: exe[0], args: [...exe.slice(1), 'serve'], cwd, origin: 'bprop-lsp.path' };
    }
    log.warn(`bprop-lsp: bprop-lsp.path (${exeSetting.argv[0]}) not found on PATH (outside the workspace); using the bundled server`);
  }

  // 2. the bundled server on some Python >= 3.10
  const entry = path.join(context.extensionPath, 'bundled', 'tool', 'bprop_lsp_server.py');
  const candidates: Array<{ argv: string[]; origin: string }> = [];
  const interpreterSetting = executableSetting('interpreter', resource);
  if (interpreterSetting.problem) {
    log.warn(`bprop-lsp: ${interpreterSetting.problem}`);
  }
  const configured = interpreterSetting.argv;
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
    const argv = absolute(c.argv);
    if (!argv) {
      log.info(`bprop-lsp: ${c.origin} (${c.argv[0]}) not found${path.isAbsolute(c.argv[0]) ? '' : ' on PATH outside the workspace folders'}`);
      continue;
    }
    c.argv = argv;
    const v = await pythonVersion(c.argv, context.extensionPath);
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
