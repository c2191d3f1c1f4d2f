// The page's script: controls in, flags out, the WebAssembly module's answer shown.
// It computes no number of the lecture: every table, figure and sentence comes from
// page_answer (web/lecture06/src/lib.rs), which runs the lecture's crates on the flags
// the controls say, exactly as `cargo run -p lecture06 -- FLAGS` would.
'use strict';

const DEMO_TITLES = {
  1: '演示 1：c 与最优 γ（批大小 1）',
  2: '演示 2：批大小 × 上下文',
  3: '演示 3：玩具模型上的草稿树',
  4: '演示 4：玩具模型上真跑投机解码',
  5: '演示 5：模型 vs 实测',
};
// Flags shown open; the rest sit in folded groups.
const FIRST = ['hw', 'target', 'draft', 'alpha', 'batch', 'ctx', 'gamma', 'tp', 'weights', 'kv', 'calibration', 'engine'];

const page = {
  setup: null,
  module: null,
  values: new Map(),   // flag name → text ('' = not given); a switch: 'on' or ''
  demos: new Set(),    // live demos shown
  timings: [],         // each update: { ms (compute and layout), kind: first, warm or change, flags }
  firstRenderMs: null,
  lastAnswer: null,
  warmed: new Set(),   // slow-first demos computed once already
  markup: new WeakMap(), // each shown section → the markup it was drawn from
};
window.lecturePage = page;

async function wasmModule() {
  const gz = Uint8Array.from(atob(WASM_GZIP_BASE64), (c) => c.charCodeAt(0));
  const stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'));
  const bytes = await new Response(stream).arrayBuffer();
  return WebAssembly.compile(bytes);
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') e.textContent = v;
    else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) e.append(c);
  return e;
}

function suggestionsFor(name) {
  const s = page.setup.suggestions.find(([flag]) => flag === name);
  return s ? s[1] : null;
}

function flagControl(flag) {
  const id = `flag-${flag.name}`;
  const box = el('div', { class: flag.switch ? 'flag switch' : 'flag', 'data-flag': flag.name });
  const helpId = `${id}-help`;
  const help = el('p', { class: 'help', id: helpId, text: flag.help });
  let input;
  if (flag.switch) {
    input = el('input', { type: 'checkbox', id, 'aria-describedby': helpId });
    box.append(input, ' ', el('label', { for: id, text: `--${flag.name}` }), help);
  } else if (flag.choices.length > 0) {
    input = el('select', { id, 'aria-describedby': helpId });
    input.append(el('option', { value: '', text: flag.default ? `（默认 ${flag.default}）` : '（不设）' }));
    for (const c of flag.choices) input.append(el('option', { value: c, text: c }));
    box.append(el('label', { for: id, text: `--${flag.name} ${flag.value_name}` }), input, help);
  } else {
    const list = suggestionsFor(flag.name);
    input = el('input', {
      type: 'text', id, 'aria-describedby': helpId, spellcheck: 'false',
      placeholder: flag.default ? `默认 ${flag.default}` : '不设',
      list: list ? `${id}-list` : null,
    });
    box.append(el('label', { for: id, text: `--${flag.name} ${flag.value_name}` }), input, help);
    if (list) {
      const dl = el('datalist', { id: `${id}-list` });
      for (const v of list) dl.append(el('option', { value: v }));
      box.append(dl);
    }
  }
  input.title = flag.long_help;
  input.dataset.flag = flag.name;
  return box;
}

