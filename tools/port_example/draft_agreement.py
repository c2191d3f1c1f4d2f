"""
=============================================================================
CS349E · 第 91 讲（移植示例）· 01_draft_agreement.py —— 量化的草稿在哪里和目标分道扬镳
=============================================================================
【这个脚本要回答的问题】
  演示 1：第 3 讲的模型（目标）和它量化后的几个副本（草稿）各自贪心生成 32 个 token：
          从第几个 token 起和目标不同？同一批序列上，逐位置的第一选择有多少一致？
  演示 2：同样的格式放到 Llama-3.1-8B 上：权重占多少显存，一块 H100 能装多少个 4096 上下文的序列？
          （线性层按格式存，嵌入、LM head 与范数保持 16 位。）
【运行】python3 draft_agreement.py   （约 2 秒）
【依赖】numpy；tools/seed_modules 的 console、hw_specs、llm_math、quant_lab、transformer_lab。
"""
import numpy as np

from console import print_header, print_observations, print_table
from hw_specs import H100
from llm_math import LLAMA31_8B
from quant_lab import QCFG, quantize_params, sample_tokens
from transformer_lab import TransformerLM, autoregressive_generate, init_params

N_NEW = 32
CTX = 4096


def demo1_agreement():
    print_header(f"演示 1：量化的草稿贪心生成 {N_NEW} 个 token，从第几个起和目标不同")
    P = init_params(QCFG, seed=0)
    prompts = sample_tokens(P, QCFG, n_seq=16, length=8, seed=5)
    tgt = TransformerLM(P, QCFG, "目标")
    ref = autoregressive_generate(tgt, prompts, N_NEW, 0, None)[0]
    seqs = np.concatenate([prompts, ref], axis=1)
    top1 = tgt.full_logits(seqs).argmax(-1)
    rows = []
    for scheme in ("int8-g128", "int4-g128", "int4-g32"):
        bits, group = map(int, scheme[3:].split("-g"))
        Q = quantize_params(P, scheme, include_lm_head=True)[0]
        draft = TransformerLM(Q, QCFG, scheme)
        out = autoregressive_generate(draft, prompts, N_NEW, 0, None)[0]
        differs = out != ref
        first = np.where(differs.any(1), differs.argmax(1), N_NEW)
        agree = (draft.full_logits(seqs).argmax(-1) == top1).mean()
        rows.append([scheme, f"{bits + 16 / group:.2f}", f"{first.mean():.1f}",
                     int((first == N_NEW).sum()), f"{agree:.1%}"])
    print_table(["草稿", "每个权重的位数", "平均第几个 token 起不同", f"{N_NEW} 个全同的序列", "逐位置第一选择一致"], rows)
    print_observations([
        "位数越少，草稿越早和目标分道扬镳：贪心解码一步选错，后面的 token 就全不一样了，所以\"从第几个起不同\"比逐位置的一致率掉得快。",
        "逐位置的一致率就是投机解码里每个位置被接受的机会：int8 几乎处处一致，int4 每组 32 个权重一个尺度时也还过得去。",
    ])


def demo2_capacity():
    print_header(f"演示 2：Llama-3.1-8B 的权重格式与一块 H100 能装的 {CTX} 上下文序列")
    m = LLAMA31_8B
    sixteen = 2 * m.vocab * m.d_model + m.layers * 2 * m.d_model + m.d_model  # 嵌入、LM head、范数
    rows = []
    for fmt, bytes_per_weight in (("bf16", 2), ("fp8", 1), ("int4", 0.5)):
        weights = bytes_per_weight * (m.n_params() - sixteen) + 2 * sixteen
        fits = int((H100.memory_bytes - weights) // (CTX * m.kv_bytes_per_token()))
        rows.append([fmt, f"{weights / 1e9:.2f} GB", f"{weights / (2 * m.n_params()):.0%}", fits])
    print_table(["格式", "权重", "相对 bf16", "能装的序列"], rows)
    print_observations([
        f"嵌入和 LM head 有 {sixteen / 1e9:.2f} B 个参数，保持 16 位：int4 的权重只省到 bf16 的三成左右，不是四分之一。",
        "省下的显存全给了 KV cache：同一块卡，格式每降一级，能同时服务的长上下文序列就多一截。",
    ])


if __name__ == "__main__":
    demo1_agreement()
    demo2_capacity()
