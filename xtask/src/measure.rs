//! `cargo xtask train measure`: acceptance on the shipped trained models beside the
//! random-initialised one, as lecture 6's demo 3 measures it (greedy continuations of 64
//! held-out prompts, each draft's ranks of the target's bytes): α per position of a chain
//! of 4, τ per static shape, and the speedup on the lecture's H100 setup at batch 1 and 32
//! with demo 3's assumption of a draft level at 5% of a target step.

use decode_lab::{Draft, Scenario, Seed, TransformerLM, TreeShape, tree_speedup};
use train_lab::accept::{chain_alphas, continue_greedily, prompts, ranks, tau};
use train_lab::checkpoint::{Checkpoint, load};
use train_lab::recipe;
use transformer_lab::{Params, config_like, init_params};

/// Demo 3's shapes (per-level top k; `[1; γ]` is a chain).
const SHAPES: [&[u32]; 9] = [
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
/// Demo 3's cost of one draft level, in target steps, and its context.
const LEVEL_COST: f64 = 0.05;
const CTX: u64 = 1024;

/// A model: its name, weights and shape.
type Model<'a> = (String, &'a Params, transformer_lab::Config);
/// A target and its drafts.
type Pair<'a> = (String, &'a Params, transformer_lab::Config, Vec<Model<'a>>);

fn shipped(r: &recipe::Recipe) -> Result<Checkpoint, String> {
    load(&crate::root().join("crates/train_lab").join(r.file)).map_err(|e| e.to_string())
}

/// This machine's rate of `Array2::dot` on one thread (`matrixmultiply`, the products
/// training runs), 512 × 512 × 512 in f32, best of 10: the peak a training throughput is
/// set against.
fn dot_rate() -> f64 {
    let a = ndarray::Array2::<f32>::from_shape_fn((512, 512), |(i, j)| ((i * 7 + j) % 13) as f32);
    let mut best = f64::INFINITY;
    for _ in 0..10 {
        let start = std::time::Instant::now();
        let c = a.dot(&a);
        best = best.min(start.elapsed().as_secs_f64());
        std::hint::black_box(c);
    }
    2.0 * 512f64.powi(3) / best / 1e9
}

/// Prints the measurement.
pub fn run(held_out: &[u8]) -> Result<(), String> {
    let e = |e: train_lab::Error| e.to_string();
    crate::println_out(&format!(
        "Array2::dot 512³ f32 on one thread: {:.0} GFLOP/s",
        dot_rate()
    ));
    let p = prompts(held_out).map_err(e)?;
    let random = init_params(&transformer_lab::QCFG, 0).map_err(|e| e.to_string())?;
    let target = shipped(&recipe::target())?;
    let draft = shipped(&recipe::draft())?;
    let layerskip = shipped(&recipe::layerskip()).ok();
    let t_params = target.weights.to_params();
    let d_params = draft.weights.to_params();
    let mut pairs: Vec<Pair<'_>> = vec![
        (
            "random QCFG (seed 0)".into(),
            &random,
            transformer_lab::QCFG,
            vec![(
                "its first layer".into(),
                &random,
                config_like(&transformer_lab::QCFG, 1),
            )],
        ),
        (
            "trained target".into(),
            &t_params,
            target.cfg,
            vec![
                ("trained draft (2 × 64)".into(), &d_params, draft.cfg),
                (
                    "its first layer".into(),
                    &t_params,
                    config_like(&target.cfg, 1),
                ),
                (
                    "its first 2 layers".into(),
                    &t_params,
                    config_like(&target.cfg, 2),
                ),
            ],
        ),
    ];
    let distilled = shipped(&recipe::distilled()).ok();
    let s_params = distilled.as_ref().map(|d| d.weights.to_params());
    if let (Some(d), Some(sp)) = (&distilled, &s_params) {
        pairs[1]
            .3
            .insert(1, ("distilled draft (2 × 64)".into(), sp, d.cfg));
    }
    let l_params = layerskip.as_ref().map(|l| l.weights.to_params());
    if let (Some(l), Some(lp)) = (&layerskip, &l_params) {
        pairs.push((
            "LayerSkip-trained target".into(),
            lp,
            l.cfg,
            vec![
                ("its first layer".into(), lp, config_like(&l.cfg, 1)),
                ("its first 2 layers".into(), lp, config_like(&l.cfg, 2)),
                ("its first 3 layers".into(), lp, config_like(&l.cfg, 3)),
            ],
        ));
    }
    for (name, params, cfg, drafts) in &pairs {
        let tgt = TransformerLM::new(params, *cfg, name.as_str()).map_err(|e| e.to_string())?;
        let seqs = continue_greedily(&tgt, &p).map_err(e)?;
        for row in seqs.outer_iter().take(3) {
            let bytes: Vec<u8> = row.iter().map(|&b| b as u8).collect();
            let text = String::from_utf8_lossy(&bytes);
            crate::println_out(&format!("{name} writes: {:?}", text));
        }
        for (dname, dp, dcfg) in drafts {
            let d = TransformerLM::new(dp, *dcfg, dname.as_str()).map_err(|e| e.to_string())?;
            let r = ranks(&d, &seqs).map_err(e)?;
            let alphas = chain_alphas(&r, 4).map_err(e)?;
            let alphas: Vec<String> = alphas.iter().map(|a| format!("{a:.2}")).collect();
            crate::println_out(&format!(
                "\n{name}, draft {dname}: α at chain positions 1–4 {}",
                alphas.join(" / ")
            ));
            crate::println_out("  shape          nodes  τ      H100 ×, batch 1  batch 32");
            for br in SHAPES {
                let (t, nodes) = tau(&r, br).map_err(e)?;
                let tree = TreeShape::new(br).map_err(|e| e.to_string())?;
                let x = |b: u64| -> Result<f64, String> {
                    let s = Scenario {
                        draft: Draft::FixedCost(LEVEL_COST),
                        ctx: CTX,
                        batch: b,
                        ..Scenario::LECTURE
                    };
                    tree_speedup(&s, &Seed, &tree, t).map_err(|e| e.to_string())
                };
                let label: Vec<String> = br.iter().map(u32::to_string).collect();
                crate::println_out(&format!(
                    "  {:<14} {nodes:>5}  {t:.2}   {:.2}×            {:.2}×",
                    label.join("×"),
                    x(1)?,
                    x(32)?
                ));
            }
        }
    }
    Ok(())
}
