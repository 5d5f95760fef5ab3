// vscode-languageclient 11 traces LSP traffic only when its trace channel's *log level* is Trace, and then
// uses `<id>.trace.server` for the verbosity. This channel makes `bprop-lsp.trace.server` alone enough:
// it reports log level Trace whenever the setting is not "off" and writes to a plain output channel.
import * as vscode from 'vscode';

export function createTraceChannel(name: string, section: string): vscode.LogOutputChannel & vscode.Disposable {
  const out = vscode.window.createOutputChannel(name);
  const changed = new vscode.EventEmitter<vscode.LogLevel>();
  const level = () => (vscode.workspace.getConfiguration(section).get<string>('trace.server', 'off') !== 'off'
    ? vscode.LogLevel.Trace : vscode.LogLevel.Off);
  let current = level();
  const sub = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration(`${section}.trace.server`) && level() !== current) {
      current = level();
      changed.fire(current);
    }
  });
  const line = (tag: string) => (message: string | Error, ...args: unknown[]) => {
    const text = message instanceof Error ? message.stack ?? message.message : message;
    out.appendLine(`${new Date().toISOString()} [${tag}] ${text}${args.length ? ' ' + args.map((a) => JSON.stringify(a)).join(' ') : ''}`);
  };
  return {
    name: out.name,
    get logLevel() { return current; },
    onDidChangeLogLevel: changed.event,
    trace: line('trace'),
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    append: (v: string) => out.append(v),
    appendLine: (v: string) => out.appendLine(v),
    replace: (v: string) => out.replace(v),
    clear: () => out.clear(),
    show: (a?: unknown, b?: boolean) => (typeof a === 'boolean' ? out.show(a) : out.show(a as vscode.ViewColumn | undefined, b)),
    hide: () => out.hide(),
    dispose: () => { sub.dispose(); changed.dispose(); out.dispose(); },
  };
}
