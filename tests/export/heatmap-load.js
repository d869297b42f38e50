// The load time of a prof-report --heatmap page in headless Chromium
// (Debian's, driven by playwright-core): from navigation until the page's
// heatmap and its first flame graph (the whole recording) are drawn; then
// the time to draw the flame graph of the first half of the cells.
// Usage: node heatmap-load.js PAGE.html   -> "load_ms=N select_ms=N slots=N"
'use strict';
const { chromium } = require('playwright-core');

(async () => {
  const [file] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const t0 = Date.now();
  await page.goto('file://' + file, { waitUntil: 'load', timeout: 600000 });
  await page.waitForFunction(() => window.heatmap && window.heatmap.frames().length > 0, null, { timeout: 600000 });
  const load = Date.now() - t0;
  const r = await page.evaluate(() => {
    const t = performance.now();
    window.heatmap.select(0, Math.floor(NSLOTS / 2));
    return { ms: performance.now() - t, slots: NSLOTS };
  });
  console.log(`load_ms=${load} select_ms=${r.ms.toFixed(0)} slots=${r.slots} errors=${errors.length}`);
  await browser.close();
  process.exit(errors.length ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(1); });
