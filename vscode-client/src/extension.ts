// bprop-lsp for VS Code: starts the bundled bprop-lsp language server (or an installed one) over stdio.
import * as vscode from 'vscode';
import { ChildProcess, spawn } from 'child_process';
import { LanguageClient, LanguageClientOptions, RevealOutputChannelOn, ServerOptions } from 'vscode-languageclient/node';
import { resolveServerCommand, ServerCommand } from './server';
import { readSettings, SECTION, RESTART_KEYS } from './settings';

export const FIX_ALL_KIND = vscode.CodeActionKind.SourceFixAll.append('bprop-lsp');

/** What activate() returns; the extension's tests use it (and so can other extensions). */
export interface BpropLspApi {
  /** pid of the running server process, if any */
  serverPid(): number | undefined;
  /** the argv the server was last started with */
  serverCommand(): ServerCommand | undefined;
  /** the running language client, if any */
  client(): LanguageClient | undefined;
  /** resolves once the current (re)start has finished */
  ready(): Promise<void>;
  restart(): Promise<void>;
}

let client: LanguageClient | undefined;
let serverProcess: ChildProcess | undefined;
let lastCommand: ServerCommand | undefined;
let log: vscode.LogOutputChannel;
let queue: Promise<void> = Promise.resolve();
let restartTimer: NodeJS.Timeout | undefined;

/** Serialize start/stop so quick successive setting changes never race. */
function enqueue(job: () => Promise<void>): Promise<void> {
  queue = queue.then(job, job).catch((e) => log.error(`bprop-lsp: ${e instanceof Error ? e.stack ?? e.message : e}`));
  return queue;
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (!c) {
    return;
  }
  try {
    await c.dispose(2000);
  } catch (e) {
    log.warn(`bprop-lsp: stopping the server: ${e}`);
  }
  if (serverProcess && serverProcess.exitCode === null && !serverProcess.killed) {
    serverProcess.kill();
  }
  serverProcess = undefined;
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const cmd = await resolveServerCommand(context, log);
  lastCommand = cmd;
  if (!cmd) {
    return;
  }
  log.info(`bprop-lsp: starting server: ${[cmd.command, ...cmd.args].join(' ')} (${cmd.origin})`);
  // spawn it ourselves (rather than ServerOptions.command) so the pid is known and the env is ours;
  // vscode-languageclient calls this again on every automatic restart after a crash.
  const serverOptions: ServerOptions = async () => {
    const proc = spawn(cmd.command, cmd.args, {
      cwd: cmd.cwd,
      env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8' },
      stdio: 'pipe',
    });
    serverProcess = proc;
    proc.on('error', (e) => log.error(`bprop-lsp: cannot run ${cmd.command}: ${e.message}`));
    proc.on('exit', (code, signal) => log.info(`bprop-lsp: server pid ${proc.pid} exited (code ${code}, signal ${signal})`));
    return proc;
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'python' },
      { scheme: 'untitled', language: 'python' },
      { scheme: 'vscode-notebook-cell', language: 'python' },
      { notebook: '*', language: 'python' },
    ],
    outputChannel: log,
    traceOutputChannel: log,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // the server accepts the plain shape {mode, select, ignore}; it also asks for section "bprop-lsp"
    // through workspace/configuration, which vscode-languageclient answers from the VS Code settings.
    initializationOptions: () => readSettings(vscode.workspace.workspaceFolders?.[0]?.uri),
    synchronize: { configurationSection: SECTION },
    markdown: { isTrusted: false, supportHtml: false },
  };
  const c = new LanguageClient(SECTION, 'bprop-lsp', serverOptions, clientOptions);
  client = c;
  try {
    await c.start();
    log.info(`bprop-lsp: server running (pid ${serverProcess?.pid})`);
  } catch (e) {
    log.error(`bprop-lsp: the server failed to start: ${e}`);
    void vscode.window
      .showErrorMessage(`bprop-lsp: the language server failed to start (${cmd.command}). See the logs.`, 'Show Logs')
      .then((pick) => pick && log.show());
  }
}

function restart(context: vscode.ExtensionContext): Promise<void> {
  return enqueue(async () => {
    await stopClient();
    await startClient(context);
  });
}

async function fixAll(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'python') {
    void vscode.window.showInformationMessage('bprop-lsp: open a Python file first.');
    return;
  }
  const doc = editor.document;
  const whole = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
  const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider', doc.uri, whole, FIX_ALL_KIND.value, 1);
  const action = (actions ?? []).find((a) => a.kind && FIX_ALL_KIND.contains(a.kind));
  if (!action) {
    void vscode.window.setStatusBarMessage('bprop-lsp: nothing to fix', 3000);
    return;
  }
  if (action.edit) {
    await vscode.workspace.applyEdit(action.edit);
  }
  if (action.command) {
    await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<BpropLspApi> {
  log = vscode.window.createOutputChannel('bprop-lsp', { log: true });
  context.subscriptions.push(log);
  context.subscriptions.push(
    vscode.commands.registerCommand('bprop-lsp.restart', () => restart(context)),
    vscode.commands.registerCommand('bprop-lsp.showLogs', () => log.show()),
    vscode.commands.registerCommand('bprop-lsp.fixAll', fixAll),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // the interpreter/path decide the process; mode/select/ignore are sent at initialize, so a restart
      // is the one behaviour every server version honours. trace.server is applied live by the client.
      if (RESTART_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`))) {
        if (restartTimer) {
          clearTimeout(restartTimer);
        }
        restartTimer = setTimeout(() => void restart(context), 250);
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void restart(context)),
    { dispose: () => void stopClient() },
  );
  const python = vscode.extensions.getExtension('ms-python.python');
  if (python) {
    try {
      const api = await python.activate();
      const ev = api?.environments?.onDidChangeActiveEnvironmentPath;
      if (ev) {
        context.subscriptions.push(ev(() => void restart(context)));
      }
    } catch (e) {
      log.warn(`bprop-lsp: Python extension not usable: ${e}`);
    }
  }
  await restart(context);
  return {
    serverPid: () => serverProcess?.pid,
    serverCommand: () => lastCommand,
    client: () => client,
    ready: () => queue,
    restart: () => restart(context),
  };
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