function buildControls() {
  const demos = document.getElementById('demos');
  for (const d of page.setup.demos) {
    if (!d.live) continue;
    const id = `demo-${d.number}`;
    const box = el('input', { type: 'checkbox', id, 'data-demo': d.number });
    demos.append(el('label', { class: 'demo-choice', for: id }, box, ' ', DEMO_TITLES[d.number] || `演示 ${d.number}`));
  }
  for (const d of page.setup.demos) {
    if (d.live) continue;
    const button = el('button', { type: 'button', 'data-run-demo': d.number, text: `后台运行${DEMO_TITLES[d.number] || `演示 ${d.number}`}` });
    demos.append(el('div', { class: 'buttons' }, button));
    button.addEventListener('click', () => runInWorker(d.number));
  }
  const groups = document.getElementById('flag-groups');
  const first = el('fieldset', {}, el('legend', { text: '常用' }));
  groups.append(first);
  const byHeading = new Map();
  for (const flag of page.setup.flags) {
    const control = flagControl(flag);
    if (FIRST.includes(flag.name)) {
      first.append(control);
      continue;
    }
    const heading = flag.heading || '其他';
    if (!byHeading.has(heading)) {
      const d = el('details', {}, el('summary', { text: `更多：${heading}` }));
      byHeading.set(heading, d);
      groups.append(d);
    }
    byHeading.get(heading).append(control);
  }
  // FIRST's order, not --help's.
  const ordered = FIRST.map((n) => first.querySelector(`[data-flag="${n}"]`)).filter(Boolean);
  ordered.forEach((c) => first.append(c));
  document.getElementById('controls').addEventListener('input', onControl);
  document.getElementById('controls').addEventListener('change', onControl);
  document.getElementById('reset').addEventListener('click', () => { location.hash = ''; loadFragment(); update(); });
  document.getElementById('bigger').addEventListener('click', (e) => {
    const on = document.documentElement.classList.toggle('bigger');
    e.target.setAttribute('aria-pressed', String(on));
  });
  document.getElementById('copy').addEventListener('click', copyCommand);
}

function onControl(e) {
  const t = e.target;
  if (t.dataset.demo) {
    if (t.checked) page.demos.add(Number(t.dataset.demo)); else page.demos.delete(Number(t.dataset.demo));
  } else if (t.dataset.flag) {
    page.values.set(t.dataset.flag, t.type === 'checkbox' ? (t.checked ? 'on' : '') : t.value.trim());
  } else {
    return;
  }
  // Typing in a text box redraws as the reader types; the fragment follows.
  writeFragment();
  update();
}

function defaultDemos() {
  return page.setup.demos.filter((d) => d.live && d.shown).map((d) => d.number);
}

function liveDemoNumbers() {
  return page.setup.demos.filter((d) => d.live).map((d) => d.number);
}

// The flags the controls say, in --help's order, then the demos.
function flags(demos = [...page.demos].sort((a, b) => a - b), only = null) {
  const out = [];
  for (const flag of page.setup.flags) {
    const v = page.values.get(flag.name) || '';
    if (v === '' || (only && !only.includes(`--${flag.name}`))) continue;
    if (flag.switch) out.push(`--${flag.name}`); else out.push(`--${flag.name}`, v);
  }
  for (const d of demos) out.push('--demo', String(d));
  return out;
}

function writeFragment() {
  const parts = [];
  const demos = [...page.demos].sort((a, b) => a - b);
  if (demos.join(',') !== defaultDemos().join(',')) parts.push(`demo=${demos.join(',')}`);
  for (const flag of page.setup.flags) {
    const v = page.values.get(flag.name) || '';
    if (v === '') continue;
    parts.push(flag.switch ? encodeURIComponent(flag.name) : `${encodeURIComponent(flag.name)}=${encodeURIComponent(v)}`);
  }
  history.replaceState(null, '', parts.length ? `#${parts.join('&')}` : location.pathname + location.search);
}

