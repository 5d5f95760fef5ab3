// Checks an unpacked .vsix (its extension/ folder): the icon is there and is a 128x128 PNG, the bundled rule
// pages are there, and every link and image of the packaged README is absolute (https) or an in-page anchor,
// and names a file that exists in this repository at the path the URL gives -- so the Marketplace page,
// which renders that README, has no broken relative link. Without a repository (BPROP_REPO_URL unset: no public
// one exists yet) the packaged README must hold no relative link at all (scripts/package.js drops them).
// usage: node scripts/check-vsix.js EXT_DIR        (test-in-vscode.sh runs it after `npm run package`)
'use strict';
const fs = require('fs');
const path = require('path');
const { baseUrls } = require('./package.js');

function check(extDir, repoRoot, urls = baseUrls()) {
  const problems = [];
  const manifest = JSON.parse(fs.readFileSync(path.join(extDir, 'package.json'), 'utf8'));
  const icon = manifest.icon && path.join(extDir, manifest.icon);
  if (!icon || !fs.existsSync(icon)) {
    problems.push(`icon ${manifest.icon} is not in the .vsix`);
  } else {
    const png = fs.readFileSync(icon);
    const ok = png.subarray(1, 4).toString() === 'PNG' && png.readUInt32BE(16) === 128 && png.readUInt32BE(20) === 128;
    if (!ok) problems.push(`icon ${manifest.icon} is not a 128x128 PNG`);
  }
  const rules = path.join(extDir, 'bundled', 'libs', 'bprop_lsp', 'docs', 'rules', 'BP001.md');
  if (!fs.existsSync(rules)) problems.push('the bundled rule pages (bprop_lsp/docs/rules) are not in the .vsix');

  const readmeName = fs.readdirSync(extDir).find((f) => f.toLowerCase() === 'readme.md');  // vsce writes readme.md
  if (!readmeName) {
    problems.push('no README in the .vsix');
    return { problems, links: [] };
  }
  const readme = fs.readFileSync(path.join(extDir, readmeName), 'utf8');
  const links = [...readme.matchAll(/!?\[(?:[^\]\[]|!\[[^\]\[]*\]\([^)]*\))*\]\(([^)\s]+)[^)]*\)/g)].map((m) => m[1]);
  links.push(...[...readme.matchAll(/<img[^>]+src=["']([^"']+)["']/g)].map((m) => m[1]));
  // With a repository (a release), the README's relative links were rewritten to it: there must be some.
  // Without one, no relative link may be left (package.js keeps their text only).
  if (urls && !links.length) problems.push('no link found in the packaged README (the pattern is wrong)');
  if (!urls && /\]\(([^)\s#][^)\s]*)\)/.test(readme.replace(/\]\((https:|mailto:)[^)]*\)/g, ''))) {
    problems.push('a relative link is left in the packaged README');
  }
  for (const link of links) {
    if (link.startsWith('#') || /^mailto:/.test(link)) continue;
    if (!/^https:\/\//.test(link)) {
      problems.push(`README link is not absolute https: ${link}`);
      continue;
    }
    const url = new URL(link);  // resolves ../ segments as a browser does
    if (!urls) continue;
    for (const kind of ['blob', 'raw']) {
      const prefix = `${urls.repo}/${kind}/${urls.ref}/`;
      if (url.href.startsWith(prefix)) {
        const rel = decodeURIComponent(url.pathname.slice(new URL(prefix).pathname.length));
        if (!fs.existsSync(path.join(repoRoot, rel))) problems.push(`README link ${link} names ${rel}, which is not in the repository`);
      }
    }
  }
  return { problems, links };
}

if (require.main === module) {
  const extDir = process.argv[2];
  const { problems, links } = check(extDir, path.resolve(__dirname, '..', '..'));
  for (const p of problems) console.error(`check-vsix: ${p}`);
  console.log(`check-vsix: ${links.length} README links checked, ${problems.length} problem(s)`);
  process.exit(problems.length ? 1 : 0);
}

module.exports = { check };
