#!/usr/bin/env python3
"""Golden logits of the toy model from an implementation that shares no code with it.

Reads the weights that `cargo run -p transformer_lab --example export_weights` wrote
(init_params(QCFG, seed 0), safetensors), runs the forward pass of SPEC.md section 3 in
float64 NumPy with its own RMSNorm, RoPE, attention and SwiGLU, and writes the logits of
every position of a few byte sequences, each as '%.7e'. First it checks that the weights
are exactly what NumPy's default_rng draws for them (SPEC.md section 3). The Rust test
crates/transformer_lab/tests/golden.rs checks the model against this file (within 1e-4).

    python3 tools/golden/golden.py WEIGHTS.safetensors OUT.txt

Only NumPy is needed: the safetensors reader is the dozen lines below (the format is an
8-byte little-endian header length, a JSON header, then the raw tensor bytes).
"""

import json
import struct
import sys

import numpy as np

# The sequences, as bytes (the vocabulary is byte-level): a single token, a sentence,
# and bytes from both ends of the vocabulary with a repeated run.
SEQUENCES = [
    b"a",
    b"Hello, world!",
    bytes([0, 255, 128, 7, 7, 7, 7, 7, 200, 13, 10, 64]),
]

DTYPES = {"F32": "<f4", "F64": "<f8"}


def read_safetensors(path):
    """Returns ({name: float64 array}, metadata dict) of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    meta = header.pop("__metadata__", {})
    body = data[8 + n :]
    tensors = {}
    for name, info in header.items():
        start, end = info["data_offsets"]
        a = np.frombuffer(body[start:end], dtype=DTYPES[info["dtype"]])
        tensors[name] = a.reshape(info["shape"]).astype(np.float64)
    return tensors, meta


def rms_norm(x, gain, eps):
    """x / sqrt(mean(x^2) + eps) * gain, row by row. x: [T, d]."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gain


def rope(x, n_heads, theta):
    """Rotates the pairs (2i, 2i+1) of each head of row t by t / theta^(2i / head_dim).
    x: [T, n_heads * head_dim]."""
    t_len, d = x.shape
    hd = d // n_heads
    x = x.reshape(t_len, n_heads, hd // 2, 2)
    inv_freq = theta ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)  # [hd/2]
    angle = np.arange(t_len, dtype=np.float64)[:, None] * inv_freq[None, :]  # [T, hd/2]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]  # [T, 1, hd/2]
    even, odd = x[..., 0], x[..., 1]
    out = np.stack([even * cos - odd * sin, even * sin + odd * cos], axis=-1)
    return out.reshape(t_len, d)


def attention(q, k, v, n_heads):
    """Causal softmax(q k^T / sqrt(head_dim)) v for each head. q, k, v: [T, d]."""
    t_len, d = q.shape
    hd = d // n_heads
    split = lambda a: a.reshape(t_len, n_heads, hd).transpose(1, 0, 2)  # [H, T, hd]
    qh, kh, vh = split(q), split(k), split(v)
    scores = qh @ kh.transpose(0, 2, 1) / np.sqrt(hd)  # [H, T, T]
    future = np.triu(np.ones((t_len, t_len), dtype=bool), k=1)
    scores = np.where(future, -np.inf, scores)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    return (p @ vh).transpose(1, 0, 2).reshape(t_len, d)  # [T, d]


def swiglu(h, w_gate, w_up, w_down):
    """(silu(h W_gate) * (h W_up)) W_down."""
    g = h @ w_gate
    return (g / (1.0 + np.exp(-g)) * (h @ w_up)) @ w_down


def logits(w, cfg, tokens):
    """Logits [T, vocab] of every position of `tokens`."""
    x = w["embed"][np.array(tokens)]  # [T, d]
    for i in range(cfg["n_layers"]):
        p = lambda name: w[f"layers.{i}.{name}"]
        h = rms_norm(x, p("attn_norm"), cfg["norm_eps"])
        q = rope(h @ p("wq"), cfg["n_heads"], cfg["rope_theta"])
        k = rope(h @ p("wk"), cfg["n_heads"], cfg["rope_theta"])
        x = x + attention(q, k, h @ p("wv"), cfg["n_heads"]) @ p("wo")
        h = rms_norm(x, p("mlp_norm"), cfg["norm_eps"])
        x = x + swiglu(h, p("w_gate"), p("w_up"), p("w_down"))
    return rms_norm(x, w["final_norm"], cfg["norm_eps"]) @ w["lm_head"]


def numpy_init(cfg):
    """init_params(cfg, seed) as SPEC.md section 3 states NumPy draws it: default_rng(seed),
    each matrix standard_normal(shape) * std in float64, cast to float32, in the order
    tok_emb, lm_head, then per layer wq, wk, wv, wo, w_gate, w_up, w_down."""
    rng = np.random.default_rng(cfg["seed"])
    d, f, v, n = cfg["d_model"], cfg["d_ff"], cfg["vocab"], cfg["n_layers"]
    draw = lambda shape, std: (rng.standard_normal(shape) * std).astype(np.float32)
    w = {"embed": draw((v, d), 0.03), "lm_head": draw((d, v), 0.02)}
    resid = 0.02 / np.sqrt(2 * n)
    for i in range(n):
        for name, shape, std in [("wq", (d, d), 0.02), ("wk", (d, d), 0.02), ("wv", (d, d), 0.02),
                                 ("wo", (d, d), resid), ("w_gate", (d, f), 0.02),
                                 ("w_up", (d, f), 0.02), ("w_down", (f, d), resid)]:
            w[f"layers.{i}.{name}"] = draw(shape, std)
    return w


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: golden.py WEIGHTS.safetensors OUT.txt")
    w, meta = read_safetensors(sys.argv[1])
    ints = ["vocab", "d_model", "n_layers", "n_heads", "d_ff", "max_seq", "seed"]
    cfg = {k: int(meta[k]) for k in ints}
    cfg.update({k: float(meta[k]) for k in ["norm_eps", "rope_theta"]})
    # The exported weights are NumPy's own draws, bit for bit (float32 widened to float64
    # on both sides, so equality is exact).
    for name, want in numpy_init(cfg).items():
        if not np.array_equal(w[name], want.astype(np.float64)):
            sys.exit(f"golden.py: exported {name} differs from NumPy's default_rng draws")
    lines = [
        "# Golden logits of the toy model: transformer_lab::QCFG, init_params(QCFG, seed %d)," % cfg["seed"],
        "# computed in float64 by tools/golden/golden.py (NumPy), independent of the Rust code.",
        "# Regenerate with tools/golden/check.sh (see tools/golden/README.md). Do not edit.",
        "# config " + " ".join("%s=%s" % (k, meta[k]) for k in sorted(meta) if k != "init"),
    ]
    for s, seq in enumerate(SEQUENCES):
        tokens = list(seq)
        lines.append("# sequence %d: tokens %s" % (s, " ".join(str(t) for t in tokens)))
        for row in logits(w, cfg, tokens):
            lines.append(" ".join("%.7e" % v for v in row))
    with open(sys.argv[2], "w", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
