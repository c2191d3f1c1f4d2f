// Drives the lecture's browser page (`cargo xtask web`) in headless Chromium, opened from
// disk as a student would, and fails if:
//   - the page logs a console error, throws, or asks for anything but the file itself;
//   - for any of SETUPS random what-ifs (fixed seed), set through its controls or its
//     link, the page's tables (captions, headers, cells) differ from what
//     `lecture06 --format json` prints for the command the page offers to copy — run
//     through bash as copied — or the page shows a refusal other than the command line's
//     own message on standard error;
//   - a value the command line refuses is not refused on the page with the same line;
//   - a link does not reproduce its what-if (controls, command and tables);
//   - demo 3, run in its Web Worker, differs from the command line's.
// Prints the page's weight, its first render and each update's time (measured in this
// browser, on this machine: printed, never compared), and writes screenshots of the default
// page and of one what-if into OUT_DIR.
//
// Usage: NODE_PATH=…/node_modules node .ci/web-check.cjs PAGE LECTURE_BINARY OUT_DIR
'use strict';

const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { chromium } = require('playwright-core');

const [pagePath, binary, outDir] = process.argv.slice(2);
const SETUPS = 36;
const url = 'file://' + path.resolve(pagePath);
const failures = [];
const fail = (what) => { failures.push(what); console.log(`FAIL: ${what}`); };

// mulberry32: a fixed-seed generator, so every run tries the same setups.
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(349);
const pick = (xs) => xs[Math.floor(random() * xs.length)];

// The command line's answer to what the page offers to copy.
function cli(command) {
  const prefix = 'cargo run -p lecture06';
  if (!command.startsWith(prefix)) throw new Error(`not a lecture06 command: ${command}`);
  const rest = command.slice(prefix.length).replace(/^ -- /, ' ');
  try {
    const out = execFileSync('bash', ['-c', `"$LECTURE_BIN"${rest} --format json`], {
      env: { ...process.env, LECTURE_BIN: path.resolve(binary) }, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28,
    });
    return { json: JSON.parse(out.toString()) };
  } catch (e) {
    if (e.status === undefined) throw e;
    return { refused: e.stderr.toString().trim() };
  }
}

function cliTables(json) {
  const tables = [];
  for (const s of json.sections) {
    for (const b of s.blocks) {
      if (b.kind !== 'table') continue;
      const t = b.content;
      tables.push({
        id: t.id, caption: t.caption,
        headers: t.columns.map((c) => c.header),
        rows: t.rows.map((r) => r.map((c) => c.text)),
      });
    }
  }
  return tables;
}

