// The page's script: controls in, flags out, the WebAssembly module's answer shown.
// It computes no number of the lecture: every table, figure, sentence and summary figure
// comes from page_answer and page_summary (web/lecture06/src/lib.rs), which run the
// lecture's crates on the flags the controls say, exactly as `cargo run -p lecture06 --
// FLAGS` would. They run in a Web Worker (worker.js): this thread only draws, so the page
// never freezes while a demo computes.
'use strict';

// Tasks over 50 ms on this thread (the check reads them: none after the first draw).
const LONG_TASKS = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) LONG_TASKS.push({ start: e.startTime, ms: e.duration });
  }).observe({ type: 'longtask', buffered: true });
} catch (_) { /* a browser without the Long Tasks API */ }

const DEMO_TITLES = {
  1: '演示 1：c 与最优 γ（批大小 1）',
  2: '演示 2：批大小 × 上下文',
  3: '演示 3：玩具模型上的草稿树',
  4: '演示 4：玩具模型上真跑投机解码',
  5: '演示 5：模型 vs 384 条实测（先拟合，约数秒）',
};
// Each flag's name on the page; the flag itself is shown beside it as a hint.
const LABELS = {
  hw: '加速卡', target: '目标模型', draft: '草稿模型', alpha: '接受率 α',
  batch: '批大小（列表，回车生效）', ctx: '上下文长度（列表，回车生效）', gamma: '草稿长度 γ（0 = 取最优）',
  tp: '张量并行卡数', weights: '权重精度', kv: 'KV 缓存精度', calibration: '校准方案', engine: '推理引擎',
  'eff-compute': '算力利用率', 'eff-bandwidth': '带宽利用率',
  'overhead-target': '目标模型每次前向的固定开销', 'overhead-draft': '草稿每步的固定开销',
  'prefill-tokens': '每步顺带预填充的 token 数', 'prefill-ctx': '预填充所见的前缀长度',
  'per-seq-layer-us': '每序列每层开销（µs）', overlap: '计算与访存的重叠比例',
  'verify-us-per-token': '每个验证 token 的额外开销（µs）', 'round-overhead-ms': '每轮固定开销（ms）',
  'round-overhead-per-seq-ms': '每轮每序列开销（ms）', 'fp8-bandwidth-factor': 'FP8 带宽系数',
  'fp8-compute-factor': 'FP8 算力系数', 'w8a16-bandwidth-factor': 'W8A16 带宽系数',
  'int4-dequant-ops': 'INT4 每权重反量化运算数', 'all-reduce-us': '一次 all-reduce 的延迟（µs）',
  'draft-head': '改用一层草稿头（EAGLE 式）', 'draft-cost': '草稿固定成本系数 c',
  'draft-kv-window': '自投机：草稿的 KV 窗口', 'draft-tp': '草稿占用的卡数', 'draft-layer-ms': '草稿每层耗时（ms）',
  tau: '实测接受长度 τ（树）', 'tree-nodes': '树的草稿节点数',
};
// Flags shown open, in this order; the rest sit in folded groups.
const FIRST = ['hw', 'target', 'draft', 'alpha', 'gamma', 'batch', 'ctx', 'tp', 'weights', 'kv', 'eff-compute', 'eff-bandwidth', 'calibration', 'engine'];
const GROUPS = [
  ['其他草稿', (n) => n.startsWith('draft') || n === 'overhead-draft'],
  ['实测的树', (n) => n === 'tau' || n === 'tree-nodes'],
  ['引擎的成本项', () => true],
];
// Sliders: [min, max, step]; a slider at its default position gives no flag until moved.
// γ's 0 is "the best γ" (no --gamma).
const SLIDERS = { alpha: [0.05, 1, 0.01], gamma: [0, 16, 1], 'eff-compute': [0.05, 1, 0.01], 'eff-bandwidth': [0.05, 1, 0.01] };
// Flags picked from a list (the catalogue's cards and models, the dtypes, …).
const PICKERS = ['hw', 'target', 'draft', 'weights', 'kv', 'calibration', 'engine'];

