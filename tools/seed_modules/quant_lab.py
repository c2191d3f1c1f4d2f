"""Lecture 3's weight quantization of the toy model, and sequences sampled from the model.

Models symmetric abs-max integer quantization with one scale per group of weights
("int{bits}-g{group}", e.g. int8-g128, int4-g32) applied as fake-quant: the weights are
rounded to the integer grid and stored back as float32 (q · s), so the quantized model runs on
the same float32 code and its error can be measured. Also `sample_tokens`, which lets the
model sample sequences from itself (temperature 1) with NumPy's default_rng.

Written from SPEC.md §3 alone, as an independent second implementation of the workspace's
Rust `quant_lab` crate (not translated from it).
"""
import re

import numpy as np

from transformer_lab import LINEAR_NAMES, QCFG, TransformerLM  # noqa: F401 (QCFG re-exported)

_SCHEME = re.compile(r"int(\d+)-g(\d+)")


def parse_scheme(scheme):
    """"int{bits}-g{group}" -> (bits, group). Raises ValueError when malformed or out of range
    (bits 2..16, group >= 1)."""
    m = _SCHEME.fullmatch(scheme) if isinstance(scheme, str) else None
    if m is None:
        raise ValueError(f"unknown quantization scheme {scheme!r}: expected 'int{{bits}}-g{{group}}', e.g. 'int4-g32'")
    bits, group = int(m.group(1)), int(m.group(2))
    if not 2 <= bits <= 16:
        raise ValueError(f"scheme {scheme!r}: bits must be in 2..16, got {bits}")
    if group < 1:
        raise ValueError(f"scheme {scheme!r}: group must be >= 1, got {group}")
    return bits, group


def quantize_matrix(w, bits, group):
    """Fake-quantize w [in, out] (float32): each column is cut into groups of `group` consecutive
    rows (the last group may be shorter when `group` does not divide `in`); per group
    s = absmax / (2^(bits−1) − 1), q = clip(round(w / s), −2^(bits−1), 2^(bits−1) − 1),
    and the result is q · s in float32. A group whose absmax is 0 stays 0.
    Returns (dequantized [in, out] float32, number of groups)."""
    qmax = 2 ** (bits - 1) - 1
    qmin = -(2 ** (bits - 1))
    w = np.asarray(w, dtype=np.float32)
    out = np.empty_like(w)
    n_groups = 0
    for r0 in range(0, w.shape[0], group):
        block = w[r0:r0 + group]                              # [g, out]: one group per column
        absmax = np.max(np.abs(block), axis=0)                # [out]
        s = absmax / np.float32(qmax)                         # float32 scales
        safe = np.where(s == 0, np.float32(1.0), s)           # all-zero group: q = 0 below
        # np.round rounds half to even (banker's rounding), as NumPy and PyTorch do.
        q = np.clip(np.round(block / safe), qmin, qmax)
        out[r0:r0 + group] = (q * s).astype(np.float32)
        n_groups += block.shape[1]
    return out, n_groups


def quantize_params(params, scheme, include_lm_head):
    """Fake-quantize every linear weight of every layer (wq, wk, wv, wo, w_gate, w_up, w_down),
    and lm_head when include_lm_head. The embedding table and the norm gains stay float32.
    The input params are not modified.

    Returns (new_params, report); report is a dict:
      scheme, bits, group, quantized (names), bytes_before (everything in float32),
      bytes_after (quantized matrices at bits/8 bytes a weight + one float32 scale a group,
      the rest float32), rel_error (‖W − Ŵ‖ / ‖W‖ over all quantized weights), max_abs_error.
    """
    bits, group = parse_scheme(scheme)
    new = {k: v for k, v in params.items() if k != "layers"}
    new["layers"] = [dict(layer) for layer in params["layers"]]

    # (container, key, label) of every matrix to quantize
    targets = [(layer, name, f"layers[{i}].{name}") for i, layer in enumerate(new["layers"]) for name in LINEAR_NAMES]
    if include_lm_head:
        targets.append((new, "lm_head", "lm_head"))

    bytes_before = 4 * _count(params)
    bytes_after = bytes_before
    sq_err, sq_ref, max_err = 0.0, 0.0, 0.0
    for container, key, _ in targets:
        w = container[key]
        wq, n_groups = quantize_matrix(w, bits, group)
        diff = wq.astype(np.float64) - w.astype(np.float64)
        sq_err += float(np.sum(diff * diff))
        sq_ref += float(np.sum(w.astype(np.float64) ** 2))
        max_err = max(max_err, float(np.max(np.abs(diff))) if diff.size else 0.0)
        bytes_after += -4 * w.size + (w.size * bits + 7) // 8 + 4 * n_groups
        container[key] = wq
    report = {
        "scheme": scheme,
        "bits": bits,
        "group": group,
        "quantized": [label for _, _, label in targets],
        "bytes_before": bytes_before,
        "bytes_after": bytes_after,
        "rel_error": (sq_err / sq_ref) ** 0.5 if sq_ref > 0 else 0.0,
        "max_abs_error": max_err,
    }
    return new, report


