//! Demo 1: one target and one draft at batch 1 — the draft cost coefficient c, what
//! feeding n tokens to one forward pass costs, the best γ for each α; figure `knee.svg`.

use decode_lab::{cost_coefficient, draft_step_time, expected_tokens};
use decode_lab::{target_pass_time, tree_speedup};
use lecture_kit::value::{fixed, int, py, ratio, time};
use lecture_kit::{Axis, Error, Figure, Out, Panel, Series, always, row, seed, what_if};
use serde_json::json;

use super::round::{Verification, free_up_to, slow_down};
use super::setup::Input::{self, Assumptions, DraftCosts, Gamma, Grid, Hw, Target, Tree};
use super::setup::Setup;
use super::text::{DEMO1_FASTER, DEMO1_FREE, demo1_c, draft_label, draft_share};

/// The setup inputs demo 1 reads (α is its own list).
pub const READS: &[Input] = &[
    Hw,
    Target,
    Input::Draft,
    Assumptions,
    DraftCosts,
    Gamma,
    Tree,
    Grid,
];
/// Tokens fed to one target pass, for the first table.
pub const DEMO1_NS: [u64; 10] = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257];
/// The second table's speedup column (the α and γ columns are short).
const SPEEDUP: &str = "加速比（一轮 = γ 次草稿 + 1 次验证）";

/// 演示 1: c, what verifying γ + 1 tokens costs, the best γ and speedup at each α.
///
/// Its JSON `data` (seconds): `batch`, `ctx_tokens`, `t_base_s`, `t_draft_s`, `c`; `forward`,
/// `{n, time_s}` per n of [`DEMO1_NS`]; `best`, `{alpha, round}` per α ([`super::Round`]);
/// `measured_tree`, `{tau, depth, nodes, speedup}` for `--tau`, else null.
pub fn run(out: &mut Out, setup: &Setup) -> Result<(), Error> {
    let (s, cards, label, gamma) = (setup.base, setup.cards(), setup.label(), setup.gamma_name());
    let (tgt, drf, batch, ctx) = (s.target.name, draft_label(&s.draft), s.batch, s.ctx);
    out.header(format!(
        "演示 1：{tgt} + {drf}，{cards}，批大小 {batch}、上下文 {ctx}"
    ));
    let fits = setup.fitting_batch(ctx)?;
    let no_kv = format!(
        "批 {batch}、上下文 {ctx} 的 KV cache 放不下：{cards} 最多装 {fits} 个这样的序列。"
    );
    if let Some(why) = setup.weights_problem()?.or((batch > fits).then_some(no_kv)) {
        out.print(why);
        out.figure(knee(setup)?);
        return Ok(());
    }
    let (t_base_s, t_draft_s) = (target_pass_time(&s, 1)?, draft_step_time(&s)?);
    let c = cost_coefficient(&s)?;
    let share = draft_share(&s.draft, &s.target);
    let (t, t_d, c3) = (time(t_base_s), time(t_draft_s), fixed(c, 3));
    out.print(format!(
        "目标模型普通 decode 一步 {t}；草稿模型一步 {t_d} → c = {c3}（{share}）"
    ));
    let (mut rows, mut forward, mut passes) = (Vec::new(), Vec::new(), Vec::new());
    for n in DEMO1_NS {
        let v = Verification::of(&s, n)?;
        let (t, r) = (time(v.t_verify_s), ratio(v.ratio(), 3));
        rows.push(row![int(n).unit("tokens"), t, r]);
        forward.push(json!({"n": n, "time_s": v.t_verify_s}));
        passes.push((n, v));
    }
    out.print("\n目标模型一次前向送进 n 个 token（验证 γ = n − 1 个草稿）要多久：");
    let caption = format!(
        "演示 1：{tgt} 在{cards} 上一次前向送进 n 个 token 的时间（批 {batch}、上下文 {ctx}）"
    );
    let table = out.table(["n", "时间", "相对 n = 1"], rows);
    table.id("demo1_forward").caption(caption);
    let (mut rows, mut best) = (Vec::new(), Vec::new());
    for alpha in [0.6, 0.7, 0.8, 0.9] {
        let r = setup.round(batch, ctx, alpha)?;
        let tokens = fixed(expected_tokens(alpha, r.gamma)?, 2).unit("tokens");
        let (g, x) = (r.gamma_value(), slow_down(r.speedup));
        rows.push(row![py(alpha), g, tokens, x]);
        best.push(json!({"alpha": alpha, "round": r}));
    }
    let caption = format!("演示 1：每个 α 的{gamma} 与加速比（{label}，批 {batch}）");
    let table = out.table(["α", gamma, "每轮 token", SPEEDUP], rows);
    table.id("demo1_best_gamma").caption(caption);
    let mut tree = None;
    if let Some((t, tau)) = &setup.measured_tree {
        let (tau, depth, nodes, speedup) = (*tau, t.depth(), t.nodes(), tree_speedup(&s, t, *tau)?);
        let (tau_, x) = (py(tau), slow_down(speedup));
        out.print(format!("\n给定实测的接受长度 τ = {tau_}（{depth} 层、{nodes} 个节点的树，草稿 {drf}）：加速 {x}。"));
        tree = Some(json!({"tau": tau, "depth": depth, "nodes": nodes, "speedup": speedup}));
    }
    // Up to which n a pass costs about the same as one token; when already n = 2 does not,
    // how much more it costs.
    let free = match (free_up_to(&passes), passes.get(1)) {
        (n, Some((2, v))) if n < 2 => {
            let more = fixed(100.0 * (v.ratio() - 1.0), 1);
            format!("多送 1 个 token（n = 2）就慢 {more}%")
        }
        (n, _) => format!("送进 n ≤ {n} 个 token 与只送 1 个相差不到 1%"),
    };
    let r = setup.round(batch, ctx, 0.8)?; // the summary's α
    let (x, c2) = (slow_down(r.speedup), fixed(c, 2));
    let at_08 = match r.speculate {
        true => format!("α = 0.8 时{gamma} = {}，加速 {x}", r.gamma_value()),
        false => "α = 0.8 时投机解码不划算".to_string(),
    };
    let summary = format!("本配置（{label}）：c = {c2}；批 {batch} 时{free}；{at_08}。");
    let (free, c_) = (seed(DEMO1_FREE), seed(demo1_c(c)));
    out.observations([what_if(summary), free, c_, always(DEMO1_FASTER)]);
    out.figure(knee(setup)?);
    let data = json!({"batch": batch, "ctx_tokens": ctx, "t_base_s": t_base_s, "c": c,
        "t_draft_s": t_draft_s, "forward": forward, "best": best, "measured_tree": tree});
    out.data(data);
    Ok(())
}