const page = {
  setup: null,
  module: null,
  worker: null,
  values: new Map(),   // flag name → text ('' = not given); a switch: 'on' or ''
  demos: new Set(),    // live demos shown
  timings: [],         // each redraw: { ms (change to laid-out page), computeMs, kind, flags }
  computations: 0,     // requests sent to the worker
  firstRenderMs: null,
  lastAnswer: null,
  warmed: new Set(),   // slow-first demos computed once already
  markup: new WeakMap(), // each shown section → the markup it was drawn from
  inflight: null,      // the request the worker is computing
  wanted: null,        // the newest change, waiting for the worker
  longTasks: LONG_TASKS,
  files: new Map(),    // a picked file's name → [flag, name, text]
  opening: null,       // a picked file the worker is reading
  drawing: false,      // an answer is being drawn, slice by slice
  nextShow: null,      // an answer that arrived while another was being drawn
  settled: () => !page.inflight && !page.wanted && !page.drawing && !page.nextShow,
};
window.lecturePage = page;

async function wasmModule() {
  // A plain loop: Uint8Array.from with a mapping function took 170–290 ms for the module.
  const text = atob(WASM_GZIP_BASE64);
  const gz = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) gz[i] = text.charCodeAt(i);
  const stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'));
  const bytes = await new Response(stream).arrayBuffer();
  return WebAssembly.compile(bytes);
}

function newWorker() {
  const source = document.getElementById('glue').textContent + '\n' + document.getElementById('worker-source').textContent;
  return new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));
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

function labelFor(flag, id) {
  const hint = flag.switch ? `--${flag.name}` : `--${flag.name} ${flag.value_name}`;
  return el('label', { for: id }, LABELS[flag.name] || flag.name, el('span', { class: 'hint', text: hint }));
}

function flagControl(flag) {
  const id = `flag-${flag.name}`;
  const box = el('div', { class: flag.switch ? 'flag switch' : 'flag', 'data-flag': flag.name });
  let input;
  if (flag.switch) {
    input = el('input', { type: 'checkbox', id });
    box.append(input, ' ', labelFor(flag, id));
  } else if (flag.choices.length > 0 || PICKERS.includes(flag.name)) {
    input = el('select', { id });
    input.append(el('option', { value: '', text: flag.default ? `（默认 ${flag.default}）` : '（不设）' }));
    for (const c of flag.choices.length ? flag.choices : suggestionsFor(flag.name) || []) input.append(el('option', { value: c, text: c }));
    box.append(labelFor(flag, id), input);
    const ext = { hw: '.toml', target: '.json', draft: '.json' }[flag.name];
    if (ext) {
      const file = el('input', { type: 'file', id: `${id}-file`, accept: ext, 'data-file-for': flag.name });
      const what = ext === '.toml' ? '打开自己的卡（TOML 文件）' : '打开模型的 config.json';
      box.append(el('label', { class: 'file', for: `${id}-file` }, `${what}：`, file));
    }
  } else if (SLIDERS[flag.name]) {
    const [min, max, step] = SLIDERS[flag.name];
    const rest = resting(flag);
    input = el('input', { type: 'text', id, spellcheck: 'false', inputmode: 'decimal', placeholder: rest === '' ? '最优' : `默认 ${rest}` });
    const range = el('input', { type: 'range', id: `${id}-slider`, min, max, step, 'data-slider-for': flag.name, 'aria-label': `${LABELS[flag.name]}（滑块）` });
    range.value = rest === '' ? min : rest;
    const reset = el('button', { type: 'button', 'data-reset': flag.name, text: '默认', title: `不设 --${flag.name}` });
    box.append(labelFor(flag, id), el('div', { class: 'slider' }, range, input, reset));
  } else {
    input = el('input', { type: 'text', id, spellcheck: 'false', placeholder: flag.default ? `默认 ${flag.default}` : '不设' });
    box.append(labelFor(flag, id), input);
  }
  box.title = flag.long_help || flag.help;
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
  const folded = GROUPS.map(([name]) => el('details', {}, el('summary', { text: `更多：${name}` })));
  for (const flag of page.setup.flags) {
    const control = flagControl(flag);
    if (FIRST.includes(flag.name)) first.append(control);
    else folded[GROUPS.findIndex(([, has]) => has(flag.name))].append(control);
  }
  folded.filter((d) => d.children.length > 1).forEach((d) => groups.append(d));
  // FIRST's order, not --help's.
  FIRST.map((n) => first.querySelector(`div[data-flag="${n}"]`)).filter(Boolean).forEach((c) => first.append(c));
  const form = document.getElementById('controls');
  form.addEventListener('submit', (e) => e.preventDefault());
  // A slider redraws as it moves (one computation at a time, the newest position wins);
  // a typed value when the reader presses Enter or leaves the box; a list, a picker or a
  // box when it changes. Nothing recomputes on a keystroke.
  form.addEventListener('input', (e) => { if (e.target.dataset.sliderFor) onSlider(e.target); });
  form.addEventListener('change', (e) => {
    if (e.target.dataset.fileFor) openFile(e.target);
    else if (!e.target.dataset.sliderFor) onControl(e.target);
  });
  form.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target.tagName === 'INPUT' && e.target.type === 'text') { e.preventDefault(); onControl(e.target); }
  });
  form.addEventListener('click', (e) => {
    const name = e.target.dataset && e.target.dataset.reset;
    if (!name) return;
    document.getElementById(`flag-${name}`).value = '';
    onControl(document.getElementById(`flag-${name}`));
  });
  document.getElementById('reset').addEventListener('click', () => { location.hash = ''; loadFragment(); update(); });
  document.getElementById('copy').addEventListener('click', copyCommand);
  const drawer = document.getElementById('drawer');
  const narrow = matchMedia('(max-width: 900px)');
  const foldControls = () => narrow.matches || document.documentElement.classList.contains('bigger');
  // On a phone, and in big type, the controls start folded above the report; on a wide
  // screen they stay open beside it.
  drawer.open = !foldControls();
  narrow.addEventListener('change', () => { drawer.open = !foldControls(); });
  // The button sits in the header, outside the drawer it folds.
  const bigger = document.getElementById('bigger');
  bigger.addEventListener('click', () => {
    const on = document.documentElement.classList.toggle('bigger');
    bigger.setAttribute('aria-pressed', String(on));
    drawer.open = !foldControls();
  });
}

