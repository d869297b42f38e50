// Read a prof-report --speedscope file as speedscope does.
//  1. validate it against the JSON schema shipped in the speedscope package
//     (ajv), and sum its weights per profile and per function;
//  2. load it into the speedscope app itself (its release build, in Debian's
//     headless Chromium via playwright-core) through the file picker, and read
//     the Sandwich view's table (Total per symbol).
// Usage: node speedscope-check.js FILE.json SCREENSHOT.png  -> JSON on stdout
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');
const { chromium } = require('playwright-core');

(async () => {
  const [file, shot] = process.argv.slice(2);
  const release = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
  const schema = JSON.parse(fs.readFileSync(path.join(release, 'file-format-schema.json'), 'utf8'));
  const data = JSON.parse(fs.readFileSync(file, 'utf8'));
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(schema);
  const valid = validate(data);

  // totals straight from the file: per profile, and per function (once per sample)
  const total = {}, byFunc = {};
  let all = 0;
  for (const p of data.profiles) {
    let t = 0;
    p.samples.forEach((stack, i) => {
      const w = p.weights[i];
      t += w;
      for (const name of new Set(stack.map((f) => data.shared.frames[f].name)))
        byFunc[name] = (byFunc[name] || 0) + w;
    });
    total[p.name] = t;
    all += t;
  }

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  const errors = [], log = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => log.push(m.text()));
  await page.goto('file://' + path.join(release, 'index.html'));
  await page.setInputFiles('#file', file);
  await page.waitForFunction(() => document.title.endsWith(' - speedscope'), null, { timeout: 20000 });
  const title = await page.title();
  const failed = await page.evaluate(() => document.body.innerText.includes('Something went wrong'));
  await page.keyboard.press('3'); // Sandwich view: a table of symbols with Total and Self
  await page.waitForSelector('tr', { state: 'attached', timeout: 10000 });
  await page.waitForTimeout(300);
  const rows = await page.$$eval('tr', (trs) => trs.map((t) => t.innerText.split('\t').map((c) => c.trim())));
  const sandwich = {};
  for (const r of rows.slice(1)) {
    const m = /^([\d.,]+)/.exec(r[0]);
    if (m) sandwich[r[2]] = +m[1].replace(/,/g, '');
  }
  await page.screenshot({ path: shot });
  await browser.close();
  console.log(JSON.stringify({
    valid, schemaErrors: validate.errors, total, all, byFunc, title, failed, errors,
    imported: log.some((l) => l.includes('Importing as speedscope json file')),
    sandwich,
  }));
})().catch((e) => { console.error(e); process.exit(1); });
