//! Demo 7's Medusa rows, on the trained model only: the heads `cargo xtask train medusa`
//! trained on the frozen trained target (`train_lab::shipped::medusa`) propose demo 7's
//! chain and static trees, greedy and sampled, through the one decoding loop
//! (`decode_lab::speculative::MedusaDraft`).

use super::rows::{Demo7, HeadRow};
use crate::spec_decode_on_hardware::demo3::toy_model::TRAINED_DRAFT_NAMES;
use crate::spec_decode_on_hardware::demo3::{BATCHES, shape_label};
use decode_lab::Scenario;
use lecture_kit::value::{fixed, int, label, missing, speedup};
use lecture_kit::{Observation, Out, columns, row, what_if};

/// One head's cost on the card, as a fraction of a target step: its weights, a residual
/// block and its own LM head (`d² + d + d · vocab`), over what a target step reads. Each
/// level of a round reads one head.
pub fn card_cost() -> f64 {
    let t = Scenario::LECTURE.target;
    let head = t.d_model * t.d_model + t.d_model + t.d_model * t.vocab;
    head as f64 / t.streamed_params() as f64
}

/// The table of Medusa's rows; `top1`: each head's held-out top-1 (see
/// [`TrainedHeads::medusa_top1`](crate::spec_decode_on_hardware::demo3::heads::TrainedHeads::medusa_top1)).
pub fn print(out: &mut Out, rows: &[HeadRow], top1: &[f64]) {
    let t = Scenario::LECTURE.target;
    out.print(format!(
        "\nMedusa 头（Cai et al. 2024，Medusa-1：目标冻结，只训练头）：{} 个头接在训练过的目标最后一层的隐状态上，\
         第 k 个头猜下一个 token 之后第 k 个位置，每个头一层残差块加自己的 LM head（`cargo xtask train medusa`）；\
         留出文本上各头的第一名猜中的比例 {}。没有草稿模型：一轮的每一层都出自同一个隐状态，贪心时第 k 层的孩子在每个父节点下都一样（采样时各自从同一个分布里抽）。\
         卡上每层读一个头的权重，是 {} 一步的 {:.3}：",
        top1.len(),
        slashed(top1),
        t.name,
        card_cost()
    ));
    table(out, rows, "demo7_medusa");
}

/// A table of a draft head's rows, with `id`.
pub fn table(out: &mut Out, rows: &[HeadRow], id: &str) {
    let deepest = rows.iter().map(|r| r.alphas.len()).max().unwrap_or(0);
    let body = rows.iter().map(|r| {
        let temperature = match r.temperature {
            0.0 => label("贪心"),
            t => fixed(t, 1),
        };
        let mut cells = row![
            r.label.clone(),
            temperature,
            int(r.nodes as i64),
            fixed(r.tau, 2)
        ];
        cells.extend((0..deepest).map(|k| match r.alphas.get(k) {
            Some(Some(a)) => fixed(*a, 2),
            Some(None) => missing("未到"),
            None => missing("—"),
        }));
        cells.extend(r.speedup.iter().map(|&x| speedup(x)));
        cells.push(match r.identical {
            Some(true) => label("是"),
            Some(false) => label("否"),
            None => missing("—"),
        });
        cells
    });
    let levels = (1..=deepest).map(|k| format!("第 {k} 层 α"));
    let batches = BATCHES.iter().map(|b| format!("批 {b} 加速"));
    let headers = columns![
        "树",
        "温度",
        "节点",
        "实测 τ",
        ..levels,
        ..batches,
        "与目标逐字相同"
    ];
    out.table(headers, body).id(id);
}

/// `a / b / c`, two decimals, "—" for a missing value.
fn slashed<'a>(values: impl IntoIterator<Item = &'a f64>) -> String {
    let each = values.into_iter().map(|x| format!("{x:.2}"));
    each.collect::<Vec<_>>().join(" / ")
}

/// A trained draft model's figures beside which the heads are read.
struct DraftBeside<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its chain of `gamma` at T = 0.7: τ and α per position.
    pub chain: (f64, &'a [Option<f64>]),
    /// Its greedy τ on the static tree the heads do best with.
    pub tree_tau: Option<f64>,
}