// A card or a config.json from the reader's disk: read here, validated in the worker as
// the command line validates a file at that path, then picked like a catalogue name.
async function openFile(input) {
  const flag = input.dataset.fileFor;
  const file = input.files[0];
  if (!file) return;
  const text = await file.text();
  const { opened } = await new Promise((resolve) => {
    page.opening = resolve;
    page.worker.postMessage({ kind: 'open', module: page.module, flag, name: file.name, text });
  });
  input.value = '';
  if (opened.kind !== 'opened') { showRefusal(opened.message); return; }
  page.files.set(file.name, [flag, file.name, text]);
  const select = document.getElementById(`flag-${flag}`);
  if (![...select.options].some((o) => o.value === file.name)) select.append(el('option', { value: file.name, text: `${opened.name}（${file.name}）` }));
  select.value = file.name;
  onControl(select);
}

function onSlider(range) {
  const name = range.dataset.sliderFor;
  const text = document.getElementById(`flag-${name}`);
  text.value = name === 'gamma' && Number(range.value) === 0 ? '' : range.value;
  onControl(text);
}

function onControl(t) {
  if (t.dataset.demo) {
    const n = Number(t.dataset.demo);
    if (t.checked === page.demos.has(n)) return;
    if (t.checked) page.demos.add(n); else page.demos.delete(n);
  } else if (t.dataset.flag) {
    const v = t.type === 'checkbox' ? (t.checked ? 'on' : '') : t.value.trim();
    // The same value again (Enter, then blur) computes nothing.
    if ((page.values.get(t.dataset.flag) || '') === v) return;
    page.values.set(t.dataset.flag, v);
    syncSlider(t.dataset.flag);
  } else {
    return;
  }
  writeFragment();
  update();
}

// Where a flag's slider rests while the flag is not given: its default, or the module's
// resting value for one whose default depends on other flags ('' for γ: the best one).
function resting(flag) {
  const r = page.setup.resting.find(([name]) => name === flag.name);
  return flag.default || (r ? String(r[1]) : '');
}

function syncSlider(name) {
  const range = document.getElementById(`flag-${name}-slider`);
  if (!range) return;
  const rest = resting(page.setup.flags.find((f) => f.name === name));
  const v = page.values.get(name) || '';
  range.value = v !== '' && Number.isFinite(Number(v)) ? v : (rest === '' ? range.min : rest);
}

