// Playwright smoke test of the real VS Code workbench (code-server 4.100.3 + Debian chromium) with the
// .vsix installed: the BP001 squiggle, its Problems-panel row, its code link opening the bundled rule page, and
// the quick fix applied through the UI (Ctrl+. then Enter) and saved. Screenshots go to OUT_DIR.
// usage: node ui-smoke.js BASE_URL WORKSPACE FILE OUT_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [, , base, folder, file, outDir] = process.argv;
const FIXED = 'def bprop(self, x, y, out, dout):';
fs.mkdirSync(outDir, { recursive: true });

(async () => {
  const t0 = Date.now();
  const lap = (m) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`);
  const shot = (page, name) => page.screenshot({ path: path.join(outDir, name) });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  page.on('pageerror', (e) => console.log('[pageerror]', e.message));
  let rc = 1;
  try {
    await page.goto(`${base}/?folder=${encodeURIComponent(folder)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
    lap('workbench loaded');
    await page.waitForTimeout(1500);

    // open the seed program through Quick Open
    await page.locator('.monaco-workbench').click({ position: { x: 640, y: 360 } }).catch(() => {});
    await page.keyboard.press('Control+P');
    await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 20000 });
    await page.keyboard.type(path.basename(file));
    await page.waitForSelector('.quick-input-list .monaco-list-row', { timeout: 20000 });
    await page.keyboard.press('Enter');
    await page.waitForSelector('.editor-instance .view-lines', { timeout: 20000 });
    lap(`${path.basename(file)} opened`);

    // BP001 is an error: a red squiggle
    await page.waitForSelector('.squiggly-error', { timeout: 60000 });
    lap('squiggle visible');

    // the Problems panel row
    await page.keyboard.press('Control+Shift+M');
    const row = page.locator('.markers-panel .monaco-list-row', { hasText: 'BP001' });
    await row.first().waitFor({ timeout: 20000 });
    const rowText = (await row.first().innerText()).replace(/\s+/g, ' ');
    lap(`Problems panel row: ${rowText}`);
    if (!/\[Ln 5, Col \d+\]/.test(rowText)) throw new Error(`Problems row is not on line 5: ${rowText}`);
    await shot(page, '1-diagnostic.png');

    // the row's code link (BP001) opens the rule page bundled in the extension (bprop-lsp.openRuleDoc)
    await row.first().locator('a', { hasText: 'BP001' }).first().click();
    const docTab = page.locator('.tabs-container .tab', { hasText: 'BP001.md' });
    await docTab.first().waitFor({ timeout: 20000 });
    lap(`code link opened: ${(await docTab.first().innerText()).replace(/\s+/g, ' ')}`);
    await page.waitForTimeout(1500);  // let the preview render for the screenshot
    await shot(page, '1b-rule-doc.png');
    await page.keyboard.press('Control+W');
    await docTab.first().waitFor({ state: 'detached', timeout: 10000 });

    // the quick fix: cursor on the def bprop line, inside the squiggle (the diagnostic's range), Ctrl+., pick the
    // fix, Enter
    // (inlay hints — `x ← x` — sit between the parameters on screen: match the line, not its whole text)
    await page.locator('.view-line', { hasText: /def\s+bprop\(self/ }).first().click();
    const squiggle = await page.locator('.squiggly-error').first().boundingBox();
    if (squiggle) await page.mouse.click(squiggle.x + squiggle.width / 2, squiggle.y + squiggle.height / 2);
    await page.keyboard.press('Control+.');
    const menu = page.locator('.action-widget .monaco-list-row.action');
    await menu.first().waitFor({ timeout: 20000 });
    const titles = (await menu.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    lap(`code action menu: ${titles.join(' | ')}`);
    const want = titles.findIndex((t) => /dout/i.test(t));
    if (want < 0) throw new Error('no quick fix mentioning dout');
    await shot(page, '2-quickfix.png');
    // the first action is focused; a mouse click is blocked by .context-view-pointerBlock, so use the keyboard
    for (let i = 0; i < want; i++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.locator('.view-line', { hasText: /def\s+bprop\(self.*\bdout\b/ }).first().waitFor({ timeout: 20000 });
    lap('quick fix applied in the editor');
    await page.keyboard.press('Control+S');
    for (let i = 0; i < 50 && !fs.readFileSync(file, 'utf8').includes(FIXED); i++) await page.waitForTimeout(200);
    if (!fs.readFileSync(file, 'utf8').includes(FIXED)) throw new Error('the fixed file was not saved');
    lap('saved to disk');
    await page.waitForSelector('.squiggly-error', { state: 'detached', timeout: 20000 });
    lap('squiggle gone');
    await shot(page, '3-fixed.png');
    rc = 0;
  } catch (e) {
    console.log('FAIL', e.message);
    await shot(page, 'fail.png').catch(() => {});
  } finally {
    await browser.close();
  }
  console.log(rc === 0 ? 'ui smoke: ok' : 'ui smoke: FAILED');
  process.exit(rc);
})().catch((e) => { console.error(e); process.exit(1); });