// Runs in the page: its tables as the reader sees them.
function pageTables(root) {
  return [...document.querySelectorAll(`${root} figure.table`)].map((f) => ({
    id: f.id,
    caption: f.querySelector('figcaption').textContent,
    headers: [...f.querySelectorAll('thead th')].map((th) => th.textContent),
    rows: [...f.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
  }));
}

function same(label, pageSide, cliSide) {
  const a = JSON.stringify(pageSide);
  const b = JSON.stringify(cliSide);
  if (a === b) return true;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  fail(`${label}: the page and the command line differ at …${a.slice(Math.max(0, i - 80), i + 80)}… vs …${b.slice(Math.max(0, i - 80), i + 80)}…`);
  return false;
}

// A random what-if: a few flags, each with a value the command line may accept or refuse.
function randomSetup(setup) {
  const suggestions = new Map(setup.suggestions);
  const cards = suggestions.get('hw');
  const models = suggestions.get('target');
  const small = models.filter((m) => /(^|-)(0\.5B|1B|1\.5B|3B|7B|8B|1\.1B|2B|4B|9B)/i.test(m));
  const values = {
    hw: () => pick(cards),
    target: () => pick(random() < 0.7 ? small : models),
    draft: () => pick(small),
    alpha: () => pick(['0.5', '0.6', '0.7', '0.85', '0.9', '0.95', '1']),
    batch: () => pick(['1', '1,8', '1,8,32', '4,16,64,128', '2,256']),
    ctx: () => pick(['1024', '4096,32768', '8192,131072', '2048']),
    gamma: () => pick(['1', '2', '3', '5', '8']),
    tp: () => pick(['1', '2', '4', '8']),
    weights: () => pick(suggestions.get('weights')),
    kv: () => pick(suggestions.get('kv')),
    calibration: () => pick(suggestions.get('calibration')),
    engine: () => pick(suggestions.get('engine')),
    'draft-head': () => 'on',
    'overhead-target': () => pick(['300us', '0.5ms', '2ms']),
    'eff-bandwidth': () => pick(['0.6', '0.75', '0.9']),
  };
  const names = Object.keys(values);
  const chosen = {};
  const n = 1 + Math.floor(random() * 4);
  for (let k = 0; k < n; k++) {
    const name = pick(names);
    chosen[name] = values[name]();
  }
  const demos = pick([[1, 2, 5], [1], [2], [1, 2], [5, 1], [2, 5]]);
  return { chosen, demos };
}

function fragmentOf({ chosen, demos }, setup) {
  const parts = [];
  if (demos.slice().sort().join(',') !== '1,2,5') parts.push(`demo=${demos.slice().sort().join(',')}`);
  for (const f of setup.flags) {
    if (!(f.name in chosen)) continue;
    parts.push(f.switch ? f.name : `${f.name}=${encodeURIComponent(chosen[f.name])}`);
  }
  return parts.join('&');
}

async function ready(page) {
  await page.waitForSelector('body[data-ready=true]', { timeout: 120000 });
  await page.waitForFunction(() => window.lecturePage.lastAnswer !== null, null, { timeout: 120000 });
}

// The page's update times since the last call: what each change cost.
const changes = [];
async function collect(page) {
  const t = await page.evaluate(() => window.lecturePage.timings.splice(0));
  changes.push(...t.filter((u) => u.kind === 'change'));
}

async function compare(page, label) {
  await collect(page);
  const command = await page.textContent('#command');
  const refusedOnPage = await page.evaluate(() => {
    const box = document.getElementById('refused');
    return box.hidden ? null : box.textContent;
  });
  const answer = cli(command);
  if (answer.refused !== undefined) {
    if (refusedOnPage !== answer.refused) fail(`${label} (${command}): the command line says "${answer.refused}", the page "${refusedOnPage}"`);
    return 'refused';
  }
  if (refusedOnPage !== null) fail(`${label} (${command}): the page refuses ("${refusedOnPage}") what the command line runs`);
  same(`${label} (${command})`, await page.evaluate(pageTables, '#report'), cliTables(answer.json));
  return 'compared';
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') fail(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => fail(`page error: ${e.message}`));
  await context.route('**/*', (route) => {
    const asked = route.request().url().split('#')[0];
    if (asked === url || asked.startsWith('blob:')) return route.continue();
    fail(`the page asked for ${asked}`);
    return route.abort();
  });

  const weight = fs.statSync(pagePath).size;
  const started = Date.now();
  await page.goto(url);
  await ready(page);
  const first = await page.evaluate(() => window.lecturePage.firstRenderMs);
  const full = Date.now() - started;
  const setup = await page.evaluate(() => window.lecturePage.setup);
  fs.mkdirSync(outDir, { recursive: true });
  await page.screenshot({ path: path.join(outDir, 'web-default.png') });
  // Chinese text without missing glyphs: the fonts Chromium really draws the title, a
  // table caption and a control's label with (DevTools' CSS.getPlatformFontsForNode).
  const cdp = await context.newCDPSession(page);
  await cdp.send('DOM.enable');
  await cdp.send('CSS.enable');
  const { root } = await cdp.send('DOM.getDocument', { depth: -1 });
  for (const selector of ['h1', '#report figure.table figcaption', '#demos label', '#report h2']) {
    const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector });
    if (!nodeId) { fail(`no ${selector} on the page`); continue; }
    const { fonts } = await cdp.send('CSS.getPlatformFontsForNode', { nodeId });
    const names = fonts.map((f) => `${f.familyName} (${f.glyphCount})`).join(', ');
    if (!fonts.some((f) => /CJK|Han Sans|WenQuanYi|PingFang|YaHei/i.test(f.familyName))) {
      fail(`${selector} is drawn without a CJK font: ${names}`);
    }
    if (fonts.some((f) => /LastResort|Tofu/i.test(f.familyName))) fail(`${selector} has missing glyphs: ${names}`);
  }
  await compare(page, 'the default page');

  // Random what-ifs: odd ones typed into the controls, even ones opened as links.
  let counts = { compared: 0, refused: 0 };
  for (let k = 0; k < SETUPS; k++) {
    const s = randomSetup(setup);
    if (k % 2 === 0) {
      await page.goto(`${url}#${fragmentOf(s, setup)}`);
      await page.reload();
      await ready(page);
    } else {
      await page.click('#reset');
      for (const d of [1, 2, 5]) await page.setChecked(`#demo-${d}`, s.demos.includes(d));
      for (const [name, value] of Object.entries(s.chosen)) {
        const flag = setup.flags.find((f) => f.name === name);
        // A folded group opens as a reader would open it.
        const summary = `details:has(#flag-${name}):not([open]) > summary`;
        if (await page.$(summary)) await page.click(summary);
        if (flag.switch) await page.setChecked(`#flag-${name}`, true);
        else if (flag.choices.length) await page.selectOption(`#flag-${name}`, value);
        else await page.fill(`#flag-${name}`, value);
      }
    }
    counts[await compare(page, `setup ${k + 1}`)] += 1;
  }

  // A value the command line refuses, typed into its control.
  await page.goto(url);
  await page.reload();
  await ready(page);
  await page.fill('#flag-alpha', '1.5');
  const refusal = cli(await page.textContent('#command')).refused;
  const shown = await page.textContent('#refused');
  if (!refusal || shown !== refusal) fail(`--alpha 1.5: the command line says "${refusal}", the page "${shown}"`);
  if ((await page.getAttribute('#flag-alpha', 'aria-invalid')) !== 'true') fail('--alpha 1.5: the control is not marked invalid');

  // A link reproduces its what-if: the controls, the command and the tables.
  await page.click('#reset');
  await page.fill('#flag-hw', 'A100');
  await page.fill('#flag-batch', '1,16,64');
  await page.fill('#flag-weights', 'int4');
  await page.fill('#flag-alpha', '0.7');
  const link = page.url();
  const before = { command: await page.textContent('#command'), tables: await page.evaluate(pageTables, '#report') };
  await page.screenshot({ path: path.join(outDir, 'web-what-if.png') });
  // Printable: on paper the report stays and the controls go.
  await page.emulateMedia({ media: 'print' });
  const printed = await page.evaluate(() => [
    getComputedStyle(document.getElementById('controls')).display,
    document.querySelectorAll('#report figure.table').length,
  ]);
  if (printed[0] !== 'none' || printed[1] === 0) fail(`printed, the page shows controls ${printed[0]} and ${printed[1]} tables`);
  await page.pdf({ path: path.join(outDir, 'web-what-if.pdf'), format: 'A4' });
  await page.emulateMedia({ media: 'screen' });
  // From the keyboard: Tab reaches the controls, typing redraws.
  await page.focus('#flag-batch');
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.type('0.75');
  const typed = await page.textContent('#command');
  if (!typed.includes('--alpha 0.75')) fail(`typed --alpha 0.75 from the keyboard, the command is ${typed}`);
  const other = await context.newPage();
  await other.goto(link);
  await ready(other);
  const after = {
    command: await other.textContent('#command'),
    tables: await other.evaluate(pageTables, '#report'),
  };
  same(`the link ${link}`, after, before);
  if ((await other.inputValue('#flag-hw')) !== 'A100') fail('the link lost --hw');

  // Demo 3 in its Web Worker.
  await other.click('[data-run-demo="3"]');
  await other.waitForSelector('#job-3[data-done=true]', { timeout: 600000 });
  const workerFlags = await other.evaluate(() => {
    const f = JSON.parse(document.getElementById('job-3').dataset.flags);
    return f;
  });
  const demo3 = cli(`cargo run -p lecture06 -- ${workerFlags.map((w) => `'${w}'`).join(' ')}`);
  if (demo3.json) same('demo 3 in the worker', await other.evaluate(pageTables, '#job-3'), cliTables(demo3.json));
  else fail(`demo 3: the command line refused ${workerFlags.join(' ')}: ${demo3.refused}`);
  const workerTime = await other.textContent('#job-3 .job-head');

  // Update times: every change the page redrew after its first, full paint.
  await collect(page);
  const slowest = changes.slice().sort((a, b) => b.ms - a.ms).slice(0, 3);
  const steady = changes.map((u) => u.ms).sort((a, b) => a - b);
  const median = steady[Math.floor(steady.length / 2)];
  console.log(`page weight: ${(weight / 1e6).toFixed(2)} MB`);
  console.log(`first render (demos 1 and 2): ${first.toFixed(0)} ms after navigation; with demo 5 fitted: ${full} ms (measured)`);
  console.log(`updates (recompute demos and redraw): median ${median.toFixed(1)} ms, range ${steady[0].toFixed(1)}–${steady[steady.length - 1].toFixed(1)} ms over ${steady.length} changes (measured)`);
  console.log(`slowest updates: ${slowest.map((u) => `${u.ms.toFixed(0)} ms (${u.flags})`).join('; ')}`);
  console.log(`demo 3 in the worker: ${workerTime.trim()}`);
  console.log(`${SETUPS} random setups: ${counts.compared} compared table by table, ${counts.refused} refused with the command line's message`);
  await browser.close();
  if (failures.length) {
    console.log(`${failures.length} problem(s)`);
    process.exit(1);
  }
  console.log('the page agrees with the command line');
})().catch((e) => { console.error(e); process.exit(1); });