function defaultDemos() {
  return page.setup.demos.filter((d) => d.live && d.shown).map((d) => d.number);
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
    if (input.type === 'checkbox') input.checked = v === 'on';
    else if (input.tagName === 'SELECT') {
      // A value the list does not have (a path in a link) gets an option of its own.
      if (v !== '' && ![...input.options].some((o) => o.value === v)) input.append(el('option', { value: v, text: v }));
      input.value = v;
    } else input.value = v;
    syncSlider(input.dataset.flag);
  }
  for (const box of document.querySelectorAll('#controls [data-demo]')) {
    box.checked = page.demos.has(Number(box.dataset.demo));
  }
  // A flag in the link that the page does not know is said so, not dropped silently.
  page.unknownInLink = unknown;
}

function showRefusal(message, stale = false) {
  const box = document.getElementById('refused');
  for (const bad of document.querySelectorAll('[aria-invalid=true]')) bad.removeAttribute('aria-invalid');
  for (const view of ['report', 'summary']) document.getElementById(view).classList.toggle('stale-view', stale);
  if (!message) { box.hidden = true; box.textContent = ''; return; }
  box.hidden = false;
  box.textContent = message;
  const named = [...message.matchAll(/--([a-z0-9-]+)/g)].map((m) => m[1]);
  const flag = named.find((n) => page.values.get(n));
  const input = flag && document.querySelector(`#controls input[type=text][data-flag="${flag}"], #controls input[type=checkbox][data-flag="${flag}"], #controls select[data-flag="${flag}"]`);
  if (input) input.setAttribute('aria-invalid', 'true');
}

// A change: the newest wins. The worker computes one request at a time; a change made
// while it computes waits, and replaces any change that waited before it.
function update(kind = 'change') {
  const t0 = performance.now();
  if (page.demos.size === 0) {
    page.wanted = null;
    document.getElementById('report').replaceChildren();
    document.getElementById('command').textContent = '';
    showRefusal('请至少选一个演示。');
    return;
  }
  // A demo whose first run is slow (demo 5 fits its profiles once, then the module keeps
  // the fit) waits for the first paint of the others; the full answer follows ('warm').
  const waiting = page.setup.demos.filter((d) => d.slow_first && page.demos.has(d.number) && !page.warmed.has(d.number));
  const demos = [...page.demos].sort((a, b) => a - b);
  const first = waiting.length && waiting.length < demos.length ? demos.filter((n) => !waiting.some((d) => d.number === n)) : null;
  page.wanted = { t0, kind, flags: flags(), first: first ? flags(first) : null, waiting, summary: flags([]) };
  setBusy();
  pump();
}

function pump() {
  if (page.inflight || !page.wanted) return;
  const w = page.wanted;
  page.wanted = null;
  const partial = w.first !== null;
  page.inflight = { ...w, partial, asked: partial ? w.first : w.flags };
  page.computations += 1;
  page.worker.postMessage({ module: page.module, flags: page.inflight.asked, summary: w.summary, files: [...page.files.values()] });
}

function setBusy() {
  document.body.dataset.state = page.settled() ? 'idle' : 'busy';
}

// Drawing in slices: each piece of work is small (one block of a section, 80 rows of a
// long table), and the queue yields to the browser every SLICE_MS, so no task on this
// thread runs long however big the answer (demo 5's is half a megabyte of markup).
const SLICE_MS = 10;
const drawQueue = [];
let draining = false;
function later(work) {
  drawQueue.push(work);
  if (!draining) { draining = true; setTimeout(drain, 0); }
}
function drain() {
  const start = performance.now();
  while (drawQueue.length && performance.now() - start < SLICE_MS) drawQueue.shift()();
  if (drawQueue.length) setTimeout(drain, 0); else draining = false;
}

function onAnswer(reply) {
  if (reply.opened) { page.opening(reply); page.opening = null; return; }
  const req = page.inflight;
  page.inflight = null;
  // A newer change waits: this answer is already out of date, compute that one instead.
  if (page.wanted) { pump(); setBusy(); return; }
  if (page.drawing) { page.nextShow = [req, reply]; pump(); setBusy(); return; }
  accept(req, reply);
}

