"""Lecture 3's toy language model: a small Llama-style decoder in float32 NumPy.

Models a pre-norm decoder-only transformer: token embedding; per layer
x += Attn(RMSNorm(x)) (causal multi-head attention with RoPE on q and k) and
x += W_down(silu(W_gate h) ⊙ W_up h) on h = RMSNorm(x); then logits = RMSNorm(x) @ lm_head
(untied). Provides the config (`QCFG`, `config_like`), the weights (`init_params`, drawn from
NumPy's default_rng in a fixed order), a model (`TransformerLM`) with a teacher-forced forward
(`full_logits`) and incremental decoding with a KV cache (`prefill`, then `step`, in the
Rust crate's argument order: `cache, logits = model.prefill(tokens)`,
`model.step(cache, tokens)`), `autoregressive_generate` (greedy or sampled), and the crate's
`greedy_generate(model, prompts, n_new)` and `reference::forward(params, cfg, tokens)` as
`greedy_generate` and `forward`, so a course script written against the crates' names runs
here too.

Everything is float32: weights, activations, matmuls (`h @ W`, W is [in, out]).

Written from SPEC.md §3 alone, as an independent second implementation of the workspace's
Rust `transformer_lab` crate (not translated from it).
"""
import dataclasses
import math

import numpy as np

LINEAR_NAMES = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down")


@dataclasses.dataclass(frozen=True)
class Config:
    """The toy model's shape and constants."""
    vocab: int
    d_model: int
    n_layers: int
    n_heads: int
    d_ff: int
    max_seq: int
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0

    @property
    def head_dim(self):
        """d_model / n_heads."""
        return self.d_model // self.n_heads


# The lecture-3 model: vocab 256, d_model 128, 4 layers, 4 heads (head_dim 32), d_ff 384, max_seq 128.
QCFG = Config(vocab=256, d_model=128, n_layers=4, n_heads=4, d_ff=384, max_seq=128)


def config_like(cfg, **overrides):
    """A copy of cfg with some fields replaced, e.g. config_like(QCFG, n_layers=1)."""
    return dataclasses.replace(cfg, **overrides)


