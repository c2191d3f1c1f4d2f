"""Lecture 3's toy model: a small Llama-style decoder in float32 NumPy (SPEC.md §3), recreated
for the seed scripts. Written from SPEC.md as a second implementation of the Rust
`transformer_lab`: weights from NumPy's default_rng, as the Rust port draws them."""
import numpy as np


class Config:
    """The model's shape."""

    def __init__(self, vocab, d_model, n_layers, n_heads, d_ff, max_seq, norm_eps=1e-5, rope_theta=10000.0):
        self.vocab, self.d_model, self.n_layers, self.n_heads = vocab, d_model, n_layers, n_heads
        self.d_ff, self.max_seq, self.norm_eps, self.rope_theta = d_ff, max_seq, norm_eps, rope_theta
        self.head_dim = d_model // n_heads


QCFG = Config(vocab=256, d_model=128, n_layers=4, n_heads=4, d_ff=384, max_seq=128)


def config_like(cfg, **overrides):
    """A copy of cfg with some fields replaced: config_like(QCFG, n_layers=1)."""
    fields = dict(vocab=cfg.vocab, d_model=cfg.d_model, n_layers=cfg.n_layers, n_heads=cfg.n_heads,
                  d_ff=cfg.d_ff, max_seq=cfg.max_seq, norm_eps=cfg.norm_eps, rope_theta=cfg.rope_theta)
    fields.update(overrides)
    return Config(**fields)


def init_params(cfg, seed):
    """Random weights: default_rng(seed), each matrix standard_normal(shape) * std (float64),
    cast to float32, drawn in the order tok_emb, lm_head, then per layer wq, wk, wv, wo,
    w_gate, w_up, w_down. Norm gains are 1. Matrices are [in, out]."""
    rng = np.random.default_rng(seed)
    d, f, v = cfg.d_model, cfg.d_ff, cfg.vocab
    resid = 0.02 / np.sqrt(2 * cfg.n_layers)

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    params = {"tok_emb": normal((v, d), 0.03), "lm_head": normal((d, v), 0.02), "layers": []}
    for _ in range(cfg.n_layers):
        layer = {"attn_norm": np.ones(d, np.float32)}
        layer["wq"] = normal((d, d), 0.02)
        layer["wk"] = normal((d, d), 0.02)
        layer["wv"] = normal((d, d), 0.02)
        layer["wo"] = normal((d, d), resid)
        layer["mlp_norm"] = np.ones(d, np.float32)
        layer["w_gate"] = normal((d, f), 0.02)
        layer["w_up"] = normal((d, f), 0.02)
        layer["w_down"] = normal((f, d), resid)
        params["layers"].append(layer)
    params["final_norm"] = np.ones(d, np.float32)
    return params


