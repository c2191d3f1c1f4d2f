"""Speculative decoding on the roofline and on the toy model (SPEC.md §2, §3), recreated
for the seed scripts. Written from SPEC.md as a second implementation of the Rust
`decode_lab`."""
import numpy as np

from llm_math import ModelConfig, pass_time
from transformer_lab import TransformerLM, autoregressive_generate  # noqa: F401 (re-exported)

LLAMA32_1B = ModelConfig("Llama-3.2-1B", 16, 2048, 32, 8, 64, 8192, 128256, True)
MAX_GAMMA = 16


def verify_time(cfg, hw, B, ctx, n, overhead):
    """A target pass over n tokens per sequence, plus a fixed overhead, seconds."""
    return pass_time(cfg, hw, B, ctx, n) + overhead


def expected_tokens(alpha, gamma):
    """Tokens a round yields on average (Leviathan et al.): (1 − α^(γ+1)) / (1 − α)."""
    if alpha == 1:
        return gamma + 1
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def best_round(tgt, drf, hw, B, ctx, alpha, overhead_t, overhead_d):
    """The γ in 1..16 with the highest speedup of a round (γ draft steps, one verification),
    and its figures; (0, None) when no γ beats plain decoding."""
    t_base = verify_time(tgt, hw, B, ctx, 1, overhead_t)
    t_draft = verify_time(drf, hw, B, ctx, 1, overhead_d)
    best_g, best = 0, None
    for g in range(1, MAX_GAMMA + 1):
        t_verify = verify_time(tgt, hw, B, ctx, g + 1, overhead_t)
        t_round = g * t_draft + t_verify
        speedup = expected_tokens(alpha, g) * t_base / t_round
        if best is None or speedup > best["speedup"]:
            best_g = g
            best = {"speedup": speedup, "verify_ratio": t_verify / t_base, "c": t_draft / t_base,
                    "t_base": t_base, "t_draft": t_draft, "t_verify": t_verify, "t_round": t_round}
    if best["speedup"] <= 1.0:
        return 0, None
    return best_g, best


def draft_ranks(logits, tokens):
    """For p < T − 1: how many logits at p are strictly larger than that of tokens[p + 1]
    (0 = the draft's first choice). logits [T, V], tokens [T]."""
    t = len(tokens)
    return np.array([int((logits[p] > logits[p, tokens[p + 1]]).sum()) for p in range(t - 1)], dtype=np.int64)


def tree_accept_lengths(ranks, branching):
    """Greedy acceptance of a tree keeping the draft's top k_j at level j: from each start t,
    the number of leading levels j with ranks[t + j] < k_j (stopping at the array's end).
    Returns (accepted per start, draft tokens in the tree)."""
    n = len(ranks)
    acc = np.zeros(n, dtype=np.int64)
    for t in range(n):
        j = 0
        while j < len(branching) and t + j < n and ranks[t + j] < branching[j]:
            j += 1
        acc[t] = j
    nodes, width = 0, 1
    for k in branching:
        width *= k
        nodes += width
    return acc, nodes


if __name__ == "__main__":
    assert LLAMA32_1B.n_params() == 1_235_814_400
    assert LLAMA32_1B.streamed_params() == 1_235_814_400
    assert abs(expected_tokens(0.8, 4) - 3.3616) < 1e-12
    print("decode_lab: the published parameter count, Leviathan's expected tokens")