/// What the heads show, computed: their chain of `gamma` at T = 0.7 beside `draft`'s, how
/// each head's own accuracy falls with k while α per level (conditional on reaching the
/// level) does not, their best greedy tree beside the draft's on the same tree.
fn compare(
    rows: &[HeadRow],
    top1: &[f64],
    gamma: u32,
    draft: Option<DraftBeside<'_>>,
) -> Observation {
    let levels = |a: &[Option<f64>]| -> String {
        let each = a
            .iter()
            .map(|x| x.map_or("—".to_string(), |x| format!("{x:.2}")));
        each.collect::<Vec<_>>().join(" / ")
    };
    let chain = rows.iter().find(|r| {
        r.temperature == 0.7 && r.nodes == u64::from(gamma) && r.alphas.len() == gamma as usize
    });
    let best = rows
        .iter()
        .filter(|r| r.temperature == 0.0)
        .max_by(|a, b| a.speedup[0].total_cmp(&b.speedup[0]));
    let (Some(chain), Some(best), Some(draft)) = (chain, best, draft) else {
        return what_if("Medusa 头：没有可比的链或草稿。");
    };
    let reached: Vec<f64> = chain.alphas.iter().flatten().copied().collect();
    let steps = reached.len() >= 2;
    let trend = match (steps, reached.windows(2).all(|w| w[1] > w[0])) {
        (false, _) => "这里不到两层，看不出走向",
        (true, true) => "这里一层比一层高",
        (true, false) if reached.windows(2).all(|w| w[1] < w[0]) => "这里一层比一层低",
        (true, false) => "这里有升有降",
    };
    let own = match top1.len() >= 2 && top1.windows(2).all(|w| w[1] < w[0]) {
        true => "随 k 下降：第 k 个头看不到它前面 k − 1 个草稿 token，只能从同一个隐状态往后猜",
        false => "并不随 k 下降",
    };
    let tree = draft.tree_tau.map_or(String::new(), |t| {
        format!("，{} 同样的树 τ {t:.2}", draft.name)
    });
    what_if(format!(
        "链 γ = {gamma}、T = 0.7：Medusa 头 τ {:.2}，逐层 α {}；{} τ {:.2}，逐层 α {}。\
         各头自己的第一名猜中比例（留出文本上）是 {}，{own}；\
         逐层 α 是条件比例，只算前面几层都接受了的轮，和头自己的猜中比例不是一回事，{trend}。贪心时 Medusa 头最好的是{}：τ {:.2}{tree}，\
         批 {} 加速 {:.2}×、批 {} {:.2}×。EAGLE（Li et al. 2024）让草稿层读目标的特征和前一个 token，补的正是头看不到前文这一点。",
        chain.tau,
        levels(&chain.alphas),
        draft.name,
        draft.chain.0,
        levels(draft.chain.1),
        slashed(top1),
        best.label,
        best.tau,
        BATCHES[0],
        best.speedup[0],
        BATCHES[1],
        best.speedup[1]
    ))
}

/// Medusa's heads beside the draft trained on the text: its chain of `gamma` at T = 0.7
/// and its greedy τ on the tree the heads do best with.
pub fn observation(d: &Demo7, gamma: u32) -> Observation {
    let name = TRAINED_DRAFT_NAMES[2];
    let chain = d.sampled.iter().find(|s| {
        s.draft == name && s.temperature == 0.7 && s.label == shape_label(&vec![1; gamma as usize])
    });
    let best = d
        .medusa
        .iter()
        .filter(|r| r.temperature == 0.0)
        .max_by(|a, b| a.speedup[0].total_cmp(&b.speedup[0]));
    let tree_tau = best.and_then(|b| {
        let same = d
            .trees
            .iter()
            .find(|t| t.draft == name && t.label == b.label);
        same.map(|t| t.tau)
    });
    let draft = chain.map(|c| DraftBeside {
        name,
        chain: (c.tau, &c.alphas),
        tree_tau,
    });
    compare(&d.medusa, &d.medusa_top1, gamma, draft)
}
