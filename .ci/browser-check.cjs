// Loads each page and SVG figure named on the command line in headless Chromium, as a
// reader's browser would, and fails if any of them:
//   - logs a console error or throws (page error);
//   - fails to load a resource, or asks for anything but the file itself (the handout
//     must be self-contained: no CDN, no web font);
//   - draws a figure smaller than 100 × 100 pixels, or one with no text;
//   - draws two labels on top of each other, or a label that runs off its figure
//     (measured with the fonts Chromium really uses, which the SVG tests cannot).
//   - prints to more A4 pages than it has demos (<section>s): each demo of a handout must
//     fit on its own page.
// Writes a PNG screenshot of each (full page) into OUT_DIR, and a PDF of each page as
// Chromium prints it.
//
// Usage: NODE_PATH=…/node_modules node .ci/browser-check.cjs OUT_DIR FILE…
// Needs playwright-core (no browser download: it drives Debian's /usr/bin/chromium, or
// $CHROMIUM).
'use strict';

const path = require('path');
const { chromium } = require('playwright-core');

// Run inside the page: what a reader would notice about its figures.
function inspect() {
  const root = document.documentElement;
  const svgs = root.tagName.toLowerCase() === 'svg' ? [root] : [...document.querySelectorAll('svg')];
  const problems = [];
  const overlap = (a, b) =>
    Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
    Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  svgs.forEach((svg, k) => {
    const name = svg.getAttribute('aria-label') || `figure ${k + 1}`;
    const frame = svg.getBoundingClientRect();
    if (frame.width < 100 || frame.height < 100) {
      problems.push(`${name}: drawn ${frame.width}×${frame.height} px`);
    }
    const texts = [...svg.querySelectorAll('text')]
      .filter((t) => t.textContent.trim() !== '')
      .map((t) => ({ text: t.textContent.trim(), box: t.getBoundingClientRect() }));
    if (texts.length === 0) problems.push(`${name}: no text at all`);
    for (const t of texts) {
      const b = t.box;
      if (b.left < frame.left - 1 || b.right > frame.right + 1 || b.top < frame.top - 1 || b.bottom > frame.bottom + 1) {
        problems.push(`${name}: "${t.text}" runs off the figure`);
      }
    }
    // Glyph boxes include the line's ascent and descent; a fifth of the smaller box
    // overlapping is two labels drawn on top of each other, not two neighbouring rows.
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const [a, b] = [texts[i].box, texts[j].box];
        const smaller = Math.min(a.width * a.height, b.width * b.height);
        if (smaller > 0 && overlap(a, b) > 0.2 * smaller) {
          problems.push(`${name}: "${texts[i].text}" overlaps "${texts[j].text}"`);
        }
      }
    }
  });
  return { figures: svgs.length, problems };
}

async function main() {
  const [outDir, ...files] = process.argv.slice(2);
  if (!outDir || files.length === 0) {
    console.error('usage: browser-check.cjs OUT_DIR FILE…');
    process.exit(2);
  }
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  let failed = 0;
  let figures = 0;
  for (const file of files) {
    const url = 'file://' + path.resolve(file);
    const isSvg = file.endsWith('.svg');
    const page = await browser.newPage({ viewport: { width: isSvg ? 960 : 1100, height: 900 } });
    const problems = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`failed to load ${r.url()}: ${r.failure() && r.failure().errorText}`));
    page.on('request', (r) => {
      if (r.url() !== url && !r.url().startsWith('data:')) problems.push(`loads from elsewhere: ${r.url()}`);
    });
    const response = await page.goto(url, { waitUntil: 'load' });
    if (response && !response.ok()) problems.push(`status ${response.status()}`);
    await page.evaluate(() => document.fonts.ready);
    const seen = await page.evaluate(inspect);
    problems.push(...seen.problems);
    figures += seen.figures;
    const stem = path.basename(path.dirname(file)) + '-' + path.basename(file).replace(/\.[a-z]+$/, '');
    if (isSvg) {
      const size = await page.evaluate(() => [document.documentElement.width.baseVal.value, document.documentElement.height.baseVal.value]);
      await page.setViewportSize({ width: Math.ceil(size[0]), height: Math.ceil(size[1]) });
    }
    // An SVG document has no scrolling box to measure: the viewport is its size already.
    await page.screenshot({ path: path.join(outDir, stem + '.png'), fullPage: !isSvg });
    let printed = '';
    if (!isSvg) {
      const pdf = await page.pdf({ path: path.join(outDir, stem + '.pdf'), format: 'A4', printBackground: true });
      const pages = (pdf.toString('latin1').match(/\/Type\s*\/Page(?!s)/g) || []).length;
      const demos = await page.evaluate(() => document.querySelectorAll('section').length);
      if (pages > demos) problems.push(`prints to ${pages} A4 pages for ${demos} demos`);
      printed = `, ${pages} A4 page${pages === 1 ? '' : 's'} for ${demos} demo${demos === 1 ? '' : 's'}`;
    }
    await page.close();
    if (problems.length > 0) {
      failed += 1;
      console.log(`FAIL ${file}`);
      for (const p of problems) console.log(`  ${p}`);
    } else {
      console.log(`ok   ${file} (${seen.figures} figure${seen.figures === 1 ? '' : 's'}${printed})`);
    }
  }
  await browser.close();
  console.log(`${figures} figures drawn; screenshots and printed pages in ${outDir}`);
  console.log(`browser: ${files.length - failed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(`browser-check: ${e.stack || e}`);
  process.exit(1);
});
