"""Speculative decoding on hardware (lecture 6): the roofline cost of a round, and tree
acceptance on the toy model.

Models (1) the time of a target-model forward pass that verifies n tokens (`verify_time`,
the roofline pass time plus a fixed per-step overhead), the expected tokens of a round with
per-token acceptance rate α (`expected_tokens`, Leviathan et al.), and the best draft length
γ for a target/draft pair on a card (`best_round`); (2) on lecture 3's toy model, where the
true next token ranks among the draft's choices (`draft_ranks`) and how many tokens a tree of
top-k drafts would accept under greedy decoding (`tree_accept_lengths`).

`LLAMA32_1B` (the draft model) lives here, as in the seed. `TransformerLM` and
`autoregressive_generate` live in transformer_lab and are re-exported here, since the seed
imports them from decode_lab.

Written from SPEC.md §2–§3 alone, as an independent second implementation of the workspace's
Rust `decode_lab` crate (not translated from it).
"""
import numpy as np

from llm_math import ModelConfig, pass_time
from transformer_lab import TransformerLM, autoregressive_generate  # noqa: F401 (re-exported)

LLAMA32_1B = ModelConfig("Llama-3.2-1B", layers=16, d_model=2048, heads=32, kv_heads=8, head_dim=64,
                         d_ff=8192, vocab=128256, tied=True)

MAX_GAMMA = 16  # best_round tries γ = 1..=16


def verify_time(cfg, hw, B, ctx, n, overhead):
    """Seconds for one pass of cfg on hw: B sequences, n new tokens each over ctx cached tokens,
    = max(FLOPs / (peak · 0.6), bytes / (bandwidth · 0.8)) + overhead (a fixed per-step cost)."""
    return pass_time(cfg, hw, B, ctx, n) + overhead


def expected_tokens(alpha, gamma):
    """Expected tokens one round yields with γ drafts, each accepted with probability α:
    (1 − α^(γ+1)) / (1 − α), and γ + 1 at α = 1."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")
    if alpha == 1.0:
        return float(gamma + 1)
    return (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)


def best_round(tgt, drf, hw, B, ctx, alpha, overhead_t, overhead_d):
    """The best draft length γ in 1..=16 for target tgt and draft drf on hw, batch B, context ctx.

    t_base = verify_time(tgt, n=1), t_draft = verify_time(drf, n=1),
    t_verify = verify_time(tgt, n=γ+1), t_round = γ · t_draft + t_verify,
    speedup = expected_tokens(α, γ) · t_base / t_round.
    Returns (γ, figures) for the γ with the highest speedup (the smallest γ on a tie), figures
    being a dict: gamma, speedup, expected_tokens, verify_ratio (t_verify / t_base),
    c (t_draft / t_base), t_base, t_draft, t_verify, t_round (seconds).
    Returns (0, None) when no γ beats 1.0 ("no speculation").
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    t_base = verify_time(tgt, hw, B, ctx, 1, overhead_t)
    t_draft = verify_time(drf, hw, B, ctx, 1, overhead_d)
    best = None
    for gamma in range(1, MAX_GAMMA + 1):
        t_verify = verify_time(tgt, hw, B, ctx, gamma + 1, overhead_t)
        t_round = gamma * t_draft + t_verify
        tokens = expected_tokens(alpha, gamma)
        speedup = tokens * t_base / t_round
        if best is None or speedup > best["speedup"]:
            best = {"gamma": gamma, "speedup": speedup, "expected_tokens": tokens,
                    "verify_ratio": t_verify / t_base, "c": t_draft / t_base,
                    "t_base": t_base, "t_draft": t_draft, "t_verify": t_verify, "t_round": t_round}
    if best["speedup"] <= 1.0:
        return 0, None
    return best["gamma"], best


def draft_ranks(logits, tokens):
    """Where the true next token ranks in the draft: logits [T, V], tokens [T] -> int64 [T−1];
    entry p = the number of vocab entries whose logit at p is strictly larger than that of
    tokens[p+1] (0 = the draft's first choice)."""
    logits = np.asarray(logits)
    tokens = np.asarray(tokens)
    if logits.ndim != 2 or tokens.ndim != 1 or logits.shape[0] != tokens.shape[0]:
        raise ValueError(f"need logits [T, V] and tokens [T], got {logits.shape} and {tokens.shape}")
    T = tokens.shape[0]
    if T < 2:
        return np.zeros(0, dtype=np.int64)
    rows = logits[:-1]                                      # [T−1, V]
    true = rows[np.arange(T - 1), tokens[1:]]              # [T−1]
    return np.sum(rows > true[:, None], axis=1).astype(np.int64)


def tree_accept_lengths(ranks, branching):
    """Greedy acceptance of a draft tree whose level j keeps the draft's top-k_j children of
    every node (branching = (k_1, ..., k_d); all ones = a chain of d drafts).

    ranks [N] (int): the true token's rank at each position. The accepted length from start t
    is the number of leading levels j = 0.. with ranks[t + j] < k_{j+1}, stopping at the end of
    the array (so a run may continue into whatever follows in `ranks`, e.g. the next sequence
    when the caller concatenated several).
    Returns (accepted int64 [N], nodes = Σ_j Π_{i≤j} k_i, the draft tokens verified per round).
    """
    ranks = np.asarray(ranks)
    branching = tuple(int(k) for k in branching)
    if ranks.ndim != 1:
        raise ValueError(f"ranks must be 1-D, got shape {ranks.shape}")
    if not branching or min(branching) < 1:
        raise ValueError(f"branching must be a non-empty tuple of positive ints, got {branching}")
    N = ranks.shape[0]
    accepted = np.zeros(N, dtype=np.int64)
    alive = np.ones(N, dtype=bool)          # still accepting at this level
    for j, k in enumerate(branching):
        ok = np.zeros(N, dtype=bool)
        if j < N:
            ok[:N - j] = ranks[j:] < k      # start t looks at position t + j
        alive &= ok
        accepted += alive
    nodes, width = 0, 1
    for k in branching:
        width *= k
        nodes += width
    return accepted, nodes


if __name__ == "__main__":
    from hw_specs import H100
    from llm_math import LLAMA31_8B

    assert LLAMA32_1B.n_params() == 1_235_814_400, LLAMA32_1B.n_params()
    assert LLAMA32_1B.streamed_params() == 1_235_814_400, LLAMA32_1B.streamed_params()  # tied
    assert LLAMA31_8B.n_params() == 8_030_261_248
    assert expected_tokens(1.0, 4) == 5.0 and abs(expected_tokens(0.5, 1) - 1.5) < 1e-12
    acc, nodes = tree_accept_lengths(np.array([0, 1, 0, 3, 0]), (2, 1))
    assert acc.tolist() == [1, 2, 1, 0, 1] and nodes == 4, (acc, nodes)
    r = draft_ranks(np.array([[0.0, 2.0, 1.0], [5.0, 5.0, 1.0], [0, 0, 0]]), np.array([0, 2, 1]))
    assert r.tolist() == [1, 0], r
    g, fig = best_round(LLAMA31_8B, LLAMA32_1B, H100, 1, 1024, 0.8, 1e-3, 0.3e-3)
    assert g >= 1 and fig["speedup"] <= expected_tokens(0.8, g)
    assert best_round(LLAMA31_8B, LLAMA31_8B, H100, 1, 1024, 0.0, 1e-3, 1e-3) == (0, None)
    print("decode_lab: parameter counts, expected_tokens, ranks, tree acceptance, best_round OK")
