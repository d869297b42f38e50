// Load a prof-report flame graph in headless Chromium (Debian's, driven by
// playwright-core: no browser download), hover and click a frame, search.
// Usage: node svg-click.js FILE.svg FRAME_NAME BEFORE.png AFTER.png
// Prints one JSON object; exits 1 on a broken page.
'use strict';
const { chromium } = require('playwright-core');

(async () => {
  const [file, name, before, after] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto('file://' + file);
  await page.screenshot({ path: before });
  const sel = `g.frame[data-name="${name}"]`;
  const info = (s) => page.$$eval(s, (gs) => gs.map((g) => ({
    name: g.getAttribute('data-name'),
    w: +g.querySelector('rect').getAttribute('width'),
    x: +g.querySelector('rect').getAttribute('x'),
    shown: g.style.display !== 'none',
    text: g.querySelector('text').textContent,
  })));
  const frames0 = await info('g.frame');
  const target0 = (await info(sel)).sort((a, b) => b.w - a.w)[0];
  // the widest frame of that name
  const handles = await page.$$(sel);
  let widest = handles[0], ww = -1;
  for (const h of handles) {
    const w = +(await h.$eval('rect', (r) => r.getAttribute('width')));
    if (w > ww) { ww = w; widest = h; }
  }
  await widest.hover();
  const details = await page.$eval('#details', (d) => d.textContent);
  await widest.click();
  await page.waitForTimeout(200);
  const target1 = await widest.evaluate((g) => ({
    w: +g.querySelector('rect').getAttribute('width'),
    x: +g.querySelector('rect').getAttribute('x'),
    text: g.querySelector('text').textContent,
  }));
  const frames1 = await info('g.frame');
  await page.screenshot({ path: after });
  await page.evaluate(() => search('^' + 'func_b' + '$'));
  const matched = await page.$eval('#matched', (m) => m.textContent);
  await page.click('#unzoom');
  const frames2 = await info('g.frame');
  console.log(JSON.stringify({
    errors, details, matched,
    before: target0, after: target1,
    shown0: frames0.filter((f) => f.shown).length,
    shown1: frames1.filter((f) => f.shown).length,
    shown2: frames2.filter((f) => f.shown).length,
    fullWidth: +(await page.$eval('svg', (s) => s.getAttribute('data-width'))) - 20,
  }));
  await browser.close();
  process.exit(errors.length ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(1); });
