// Runs inside a real VS Code (code-server's extension host) against the packaged extension and the real server.
import * as assert from 'assert';
import * as path from 'path';
import * as vscode from 'vscode';
import type { BpropLspApi } from '../../extension';

const EXTENSION_ID = 'bprop-lsp.bprop-lsp';
const SEED = [
  'from mindspore import nn',
  'class MulAdd(nn.Cell):',
  '    def construct(self, x, y):',
  '        return 2 * x + y',
  '    def bprop(self, x, y, out):',
  '        return 2 * out, out',
  '',
].join('\n');
/** a second Cell whose bprop has an extra parameter: BP002 */
const EXTRA = [
  'class Extra(nn.Cell):',
  '    def construct(self, x):',
  '        return x',
  '    def bprop(self, x, y, out, dout):',
  '        return (dout,)',
  '',
].join('\n');
const FIXED_LINE = '    def bprop(self, x, y, out, dout):';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 20000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) {
      return v;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${ms} ms waiting for: ${what}`);
    }
    await sleep(100);
  }
}

const codeOf = (d: vscode.Diagnostic) => String(typeof d.code === 'object' ? d.code.value : d.code);
const bp001 = (uri: vscode.Uri) => vscode.languages.getDiagnostics(uri).filter((d) => codeOf(d) === 'BP001');

describe('bprop-lsp in a real VS Code', function () {
  let api: BpropLspApi;
  let doc: vscode.TextDocument;
  let uri: vscode.Uri;

  async function setText(text: string): Promise<void> {
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
    assert.ok(await vscode.workspace.applyEdit(edit), 'edit applied');
  }

  async function configure(key: string, value: unknown): Promise<void> {
    await vscode.workspace.getConfiguration('bprop-lsp').update(key, value, vscode.ConfigurationTarget.Workspace);
  }

  before(async function () {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'the tests need a workspace folder');
    uri = vscode.Uri.file(path.join(folder.uri.fsPath, 'seed.py'));
    await vscode.workspace.fs.writeFile(uri, Buffer.from(SEED));
    doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const ext = vscode.extensions.getExtension<BpropLspApi>(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is installed`);
    api = await ext.activate();
    await api.ready();
  });

  afterEach(async function () {
    await configure('ignore', undefined);
    await api.ready();
  });

  it('runs the bundled server from the extension', async function () {
    await waitFor('the language client running (see the bprop-lsp log in the artifacts)', () => api.client()?.isRunning());
    const cmd = api.serverCommand();
    assert.ok(cmd, 'a server command was found');
    assert.ok(cmd.args.some((a) => a.endsWith(path.join('bundled', 'tool', 'bprop_lsp_server.py'))), JSON.stringify(cmd));
    assert.ok(api.serverPid(), 'server process is running');
  });

  it('shows BP001 at the def bprop line of the seed program', async function () {
    const [d] = await waitFor('BP001 on seed.py', () => (bp001(uri).length ? bp001(uri) : undefined));
    assert.strictEqual(d.range.start.line, 4, `diagnostic on line ${d.range.start.line + 1}: ${d.message}`);
    assert.ok(doc.lineAt(4).text.includes('def bprop'), 'line 5 is the def bprop line');
  });

  it('quick fix turns it into def bprop(self, x, y, out, dout):', async function () {
    const [d] = await waitFor('BP001 on seed.py', () => (bp001(uri).length ? bp001(uri) : undefined));
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
      'vscode.executeCodeActionProvider', uri, d.range, vscode.CodeActionKind.QuickFix.value, 10);
    const fix = actions.find((a) => a.diagnostics?.some((x) => codeOf(x) === 'BP001') && a.edit)
      ?? actions.find((a) => a.kind && vscode.CodeActionKind.QuickFix.contains(a.kind) && a.edit);
    assert.ok(fix, `a BP001 quick fix is offered (got: ${actions.map((a) => a.title).join(' | ')})`);
    assert.ok(await vscode.workspace.applyEdit(fix.edit!), 'quick fix applied');
    assert.strictEqual(doc.lineAt(4).text, FIXED_LINE);
    await waitFor('BP001 gone after the fix', () => bp001(uri).length === 0);
  });

  it('fix all in file (bprop-lsp.fixAll command, source.fixAll.bprop-lsp)', async function () {
    const two = SEED + [
      'class Scale(nn.Cell):',
      '    def construct(self, x):',
      '        return 3 * x',
      '    def bprop(self, x, out):',
      '        return (3 * out,)',
      '',
    ].join('\n');
    await setText(two);
    await waitFor('two BP001 findings', () => bp001(uri).length === 2);
    await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('bprop-lsp.fixAll');
    await waitFor('both bprop signatures fixed', () => doc.lineAt(4).text === FIXED_LINE && doc.lineAt(9).text === '    def bprop(self, x, out, dout):'
      ? true : undefined, 10000);
    await waitFor('no BP001 left', () => bp001(uri).length === 0);
  });

  it('a setting change reaches the server (bprop-lsp.ignore: ["BP001"])', async function () {
    // a second Cell with a different finding (BP002) proves the server is alive and analysing with the
    // new setting: BP001 gone while BP002 is still reported
    await setText(SEED + EXTRA);
    const codes = () => vscode.languages.getDiagnostics(uri).map(codeOf).sort().join(',');
    await waitFor('BP001 and BP002 before the change', () => codes() === 'BP001,BP002');
    await configure('ignore', ['BP001']);
    await waitFor('BP001 ignored, BP002 still reported', () => codes() === 'BP002');
    await configure('ignore', undefined);
    await waitFor('BP001 back once the setting is removed', () => codes() === 'BP001,BP002');
  });

  it('the server restarts after being killed', async function () {
    await setText(SEED);
    await waitFor('BP001 on the seed', () => bp001(uri).length === 1);
    await api.ready();
    await waitFor('the client running', () => api.client()?.isRunning());
    const pid = api.serverPid();
    assert.ok(pid, 'server pid known');
    process.kill(pid, 'SIGKILL');
    const newPid = await waitFor('a new server process', () => { const p = api.serverPid(); return p && p !== pid ? p : undefined; });
    assert.notStrictEqual(newPid, pid);
    // the new server must be live: edit the file and see the finding move down one line
    await waitFor('the client running again', () => api.client()?.isRunning());
    await setText('# moved\n' + SEED);
    await waitFor('BP001 from the restarted server, on line 6', () => bp001(uri).some((d) => d.range.start.line === 5));
  });

  it('commands: bprop-lsp.restart starts a new server, bprop-lsp.showLogs opens the log', async function () {
    await vscode.window.showTextDocument(doc);
    await setText(SEED);
    await waitFor('BP001 on the seed', () => bp001(uri).length === 1);
    const pid = api.serverPid();
    await vscode.commands.executeCommand('bprop-lsp.restart');
    await api.ready();
    assert.ok(api.serverPid() && api.serverPid() !== pid, 'a new server process');
    await waitFor('BP001 from the restarted server', () => bp001(uri).length === 1);
    await vscode.commands.executeCommand('bprop-lsp.showLogs');
  });

  it("VS Code's defaults do not override the project's [tool.bprop-lsp] (pyproject.toml)", async function () {
    // only settings the user set are sent; a default `ignore: []` or `select: []` would override this table
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const proj = path.join(folder, 'proj');
    await vscode.workspace.fs.writeFile(vscode.Uri.file(path.join(proj, 'pyproject.toml')),
      Buffer.from('[tool.bprop-lsp]\nignore = ["BP001"]\n'));
    const other = vscode.Uri.file(path.join(proj, 'model.py'));
    await vscode.workspace.fs.writeFile(other, Buffer.from(SEED + EXTRA));
    const d2 = await vscode.workspace.openTextDocument(other);
    await vscode.window.showTextDocument(d2);
    const codes = () => vscode.languages.getDiagnostics(other).map(codeOf).sort().join(',');
    await waitFor('only BP002 (BP001 ignored by pyproject.toml)', () => codes() === 'BP002');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it('bprop-lsp.path runs an installed bprop-lsp instead of the bundled one', async function () {
    const exe = process.env.BPROP_TEST_BPROP_LSP;
    if (!exe || !vscode.workspace.isTrusted) {
      this.skip();   // needs an installed bprop-lsp; and in an untrusted workspace the setting is ignored
    }
    await vscode.window.showTextDocument(doc);
    await setText(SEED);
    await configure('path', [exe]);
    try {
      await waitFor('the server restarted with bprop-lsp.path', () => api.serverCommand()?.origin === 'bprop-lsp.path');
      assert.deepStrictEqual([api.serverCommand()!.command, ...api.serverCommand()!.args], [exe, 'serve']);
      await waitFor('BP001 from the installed server', () => bp001(uri).length === 1 && api.client()?.isRunning());
    } finally {
      await configure('path', undefined);
    }
    await waitFor('back on the bundled server', () => api.serverCommand()?.origin !== 'bprop-lsp.path' && api.client()?.isRunning());
  });

  it('checks Python cells of a Jupyter notebook', async function () {
    const folder = vscode.workspace.workspaceFolders![0];
    const nbUri = vscode.Uri.file(path.join(folder.uri.fsPath, 'seed.ipynb'));
    const cell = (source: string) => ({ cell_type: 'code', execution_count: null, metadata: {}, outputs: [], source });
    const nb = {
      cells: [cell('import numpy as np\n'), cell(SEED)],
      metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' },
        language_info: { name: 'python' } },
      nbformat: 4, nbformat_minor: 5,
    };
    await vscode.workspace.fs.writeFile(nbUri, Buffer.from(JSON.stringify(nb, null, 1)));
    const notebook = await vscode.workspace.openNotebookDocument(nbUri);
    await vscode.window.showNotebookDocument(notebook);
    const seedCell = notebook.cellAt(1).document;
    assert.strictEqual(seedCell.languageId, 'python');
    const [d] = await waitFor('BP001 in the notebook cell',
      () => { const ds = vscode.languages.getDiagnostics(seedCell.uri).filter((x) => codeOf(x) === 'BP001'); return ds.length ? ds : undefined; });
    assert.strictEqual(d.range.start.line, 4, 'on the def bprop line of the cell');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it("a finding's code link opens the rule page through bprop-lsp.openRuleDoc", async function () {
    await vscode.window.showTextDocument(doc);
    await setText(SEED);
    const [d] = await waitFor('BP001 on the seed', () => (bp001(uri).length ? bp001(uri) : undefined));
    assert.ok(typeof d.code === 'object', 'the diagnostic has a code link');
    const target = (d.code as { target: vscode.Uri }).target;
    assert.strictEqual(target.scheme, 'command');
    assert.strictEqual(target.path, 'bprop-lsp.openRuleDoc');
    const [code, href] = JSON.parse(decodeURIComponent(target.query));
    assert.strictEqual(code, 'BP001');
    // the server links the page bundled with it (no website yet): a valid file URI of an existing file
    assert.ok(/^file:\/\/\/.*\/bprop_lsp\/docs\/rules\/BP001\.md$/.test(href), href);
    // and the command opens that page
    const opened = await vscode.commands.executeCommand<vscode.Uri>('bprop-lsp.openRuleDoc', code, href);
    assert.ok(opened && opened.scheme === 'file' && opened.fsPath.endsWith(path.join('docs', 'rules', 'BP001.md')), String(opened));
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.window.showTextDocument(doc);
  });

  it('bprop-lsp.openRuleDoc falls back to the bundled page when the online one cannot be reached', async function () {
    // port 9 (discard) on the loopback: refused at once, like an offline machine
    const opened = await vscode.commands.executeCommand<vscode.Uri>('bprop-lsp.openRuleDoc', 'BP020', 'http://127.0.0.1:9/rules/BP020.md');
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    assert.ok(opened, 'a page was opened');
    assert.strictEqual(opened.fsPath, path.join(ext.extensionPath, 'bundled', 'libs', 'bprop_lsp', 'docs', 'rules', 'BP020.md'));
    const text = Buffer.from(await vscode.workspace.fs.readFile(opened)).toString();
    assert.ok(text.startsWith('## BP020 '), text.slice(0, 80));
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.window.showTextDocument(doc);
  });

  it('inlay hints are on by default and sent to the server as inlayHints.enable', async function () {
    assert.strictEqual(vscode.workspace.getConfiguration('bprop-lsp').get('inlayHints.enable'), true);
    const init = api.client()?.clientOptions.initializationOptions;
    const opts = (typeof init === 'function' ? init() : init) as { globalSettings: Record<string, unknown>; settings: Array<Record<string, unknown>> };
    assert.deepStrictEqual(opts.globalSettings.inlayHints, { enable: true });
    assert.ok(opts.settings.every((s) => JSON.stringify(s.inlayHints) === '{"enable":true}'), JSON.stringify(opts.settings));
    await configure('inlayHints.enable', false);
    try {
      await api.ready();
      await waitFor('the restarted client sends enable: false', () => {
        const i = api.client()?.clientOptions.initializationOptions;
        const o = (typeof i === 'function' ? i() : i) as { settings: Array<Record<string, unknown>> } | undefined;
        return o?.settings.every((s) => JSON.stringify(s.inlayHints) === '{"enable":false}');
      });
    } finally {
      await configure('inlayHints.enable', undefined);
    }
    await api.ready();
  });

  after(async function () {
    await setText(SEED);
    await doc.save();
  });
});
