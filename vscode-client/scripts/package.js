// `npm run package`: vsce package -> bprop-lsp.vsix, with the README's relative links and images rewritten to
// the repository at the released tag, so they resolve on the Marketplace page (which shows the README from
// the .vsix, where ../docs/rules.md or images/quick-fix.png mean nothing).
//   BPROP_REPO_URL  the repository's web address (default: package.json repository.url); the release
//                   workflow passes the repository it runs in
//   BPROP_REPO_REF  the tag or commit the links name (default: v<package.json version>, the release tag)
'use strict';
const path = require('path');
const { spawnSync } = require('child_process');
const pkg = require('../package.json');

function baseUrls(env = process.env) {
  const repo = (env.BPROP_REPO_URL || pkg.repository.url).replace(/\.git$/, '').replace(/\/+$/, '');
  const ref = env.BPROP_REPO_REF || `v${pkg.version}`;
  const dir = pkg.repository.directory ? `/${pkg.repository.directory}` : '';
  return { repo, ref, content: `${repo}/blob/${ref}${dir}/`, images: `${repo}/raw/${ref}${dir}/` };
}

if (require.main === module) {
  const urls = baseUrls();
  const vsce = require.resolve('@vscode/vsce/vsce');
  const args = [vsce, 'package', '-o', 'bprop-lsp.vsix', '--baseContentUrl', urls.content, '--baseImagesUrl', urls.images];
  console.log(`package: README links -> ${urls.content}, images -> ${urls.images}`);
  const r = spawnSync(process.execPath, args, { cwd: path.join(__dirname, '..'), stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

module.exports = { baseUrls };