function accept(req, reply) {
  show(req, reply);
  if (req.partial) {
    page.wanted = { ...req, first: null, kind: 'warm', t0: performance.now() };
  } else if (req.waiting.length && reply.answer.kind === 'page') {
    // Computed for real (a refusal computes nothing): later changes are quick.
    req.waiting.forEach((d) => page.warmed.add(d.number));
  }
  pump();
  setBusy();
}

function show(req, reply) {
  page.drawing = true;
  const answer = reply.answer;
  const report = document.getElementById('report');
  if (answer.kind === 'page') redraw(report, answer.html, req.partial ? req.waiting : []);
  // After every slice the answer queued, the long tables' last rows included.
  later(function finish() { if (drawQueue.length) later(finish); else shown(req, reply); });
}

// The answer drawn: the summary, the command, the refusal box and the status follow it.
function shown(req, reply) {
  const answer = reply.answer;
  let note = null;
  if (page.unknownInLink && page.unknownInLink.length) {
    note = `链接里有页面不认识的设置：${page.unknownInLink.join(', ')}（已忽略）`;
  }
  page.lastAnswer = req.partial ? null : answer;
  const report = document.getElementById('report');
  document.getElementById('command').textContent = req.partial ? '' : answer.command;
  const status = document.getElementById('status');
  if (answer.kind === 'page') {
    showSummary(reply.summary);
    showRefusal(note);
  } else {
    // Refused: nothing was recomputed. What stays on screen is the last accepted setup's,
    // greyed, and the box says what was refused.
    const message = answer.message || answer.error;
    showRefusal(message, report.children.length > 0);
  }
  for (const job of document.querySelectorAll('.job')) {
    job.classList.toggle('stale', job.dataset.flags !== JSON.stringify(flagsFor(Number(job.dataset.demo))));
  }
  document.getElementById('drawer-state').textContent = answer.kind === 'page' ? '' : '（有设置被拒绝）';
  // The clock stops once the browser has laid out and painted the frame that shows the
  // answer (its own task, not this one): after the next animation frame.
  requestAnimationFrame(() => setTimeout(() => {
    const ms = performance.now() - req.t0;
    page.timings.push({ ms, computeMs: reply.ms, kind: req.kind, flags: req.asked.join(' ') });
    status.textContent = answer.kind === 'page'
      ? `已按当前设置重算并重绘：${ms.toFixed(0)} ms（其中后台计算 ${reply.ms.toFixed(0)} ms，本机浏览器实测）`
      : '设置被拒绝（见红框），没有重算：下面变灰的是上一次被接受的设置的结果。';
    drawn();
  }, 0));
}

function drawn() {
  if (page.onFirstDraw) { page.onFirstDraw(); page.onFirstDraw = null; }
  page.drawing = false;
  if (page.nextShow) {
    const [r, a] = page.nextShow;
    page.nextShow = null;
    accept(r, a);
  }
  setBusy();
}