function loadFragment() {
  page.values.clear();
  page.demos = new Set(defaultDemos());
  const known = new Map(page.setup.flags.map((f) => [f.name, f]));
  const unknown = [];
  for (const part of location.hash.replace(/^#/, '').split('&').filter(Boolean)) {
    const eq = part.indexOf('=');
    const key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
    if (key === 'demo') {
      page.demos = new Set(value.split(',').filter(Boolean).map(Number));
    } else if (known.has(key)) {
      page.values.set(key, known.get(key).switch ? 'on' : value);
    } else {
      unknown.push(key);
    }
  }
  for (const input of document.querySelectorAll('#controls [data-flag]')) {
    if (input.tagName === 'DIV') continue;
    const v = page.values.get(input.dataset.flag) || '';
    if (input.type === 'checkbox') input.checked = v === 'on'; else input.value = v;
  }
  for (const box of document.querySelectorAll('#controls [data-demo]')) {
    box.checked = page.demos.has(Number(box.dataset.demo));
  }
  // A flag in the link that the page does not know is said so, not dropped silently.
  page.unknownInLink = unknown;
}

function showRefusal(message) {
  const box = document.getElementById('refused');
  for (const bad of document.querySelectorAll('[aria-invalid=true]')) bad.removeAttribute('aria-invalid');
  if (!message) { box.hidden = true; box.textContent = ''; return; }
  box.hidden = false;
  box.textContent = message;
  const named = [...message.matchAll(/--([a-z0-9-]+)/g)].map((m) => m[1]);
  const flag = named.find((n) => page.values.get(n));
  const input = flag && document.querySelector(`#controls input[data-flag="${flag}"], #controls select[data-flag="${flag}"]`);
  if (input) input.setAttribute('aria-invalid', 'true');
}

function update(kind = 'change') {
  const t0 = performance.now();
  const argv = flags();
  let message = null;
  if (page.unknownInLink && page.unknownInLink.length) {
    message = `链接里有页面不认识的设置：${page.unknownInLink.join(', ')}（已忽略）`;
  }
  if (page.demos.size === 0) {
    document.getElementById('report').replaceChildren();
    document.getElementById('command').textContent = '';
    showRefusal(message || '请至少选一个演示。');
    return;
  }
  // A demo whose first run is slow (demo 5 fits its profiles once, then the module keeps
  // the fit) waits for the first paint of the others; the full answer follows ('warm').
  const waiting = page.setup.demos.filter((d) => d.slow_first && page.demos.has(d.number) && !page.warmed.has(d.number));
  const shown = kind !== 'warm' && waiting.length && waiting.length < page.demos.size
    ? [...page.demos].filter((n) => !waiting.some((d) => d.number === n)).sort((a, b) => a - b)
    : null;
  const asked = shown ? flags(shown) : argv;
  const answer = JSON.parse(wasm_bindgen.page_answer(JSON.stringify(asked)));
  if (shown) {
    setTimeout(() => update('warm'), 20);
  } else if (waiting.length && answer.kind === 'page') {
    // Computed for real (a refusal computes nothing): later changes are quick.
    waiting.forEach((d) => page.warmed.add(d.number));
    kind = 'warm';
  }
  page.lastAnswer = shown ? null : answer;
  document.getElementById('command').textContent = page.lastAnswer ? answer.command : '';
  const report = document.getElementById('report');
  if (answer.kind === 'page') {
    redraw(report, answer.html, shown ? waiting : []);
    showRefusal(message);
  } else {
    showRefusal(answer.message);
  }
  void report.offsetHeight; // lay the report out before the clock stops
  const ms = performance.now() - t0;
  page.timings.push({ ms, kind, flags: asked.join(' ') });
  for (const job of document.querySelectorAll('.job')) {
    job.classList.toggle('stale', job.dataset.flags !== JSON.stringify(flagsFor(Number(job.dataset.demo))));
  }
  document.getElementById('status').textContent = `已按当前设置重算并重绘（${ms.toFixed(1)} ms，本机浏览器实测）`;
  return ms;
}

// Puts the answer's sections into the report, replacing only those whose markup changed
// (demo 5's long tables and figures are the same for every what-if: redrawing them would
// cost more than computing all three demos). `pending` demos get a note in their place.
function redraw(report, html, pending) {
  const sections = html.split(/(?=<section id=")/).filter((s) => s.trim() !== '');
  const wanted = sections.map((markup) => ({ id: markup.match(/^<section id="([^"]*)"/)?.[1], markup }));
  for (const d of pending) {
    const id = `demo${d.number}`;
    const note = `<section id="${id}"><p class="note">（${DEMO_TITLES[d.number] || id}：第一次运行要拟合模型，约需两秒，马上就来……）</p></section>`;
    wanted.push({ id, markup: note });
  }
  wanted.sort((a, b) => Number(a.id.replace(/\D/g, '')) - Number(b.id.replace(/\D/g, '')));
  const have = new Map([...report.children].map((c) => [c.id, c]));
  let before = report.firstChild;
  const keep = new Set();
  for (const { id, markup } of wanted) {
    let node = have.get(id);
    const old = node && page.markup.get(node);
    if (old !== markup && !(old && redrawBlocks(node, old, markup))) {
      const fresh = document.createRange().createContextualFragment(markup).firstElementChild;
      if (node) node.replaceWith(fresh); else report.insertBefore(fresh, before);
      node = fresh;
    }
    page.markup.set(node, markup);
    keep.add(node);
    before = node.nextSibling;
  }
  for (const c of [...report.children]) if (!keep.has(c)) c.remove();
}

// A section's blocks, as the HTML renderer writes them: each top-level element of a
// <section> starts a line of its own (lecture_kit::render::html).
function blocks(markup) {
  const inner = markup.replace(/^<section[^>]*>\n?/, '').replace(/<\/section>\s*$/, '');
  return inner.split(/\n(?=<(?:h2|h3|p|figure|ol|nav)[ >])/).map((b) => b.trim()).filter((b) => b !== '');
}

// Redraws only the blocks of `section` that differ between `old` and `markup` (a what-if
// that only changes the note of flags a demo does not read leaves its tables alone).
// Returns false, changing nothing, when the blocks do not line up with the elements.
function redrawBlocks(section, old, markup) {
  const [was, now] = [blocks(old), blocks(markup)];
  const children = [...section.children];
  if (was.length !== children.length || markup.match(/^<section[^>]*>/)[0] !== old.match(/^<section[^>]*>/)[0]) return false;
  const fresh = (b) => document.createRange().createContextualFragment(b).firstElementChild;
  for (let i = 0; i < Math.max(was.length, now.length); i++) {
    if (i >= now.length) children[i].remove();
    else if (i >= was.length) section.append(fresh(now[i]));
    else if (was[i] !== now[i]) children[i].replaceWith(fresh(now[i]));
  }
  return true;
}

function flagsFor(demo) {
  const reads = page.setup.reads.find(([n]) => n === demo);
  return flags([demo], reads ? reads[1] : []);
}

function runInWorker(demo) {
  const argv = flagsFor(demo);
  const id = `job-${demo}`;
  let job = document.getElementById(id);
  if (job && job.worker) job.worker.terminate();
  const head = el('div', { class: 'job-head' }, el('strong', { text: DEMO_TITLES[demo] || `演示 ${demo}` }), ' ');
  const bar = el('progress', { 'aria-label': `${DEMO_TITLES[demo]} 运行中` });
  const clock = el('span', { text: ' 0 s' });
  const stop = el('button', { type: 'button', text: '停止' });
  head.append(bar, clock, ' ', stop);
  const body = el('div', {});
  const fresh = el('div', { class: 'job', id, 'data-demo': demo, 'data-flags': JSON.stringify(argv) }, head, body);
  if (job) job.replaceWith(fresh); else document.getElementById('background').append(fresh);
  job = fresh;
  const source = document.getElementById('glue').textContent + '\n' + document.getElementById('worker-source').textContent;
  const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));
  job.worker = worker;
  const started = performance.now();
  const tick = setInterval(() => { clock.textContent = ` ${((performance.now() - started) / 1000).toFixed(0)} s`; }, 500);
  const finish = () => { clearInterval(tick); worker.terminate(); job.worker = null; bar.remove(); stop.remove(); };
  stop.addEventListener('click', () => { finish(); clock.textContent = ' 已停止'; });
  worker.onmessage = (e) => {
    finish();
    const answer = e.data;
    clock.textContent = ` 用时 ${(answer.ms / 1000).toFixed(1)} s（本机浏览器实测）`;
    if (answer.kind === 'page') body.innerHTML = answer.html;
    else body.append(el('div', { role: 'alert', class: 'refused-inline', text: answer.message || answer.error }));
    job.dataset.done = 'true';
  };
  worker.onerror = (e) => { finish(); body.append(el('div', { role: 'alert', text: `后台出错：${e.message}` })); };
  worker.postMessage({ module: page.module, flags: argv });
}

async function copyCommand() {
  const text = document.getElementById('command').textContent;
  try {
    await navigator.clipboard.writeText(text);
    document.getElementById('status').textContent = '命令已复制。';
  } catch (_) {
    // A page opened from disk may not reach the clipboard: select the command instead.
    const range = document.createRange();
    range.selectNodeContents(document.getElementById('command'));
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    document.getElementById('status').textContent = '浏览器不让页面写剪贴板：命令已选中，按 Ctrl+C 复制。';
  }
}

async function boot() {
  try {
    page.module = await wasmModule();
    await wasm_bindgen({ module_or_path: page.module });
    page.setup = JSON.parse(wasm_bindgen.page_setup());
    document.getElementById('handout-style').textContent = page.setup.style;
    buildControls();
    loadFragment();
    window.addEventListener('hashchange', () => { loadFragment(); update(); });
    update('first');
    page.firstRenderMs = performance.now();
    document.body.dataset.ready = 'true';
  } catch (e) {
    document.getElementById('status').textContent = `页面载入失败：${e}`;
    throw e;
  }
}

boot();
