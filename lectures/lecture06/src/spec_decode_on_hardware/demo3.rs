//! Demo 3: tree verification — how much more a tree of draft candidates accepts than a
//! chain on the toy model, and what that buys on the setup's cards at batch 1 and 32;
//! figure `trees.svg`.

pub mod heads;
pub mod toy_model;

use decode_lab::{Draft, Scenario, TreeAcceptance, TreeShape, tree_speedup};
use lecture_flags::roofline::Roofline;
use lecture_kit::value::{self, fixed, int, join, label, missing, percent};
use lecture_kit::{
    Axis, Error, Figure, Observation, Out, Panel, Series, Value, always, seed, try_map, what_if,
};
use planner::flags::{Setup, Terms};
use serde::Serialize;

use self::heads::HEAD_NAMES;
use self::toy_model::{DraftRanks, ModelFlag, ToyModel};
use super::words::{break_even, cards, does_not_fit_line, fitting_batch, hw_name};

/// What demo 3 reads: the card, the target, the assumptions, the planner's terms and the
/// toy model. The acceptance is the toy model's and each draft priced as a fixed-cost
/// one-layer head, whatever `--draft` says.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize)]
pub struct Inputs {
    /// The card, the target and the assumptions.
    #[command(flatten)]
    #[serde(flatten)]
    pub roofline: Roofline,
    /// The cost terms engines show, none by default.
    #[command(flatten)]
    #[serde(flatten)]
    pub terms: Terms,
    /// The toy model the acceptance is measured on.
    #[command(flatten)]
    #[serde(flatten)]
    pub model: ModelFlag,
}

/// The chain whose per-position α the trained model's drafts report.
pub const ALPHA_POSITIONS: u32 = 4;
/// The acceptance per position lecture 6 assumes, from EAGLE's table 2 (Li et al. 2024):
/// about 0.65–0.8 on chat models.
pub const EAGLE_ALPHA: (f64, f64) = (0.65, 0.8);

/// The batch sizes on the cards.
pub const BATCHES: [u64; 2] = [1, 32];
/// The context on the cards.
pub const CTX: u64 = 1024;
/// The cost of one draft level in target steps (an EAGLE-style one-layer draft).
pub const LEVEL_COST: f64 = 0.05;
/// The draft shapes demos 3 and 4 run, in table order: per-level top-k (`[1; γ]` is a
/// chain of γ).
pub const SHAPES: [&[u32]; 9] = [
    &[1],
    &[1, 1],
    &[1, 1, 1, 1],
    &[1; 6],
    &[2, 2, 2],
    &[3, 3, 3],
    &[4, 2, 2, 1],
    &[8, 4, 2, 1],
    &[4, 4, 4, 4],
];

impl Inputs {
    /// The scenario on the cards — context [`CTX`], a draft at [`LEVEL_COST`] a level — and
    /// what prices its passes.
    pub fn setup(&self) -> Setup {
        let setup = self.terms.setup(&self.roofline, None);
        Setup {
            scenario: Scenario {
                draft: Draft::FixedCost(LEVEL_COST),
                ctx: CTX,
                ..setup.scenario
            },
            ..setup
        }
    }
}

impl lecture_kit::Inputs for Inputs {
    fn check(&self) -> Result<(), String> {
        self.terms.check(&self.roofline, None, 1, &[CTX])
    }

    /// The default setup, however spelled: the same scenario and pricing.
    fn is_default(&self) -> bool {
        let defaults = lecture_kit::inputs::defaults::<Inputs>();
        self.setup() == defaults.setup() && self.model == defaults.model
    }
}

/// What demo 3 computes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo3 {
    /// The context on the cards.
    pub ctx_tokens: u64,
    /// The batches on the cards.
    pub batches: [u64; 2],
    /// A draft level's cost, in target steps.
    pub draft_cost_per_level: f64,
    /// The k of the top-k fractions.
    pub top_k: [u32; 4],
    /// One entry per draft.
    pub drafts: Vec<DraftShapes>,
}

/// One draft's top-k fractions and shapes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DraftShapes {
    /// The draft's name.
    pub name: &'static str,
    /// The fraction of the target's tokens in the draft's top 1, 2, 4, 8.
    pub top_k_fraction: [f64; 4],
    /// On the trained model, α at each position of a chain of [`ALPHA_POSITIONS`]: the
    /// share of rounds that accept it among those that accepted every position before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha_per_position: Option<Vec<f64>>,
    /// One entry per shape of [`SHAPES`] the draft proposes (a head as deep as its
    /// levels, a draft model every one).
    pub shapes: Vec<Shape>,
}