// The summary card: the module's figures, worded here (the page's words, not the
// lecture's: the lecture's sentences stay in its report).
function showSummary(s) {
  const box = document.getElementById('summary');
  if (!s || s.kind !== 'summary') { box.replaceChildren(); return; }
  const gb = (x) => `${x.text} GB`;
  const part = (cls, x) => el('span', { class: cls, style: `width:${Math.min(100, (100 * x.value) / s.capacity.value)}%` });
  const fits = s.fit === 'fits';
  const why = {
    target_weights: '目标模型的权重就放不下',
    draft_weights: '目标模型放得下，加上草稿模型的权重就放不下',
    kv: `权重放得下，但这个批的 KV 缓存放不下（此上下文最多批 ${s.max_batch}）`,
  }[s.fit];
  const cards = s.cards > 1 ? `${s.cards} 块 ${s.card}` : `一块 ${s.card}`;
  const memory = el('div', { class: 'tile', 'data-tile': 'memory' },
    el('h3', { text: '放得下吗？' }),
    el('div', { class: `big ${fits ? 'yes' : 'no'}`, text: fits ? '放得下' : '放不下' }),
    el('div', { class: 'membar', title: `共 ${gb(s.capacity)}` }, part('w', s.target_weights), part('d', s.draft_weights), part('k', s.kv)),
    el('p', { class: 'small' },
      el('span', { class: 'legend-dot', style: 'background:#0072b2' }), `目标权重 ${gb(s.target_weights)}`,
      el('span', { class: 'legend-dot', style: 'background:#56b4e9' }), `草稿 ${gb(s.draft_weights)}`,
      el('span', { class: 'legend-dot', style: 'background:#e69f00' }), `KV ${gb(s.kv)}`),
    el('p', { class: 'small', text: `合计 ${gb(s.used)}，占${cards}的 ${gb(s.capacity)} 的 ${s.used_fraction.text}${fits ? `；此上下文最多批 ${s.max_batch}` : `：${why}`}` }));
  const tiles = [memory];
  const at = `${s.target} + ${s.draft}，批 ${s.batch}、上下文 ${s.ctx}`;
  if (s.step) {
    const st = s.step;
    tiles.push(el('div', { class: 'tile', 'data-tile': 'step' },
      el('h3', { text: '一步多久？' }),
      el('div', { class: 'big', text: st.t_base.text }),
      el('p', { class: 'small', text: `普通 decode 一步（整批 ${s.batch} 条序列各出 1 个 token）` }),
      el('p', { class: 'small', text: `${st.tokens_per_s.text} token/s（整批）· ${at}` })));
    const gammaName = st.fixed_gamma ? '固定 γ' : '最优 γ';
    tiles.push(el('div', { class: 'tile', 'data-tile': 'verdict' },
      el('h3', { text: `投机吗？（α = ${s.alpha.text}）` }),
      el('div', { class: `big ${st.speculate && st.speedup.value >= 1 ? 'yes' : 'no'}`, text: st.speculate ? `${gammaName} = ${st.gamma}，${st.speedup.text}` : '不投机' }),
      el('p', { class: 'small', text: st.speculate
        ? `每秒 ${st.tokens_per_s_round.text} token（普通 decode ${st.tokens_per_s.text}）${st.speedup.value < 1 ? '：比不投机还慢' : ''}`
        : `任何 γ 都不比普通 decode 快：保持每秒 ${st.tokens_per_s.text} token` })));
  } else {
    tiles.push(el('div', { class: 'tile', 'data-tile': 'step' }, el('h3', { text: '一步多久？投机吗？' }),
      el('p', { class: 'small', text: `放不下就跑不起来：${at}。换更大的卡、加 --tp、或降低权重 / KV 精度试试。` })));
  }
  box.replaceChildren(...tiles);
}

// Markup to one element.
function parse(markup) {
  return document.createRange().createContextualFragment(markup).firstElementChild;
}

// A table of more than FOLD_ROWS rows shows SHOW_ROWS and a button for the rest; its
// other rows are added ROW_CHUNK at a time, in later slices.
const FOLD_ROWS = 24;
const SHOW_ROWS = 12;
const ROW_CHUNK = 80;
function buildBlock(markup) {
  const head = /^<figure class="table"[^]*?<tbody>\n?/.exec(markup);
  if (head) {
    const rest = markup.slice(head[0].length);
    const end = rest.lastIndexOf('</tbody>');
    const rows = rest.slice(0, end).split(/(?=<tr[ >])/).filter((r) => r.trim() !== '');
    if (rows.length > FOLD_ROWS) {
      const fig = parse(head[0] + rows.slice(0, SHOW_ROWS).join('') + rest.slice(end));
      const tbody = fig.querySelector('tbody');
      for (let i = SHOW_ROWS; i < rows.length; i += ROW_CHUNK) {
        const chunk = rows.slice(i, i + ROW_CHUNK).join('');
        later(() => tbody.insertAdjacentHTML('beforeend', chunk));
      }
      fig.classList.add('folded');
      const button = el('button', { type: 'button', class: 'fold', 'aria-expanded': 'false', text: `展开全部 ${rows.length} 行` });
      button.addEventListener('click', () => {
        const folded = fig.classList.toggle('folded');
        button.textContent = folded ? `展开全部 ${rows.length} 行` : '收起';
        button.setAttribute('aria-expanded', String(!folded));
      });
      fig.append(button);
      return fig;
    }
  }
  return parse(markup);
}

