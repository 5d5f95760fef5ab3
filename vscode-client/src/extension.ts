// bprop-lsp for VS Code: starts the bundled bprop-lsp language server (or an installed one) over stdio.
import * as vscode from 'vscode';
import { ChildProcess, spawn } from 'child_process';
import {
  CloseAction, ErrorAction, LanguageClient, LanguageClientOptions, RevealOutputChannelOn, ServerOptions,
} from 'vscode-languageclient/node';
import { resolveServerCommand, ServerCommand } from './server';
import { createTraceChannel } from './trace';
import { explicitSettings, initializationOptions, PROCESS_KEYS, SECTION, SERVER_KEYS } from './settings';
import { OPEN_RULE_DOC, openRuleDoc, routeCodeLink } from './ruleDocs';

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
/** LSP traffic, when bprop-lsp.trace.server is not "off" */
let trace: vscode.LogOutputChannel & vscode.Disposable;
let queue: Promise<void> = Promise.resolve();
let restartTimer: NodeJS.Timeout | undefined;
/** when the server died unasked, for the crash-loop guard */
const crashes: number[] = [];
const MAX_CRASHES = 5;
const CRASH_WINDOW_MS = 3 * 60 * 1000;

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
    traceOutputChannel: trace,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // {globalSettings, settings: [{workspace, ...}]}: only what the user set (see explicitSettings)
    initializationOptions,
    middleware: {
      // code links (BP001 in the Problems panel and hovers) open the rule's page through bprop-lsp.openRuleDoc:
      // the online page when reachable, else the one bundled with the server
      handleDiagnostics: (uri, diagnostics, next) => next(uri, diagnostics.map(routeCodeLink)),
      provideDiagnostics: async (document, previousResultId, token, next) => {
        const report = await next(document, previousResultId, token);
        if (report && report.kind === 'full') {
          report.items = report.items.map(routeCodeLink);
        }
        return report;
      },
      workspace: {
        // the server also asks for section "bprop-lsp"; answer with the explicitly set values only, so
        // VS Code's defaults never override the project's [tool.bprop-lsp] table
        configuration: async (params, token, next) => {
          const answer = await next(params, token);
          if (!Array.isArray(answer)) {
            return answer;
          }
          return params.items.map((item, i) => (item.section === SECTION
            ? explicitSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
            : answer[i]));
        },
      },
    },
    markdown: { isTrusted: false, supportHtml: false },
    errorHandler: {
      // A dead server often shows up first as a write error (EPIPE). vscode-languageclient's default
      // handler answers that with "shut down", and then never restarts; let the close decide instead.
      error: () => ({ action: ErrorAction.Continue, handled: true }),
      closed: () => {
        const now = Date.now();
        crashes.push(now);
        while (crashes.length && now - crashes[0] > CRASH_WINDOW_MS) {
          crashes.shift();
        }
        if (crashes.length > MAX_CRASHES) {
          return {
            action: CloseAction.DoNotRestart,
            message: `bprop-lsp: the server stopped ${crashes.length} times in 3 minutes; not restarting it. `
              + 'See "bprop-lsp: Show Logs", then run "bprop-lsp: Restart Server".',
          };
        }
        log.warn('bprop-lsp: the server stopped unexpectedly; restarting it');
        return { action: CloseAction.Restart, handled: true };
      },
    },
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
    crashes.length = 0;
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
  trace = createTraceChannel('bprop-lsp (trace)', SECTION);
  context.subscriptions.push(log, trace);
  context.subscriptions.push(
    vscode.commands.registerCommand('bprop-lsp.restart', () => restart(context)),
    vscode.commands.registerCommand('bprop-lsp.showLogs', () => log.show()),
    vscode.commands.registerCommand('bprop-lsp.fixAll', fixAll),
    vscode.commands.registerCommand(OPEN_RULE_DOC, (code?: unknown, href?: unknown) => openRuleDoc(context.extensionPath, log, code, href)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // Any bprop-lsp setting but trace.server (vscode-languageclient applies that one live) restarts the
      // server: interpreter/path pick the process, and a fresh server reads mode/select/ignore at initialize.
      // (The server also re-pulls them on workspace/didChangeConfiguration, but a restart is the behaviour
      // every server version -- including an installed one named by bprop-lsp.path -- honours.)
      if ([...PROCESS_KEYS, ...SERVER_KEYS].some((k) => e.affectsConfiguration(`${SECTION}.${k}`))) {
        if (restartTimer) {
          clearTimeout(restartTimer);
        }
        restartTimer = setTimeout(() => void restart(context), 250);
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void restart(context)),
    { dispose: () => void stopClient() },
  );
  // the Python extension's interpreter choice restarts the server (activating it can take a while: no await)
  const python = vscode.extensions.getExtension('ms-python.python');
  if (python) {
    python.activate().then((api) => {
      const ev = api?.environments?.onDidChangeActiveEnvironmentPath;
      if (typeof ev === 'function') {
        context.subscriptions.push(ev(() => void restart(context)));
      }
    }, (e) => log.warn(`bprop-lsp: Python extension not usable: ${e}`));
  }
  void restart(context);
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
