// A Web Worker for the demos that take seconds (the toy transformer's): it runs after the
// module's glue (the page prepends it), instantiates the module the page compiled, and
// answers one set of flags with page_answer, as the page's own thread does.
'use strict';
self.onmessage = async (e) => {
  const { module, flags } = e.data;
  try {
    await wasm_bindgen({ module_or_path: module });
    const t0 = performance.now();
    const answer = JSON.parse(wasm_bindgen.page_answer(JSON.stringify(flags)));
    answer.ms = performance.now() - t0;
    self.postMessage(answer);
  } catch (err) {
    self.postMessage({ kind: 'error', error: String(err), ms: 0 });
  }
};