// Which blocks are a demo's list of sources (demo 5's 384 rows, each with its command):
// the paragraphs after one that starts "来源与设置", folded behind a button.
function sourceMarks(bs) {
  let inSources = false;
  return bs.map((b) => {
    if (/^<p>来源与设置/.test(b)) { inSources = true; return 'head'; }
    if (inSources && /^<p[ >]/.test(b)) return 'source';
    inSources = false;
    return null;
  });
}

function markSource(e, mark, section) {
  if (mark === 'source') e.classList.add('source');
  if (mark !== 'head') return;
  section.classList.add('sources-folded');
  const button = el('button', { type: 'button', class: 'fold', text: '展开' });
  button.addEventListener('click', () => {
    const folded = section.classList.toggle('sources-folded');
    button.textContent = folded ? '展开' : '收起';
  });
  e.append(' ', button);
}

// An empty section with `markup`'s opening tag.
function shell(markup) {
  return parse(`${markup.match(/^<section[^>]*>/)[0]}</section>`);
}

// Appends `markup`'s blocks to `section`, one slice each (a section in the page is laid
// out a block at a time, never all at once); `done` runs when all are in.
function fillSection(section, markup, done = () => {}) {
  const bs = blocks(markup);
  const marks = sourceMarks(bs);
  bs.forEach((b, i) => later(() => {
    const e = buildBlock(b);
    markSource(e, marks[i], section);
    section.append(e);
  }));
  later(() => done(section));
}

