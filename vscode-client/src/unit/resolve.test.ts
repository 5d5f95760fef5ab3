// Unit tests of the program-setting resolver (src/resolve.ts), outside VS Code: `npm run test:unit`
// (node's test runner; test-in-vscode.sh runs it before the VS Code suite).
import { test } from 'node:test';
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { argvOf, expandVariables, findOnPath, isInside, programSetting } from '../resolve';

const HOME = '/home/me';
const WS = '/work/project';
const trusted = { trusted: true, home: HOME, workspaceFolder: WS };
const untrusted = { trusted: false, home: HOME, workspaceFolder: WS };

test('trusted: variables are expanded', () => {
  assert.strictEqual(expandVariables('${workspaceFolder}/.venv/bin/python', trusted), `${WS}/.venv/bin/python`);
  assert.strictEqual(expandVariables('${userHome}/py/bin/python', trusted), `${HOME}/py/bin/python`);
  assert.strictEqual(expandVariables('~/py/bin/python', trusted), `${HOME}/py/bin/python`);
});

test('untrusted: no variable is expanded', () => {
  for (const v of ['${workspaceFolder}/evil', '${userHome}/py', '~/py/bin/python', '${env:HOME}/x']) {
    assert.strictEqual(expandVariables(v, untrusted), v);
  }
});

test('trusted: the effective (workspace) value is used, expanded', () => {
  const r = programSetting('interpreter', ['/usr/bin/python3'], ['${workspaceFolder}/.venv/bin/python', '-X', 'utf8'], trusted);
  assert.deepStrictEqual(r, { argv: [`${WS}/.venv/bin/python`, '-X', 'utf8'] });
});

test('untrusted: only the user value counts, never the workspace one', () => {
  assert.deepStrictEqual(programSetting('path', undefined, ['/work/project/evil.sh'], untrusted), { argv: [] });
  assert.deepStrictEqual(programSetting('path', ['/opt/bprop/bin/bprop-lsp'], ['/work/project/evil.sh'], untrusted),
    { argv: ['/opt/bprop/bin/bprop-lsp'] });
});

test('untrusted: a user value with a variable is refused, not expanded', () => {
  for (const v of ['${workspaceFolder}/.venv/bin/python', '${userHome}/py/bin/python', '~/py/bin/python']) {
    const r = programSetting('interpreter', [v], [v], untrusted);
    assert.deepStrictEqual(r.argv, []);
    assert.match(r.problem ?? '', /variable/);
  }
});

test('untrusted: a relative user value is refused', () => {
  for (const v of ['python3', '.venv/bin/python', 'bin/bprop-lsp']) {
    const r = programSetting('interpreter', [v], [v], untrusted);
    assert.deepStrictEqual(r.argv, []);
    assert.match(r.problem ?? '', /absolute/);
  }
});

test('argvOf takes a list or one string and drops junk', () => {
  assert.deepStrictEqual(argvOf('/usr/bin/python3'), ['/usr/bin/python3']);
  assert.deepStrictEqual(argvOf(['/a', '', 3, '-I']), ['/a', '-I']);
  assert.deepStrictEqual(argvOf(''), []);
  assert.deepStrictEqual(argvOf(undefined), []);
  assert.deepStrictEqual(argvOf({ a: 1 }), []);
});

function tree(): { root: string; sys: string; ws: string; wsBin: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bprop-resolve-'));
  const sys = path.join(root, 'usr', 'bin');
  const ws = path.join(root, 'ws');
  const wsBin = path.join(ws, '.venv', 'bin');
  for (const d of [sys, wsBin]) {
    fs.mkdirSync(d, { recursive: true });
  }
  for (const d of [sys, wsBin, ws]) {
    fs.writeFileSync(path.join(d, 'python3'), '#!/bin/sh\n', { mode: 0o755 });
  }
  return { root, sys, ws, wsBin };
}

test('findOnPath: skips PATH entries inside a workspace folder', { skip: process.platform === 'win32' }, () => {
  const t = tree();
  const found = findOnPath('python3', { pathEnv: [t.wsBin, t.ws, t.sys].join(':'), workspaceFolders: [t.ws] });
  assert.strictEqual(found, path.join(t.sys, 'python3'));
  assert.strictEqual(findOnPath('python3', { pathEnv: [t.wsBin, t.ws].join(':'), workspaceFolders: [t.ws] }), undefined);
});

test('findOnPath: skips relative and empty PATH entries (they resolve against the cwd)', { skip: process.platform === 'win32' }, () => {
  const t = tree();
  const cwd = process.cwd();
  process.chdir(t.ws);  // the workspace's python3 is at ./python3 and .venv/bin/python3
  try {
    for (const pathEnv of ['.', '', '::', '.venv/bin', `.:${t.sys}`, `:${t.sys}`]) {
      const found = findOnPath('python3', { pathEnv, workspaceFolders: [] });
      assert.ok(found === undefined || found === path.join(t.sys, 'python3'), `${pathEnv} -> ${found}`);
    }
  } finally {
    process.chdir(cwd);
  }
});

