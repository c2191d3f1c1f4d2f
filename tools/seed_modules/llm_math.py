"""Model-shape arithmetic and the roofline time of one forward pass (lecture 1's model).

Models a decoder-only transformer by its shape (`ModelConfig`): how many parameters it has,
how many of them a forward pass streams from memory, how many KV-cache bytes one token costs,
and how long one batched forward pass takes on an accelerator under the roofline bound
(one max over the whole pass of compute time and memory time). Also `max_batch`: how many
sequences of a given context fit in memory next to the weights.

Written from SPEC.md §2 alone, as an independent second implementation of the workspace's
Rust `llm_math` crate (not translated from it).
"""

BYTES_PER_VALUE = 2      # weights and KV cache in bf16
COMPUTE_EFFICIENCY = 0.6  # fraction of peak FLOP/s a real kernel reaches
BANDWIDTH_EFFICIENCY = 0.8  # fraction of peak HBM bandwidth a real kernel reaches


class ModelConfig:
    """A decoder's shape.

    layers, d_model, heads, kv_heads, head_dim, d_ff, vocab -- the usual sizes (ints)
    tied -- True when the LM head shares the input embedding table
    name -- a label
    """

    def __init__(self, name, layers, d_model, heads, kv_heads, head_dim, d_ff, vocab, tied):
        self.name = name
        self.layers = layers
        self.d_model = d_model
        self.heads = heads
        self.kv_heads = kv_heads
        self.head_dim = head_dim
        self.d_ff = d_ff
        self.vocab = vocab
        self.tied = tied

    def __repr__(self):
        return f"ModelConfig({self.name!r})"

    def params_per_layer(self):
        """q, k, v, o projections + the three SwiGLU matrices + the two RMSNorm gains."""
        d, hd = self.d_model, self.head_dim
        attn = d * self.heads * hd          # W_q
        attn += 2 * d * self.kv_heads * hd  # W_k, W_v (grouped-query: kv_heads heads)
        attn += self.heads * hd * d         # W_o
        mlp = 3 * d * self.d_ff             # W_gate, W_up, W_down
        norms = 2 * d
        return attn + mlp + norms

    def n_params(self):
        """All parameters: layers, embedding (+ an untied LM head), final norm. An int."""
        embed = self.vocab * self.d_model * (1 if self.tied else 2)
        return self.layers * self.params_per_layer() + embed + self.d_model

    def streamed_params(self):
        """Parameters a forward pass multiplies by (reads from HBM in full), an int.

        Untied: the input embedding is a lookup of a few rows, so it is left out.
        Tied: the shared table is read once, as the LM head, so everything counts.
        """
        if self.tied:
            return self.n_params()
        return self.n_params() - self.vocab * self.d_model

    def kv_bytes_per_token(self):
        """KV-cache bytes one token adds: K and V, every layer, every kv head, bf16."""
        return 2 * self.layers * self.kv_heads * self.head_dim * BYTES_PER_VALUE


LLAMA31_8B = ModelConfig("Llama-3.1-8B", layers=32, d_model=4096, heads=32, kv_heads=8, head_dim=128,
                         d_ff=14336, vocab=128256, tied=False)


def _check_shape(B, ctx, n):
    if B < 1:
        raise ValueError(f"batch size B must be >= 1, got {B}")
    if ctx < 0:
        raise ValueError(f"context ctx must be >= 0, got {ctx}")
    if n < 1:
        raise ValueError(f"tokens per sequence n must be >= 1, got {n}")


def pass_flops(cfg, B, ctx, n):
    """FLOPs of one pass: B sequences, n new tokens each, on top of ctx cached tokens (int).

    2 FLOPs per weight per token, plus attention: 4 · layers · heads · head_dim · ctx per token
    (q·kᵀ and p·v, 2 FLOPs per multiply-add each).
    """
    _check_shape(B, ctx, n)
    tokens = B * n
    return 2 * cfg.streamed_params() * tokens + 4 * cfg.layers * cfg.heads * cfg.head_dim * ctx * tokens


def pass_bytes(cfg, B, ctx, n):
    """HBM bytes of one pass (int): the weights once, each sequence's cached KV once (a fused
    kernel serves all its n queries from one read), and the new tokens' KV written."""
    _check_shape(B, ctx, n)
    kv = cfg.kv_bytes_per_token()
    return BYTES_PER_VALUE * cfg.streamed_params() + B * ctx * kv + B * n * kv


def pass_time(cfg, hw, B, ctx, n):
    """Seconds for one forward pass under the roofline: one max over the whole pass of
    FLOPs / (peak · 0.6) and bytes / (bandwidth · 0.8) (optimistic: compute and memory traffic
    fully overlapped; per-operation tools sum per-op maxima and come out slower)."""
    t_compute = pass_flops(cfg, B, ctx, n) / (hw.peak_flops * COMPUTE_EFFICIENCY)
    t_memory = pass_bytes(cfg, B, ctx, n) / (hw.hbm_bandwidth * BANDWIDTH_EFFICIENCY)
    return max(t_compute, t_memory)


def max_batch(cfg, hw, ctx):
    """How many sequences of ctx tokens fit: floor((memory − weight bytes) / (ctx · KV bytes per
    token)). All weights stay resident (embedding included); 0 when the weights do not fit."""
    if ctx < 1:
        raise ValueError(f"context ctx must be >= 1, got {ctx}")
    free = int(hw.memory_bytes) - BYTES_PER_VALUE * cfg.n_params()
    if free <= 0:
        return 0
    return free // (ctx * cfg.kv_bytes_per_token())


if __name__ == "__main__":
    # Self-test: the published parameter counts (SPEC.md §2); the draft's are decode_lab's.
    from hw_specs import H100

    assert LLAMA31_8B.n_params() == 8_030_261_248, LLAMA31_8B.n_params()
    assert LLAMA31_8B.streamed_params() == 7_504_924_672, LLAMA31_8B.streamed_params()
    assert LLAMA31_8B.kv_bytes_per_token() == 131_072  # 128 KiB per token
    # Hand-computed: (80e9 − 2 · 8,030,261,248) / (32768 · 131072) = 14.88… → 14 sequences.
    assert max_batch(LLAMA31_8B, H100, 32768) == 14
    # Batch 1, ctx 0, n 1: memory bound; the weights plus one token's KV written,
    # (2 · 7,504,924,672 + 131,072) bytes / (3.35e12 · 0.8) B/s = 5.6007 ms.
    assert abs(pass_time(LLAMA31_8B, H100, 1, 0, 1) - (2 * 7_504_924_672 + 131_072) / 2.68e12) < 1e-15
    print("llm_math: parameter counts, KV bytes, max_batch, pass time OK")
