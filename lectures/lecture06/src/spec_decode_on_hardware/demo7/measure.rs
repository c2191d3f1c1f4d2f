//! Demo 7's figures: every drafter run on the toy model, τ measured, and the conversions
//! to the lecture's card.

use decode_lab::{
    Draft, DynamicTree, PromptLookup, Sampling, Scenario, Seed, SpecStats, TreeShape,
    cost_coefficient, prompt_lookup_generate_batch, speculative_generate_batch,
    speculative_generate_dynamic_batch, tree_speedup,
};
use lecture_kit::Error;
use quant_lab::QCFG;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use transformer_lab::{TransformerLM, config_like};

use super::super::demo3::{BATCHES, CTX, LEVEL_COST, shape_label, toy_model};
use super::{
    DYNAMIC_DEPTH, DYNAMIC_WIDTH, Demo7, GAMMA, LookupRow, PROMPTS, SAMPLED, STATIC, SampledRow,
    SkipRow, TEMPERATURES, TreeRow,
};

fn tau(results: &[(Vec<u32>, SpecStats)]) -> f64 {
    let (rounds, generated) = results
        .iter()
        .fold((0, 0), |(r, g), (_, s)| (r + s.rounds, g + s.generated));
    generated as f64 / rounds as f64
}

/// Speedups of a round of `depth` levels and `nodes` drafted tokens at τ on demo 3's card,
/// at each batch of [`BATCHES`].
fn speedups(s: &Scenario, depth: u64, nodes: u64, tau: f64) -> Result<Vec<f64>, Error> {
    let tree = TreeShape::sized(depth, nodes)?;
    BATCHES
        .iter()
        .map(|&b| {
            Ok(tree_speedup(
                &Scenario { batch: b, ..*s },
                &Seed,
                &tree,
                tau,
            )?)
        })
        .collect()
}

/// Runs every drafter on the toy model and converts τ to the lecture's card.
pub fn figures(run: &toy_model::ToyRun) -> Result<Demo7, Error> {
    let target = run.target()?;
    let n = PROMPTS.min(run.prompts.nrows());
    let prompts: Vec<Vec<u32>> = (0..n).map(|i| run.prompts.row(i).to_vec()).collect();
    let n_new = toy_model::N_NEW;
    let card = Scenario {
        draft: Draft::FixedCost(LEVEL_COST),
        ctx: CTX,
        ..Scenario::LECTURE
    };
    let drafts = run.drafts()?;
    let identical = |r: &[(Vec<u32>, SpecStats)]| {
        r.iter()
            .enumerate()
            .all(|(i, (t, _))| run.generated.row(i).iter().eq(t))
    };
    let mut trees = Vec::new();
    for draft in &drafts {
        let rows = STATIC
            .par_iter()
            .map(|&levels| -> Result<[TreeRow; 2], Error> {
                let shape = TreeShape::new(levels)?;
                let mut rng = ChaCha8Rng::seed_from_u64(0);
                let fixed = speculative_generate_batch(
                    &target,
                    draft,
                    &prompts,
                    n_new,
                    &shape,
                    Sampling::Greedy,
                    &mut rng,
                )?;
                let nodes = shape.nodes();
                // Wide enough that the rerank has `nodes` candidates to choose from.
                let width = DYNAMIC_WIDTH.max((nodes as u32).div_ceil(DYNAMIC_DEPTH));
                let dynamic = DynamicTree::new(DYNAMIC_DEPTH, width, nodes as u32)?;
                let grown =
                    speculative_generate_dynamic_batch(&target, draft, &prompts, n_new, dynamic)?;
                let row = |label, depth, r: &[(Vec<u32>, SpecStats)]| -> Result<TreeRow, Error> {
                    Ok(TreeRow {
                        draft: draft_name(draft),
                        label,
                        nodes,
                        tau: tau(r),
                        speedup: speedups(&card, depth, nodes, tau(r))?,
                        identical: identical(r),
                    })
                };
                Ok([
                    row(shape_label(levels), levels.len() as u64, &fixed)?,
                    row(
                        format!("动态 {}", dynamic.label()),
                        u64::from(DYNAMIC_DEPTH),
                        &grown,
                    )?,
                ])
            })
            .collect::<Result<Vec<_>, Error>>()?;
        trees.extend(rows.into_iter().flatten());
    }
    let mut sampled = Vec::new();
    for draft in &drafts {
        for &t in &TEMPERATURES {
            for &levels in &SAMPLED {
                let mut rng = ChaCha8Rng::seed_from_u64(349);
                let r = speculative_generate_batch(
                    &target,
                    draft,
                    &prompts,
                    n_new,
                    &TreeShape::new(levels)?,
                    Sampling::Temperature(t),
                    &mut rng,
                )?;
                sampled.push(SampledRow {
                    draft: draft_name(draft),
                    label: shape_label(levels),
                    temperature: t,
                    tau: tau(&r),
                });
            }
        }
    }
    let (lookup, lookup_seconds) = lookups(&target, &prompts, n_new, &card)?;
    let layer_skip = layer_skip(run, &target, &prompts, n_new)?;
    Ok(Demo7 {
        prompts: n,
        n_new,
        trees,
        sampled,
        lookup,
        lookup_seconds,
        layer_skip,
    })
}