/// Figure `knee.svg`: one target pass's time against the tokens fed per sequence, 1 to
/// 4096 (log axes), at batches 1, 16, 64, 256 (those that fit), at demo 1's context: flat
/// while the pass only reads weights, rising once `batch · n` passes the critical batch.
pub fn knee(setup: &Setup) -> Result<Figure, Error> {
    let (tgt, ctx) = (setup.base.target.name, setup.base.ctx);
    let fits = setup.fitting_batch(ctx)?;
    let x = Axis::log("每个序列送进的 token 数 n（对数坐标）");
    let mut panel = Panel::new("", x, Axis::log("一次前向的时间（ms，对数坐标）"));
    for b in [1, 16, 64, 256].into_iter().filter(|&b| b <= fits) {
        let s = setup.scenario(b, ctx, setup.base.alpha);
        let point = |k| Ok((2f64.powi(k), 1e3 * target_pass_time(&s, 1 << k)?));
        let points = (0..13).map(point).collect::<Result<_, Error>>()?;
        panel.series.push(Series::line(format!("批 {b}"), points));
    }
    if panel.series.is_empty() {
        let why = setup.weights_problem()?;
        panel.message = Some(why.unwrap_or(format!("上下文 {ctx} 时，批 1 也放不下。")));
    }
    let title = format!("{tgt} 在{} 上一次前向的时间（上下文 {ctx}）", setup.cards());
    Ok(Figure::new(title, vec![panel]).id("knee"))
}
