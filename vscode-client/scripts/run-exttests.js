// Run the extension's mocha suite inside code-server's real extension host (VS Code 1.100.3), driven by
// Playwright + Debian's chromium. The workbench loads the extension in development mode from EXT_DIR and
// runs TESTS_DIR/index.js; when the suite settles the extension host exits and the workbench reports the
// exit code through window.codeAutomationExit (the hook @vscode/test-web uses).
// usage: node run-exttests.js BASE_URL WORKSPACE EXT_DIR TESTS_DIR [FAIL_SCREENSHOT]
'use strict';
const util = require('util');
const { chromium } = require('playwright-core');

const [, , base, folder, extDir, testsDir, failShot] = process.argv;
const TIMEOUT = Number(process.env.BPROP_EXTTESTS_TIMEOUT_MS || 300000);

(async () => {
  const host = new URL(base).host;
  const payload = [
    ['extensionDevelopmentPath', `vscode-remote://${host}${extDir}`],
    ['extensionTestsPath', `vscode-remote://${host}${testsDir}`],
  ];
  const url = `${base}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  let code = 'no result';
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    let done;
    const exited = new Promise((r) => { done = r; });
    // the extension host's console: mocha's report plus workbench chatter, which is dropped
    const noise = /^(Ignoring fetching additional builtin extensions|Creating a socket|Resolving connection token|Resolved connection token|\[Service Worker\]|ChatSessionStore|Updating additional builtin extensions cache)/;
    await page.exposeFunction('codeAutomationLog', (type, args) => {
      const line = util.format(...(args || []));
      if (!noise.test(line)) console.log(line);
    });
    await page.exposeFunction('codeAutomationExit', (c) => done(c));
    if (process.env.BPROP_E2E_CONSOLE) {
      page.on('console', (m) => console.log('[page]', m.type(), m.text().slice(0, 300)));
    }
    page.on('pageerror', (e) => console.log('[pageerror]', e.message));
    await page.goto(url);
    let timer;
    code = await Promise.race([exited, new Promise((r) => { timer = setTimeout(() => r(`timeout after ${TIMEOUT} ms`), TIMEOUT); })]);
    clearTimeout(timer);
    if (code !== 0 && failShot) {
      await page.screenshot({ path: failShot }).catch(() => {});
    }
  } finally {
    await browser.close();
  }
  console.log(`extension tests exit code: ${code}`);
  process.exit(code === 0 ? 0 : 1);
})().catch((e) => { console.error(e); process.exit(1); });
