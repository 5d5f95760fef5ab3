// `npm run package`: vsce package -> bprop-lsp.vsix. The Marketplace page and VS Code's extension view show the
// README from inside the .vsix, where ../docs/rules.md or images/quick-fix.png mean nothing, so its relative links
// must become absolute -- but only to an address that exists:
//   BPROP_REPO_URL  the repository's web address; the release workflow passes the repository it runs in, and
//                   the README's links and images are rewritten to it at BPROP_REPO_REF
//   BPROP_REPO_REF  the tag or commit the links name (default: v<package.json version>, the release tag)
// Without BPROP_REPO_URL (a local or CI build: the project has no public repository yet, and package.json names
// none) the packaged README keeps the text of each relative link without the link, and leaves relative images out.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const pkg = require('../package.json');

function baseUrls(env = process.env) {
  const url = env.BPROP_REPO_URL || (pkg.repository && pkg.repository.url) || '';
  if (!url) return null;
  const repo = url.replace(/\.git$/, '').replace(/\/+$/, '');
  const ref = env.BPROP_REPO_REF || `v${pkg.version}`;
  const dir = pkg.repository && pkg.repository.directory ? `/${pkg.repository.directory}` : '/vscode-client';
  return { repo, ref, content: `${repo}/blob/${ref}${dir}/`, images: `${repo}/raw/${ref}${dir}/` };
}

const LINK = /(!?)\[((?:[^\][]|!\[[^\][]*\]\([^)]*\))*)\]\(([^)\s]+)[^)]*\)/g;
const isRelative = (target) => !/^([a-z][a-z0-9+.-]*:|#|\/\/)/i.test(target);

// The README with no relative link or image left (for a build that knows no repository).
function unlinkRelative(text) {
  return text.replace(LINK, (all, bang, inner, target) => {
    if (!isRelative(target)) return all;
    return bang ? '' : inner;
  });
}

if (require.main === module) {
  const root = path.join(__dirname, '..');
  const urls = baseUrls();
  const vsce = require.resolve('@vscode/vsce/vsce');
  // vsce packs this copy as the extension's readme.md (README.md itself is in .vscodeignore)
  const packaged = path.join(root, 'README.packaged.md');
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  // (package.json names no repository: none exists yet; a release's links come from BPROP_REPO_URL)
  const args = [vsce, 'package', '-o', 'bprop-lsp.vsix', '--readme-path', path.basename(packaged), '--allow-missing-repository'];
  if (urls) {
    fs.writeFileSync(packaged, readme);
    args.push('--baseContentUrl', urls.content, '--baseImagesUrl', urls.images);
    console.log(`package: README links -> ${urls.content}, images -> ${urls.images}`);
  } else {
    fs.writeFileSync(packaged, unlinkRelative(readme));
    console.log('package: no repository known (BPROP_REPO_URL unset): relative README links kept as text, relative images left out');
  }
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  fs.rmSync(packaged, { force: true });
  process.exit(r.status ?? 1);
}

module.exports = { baseUrls, unlinkRelative, isRelative };