/// A draft tree (or chain): its size, its τ on the toy model, its speedup on the cards.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shape {
    /// Its name in the tables: "链 γ=4", "树 4×2×2×1" ([`shape_label`]).
    pub label: String,
    /// The draft's top k at each level.
    pub branching: Vec<u32>,
    /// Draft tokens verified per round.
    pub nodes: u64,
    /// τ: the tokens a round yields on average.
    pub tau: f64,
    /// Its speedup at each batch of [`BATCHES`], `None` where the batch does not fit.
    pub speedup: Vec<Option<f64>>,
}

/// 演示 3: per draft of the toy model, how often its top k holds the target's token, and
/// each shape's τ and speedup on the setup's cards (none where a batch does not fit).
pub fn run(out: &mut Out, i: &Inputs) -> Result<(), Error> {
    out.header("演示 3：树形验证——每层取草稿的前 k 名，一次验证整棵树（贪心解码）");
    let model = i.model.model;
    let ranks = &toy_model::shared(model)?.ranks;
    let setup = i.setup();
    let s = setup.scenario;
    let p = setup.pricing();
    let hw = hw_name(&s);
    let fits = fitting_batch(&s, CTX)?;
    let mut drafts = Vec::new();
    for d in ranks {
        let top_k = [1, 2, 4, 8].map(|k| d.top_k_fraction(k));
        let fractions = join(top_k.map(|f| fixed(f, 2)), " / ");
        out.print(format!(
            "\n草稿：{}；正确答案在草稿的前 1/2/4/8 名里的比例：{fractions}",
            d.name
        ));
        let alphas = match model {
            ToyModel::Random => None,
            ToyModel::Trained => Some(chain_alphas(d, ALPHA_POSITIONS)),
        };
        if let Some(a) = &alphas {
            let a = join(a.iter().map(|&x| fixed(x, 2)), " / ");
            out.print(format!(
                "链 γ={ALPHA_POSITIONS} 各位置实测的接受率 α（前面都接受时，这一位也接受的比例）：{a}"
            ));
        }
        let mut shapes = Vec::new();
        for br in SHAPES.into_iter().filter(|br| d.drafts(br)) {
            let tree = TreeShape::new(br)?;
            let acc = d.accept(&tree)?;
            let x = |b| {
                let at = Scenario { batch: b, ..s };
                (b <= fits).then(|| tree_speedup(&at, p, &tree, acc.tau()))
            };
            shapes.push(Shape::new(
                br,
                &acc,
                try_map(BATCHES, |b| x(b).transpose())?,
            ));
        }
        let headers = ["草稿形状", "每轮验证的草稿 token", "τ = 每轮产出的 token"];
        let headers = headers.map(String::from).into_iter();
        let headers = headers.chain([format!("{hw} 加速 批 1"), "批 32".into()]);
        out.table(headers, shapes.iter().map(Shape::row))
            .id(format!("demo3_draft{}", drafts.len() + 1))
            .caption(caption(&s, d.name));
        if let Some(r) = d.rounds.as_ref().filter(|_| shapes.len() < SHAPES.len()) {
            out.print(format!(
                "（{} 最多起草 {} 层，更深的形状不列。）",
                d.name, r.levels
            ));
        }
        drafts.push(DraftShapes {
            name: d.name,
            top_k_fraction: top_k,
            alpha_per_position: alphas,
            shapes,
        });
    }
    out.print(format!(
        "\n（换算到 {hw} 时：目标 = {}、上下文 {CTX}；草稿每层的代价假设为目标一步的 {}（EAGLE 式的单层草稿），\
         树有几层就草稿几次；验证 = 一次送进\"节点数 + 1\"个 token。）",
        s.target.name,
        percent(LEVEL_COST)
    ));
    if model == ToyModel::Trained {
        out.print(
            "（训练过的模型：提示取自留出的代码文本；加速比仍按上面的假设给每个草稿定价，\
             两层的小草稿和目标的前几层其实更贵，τ 与 α 才是实测的。两个头的排名按轮计：\
             Medusa 每层都读这一轮起点的隐状态，EAGLE 每层读自己上一层起草的特征，所以更深的层要从每一轮的起点算起。）",
        );
    }
    // On the random model the trees' gain holds for every card; on the trained one it is
    // the script's sentence about the random model, and the measured one says otherwise.
    let trees_gain = "链式草稿越长，后面的位置越难全部猜中，τ 涨得越来越慢；树在每一层多放几个候选，只要正确答案在前几名里就能继续，\
             τ 明显更高——弱草稿受益更多（它的第一名常错，但前 4 名常对）。这是 SpecInfer、Medusa、EAGLE 用树的原因。";
    let trees_gain = match model {
        ToyModel::Random => always(trees_gain),
        ToyModel::Trained => seed(trees_gain),
    };
    let trained = match model {
        ToyModel::Random => None,
        ToyModel::Trained => Some(what_if(trained_summary(&drafts))),
    };
    out.observations(
        [trees_gain]
            .into_iter()
            .chain(trained)
            .chain([what_if(summary(&s, &drafts)?)])
            .chain(rest()),
    );
    out.figure(trees_figure(&s, &drafts));
    out.data(Demo3 {
        ctx_tokens: CTX,
        batches: BATCHES,
        draft_cost_per_level: LEVEL_COST,
        top_k: [1, 2, 4, 8],
        drafts,
    });
    Ok(())
}