test('findOnPath: an absolute name is kept, a relative path with a directory is refused', () => {
  assert.strictEqual(findOnPath('/usr/bin/python3', { pathEnv: '', workspaceFolders: [] }), '/usr/bin/python3');
  assert.strictEqual(findOnPath('./python3', { pathEnv: '/usr/bin', workspaceFolders: [] }), undefined);
  assert.strictEqual(findOnPath('.venv/bin/python', { pathEnv: '/usr/bin', workspaceFolders: [] }), undefined);
});

test('findOnPath: a non-executable file is not a program', { skip: process.platform === 'win32' }, () => {
  const t = tree();
  fs.writeFileSync(path.join(t.root, 'python9'), 'x', { mode: 0o644 });
  assert.strictEqual(findOnPath('python9', { pathEnv: t.root, workspaceFolders: [] }), undefined);
});

test('findOnPath: a PATH symlink into the workspace is skipped', { skip: process.platform === 'win32' }, () => {
  const t = tree();
  const link = path.join(t.root, 'links');
  fs.mkdirSync(link);
  fs.symlinkSync(path.join(t.wsBin, 'python3'), path.join(link, 'python3'));
  assert.strictEqual(findOnPath('python3', { pathEnv: [link, t.sys].join(':'), workspaceFolders: [t.ws] }), path.join(t.sys, 'python3'));
});

test('findOnPath: Windows names with PATHEXT, workspace skipped case-insensitively', { skip: process.platform !== 'win32' }, () => {
  const t = tree();
  fs.writeFileSync(path.join(t.sys, 'py.EXE'), 'MZ');
  fs.writeFileSync(path.join(t.ws, 'py.exe'), 'MZ');
  const found = findOnPath('py', { pathEnv: [t.ws.toUpperCase(), t.sys].join(';'), workspaceFolders: [t.ws], platform: 'win32', pathExt: '.COM;.EXE' });
  assert.ok(found && found.toLowerCase().endsWith(path.join('usr', 'bin', 'py.exe').toLowerCase()), String(found));
});

test('findOnPath: a workspace opened through a symlink is still the workspace', { skip: process.platform === 'win32' }, () => {
  // (as /tmp and /private/tmp on macOS: the PATH entry and the workspace folder name one folder differently)
  const t = tree();
  const wsLink = path.join(t.root, 'ws-link');
  fs.symlinkSync(t.ws, wsLink);
  const linkBin = path.join(wsLink, '.venv', 'bin');
  // the folder as opened is the link, PATH names the real folder ...
  assert.strictEqual(findOnPath('python3', { pathEnv: [t.wsBin, t.sys].join(':'), workspaceFolders: [wsLink] }), path.join(t.sys, 'python3'));
  // ... or the other way round
  assert.strictEqual(findOnPath('python3', { pathEnv: [linkBin, t.sys].join(':'), workspaceFolders: [t.ws] }), path.join(t.sys, 'python3'));
  assert.strictEqual(findOnPath('python3', { pathEnv: [linkBin].join(':'), workspaceFolders: [t.ws] }), undefined);
});

test('findOnPath: a PATH entry that is a symlink to a folder inside the workspace is skipped', { skip: process.platform === 'win32' }, () => {
  const t = tree();
  const binLink = path.join(t.root, 'bin-link');
  fs.symlinkSync(t.wsBin, binLink);  // the python3 in it is a plain file: only the folder is a link
  assert.strictEqual(findOnPath('python3', { pathEnv: [binLink, t.sys].join(':'), workspaceFolders: [t.ws] }), path.join(t.sys, 'python3'));
});

test('findOnPath: a venv python linking out of the workspace is still the workspace venv', { skip: process.platform === 'win32' }, () => {
  // .venv/bin/python3 -> /usr/bin/python3 runs with the venv's site-packages (its .pth files, even under -I)
  const t = tree();
  fs.rmSync(path.join(t.wsBin, 'python3'));
  fs.symlinkSync(path.join(t.sys, 'python3'), path.join(t.wsBin, 'python3'));
  const wsLink = path.join(t.root, 'ws-link');
  fs.symlinkSync(t.ws, wsLink);
  assert.strictEqual(findOnPath('python3', { pathEnv: [path.join(wsLink, '.venv', 'bin')].join(':'), workspaceFolders: [t.ws] }), undefined);
});

test('isInside: case is ignored on macOS and Windows, not on Linux', () => {
  assert.strictEqual(isInside('/Users/Me/Project/.venv/bin', '/users/me/project', false, 'darwin'), true);
  assert.strictEqual(isInside('/Users/Me/Project/.venv/bin', '/users/me/project', false, 'linux'), false);
  assert.strictEqual(isInside('C:\\Users\\Me\\Project\\.venv\\Scripts', 'c:\\users\\me\\PROJECT', true, 'win32'), true);
  assert.strictEqual(isInside('/home/me/project-other/bin', '/home/me/project', false, 'linux'), false);
  assert.strictEqual(isInside('/home/me/project', '/home/me/project', false, 'linux'), true);
});
