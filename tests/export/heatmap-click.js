// Load a prof-report --heatmap page in headless Chromium (Debian's, driven
// by playwright-core), select a range of cells with the mouse (press on the
// first cell, drag, release on the last), and read the flame graph the page
// drew for it; then search, and the differential view.
// Usage: node heatmap-click.js PAGE.html FROM_S TO_S SEARCH SHOT.png
//   FROM_S, TO_S: seconds from the page's origin (the first cell); the
//   cells of [FROM_S, TO_S) are selected by dragging.
// Prints one JSON object; exits 1 on a broken page.
'use strict';
const { chromium } = require('playwright-core');

(async () => {
  const [file, from, to, term, shot] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [], requests = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
  await page.goto('file://' + file);
  // where the cells of FROM_S and TO_S are on the canvas, from the page's
  // own layout constants
  const geo = await page.evaluate(([a, b]) => {
    const D = window.heatmap.data, per = 1000 / D.slice_ms;
    const s0 = Math.round(a * per), s1 = Math.max(s0, Math.round(b * per) - 1);
    const r = document.getElementById('heatmap').getBoundingClientRect();
    const cell = (s) => ({
      x: r.left + LEFT + Math.floor(s / ROWS) * CW + CW / 2,
      y: r.top + TOP + (s % ROWS) * CH + CH / 2,
    });
    return { s0, s1, p0: cell(s0), p1: cell(s1), nslots: NSLOTS };
  }, [+from, +to]);
  await page.mouse.move(geo.p0.x, geo.p0.y);
  await page.mouse.down();
  await page.mouse.move((geo.p0.x + geo.p1.x) / 2, (geo.p0.y + geo.p1.y) / 2, { steps: 4 });
  await page.mouse.move(geo.p1.x, geo.p1.y, { steps: 4 });
  await page.mouse.up();
  await page.waitForTimeout(100);
  const selection = await page.$eval('#selection', (e) => e.textContent);
  const frames = await page.evaluate(() => window.heatmap.frames());
  const hash = await page.evaluate(() => location.hash);
  await page.screenshot({ path: shot, fullPage: true });
  // search, typed into the box
  await page.fill('#searchbox', term);
  await page.click('#searchbtn');
  const matched = await page.$eval('#matched', (e) => e.textContent);
  // the differential view: the selection against the rest
  await page.check('#diff');
  await page.waitForTimeout(100);
  const diffFrames = await page.evaluate(() => window.heatmap.frames());
  // click a frame: zoom
  const zoomName = frames.filter((f) => f.name !== 'all').sort((a, b) => b.w - a.w)[0];
  await page.click('#searchbtn');
  console.log(JSON.stringify({ errors, requests, geo, selection, hash, frames, matched, diffFrames,
    widest: zoomName }));
  await browser.close();
  process.exit(errors.length ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(1); });