/// The script's last two sentences.
fn rest() -> [Observation; 2] {
    [
        seed(
            "代价是每轮要验证的 token 多得多（几十到几百个）。批 1 时这些 token 几乎免费，大树加速最多；批 32 时，\
             32 × 几百个 token 让验证变成算力受限，大树反而比小树、甚至比链更慢。",
        ),
        always(
            "EAGLE 报告树形验证让平均接受长度多 0.6–0.8、加速比多 0.3–0.5（表 5、图 7）：接受长度涨得多，加速比涨得少，\
             就是因为每次前向的 token 变多了。EAGLE-2 进一步按草稿的置信度动态决定树的形状。",
        ),
    ]
}

/// α at each position 1..=`gamma` of a greedy chain of draft `d`, each sequence on its
/// own: among the rounds (one starting at every position) that accepted every position
/// before i and whose sequence has a token at position i, the share that accept it too
/// (the draft's first choice is the target's token); 0 where no round gets there. A
/// head's rounds are its own rows ([`DraftRanks::rounds`]).
pub fn chain_alphas(d: &DraftRanks, gamma: u32) -> Vec<f64> {
    let gamma = gamma as usize;
    let mut tried = vec![0usize; gamma + 1];
    let mut accepted = vec![0usize; gamma + 1];
    for round in d.rounds(usize::MAX) {
        let run = round.iter().take(gamma);
        let run = run.take_while(|&&r| r == 0).count();
        for i in 1..=gamma.min(round.len()) {
            if run >= i - 1 {
                tried[i] += 1;
                accepted[i] += usize::from(run >= i);
            }
        }
    }
    let alpha = |i: usize| match tried[i] {
        0 => 0.0,
        n => accepted[i] as f64 / n as f64,
    };
    (1..=gamma).map(alpha).collect()
}

