// Runs only in an untrusted (restricted-mode) workspace: test-in-vscode.sh opens one whose
// .vscode/settings.json names programs in bprop-lsp.path and bprop-lsp.interpreter. None may run.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { BpropLspApi } from '../../extension';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('bprop-lsp in an untrusted workspace', function () {
  before(function () {
    if (vscode.workspace.isTrusted) {
      this.skip();
    }
  });

  it('never runs an executable named by workspace settings (untrusted)', async function () {
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const marker = path.join(folder, 'evil-ran');
    const uri = vscode.Uri.file(path.join(folder, 'seed.py'));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    const api = await vscode.extensions.getExtension<BpropLspApi>('bprop-lsp.bprop-lsp')!.activate();
    await api.ready();
    const cmd = api.serverCommand();
    assert.ok(cmd, 'a server command');
    assert.ok(!/bprop-lsp\.(path|interpreter)/.test(cmd.origin), `origin: ${cmd.origin}`);
    assert.ok(!cmd.command.includes('evil') && !cmd.args.some((a) => a.includes('evil')), JSON.stringify(cmd));
    // the interpreter was resolved to an absolute path outside the workspace, though PATH starts with the
    // workspace's bin/ (which has a python3) and "." (test-in-vscode.sh), and though the user settings name
    // ${workspaceFolder}/evil.sh (not expanded in an untrusted workspace)
    assert.ok(path.isAbsolute(cmd.command), cmd.command);
    const rel = path.relative(folder, cmd.command);
    assert.ok(rel.startsWith('..') || path.isAbsolute(rel), `${cmd.command} is inside the workspace`);
    const end = Date.now() + 30000;
    while (!vscode.languages.getDiagnostics(uri).some((d) => String(typeof d.code === 'object' ? d.code.value : d.code) === 'BP001')) {
      assert.ok(Date.now() < end, 'the bundled server reports BP001');
      await sleep(100);
    }
    assert.ok(!fs.existsSync(marker), 'the program named in the workspace settings ran');
  });
});
