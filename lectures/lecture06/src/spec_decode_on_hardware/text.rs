//! The original script's sentences, in one place, the marker for the ones that hold only
//! for the default setup, and how the lecture names drafts, cards and memory.
//!
//! A demo lists these as `seed` observations: the kit prints them as written when none of
//! the demo's declared inputs differs from the default, and otherwise prints the demo's
//! computed sentence and these (as the default setup makes them) behind [`DEFAULT_ONLY`]
//! ([`default_only`], the lecture's [`lecture_kit::Inputs::default_only`]).

/// The marker put before an observation that only holds for the default setup.
pub const DEFAULT_ONLY: &str = "【此条针对默认配置：一块 H100、Llama-3.1-8B + Llama-3.2-1B】";

/// `sentence` marked as holding for the default setup only.
pub fn default_only(sentence: &str) -> String {
    format!("{DEFAULT_ONLY}{sentence}")
}

/// Demo 1, observation 1: verification is nearly free at batch 1.
pub const DEMO1_FREE: &str = "批大小 1 时，送进 2 个 token 和 33 个 token 几乎一样快（前 129 个 token 都在\"读权重\"的阴影里）：\
     decode 的算力利用率极低，验证几乎是免费的——Leviathan 的假设 (1) 在这里成立。";

/// Demo 1, observation 2, for the default setup's c.
pub fn demo1_c(c: f64) -> String {
    format!(
        "但 c 不小：1B 的草稿只读 8B 的约 15% 的字节，加上每步的固定开销，c ≈ {c:.2}。\
         按 04 演示 2 的表，c ≈ 0.2 时最优只草稿几个、加速 2 倍左右（α = 0.8）。"
    )
}

/// Demo 1, observation 3: how to go faster (holds for every setup).
pub const DEMO1_FASTER: &str = "想更快，要么草稿更便宜（EAGLE 那样的单层草稿、n-gram / 提示查找，或者放到 SRAM 芯片上，第 5 讲 §8），\
     要么更准（同系列的模型、在目标模型的输出上蒸馏），要么一次验证更多候选（演示 3 的树）。";

/// Demo 2, observation 1: big batches eat the gain.
pub const DEMO2_BATCH: &str = "批小时验证几乎免费，加速约 1.9 倍；批大到\"批 × (γ+1)\"超过临界批大小（H100 上按 60% / 80% 的效率约 220 个 token，\
     第 1 讲 §3.6），验证的时间就按 γ+1 增长，最优 γ 变小：批 128 时 1.6 倍、256 时 1.4 倍、512 时只剩 1.1 倍。";

/// Demo 2, observation 2: long contexts keep verification free.
pub const DEMO2_CONTEXT: &str = "长上下文时，显存先装不下大批（32K 上下文最多十几个序列），decode 一直受带宽限制，验证始终几乎免费——\
     投机解码在长上下文、小批的场景里最值钱。同一批大小下长上下文的加速略低，是因为草稿模型也要读自己的 KV，c 变大了。";

/// Demo 2, observation 3: batching and speculation compete (holds for every setup).
pub const DEMO2_COMPETE: &str = "所以\"批处理\"和\"投机\"在抢同一种资源——闲着的算力。连续批处理把批做大以后，留给投机解码的空间就少了；\
     服务系统要按负载决定用不用、草稿多长（vLLM、SGLang 都支持按批大小调整或关闭投机）。";

/// Demo 3, observation 1: trees accept more (a property of the toy model, every setup).
pub const DEMO3_TREES: &str = "链式草稿越长，后面的位置越难全部猜中，τ 涨得越来越慢；树在每一层多放几个候选，只要正确答案在前几名里就能继续，\
     τ 明显更高——弱草稿受益更多（它的第一名常错，但前 4 名常对）。这是 SpecInfer、Medusa、EAGLE 用树的原因。";

/// Demo 3, observation 2: what trees cost at batch 1 and 32.
pub const DEMO3_COST: &str = "代价是每轮要验证的 token 多得多（几十到几百个）。批 1 时这些 token 几乎免费，大树加速最多；批 32 时，\
     32 × 几百个 token 让验证变成算力受限，大树反而比小树、甚至比链更慢。";

/// Demo 3, observation 3: EAGLE's published figures (every setup).
pub const DEMO3_EAGLE: &str = "EAGLE 报告树形验证让平均接受长度多 0.6–0.8、加速比多 0.3–0.5（表 5、图 7）：接受长度涨得多，加速比涨得少，\
     就是因为每次前向的 token 变多了。EAGLE-2 进一步按草稿的置信度动态决定树的形状。";

/// How the lecture names what drafts: the model's name, "一层草稿头（EAGLE 式）", …
pub fn draft_label(draft: &decode_lab::Draft) -> String {
    use decode_lab::Draft;
    match draft {
        Draft::Model(m) => m.name.to_string(),
        Draft::Head => "一层草稿头（EAGLE 式）".to_string(),
        Draft::FixedCost(c) => format!("固定成本 c = {c}"),
        Draft::SelfSpec { kv_window } => format!("自投机（KV 窗口 {kv_window}）"),
    }
}

/// How demo 1 sizes the draft against the target: "草稿参数 1.24 B，是目标的 15%" for a
/// model, "草稿：一层草稿头（EAGLE 式）" for anything else.
pub fn draft_share(draft: &decode_lab::Draft, target: &llm_math::ModelConfig) -> String {
    use lecture_kit::value::{fixed, percent};
    match draft {
        decode_lab::Draft::Model(m) => {
            let p = m.n_params() as f64;
            let (b, f) = (fixed(p / 1e9, 2), percent(p / target.n_params() as f64));
            format!("草稿参数 {b} B，是目标的 {f}")
        }
        other => format!("草稿：{}", draft_label(other)),
    }
}

/// How the lecture names the cards: "一块 H100", "2 块 H100".
pub fn cards(tp: u64, hw: &str) -> String {
    if tp == 1 {
        format!("一块 {hw}")
    } else {
        format!("{tp} 块 {hw}")
    }
}

/// "目标模型 … 的权重 … 加上草稿 … 的权重 …，一块 H100 只有 80 GB 显存：放不下".
pub fn memory_line(m: &decode_lab::MemoryPlan) -> String {
    format!(
        "目标模型 {} 的权重 {:.1} GB 加上草稿 {} 的权重 {:.1} GB，{} 只有 {} GB 显存：{}",
        m.target,
        m.target_weights / 1e9,
        draft_label(&m.draft),
        m.draft_weights / 1e9,
        cards(m.cards, m.hw),
        m.capacity / 1e9,
        if m.weights_fit() {
            "放得下"
        } else {
            "放不下"
        }
    )
}