def _count(params):
    """Number of float values in params (all arrays, layers included)."""
    n = sum(np.asarray(v).size for k, v in params.items() if k != "layers")
    return n + sum(np.asarray(v).size for layer in params["layers"] for v in layer.values())


def sample_tokens(params, cfg, n_seq, length, seed):
    """Sequences the model samples from itself at temperature 1 -> int64 [n_seq, length].

    rng = np.random.default_rng(seed); the first tokens are rng.integers(0, vocab, size=(n_seq, 1));
    then, until `length`, the float32 logits at the last position (all sequences decoded as one
    batch with the KV cache) are cast to float64, p = exp(l − max) / sum(exp(l − max)), and one
    rng.choice(vocab, p=p) is drawn per sequence, in sequence order.
    """
    if n_seq < 1 or length < 1:
        raise ValueError(f"n_seq and length must be >= 1, got {n_seq}, {length}")
    rng = np.random.default_rng(seed)
    model = TransformerLM(params, cfg, "sampler")
    seqs = np.zeros((n_seq, length), dtype=np.int64)
    seqs[:, :1] = rng.integers(0, cfg.vocab, size=(n_seq, 1))
    if length == 1:
        return seqs
    cache, logits = model.prefill(seqs[:, :1], max_len=length)
    last = logits[:, -1]
    for t in range(1, length):
        lg = last.astype(np.float64)
        for b in range(n_seq):
            e = np.exp(lg[b] - lg[b].max())
            seqs[b, t] = rng.choice(cfg.vocab, p=e / e.sum())
        if t + 1 < length:
            last = model.step(cache, seqs[:, t])
    return seqs


if __name__ == "__main__":
    from transformer_lab import init_params

    w = np.array([[1.0, 0.0], [-0.6, 0.0], [0.25, 0.0], [0.126, 0.0]], dtype=np.float32)
    # int4: s = 1/7; -0.6·7 = -4.2 → -4; 0.25·7 = 1.75 → 2; 0.126·7 = 0.882 → 1; zero column stays zero.
    dq, ng = quantize_matrix(w, 4, 4)
    assert ng == 2 and np.allclose(dq[:, 0], np.array([7, -4, 2, 1]) / 7) and not dq[:, 1].any()
    # round half to even: absmax 7 at int4 gives s = 1; 2.5 → 2, 3.5 → 4, -0.5 → -0.
    h = np.array([[7.0], [2.5], [3.5], [-0.5]], dtype=np.float32)
    assert quantize_matrix(h, 4, 4)[0][:, 0].tolist() == [7.0, 2.0, 4.0, 0.0]
    for bad in ("int4", "int4-g0", "fp8-g32", "int1-g32", "int4-g32x"):
        try:
            parse_scheme(bad)
        except ValueError:
            pass
        else:
            raise AssertionError(bad)
    P = init_params(QCFG, 0)
    Q, rep = quantize_params(P, "int8-g128", include_lm_head=False)
    assert Q["lm_head"] is P["lm_head"] and Q["tok_emb"] is P["tok_emb"] and rep["rel_error"] < 0.01
    assert not np.shares_memory(Q["layers"][0]["wq"], P["layers"][0]["wq"])
    s = sample_tokens(P, QCFG, 3, 6, seed=3)
    assert s.shape == (3, 6) and s.dtype == np.int64
    print("quant_lab: OK;", {k: rep[k] for k in ("bytes_before", "bytes_after", "rel_error")})
