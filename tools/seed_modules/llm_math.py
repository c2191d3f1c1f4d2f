"""Model shapes and the roofline of one forward pass (SPEC.md §2), recreated for the seed
scripts. Written from SPEC.md as a second implementation of the Rust `llm_math`."""

BYTES = 2  # weights and KV in bf16
COMPUTE_EFF, BANDWIDTH_EFF = 0.6, 0.8


class ModelConfig:
    """A decoder's shape: layers, widths, heads, vocabulary, tied embeddings."""

    def __init__(self, name, layers, d_model, heads, kv_heads, head_dim, d_ff, vocab, tied):
        self.name, self.layers, self.d_model = name, layers, d_model
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.d_ff, self.vocab, self.tied = d_ff, vocab, tied

    def n_params(self):
        """Every weight: per layer q, k, v, o, the SwiGLU's three matrices and two norms;
        the embedding (twice if untied) and the final norm."""
        d, hd = self.d_model, self.head_dim
        attn = d * self.heads * hd * 2 + d * self.kv_heads * hd * 2
        per_layer = attn + 3 * d * self.d_ff + 2 * d
        return self.layers * per_layer + self.vocab * d * (1 if self.tied else 2) + d

    def streamed_params(self):
        """The weights a forward pass multiplies by: an untied input embedding is a lookup."""
        return self.n_params() - (0 if self.tied else self.vocab * self.d_model)

    def kv_bytes_per_token(self):
        """K and V of every layer, bf16."""
        return 2 * self.layers * self.kv_heads * self.head_dim * BYTES


LLAMA31_8B = ModelConfig("Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, 128256, False)


def pass_time(cfg, hw, batch, ctx, n):
    """One forward pass of `batch` sequences, each feeding `n` tokens after `ctx` cached ones:
    max(FLOPs / (peak · 0.6), bytes / (bandwidth · 0.8)), seconds (no overhead)."""
    tokens = batch * n
    flops = 2 * cfg.streamed_params() * tokens + 4 * cfg.layers * cfg.heads * cfg.head_dim * ctx * tokens
    nbytes = BYTES * cfg.streamed_params() + batch * ctx * cfg.kv_bytes_per_token() + tokens * cfg.kv_bytes_per_token()
    return max(flops / (hw.peak_flops_bf16 * COMPUTE_EFF), nbytes / (hw.hbm_bandwidth * BANDWIDTH_EFF))


def max_batch(cfg, hw, ctx):
    """Sequences of `ctx` tokens whose KV fits beside all the weights; 0 if they do not fit."""
    free = hw.memory_bytes - BYTES * cfg.n_params()
    if free <= 0:
        return 0
    return int(free // (ctx * cfg.kv_bytes_per_token()))


if __name__ == "__main__":
    assert LLAMA31_8B.n_params() == 8_030_261_248
    assert LLAMA31_8B.streamed_params() == 7_504_924_672
    print("llm_math: the published parameter counts")
