// The page's Web Worker: every computation runs here, off the page's thread (the page's
// script only draws). It runs after the module's glue (the page prepends it), instantiates
// the module the page compiled once, and answers each message:
//   { kind: 'setup' }                       → { setup }            (page_setup)
//   { kind: 'open', flag, name, text }      → { opened }           (page_open_file)
//   { kind: 'demo4-draft', k }              → { draft }            (page_demo4_draft)
//   { flags, summary?, files?, given? }     → { answer, summary? } (page_answer, page_summary;
//                                             given: [k, shapes] handed in first, page_demo4_hand_in)
// The page keeps one worker for the live demos and starts one per background demo (3, 4);
// demo 4 decodes each of its drafts in a worker of its own, side by side.
'use strict';
let ready = null;
const opened = new Map(); // name → text given to the module
self.onmessage = async (e) => {
  const m = e.data;
  const t0 = performance.now();
  try {
    if (!ready) ready = wasm_bindgen({ module_or_path: m.module });
    await ready;
    // Files the reader picked (a card, a config.json), given to this module before it answers.
    for (const [flag, name, text] of m.files || []) {
      if (opened.get(name) !== text) { wasm_bindgen.page_open_file(flag, name, text); opened.set(name, text); }
    }
    if (m.kind === 'open') {
      const reply = JSON.parse(wasm_bindgen.page_open_file(m.flag, m.name, m.text));
      if (reply.kind === 'opened') opened.set(m.name, m.text);
      self.postMessage({ id: m.id, opened: reply });
      return;
    }
    if (m.kind === 'demo4-draft') {
      self.postMessage({ id: m.id, draft: JSON.parse(wasm_bindgen.page_demo4_draft(m.k)) });
      return;
    }
    for (const [k, shapes] of m.given || []) {
      const refused = wasm_bindgen.page_demo4_hand_in(k, JSON.stringify(shapes));
      if (refused) throw new Error(refused);
    }
    if (m.kind === 'setup') {
      self.postMessage({ id: m.id, setup: JSON.parse(wasm_bindgen.page_setup()) });
      return;
    }
    const answer = JSON.parse(wasm_bindgen.page_answer(JSON.stringify(m.flags)));
    const reply = { id: m.id, answer };
    if (m.summary) reply.summary = JSON.parse(wasm_bindgen.page_summary(JSON.stringify(m.summary)));
    reply.ms = performance.now() - t0;
    answer.ms = reply.ms;
    self.postMessage(reply);
  } catch (err) {
    self.postMessage({ id: m.id, answer: { kind: 'error', error: String(err), ms: 0 }, ms: 0 });
  }
};