fn draft_name(draft: &TransformerLM<'_>) -> &'static str {
    toy_model::DRAFT_NAMES
        .iter()
        .copied()
        .find(|n| *n == draft.name())
        .unwrap_or("草稿")
}

/// Prompt lookup for n = 1 … 4: τ greedy and sampled, and the lookup's time measured
/// here (its c on the card is that time over a target step there).
fn lookups(
    target: &TransformerLM<'_>,
    prompts: &[Vec<u32>],
    n_new: usize,
    card: &Scenario,
) -> Result<(Vec<LookupRow>, f64), Error> {
    // One lookup on a sequence as long as the longest a round sees, timed many times.
    let probe: Vec<u32> = prompts[0]
        .iter()
        .copied()
        .cycle()
        .take(prompts[0].len() + n_new)
        .collect();
    let reps = 20_000u32;
    let start = std::time::Instant::now();
    let mut found = 0usize;
    for _ in 0..reps {
        found += decode_lab::speculative::lookup_proposal(
            std::hint::black_box(&probe),
            decode_lab::speculative::MAX_NGRAM as usize,
            GAMMA as usize,
        )
        .len();
    }
    std::hint::black_box(found);
    let seconds = start.elapsed().as_secs_f64() / f64::from(reps);
    let t_base = decode_lab::target_pass_time(card, 1)?;
    let c = (seconds / t_base).min(decode_lab::MAX_DRAFT_COST);
    let mut rows = Vec::new();
    for max_ngram in 1..=decode_lab::speculative::MAX_NGRAM {
        let lookup = PromptLookup {
            max_ngram,
            gamma: GAMMA,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(349);
        let greedy = prompt_lookup_generate_batch(
            target,
            prompts,
            n_new,
            lookup,
            Sampling::Greedy,
            &mut rng,
        )?;
        let hot = prompt_lookup_generate_batch(
            target,
            prompts,
            n_new,
            lookup,
            Sampling::Temperature(1.0),
            &mut rng,
        )?;
        let at_c = Scenario {
            draft: Draft::FixedCost(c),
            ..*card
        };
        rows.push(LookupRow {
            max_ngram,
            tau_greedy: tau(&greedy),
            tau_sampled: tau(&hot),
            speedup: speedups(&at_c, u64::from(GAMMA), u64::from(GAMMA), tau(&greedy))?,
        });
    }
    Ok((rows, seconds))
}

/// The target's first k layers drafting, k = 1 … layers − 1: τ on the toy model, c and
/// the speedup on the card's target cut to the same fraction of its layers.
fn layer_skip(
    run: &toy_model::ToyRun,
    target: &TransformerLM<'_>,
    prompts: &[Vec<u32>],
    n_new: usize,
) -> Result<Vec<SkipRow>, Error> {
    let card_layers = Scenario::LECTURE.target.n_layers;
    let toy_layers = QCFG.n_layers;
    (1..toy_layers)
        .into_par_iter()
        .map(|k| -> Result<SkipRow, Error> {
            let draft = TransformerLM::new(&run.params, config_like(&QCFG, k), "前 k 层")?;
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let r = speculative_generate_batch(
                target,
                &draft,
                prompts,
                n_new,
                &TreeShape::chain(GAMMA)?,
                Sampling::Greedy,
                &mut rng,
            )?;
            let layers = ((k as u64 * card_layers) as f64 / toy_layers as f64).round() as u64;
            let layers = layers.clamp(1, card_layers - 1);
            let mut c = Vec::new();
            let mut speedup = Vec::new();
            for &b in &BATCHES {
                let s = Scenario {
                    draft: Draft::FirstLayers { layers },
                    batch: b,
                    ctx: CTX,
                    ..Scenario::LECTURE
                };
                c.push(cost_coefficient(&s, &Seed)?);
                speedup.push(tree_speedup(&s, &Seed, &TreeShape::chain(GAMMA)?, tau(&r))?);
            }
            Ok(SkipRow {
                layers: k,
                card_layers: layers,
                tau: tau(&r),
                c,
                speedup,
                identical: r
                    .iter()
                    .enumerate()
                    .all(|(i, (t, _))| run.generated.row(i).iter().eq(t)),
            })
        })
        .collect()
}