/// The observation computed on the trained model: each draft's α₁, a chain of 4 against
/// the 14-node tree 2×2×2, and where α₁ stands against EAGLE's published range.
fn trained_summary(drafts: &[DraftShapes]) -> String {
    let chain = [1; ALPHA_POSITIONS as usize];
    let tree = [2, 2, 2];
    let tau = |d: &DraftShapes, branching: &[u32]| d.shape(branching).map(|s| s.tau);
    // Each draft that has its α₁ and both shapes (every draft of the trained run does).
    let measured: Vec<(&str, f64, f64, f64)> = drafts
        .iter()
        .filter_map(|d| {
            let alpha1 = *d.alpha_per_position.as_ref()?.first()?;
            Some((d.name, alpha1, tau(d, &chain)?, tau(d, &tree)?))
        })
        .collect();
    let each = measured.iter().map(|&(name, alpha1, on_chain, on_tree)| {
        format!(
            "「{name}」α₁ = {}，{} τ = {}，{}（14 个节点）τ = {}",
            fixed(alpha1, 2),
            shape_label(&chain),
            fixed(on_chain, 2),
            shape_label(&tree),
            fixed(on_tree, 2)
        )
    });
    let names = |keep: &dyn Fn(f64, f64, f64) -> bool| {
        let kept = measured.iter().filter(|&&(_, a, c, t)| keep(a, c, t));
        join(kept.map(|(name, ..)| format!("「{name}」")), "")
    };
    let deeper = names(&|_, on_chain, on_tree| on_chain >= on_tree);
    let depth = match deeper.is_empty() {
        true => format!(
            "每个草稿上，{} 都比 {} 接受得多。",
            shape_label(&tree),
            shape_label(&chain)
        ),
        false => format!(
            "{deeper}上，按这里的估计，4 个节点的链比 14 个节点的树接受得还多：草稿的第一名常对时，\
             节点放深比放宽值（这是按排名的估计，每个位置都当一轮的起点；真跑一遍见 --demo 4 --model trained）。"
        ),
    };
    let (lo, hi) = EAGLE_ALPHA;
    let band = [
        (format!("高于 {hi}"), names(&|a, _, _| a > hi)),
        (
            format!("在 {lo}–{hi} 之间"),
            names(&|a, _, _| (lo..=hi).contains(&a)),
        ),
        (format!("低于 {lo}"), names(&|a, _, _| a < lo)),
    ];
    let band = band.iter().filter(|(_, n)| !n.is_empty());
    let band = join(band.map(|(where_, n)| format!("{n}{where_}")), "，");
    format!(
        "训练过的模型上实测（留出的代码文本、贪心）：{}。{depth}\
         EAGLE 表 2 报告聊天模型上每个位置的 α 约 {lo}–{hi}（演示 1、2 假设的值）；这里的 α₁：{band}。{}",
        join(each, "；"),
        heads_compared(drafts)
    )
}

/// The sentence comparing the two heads, when both are there: α at each position of a
/// chain of [`ALPHA_POSITIONS`] and that chain's τ.
fn heads_compared(drafts: &[DraftShapes]) -> String {
    let chain = [1; ALPHA_POSITIONS as usize];
    let measured = |name: &str| {
        let d = drafts.iter().find(|d| d.name == name)?;
        Some((d.alpha_per_position.clone()?, d.shape(&chain)?.tau))
    };
    let [medusa, eagle] = HEAD_NAMES;
    let (Some((m, m_tau)), Some((e, e_tau))) = (measured(medusa), measured(eagle)) else {
        return String::new();
    };
    let slashed = |a: &[f64]| join(a.iter().map(|&x| fixed(x, 2)), " / ");
    let verdict = match e_tau > m_tau {
        true => "EAGLE 头接受得更多，和论文一致",
        false => "这里 Medusa 头接受得不比 EAGLE 头少，和论文相反",
    };
    // α at a deep position counts only the rounds that got there: the easy ones.
    let deep = match m.last() > m.first() {
        true => "；Medusa 深处的 α 反而高，是因为只有前几层都猜中的少数轮走得到那里",
        false => "",
    };
    format!(
        "两个头：「{eagle}」各位置 α {}、{} τ = {}，「{medusa}」{}、τ = {}——{verdict}\
         （EAGLE 论文 Li et al. 2024 图 1：MT-bench 上贪心解码，EAGLE 的加速比高于 Medusa）。\
         Medusa 的第 k 个头只看这一轮起点的隐状态、隔着 k 个位置去猜，EAGLE 头读自己上一层起草的特征和那一层的 token{deep}。",
        slashed(&e),
        shape_label(&chain),
        fixed(e_tau, 2),
        slashed(&m),
        fixed(m_tau, 2)
    )
}

/// The table's name for a shape: "链 γ=4" for a chain, "树 4×2×2×1" for a tree.
pub fn shape_label(branching: &[u32]) -> String {
    let levels: Vec<String> = branching.iter().map(u32::to_string).collect();
    match branching.iter().all(|&k| k == 1) {
        true => format!("链 γ={}", branching.len()),
        false => format!("树 {}", levels.join("×")),
    }
}

impl DraftShapes {
    /// Its shape of per-level top k `branching`, if the draft proposes it.
    pub fn shape(&self, branching: &[u32]) -> Option<&Shape> {
        self.shapes.iter().find(|s| s.branching == branching)
    }
}

impl Shape {
    /// The tree of per-level top k `branching`, accepted as `acc`, at `speedup`.
    pub fn new(branching: &[u32], acc: &TreeAcceptance, speedup: Vec<Option<f64>>) -> Self {
        Shape {
            label: shape_label(branching),
            branching: branching.to_vec(),
            nodes: acc.nodes,
            tau: acc.tau(),
            speedup,
        }
    }

