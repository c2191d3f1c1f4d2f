"""Per-group integer quantization of the toy model, and sequences sampled from it (SPEC.md
§3), recreated for the seed scripts. Written from SPEC.md as a second implementation of the
Rust `quant_lab`."""
import re

import numpy as np

from transformer_lab import QCFG, TransformerLM, softmax_probs  # noqa: F401 (QCFG re-exported)

LINEAR = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down")


def quantize_matrix(w, bits, group):
    """Symmetric abs-max int-`bits` fake quantization of w [in, out], one scale per `group`
    consecutive input rows of each column; np.round rounds half to even."""
    qmax = 2 ** (bits - 1) - 1
    rows, cols = w.shape
    g = w.reshape(rows // group, group, cols)
    s = np.abs(g).max(axis=1, keepdims=True) / np.float32(qmax)
    safe = np.where(s == 0, np.float32(1), s)
    q = np.round(np.clip(g / safe, -qmax - 1, qmax))
    return (np.where(s == 0, np.float32(0), q * s)).reshape(rows, cols).astype(np.float32)


def quantize_params(params, scheme, include_lm_head):
    """Fake-quantized float32 params under "int{bits}-g{group}" and a report; the embedding
    and the norms stay float32, the LM head only when asked."""
    m = re.fullmatch(r"int(\d+)-g(\d+)", scheme)
    if not m:
        raise ValueError(f"unknown quantization scheme {scheme!r}; expected int{{bits}}-g{{group}}")
    bits, group = int(m.group(1)), int(m.group(2))
    out = dict(params)
    out["layers"] = [dict(lp) for lp in params["layers"]]
    before = after = 0
    for lp in out["layers"]:
        for name in LINEAR:
            before += lp[name].size * 4
            after += lp[name].size * bits / 8
            lp[name] = quantize_matrix(lp[name], bits, group)
    if include_lm_head:
        out["lm_head"] = quantize_matrix(params["lm_head"], bits, group)
    err = max(float(np.abs(a[n] - b[n]).max()) for a, b in zip(out["layers"], params["layers"]) for n in LINEAR)
    return out, {"bytes_before": before, "bytes_after": after, "max_abs_error": err}


def sample_tokens(params, cfg, n_seq, length, seed):
    """n_seq sequences of `length` tokens sampled from the model itself: first tokens
    rng.integers(0, vocab, size=(n_seq, 1)), then one rng.choice(vocab, p=p) per sequence
    per step, p the softmax of the last position's float32 logits cast to float64."""
    rng = np.random.default_rng(seed)
    model = TransformerLM(params, cfg, "sampler")
    seqs = rng.integers(0, cfg.vocab, size=(n_seq, 1))
    cache, logits = model.prefill(seqs)
    last = logits[:, -1]
    cols = [seqs[:, 0]]
    while len(cols) < length:
        p = softmax_probs(last)
        nxt = np.array([rng.choice(cfg.vocab, p=p[s]) for s in range(n_seq)])
        cols.append(nxt)
        if len(cols) < length:
            last = model.step(cache, nxt)
    return np.stack(cols, axis=1)