def rms_norm(x, gain, eps):
    """x / sqrt(mean(x²) + eps) · gain over the last axis."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(eps)) * gain


def rope(x, positions, n_heads, theta):
    """Rotates the pairs (2i, 2i+1) of each head by pos / θ^(2i/head_dim). x: [B, T, d]."""
    b, t, d = x.shape
    hd = d // n_heads
    inv = theta ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)            # [hd/2]
    ang = positions[:, None].astype(np.float64) * inv[None, :]               # [T, hd/2]
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    x = x.reshape(b, t, n_heads, hd // 2, 2)
    even, odd = x[..., 0], x[..., 1]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return np.stack([even * c - odd * s, even * s + odd * c], axis=-1).reshape(b, t, d)


class KVCache:
    """Keys and values of every layer so far: lists of [B, H, T, hd] arrays."""

    def __init__(self, n_layers):
        self.k = [None] * n_layers
        self.v = [None] * n_layers
        self.len = 0


class TransformerLM:
    """The model with its weights: full_logits (teacher-forced) and incremental decoding."""

    def __init__(self, params, cfg, name):
        self.params, self.cfg, self.name = params, cfg, name
        self.layers = params["layers"][: cfg.n_layers]

    def forward(self, tokens, cache):
        """Logits [B, T, vocab] of `tokens` [B, T] fed after what `cache` holds (extended)."""
        cfg = self.cfg
        b, t = tokens.shape
        hd, h = cfg.head_dim, cfg.n_heads
        pos = np.arange(cache.len, cache.len + t)
        x = self.params["tok_emb"][tokens]                                     # [B, T, d]
        for i, lp in enumerate(self.layers):
            a = rms_norm(x, lp["attn_norm"], cfg.norm_eps)
            q = rope(a @ lp["wq"], pos, h, cfg.rope_theta)
            k = rope(a @ lp["wk"], pos, h, cfg.rope_theta)
            v = a @ lp["wv"]
            heads = lambda z: z.reshape(b, t, h, hd).transpose(0, 2, 1, 3)    # [B, H, T, hd]
            q, k, v = heads(q), heads(k), heads(v)
            if cache.k[i] is not None:
                k = np.concatenate([cache.k[i], k], axis=2)
                v = np.concatenate([cache.v[i], v], axis=2)
            cache.k[i], cache.v[i] = k, v
            s = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(hd))           # [B, H, T, S]
            future = pos[:, None] < np.arange(k.shape[2])[None, :]
            s = np.where(future, np.float32(-np.inf), s)
            p = np.exp(s - s.max(axis=-1, keepdims=True))
            p = p / p.sum(axis=-1, keepdims=True)
            o = (p @ v).transpose(0, 2, 1, 3).reshape(b, t, cfg.d_model)
            x = x + o @ lp["wo"]
            m = rms_norm(x, lp["mlp_norm"], cfg.norm_eps)
            g = m @ lp["w_gate"]
            x = x + (g / (np.float32(1) + np.exp(-g)) * (m @ lp["w_up"])) @ lp["w_down"]
        cache.len += t
        return rms_norm(x, self.params["final_norm"], cfg.norm_eps) @ self.params["lm_head"]

    def full_logits(self, tokens):
        """Teacher-forced logits [B, T, vocab] of tokens [B, T]."""
        return self.forward(np.asarray(tokens), KVCache(self.cfg.n_layers))

    def prefill(self, tokens):
        """A new cache holding `tokens` [B, T], and their logits."""
        cache = KVCache(self.cfg.n_layers)
        return cache, self.forward(np.asarray(tokens), cache)

    def step(self, cache, tokens):
        """One token per sequence, tokens [B]: the next logits [B, vocab]."""
        return self.forward(np.asarray(tokens)[:, None], cache)[:, 0]


def softmax_probs(logits, temperature=1.0):
    """float64 p = exp((l − max) / T) / sum, per row, from float32 logits."""
    l = logits.astype(np.float64)
    e = np.exp((l - l.max(axis=-1, keepdims=True)) / temperature)
    return e / e.sum(axis=-1, keepdims=True)


def autoregressive_generate(model, prompt, n_new, temperature, rng):
    """n_new tokens after `prompt` ([T], or [B, T] for a batch): greedy (argmax, ties to the
    lowest id, nothing drawn from rng) at temperature 0, else one rng.choice per sequence
    from softmax(logits / T). Returns (new tokens, logits of the last step)."""
    tokens = np.asarray(prompt)
    single = tokens.ndim == 1
    if single:
        tokens = tokens[None, :]
    cache, logits = model.prefill(tokens)
    last = logits[:, -1]
    out = []
    for i in range(n_new):
        if temperature == 0:
            nxt = last.argmax(axis=-1)
        else:
            p = softmax_probs(last, temperature)
            nxt = np.array([rng.choice(model.cfg.vocab, p=p[s]) for s in range(len(p))])
        out.append(nxt)
        if i + 1 < n_new:
            last = model.step(cache, nxt)
    new = np.stack(out, axis=1) if out else np.zeros((len(tokens), 0), np.int64)
    return (new[0] if single else new), last