    /// Its row in the tables: the label, the nodes and τ (two decimals) in tokens, then
    /// each speedup ("1.93×"), or "放不下" where the batch does not fit.
    pub fn row(&self) -> Vec<Value> {
        let nodes = int(self.nodes).unit("tokens");
        let tau = fixed(self.tau, 2).unit("tokens");
        let x = self.speedup.iter();
        let x = x.map(|x| x.map_or(missing("放不下"), value::speedup));
        [label(&self.label), nodes, tau]
            .into_iter()
            .chain(x)
            .collect()
    }
}

/// A draft's table caption.
fn caption(s: &Scenario, draft: &str) -> String {
    let hw = hw_name(s);
    format!(
        "演示 3：草稿「{draft}」的各种形状（{hw}、{}、上下文 {CTX}）",
        s.target.name
    )
}

/// The fastest of several options and its speedup, options without a speedup (where the
/// batch does not fit) left out; of equal speedups, the last. `None` when no option has
/// one.
pub fn fastest<L>(options: impl IntoIterator<Item = (L, Option<f64>)>) -> Option<(L, f64)> {
    let known = options.into_iter().filter_map(|(l, x)| Some((l, x?)));
    known.max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The observation computed for the setup: each draft's fastest shape at each batch.
fn summary(s: &Scenario, drafts: &[DraftShapes]) -> Result<String, Error> {
    let found = match s.memory()?.target_fits() {
        true => {
            let draft = |d: &DraftShapes| {
                let at_batch = BATCHES.iter().enumerate().map(|(k, b)| {
                    let best = fastest(d.shapes.iter().map(|s| (&s.label, s.speedup[k])));
                    let best = best.map(|(l, x)| format!("{l} {}", value::speedup(x)));
                    format!("批 {b} 最快是 {}", best.as_deref().unwrap_or("放不下"))
                });
                format!("草稿「{}」{}", d.name, join(at_batch, "，"))
            };
            format!("{}。", join(drafts.iter().map(draft), "；"))
        }
        false => does_not_fit_line(s),
    };
    Ok(format!(
        "本配置（{}、目标 {}）：{found}",
        cards(s),
        s.target.name
    ))
}

/// Figure `trees.svg`: dot plots over the draft shapes — each draft's τ (across the top),
/// then its speedup at batch 1 and 32 side by side on one shared scale with the 1.0× line;
/// a batch that does not fit on the cards says so in words.
pub fn trees_figure(s: &Scenario, drafts: &[DraftShapes]) -> Figure {
    let hw = hw_name(s);
    let tgt = s.target.name;
    let axis = || Axis::categories("草稿形状", SHAPES.map(shape_label).to_vec());
    let dots = |y: &dyn Fn(&Shape) -> Option<f64>| {
        // A draft's dot at each shape it proposes (a head: as deep as its levels).
        let series = drafts.iter().map(|d| {
            let ys = SHAPES.iter().map(|br| d.shape(br).and_then(y));
            Series::category_dots(d.name, ys)
        });
        series.collect::<Vec<_>>()
    };
    let title = "τ = 每轮产出的 token（玩具模型上实测的接受长度）";
    let tau = Panel::new(title, axis(), Axis::linear("τ（token）"));
    let mut panels = vec![tau.with(dots(&|s| Some(s.tau)))];
    // One speedup scale for every batch, so the panels compare at a glance; it shows 1×.
    let all = drafts.iter().flat_map(|d| &d.shapes);
    let all = all.flat_map(|s| s.speedup.iter().flatten().copied());
    let y = Axis::linear("加速比").times();
    let y = y.fit(all.chain([1.0]), 0.06, 0.05);
    for (k, b) in BATCHES.iter().enumerate() {
        let title = format!("批 {b}：{hw} 上的加速比（目标 {tgt}）");
        let mut panel = Panel::new(title, axis(), y.clone()).with(dots(&|s| s.speedup[k]));
        let on = cards(s);
        let why = || format!("批 {b} 放不下：{tgt} 在{on} 上装不下 {b} 个上下文 {CTX} 的序列。");
        break_even(&mut panel, why);
        panels.push(panel);
    }
    let title = format!("树形验证：τ 与 {hw} 上的加速比（目标 {tgt}）");
    // τ across the top, the two batches side by side below: a slide's shape, not a column.
    Figure::new(title, panels).id("trees").rows(&[1, 2])
}