// Puts the answer's sections into the report, replacing only those whose markup changed
// (demo 5's long tables and figures are the same for every what-if: redrawing them would
// cost more than computing all three demos). `pending` demos get a note in their place.
// A new section is placed at once and filled slice by slice; a section whose blocks
// changed has them replaced slice by slice; one that no longer lines up is rebuilt apart
// and swapped in when complete.
function redraw(report, html, pending) {
  const sections = html.split(/(?=<section id=")/).filter((s) => s.trim() !== '');
  const wanted = sections.map((markup) => ({ id: markup.match(/^<section id="([^"]*)"/)?.[1], markup }));
  for (const d of pending) {
    const id = `demo${d.number}`;
    const note = `<section id="${id}"><p class="note">（${DEMO_TITLES[d.number] || id}：第一次运行要拟合模型，在后台计算，约需数秒，马上就来……）</p></section>`;
    wanted.push({ id, markup: note });
  }
  wanted.sort((a, b) => Number(a.id.replace(/\D/g, '')) - Number(b.id.replace(/\D/g, '')));
  const have = new Map([...report.children].map((c) => [c.id, c]));
  const plan = wanted.map(({ id, markup }) => {
    const node = have.get(id);
    return { markup, node, old: node && page.markup.get(node) };
  });
  let before = report.firstChild;
  const keep = new Set();
  for (const p of plan) {
    if (p.old !== p.markup && !(p.old && redrawBlocks(p.node, p.old, p.markup))) {
      if (p.node) {
        const was = p.node;
        fillSection(shell(p.markup), p.markup, (fresh) => { was.replaceWith(fresh); page.markup.set(fresh, p.markup); });
      } else {
        p.node = shell(p.markup);
        fillSection(p.node, p.markup);
      }
    }
    if (p.node !== before) report.insertBefore(p.node, before);
    keep.add(p.node);
    before = p.node.nextSibling;
    const node = p.node;
    later(() => { if (node.isConnected) page.markup.set(node, p.markup); });
  }
  for (const c of [...report.children]) if (!keep.has(c)) c.remove();
}

// A section's blocks, as the HTML renderer writes them: each top-level element of a
// <section> starts a line of its own (lecture_kit::render::html).
function blocks(markup) {
  const inner = markup.replace(/^<section[^>]*>\n?/, '').replace(/<\/section>\s*$/, '');
  return inner.split(/\n(?=<(?:h2|h3|p|figure|ol|nav)[ >])/).map((b) => b.trim()).filter((b) => b !== '');
}

// Queues the redraw of only the blocks of `section` that differ between `old` and
// `markup` (a what-if that only changes the note of flags a demo does not read leaves its
// tables alone). Returns false, queueing nothing, when the blocks do not line up with the
// elements.
function redrawBlocks(section, old, markup) {
  const [was, now] = [blocks(old), blocks(markup)];
  const children = [...section.children];
  if (was.length !== children.length || markup.match(/^<section[^>]*>/)[0] !== old.match(/^<section[^>]*>/)[0]) return false;
  const marks = sourceMarks(now);
  for (let i = 0; i < Math.max(was.length, now.length); i++) {
    if (i >= now.length) later(() => children[i].remove());
    else if (i >= was.length || was[i] !== now[i]) {
      later(() => {
        const e = buildBlock(now[i]);
        markSource(e, marks[i], section);
        if (i >= was.length) section.append(e); else children[i].replaceWith(e);
      });
    }
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
  // Shown where the reader is: the background demos sit under the report, which may be long.
  job.scrollIntoView({ block: 'nearest' });
  const worker = newWorker();
  job.worker = worker;
  // Demo 4 decodes its drafts side by side, one worker each, the first in this one.
  const helpers = demo === 4 ? Array.from({ length: page.setup.demo4_drafts - 1 }, newWorker) : [];
  const started = performance.now();
  const tick = setInterval(() => { clock.textContent = ` ${((performance.now() - started) / 1000).toFixed(0)} s`; }, 500);
  const finish = () => {
    clearInterval(tick);
    worker.terminate();
    helpers.forEach((h) => h.terminate());
    job.worker = null;
    bar.remove();
    stop.remove();
  };
  stop.addEventListener('click', () => { finish(); clock.textContent = ' 已停止'; });
  const answered = (e) => {
    finish();
    const answer = e.data.answer;
    // The reader's wait: from the click to the answer, every worker included.
    const ms = performance.now() - started;
    job.dataset.ms = String(ms);
    clock.textContent = ` 用时 ${(ms / 1000).toFixed(1)} s（本机浏览器实测）`;
    if (answer.kind === 'page') {
      for (const markup of answer.html.split(/(?=<section id=")/).filter((m) => m.trim() !== '')) {
        const section = shell(markup);
        body.append(section);
        fillSection(section, markup);
      }
      later(() => { job.dataset.done = 'true'; });
    } else {
      body.append(el('div', { role: 'alert', class: 'refused-inline', text: answer.message || answer.error }));
      job.dataset.done = 'true';
    }
  };
  const failed = (e) => { finish(); body.append(el('div', { role: 'alert', text: `后台出错：${e.message}` })); };
  worker.onmessage = answered;
  worker.onerror = failed;
  const files = [...page.files.values()];
  if (helpers.length === 0) {
    worker.postMessage({ module: page.module, flags: argv, files });
    return;
  }
  // Each draft in its worker; then the first worker prints demo 4 from what they measured.
  const drafts = [worker, ...helpers].map((w, k) => new Promise((resolve, reject) => {
    w.onmessage = (e) => (e.data.draft && e.data.draft.kind === 'draft' ? resolve([k, e.data.draft.shapes]) : reject(e.data));
    w.onerror = (e) => reject(e);
    w.postMessage({ kind: 'demo4-draft', k, module: page.module });
  }));
  Promise.all(drafts).then((given) => {
    worker.onmessage = answered;
    worker.onerror = failed;
    worker.postMessage({ module: page.module, flags: argv, files, given });
  }, (why) => failed({ message: why?.message ?? why?.draft?.message ?? why?.answer?.error ?? String(why) }));
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

function ask(worker, message) {
  return new Promise((resolve) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.postMessage(message);
  });
}

async function boot() {
  try {
    page.module = await wasmModule();
    page.worker = newWorker();
    const { setup } = await ask(page.worker, { kind: 'setup', module: page.module });
    page.setup = setup;
    page.worker.onmessage = (e) => onAnswer(e.data);
    page.worker.onerror = (e) => { document.getElementById('status').textContent = `后台出错：${e.message}`; };
    document.getElementById('handout-style').textContent = page.setup.style;
    buildControls();
    loadFragment();
    window.addEventListener('hashchange', () => { loadFragment(); update(); });
    const firstDraw = new Promise((resolve) => { page.onFirstDraw = resolve; });
    update('first');
    await firstDraw;
    page.firstRenderMs = performance.now();
    document.body.dataset.ready = 'true';
  } catch (e) {
    document.getElementById('status').textContent = `页面载入失败：${e}`;
    throw e;
  }
}

boot();