# ----------------------------------------------------------------------------- weights
def init_params(cfg, seed):
    """Random weights, drawn exactly as: rng = np.random.default_rng(seed); each matrix is
    rng.standard_normal(shape) (float64) * std, cast to float32, in this order:
      tok_emb [vocab, d_model] (std 0.03), lm_head [d_model, vocab] (0.02),
      then per layer: wq, wk, wv [d_model, d_model] (0.02), wo [d_model, d_model] (0.02/√(2L)),
      w_gate, w_up [d_model, d_ff] (0.02), w_down [d_ff, d_model] (0.02/√(2L)).
    Norm gains are ones (float32). Returns a dict: tok_emb, lm_head, final_norm, and "layers",
    a list of per-layer dicts (attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down).
    """
    rng = np.random.default_rng(seed)
    d, f, v, L = cfg.d_model, cfg.d_ff, cfg.vocab, cfg.n_layers
    resid_std = 0.02 / math.sqrt(2 * L)  # the two projections that write into the residual stream

    def draw(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    params = {"tok_emb": draw((v, d), 0.03), "lm_head": draw((d, v), 0.02)}
    layers = []
    for _ in range(L):
        layer = {}
        layer["wq"] = draw((d, d), 0.02)
        layer["wk"] = draw((d, d), 0.02)
        layer["wv"] = draw((d, d), 0.02)
        layer["wo"] = draw((d, d), resid_std)
        layer["w_gate"] = draw((d, f), 0.02)
        layer["w_up"] = draw((d, f), 0.02)
        layer["w_down"] = draw((f, d), resid_std)
        layer["attn_norm"] = np.ones(d, dtype=np.float32)
        layer["mlp_norm"] = np.ones(d, dtype=np.float32)
        layers.append(layer)
    params["layers"] = layers
    params["final_norm"] = np.ones(d, dtype=np.float32)
    return params


# ----------------------------------------------------------------------------- building blocks
def rms_norm(x, gain, eps):
    """x [..., d] / sqrt(mean(x², last axis) + eps) * gain [d]; float32."""
    ms = np.mean(x * x, axis=-1, keepdims=True)
    return x / np.sqrt(ms + np.float32(eps)) * gain


def silu(x):
    """x · sigmoid(x), elementwise, float32."""
    return x / (np.float32(1.0) + np.exp(-x))


def rope_tables(positions, head_dim, theta):
    """cos, sin [len(positions), head_dim/2] (float32) of the angles pos / θ^(2i/head_dim).
    (Angles are computed in float64, then the tables are cast to float32.)"""
    i = np.arange(head_dim // 2, dtype=np.float64)
    inv_freq = 1.0 / theta ** (2.0 * i / head_dim)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def apply_rope(x, cos, sin):
    """Rotate the pairs (2i, 2i+1) of x [B, H, T, head_dim] by the angles in cos/sin [T, head_dim/2]."""
    x_even, x_odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x_even * cos - x_odd * sin
    out[..., 1::2] = x_even * sin + x_odd * cos
    return out


def softmax_last(x):
    """Softmax over the last axis (numerically stable), same dtype as x."""
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


class KVCache:
    """Per-layer keys and values of the positions seen so far: k, v [B, H, max_len, head_dim]."""

    def __init__(self, cfg, batch, max_len):
        shape = (batch, cfg.n_heads, max_len, cfg.head_dim)
        self.k = [np.zeros(shape, dtype=np.float32) for _ in range(cfg.n_layers)]
        self.v = [np.zeros(shape, dtype=np.float32) for _ in range(cfg.n_layers)]
        self.batch = batch
        self.max_len = max_len
        self.length = 0  # positions filled (the same for every layer once a pass is done)


# ----------------------------------------------------------------------------- the model
class TransformerLM:
    """The toy decoder: params (from init_params, possibly quantized or truncated), cfg, name.

    full_logits(tokens [B, T]) -> [B, T, vocab]   teacher-forced, positions 0..T-1
    prefill(tokens [B, T]) -> (cache, logits [B, T, vocab])   as TransformerLM::prefill
    step(cache, tokens [B]) -> logits [B, vocab]              as TransformerLM::step: one new
                                                               token per sequence at cache.length
    """

    def __init__(self, params, cfg, name=""):
        if len(params["layers"]) != cfg.n_layers:
            raise ValueError(f"params have {len(params['layers'])} layers, cfg says {cfg.n_layers}")
        self.params = params
        self.cfg = cfg
        self.name = name

    def __repr__(self):
        return f"TransformerLM({self.name!r}, layers={self.cfg.n_layers})"

    def _attention(self, layer, h, cache, li, start, cos, sin):
        """Causal multi-head attention of the new positions start..start+T-1 (h [B, T, d]) over
        every cached position 0..start+T-1; writes the new k, v into the cache. -> [B, T, d]."""
        cfg = self.cfg
        B, T, _ = h.shape
        H, hd = cfg.n_heads, cfg.head_dim

        def heads(x):  # [B, T, d] -> [B, H, T, hd]
            return x.reshape(B, T, H, hd).transpose(0, 2, 1, 3)

        q = apply_rope(heads(h @ layer["wq"]), cos, sin)
        k = apply_rope(heads(h @ layer["wk"]), cos, sin)
        v = heads(h @ layer["wv"])
        end = start + T
        cache.k[li][:, :, start:end] = k
        cache.v[li][:, :, start:end] = v
        keys, values = cache.k[li][:, :, :end], cache.v[li][:, :, :end]

        scores = (q @ keys.transpose(0, 1, 3, 2)) * np.float32(1.0 / math.sqrt(hd))  # [B, H, T, end]
        query_pos = np.arange(start, end)[:, None]
        key_pos = np.arange(end)[None, :]
        scores = np.where(key_pos > query_pos, np.float32(-np.inf), scores)  # causal mask
        out = softmax_last(scores) @ values  # [B, H, T, hd]
        out = out.transpose(0, 2, 1, 3).reshape(B, T, H * hd)
        return out @ layer["wo"]

    def _forward(self, tokens, cache):
        """Run tokens [B, T] at positions cache.length.. ; returns logits [B, T, vocab] float32."""
        cfg, p = self.cfg, self.params
        tokens = np.asarray(tokens)
        B, T = tokens.shape
        start = cache.length
        if B != cache.batch:
            raise ValueError(f"batch {B} does not match the cache's batch {cache.batch}")
        if start + T > cache.max_len:
            raise ValueError(f"{start + T} positions exceed the cache length {cache.max_len}")
        cos, sin = rope_tables(np.arange(start, start + T), cfg.head_dim, cfg.rope_theta)

        x = p["tok_emb"][tokens]  # [B, T, d]
        for li, layer in enumerate(p["layers"]):
            h = rms_norm(x, layer["attn_norm"], cfg.norm_eps)
            x = x + self._attention(layer, h, cache, li, start, cos, sin)
            h = rms_norm(x, layer["mlp_norm"], cfg.norm_eps)
            x = x + (silu(h @ layer["w_gate"]) * (h @ layer["w_up"])) @ layer["w_down"]
        cache.length = start + T
        return rms_norm(x, p["final_norm"], cfg.norm_eps) @ p["lm_head"]

    def _check_tokens(self, tokens):
        tokens = np.asarray(tokens)
        if tokens.ndim != 2:
            raise ValueError(f"tokens must be [B, T], got shape {tokens.shape}")
        if tokens.size and (tokens.min() < 0 or tokens.max() >= self.cfg.vocab):
            raise ValueError(f"token ids must be in 0..{self.cfg.vocab - 1}")
        return tokens

    def full_logits(self, tokens):
        """Teacher-forced logits: tokens [B, T] -> [B, T, vocab] float32."""
        tokens = self._check_tokens(tokens)
        cache = KVCache(self.cfg, tokens.shape[0], tokens.shape[1])
        return self._forward(tokens, cache)

    def new_cache(self, batch, max_len=None):
        """An empty KV cache for `batch` sequences of up to max_len (default cfg.max_seq) positions."""
        return KVCache(self.cfg, batch, self.cfg.max_seq if max_len is None else max_len)

    def prefill(self, tokens, max_len=None):
        """Start decoding: tokens [B, T] -> (cache holding T positions, logits [B, T, vocab]),
        in the order of the Rust crate's TransformerLM::prefill."""
        tokens = self._check_tokens(tokens)
        cache = self.new_cache(tokens.shape[0], max_len)
        logits = self._forward(tokens, cache)
        return cache, logits

    def step(self, cache, tokens):
        """One new token per sequence: tokens [B] -> logits [B, vocab] at position cache.length."""
        tokens = self._check_tokens(np.asarray(tokens).reshape(-1, 1))
        return self._forward(tokens, cache)[:, 0]


# ----------------------------------------------------------------------------- generation
def sample_from_logits(logits, temperature, rng):
    """One token per row of logits [B, vocab] (float32): the float64 softmax of logits / T,
    then rng.choice(vocab, p=p) row by row, in row order. -> int64 [B]."""
    lg = logits.astype(np.float64) / temperature
    out = np.empty(lg.shape[0], dtype=np.int64)
    for b in range(lg.shape[0]):
        e = np.exp(lg[b] - lg[b].max())
        out[b] = rng.choice(lg.shape[1], p=e / e.sum())
    return out


def autoregressive_generate(model, prompt, n_new, temperature, rng):
    """Generate n_new tokens after prompt ([T] or [B, T]) with a KV cache.

    temperature 0: greedy, argmax with ties to the lowest id; nothing is drawn from rng.
    temperature > 0: sample softmax(logits / temperature) with rng (see sample_from_logits).
    Returns (new_tokens, step_logits): new_tokens int64 [n_new] (or [B, n_new] for a 2-D prompt),
    step_logits float32 [n_new, vocab] (or [B, n_new, vocab]), the logits each token came from.
    """
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    prompt = np.asarray(prompt)
    one_d = prompt.ndim == 1
    tokens = prompt[None, :] if one_d else prompt
    B, T = tokens.shape
    if T < 1:
        raise ValueError("the prompt must hold at least one token")
    new = np.zeros((B, n_new), dtype=np.int64)
    step_logits = np.zeros((B, n_new, model.cfg.vocab), dtype=np.float32)
    if n_new > 0:
        cache, logits = model.prefill(tokens, max_len=T + n_new)
        last = logits[:, -1]
        for i in range(n_new):
            step_logits[:, i] = last
            if temperature == 0:
                new[:, i] = np.argmax(last, axis=-1)  # np.argmax returns the first (lowest) id on ties
            else:
                new[:, i] = sample_from_logits(last, temperature, rng)
            if i + 1 < n_new:
                last = model.step(cache, new[:, i])
    if one_d:
        return new[0], step_logits[0]
    return new, step_logits


def greedy_generate(model, prompts, n_new):
    """transformer_lab::greedy_generate: the n_new tokens each prompt of prompts [B, T]
    continues with, argmax each step (ties to the lowest id) -> int64 [B, n_new]."""
    new, _ = autoregressive_generate(model, np.asarray(prompts).reshape(len(prompts), -1), n_new, 0.0, None)
    return new


def forward(params, cfg, tokens):
    """transformer_lab::reference::forward: one sequence's logits, tokens [T] ->
    float32 [T, vocab] (teacher-forced, no cache)."""
    return TransformerLM(params, cfg).full_logits(np.asarray(tokens)[None, :])[0]


if __name__ == "__main__":
    # Self-test: the KV-cache path matches the teacher-forced forward.
    P = init_params(QCFG, seed=0)
    assert P["tok_emb"].dtype == np.float32 and P["layers"][0]["w_down"].shape == (384, 128)
    m = TransformerLM(P, QCFG, "t")
    toks = np.random.default_rng(1).integers(0, QCFG.vocab, size=(3, 12))
    full = m.full_logits(toks)
    assert full.dtype == np.float32 and full.shape == (3, 12, 256)
    cache, lg = m.prefill(toks[:, :5])
    inc = [lg]
    for t in range(5, 12):
        inc.append(m.step(cache, toks[:, t])[:, None])
    inc = np.concatenate(inc, axis=1)
    err = np.abs(inc - full).max()
    assert err < 1e-5, err
    g, _ = autoregressive_generate(m, toks[0], 5, 0, None)  # greedy draws nothing: rng may be None
    # The crates' names: greedy_generate is the greedy path, forward one sequence's full_logits.
    assert (greedy_generate(m, toks[:1], 5)[0] == g).all()
    assert np.array_equal(forward(P, QCFG, toks[2]), full[2])
    print(f"transformer_lab: KV cache matches full_logits (max diff {err:.2e}); greedy {g.tolist()}")
