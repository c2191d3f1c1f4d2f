//! Demo 7's figures: every drafter run on the toy model through the one decoding loop
//! (`decode_lab::speculative_generate_batch` with each drafter's proposer), τ measured, and
//! the conversions to the lecture's card.

use std::sync::Arc;

use decode_lab::speculative::{
    DynamicDraft, EagleDraft, EagleDynamic, MAX_NGRAM, MedusaDraft, PromptLookup, Proposer,
    TreeDraft, lookup_proposal,
};
use decode_lab::{
    Draft, Sampling, Scenario, Seed, SpecStats, TreeShape, cost_coefficient,
    speculative_generate_batch, tree_speedup,
};
use lecture_kit::Error;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use transformer_lab::{Config, Params, TransformerLM, config_like, greedy_generate};

use super::super::demo3::toy_model::{self, ToyModel};
use super::super::demo3::{BATCHES, CTX, LEVEL_COST, shape_label};
use super::super::demo4::greedy::{self, Outputs};
use super::medusa;
use super::rows::HeadRow;
use super::{
    DYNAMIC_DEPTH, DYNAMIC_WIDTH, Demo7, GAMMA, LookupRow, PROMPTS, SAMPLED, STATIC, SampledRow,
    SkipRow, TEMPERATURES, TreeRow,
};

/// One drafter of the lecture, as demo 7 runs it.
enum Drafter<'d, 'p> {
    /// A draft model's static tree (or chain): a smaller model, or the target's first
    /// layers.
    Tree(&'d TransformerLM<'p>, TreeShape),
    /// A draft model's dynamic trees (EAGLE-2).
    Dynamic(DynamicDraft<'d, 'p>),
    /// Prompt lookup, no model.
    Lookup(PromptLookup),
}

impl Drafter<'_, '_> {
    /// The drafter's run over `prompts`, `n_new` tokens each, at `sampling`, drawing from
    /// `rng` (greedy draws nothing).
    fn run(
        &self,
        target: &TransformerLM<'_>,
        prompts: &[Vec<u32>],
        n_new: usize,
        sampling: Sampling,
        rng: &mut ChaCha8Rng,
    ) -> Result<Outputs, Error> {
        let out = match self {
            Drafter::Tree(draft, shape) => {
                let proposer = TreeDraft { draft, shape };
                speculative_generate_batch(target, &proposer, prompts, n_new, sampling, rng)
            }
            Drafter::Dynamic(proposer) => {
                speculative_generate_batch(target, proposer, prompts, n_new, sampling, rng)
            }
            Drafter::Lookup(proposer) => {
                speculative_generate_batch(target, proposer, prompts, n_new, sampling, rng)
            }
        };
        Ok(out?)
    }
}

fn tau(results: &[(Vec<u32>, SpecStats)]) -> f64 {
    let (rounds, generated) = results
        .iter()
        .fold((0, 0), |(r, g), (_, s)| (r + s.rounds, g + s.generated));
    generated as f64 / rounds as f64
}

/// α per level over every sequence's rounds ([`SpecStats::per_level`]): accepted over
/// reached; `None` for a level no round reached.
fn alphas(results: &[(Vec<u32>, SpecStats)], depth: usize) -> Vec<Option<f64>> {
    let mut total = vec![(0, 0); depth];
    for (_, stats) in results {
        for (sum, (reached, accepted)) in total.iter_mut().zip(stats.per_level(depth)) {
            sum.0 += reached;
            sum.1 += accepted;
        }
    }
    total
        .into_iter()
        .map(|(reached, accepted)| (reached > 0).then(|| accepted as f64 / reached as f64))
        .collect()
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
    let names: Vec<&'static str> = run.draft_models.iter().map(|d| d.name).collect();
    let greedy = |drafter: &Drafter<'_, '_>, seed: u64| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        drafter.run(&target, &prompts, n_new, Sampling::Greedy, &mut rng)
    };
    let mut trees = Vec::new();
    for (k, (draft, &name)) in drafts.iter().zip(&names).enumerate() {
        let rows = STATIC
            .par_iter()
            .map(|&levels| -> Result<Vec<TreeRow>, Error> {
                let nodes = TreeShape::new(levels)?.nodes();
                // Wide enough that the rerank has `nodes` candidates to choose from.
                let width = DYNAMIC_WIDTH.max((nodes as u32).div_ceil(DYNAMIC_DEPTH));
                let dynamic = DynamicDraft {
                    draft,
                    depth: DYNAMIC_DEPTH,
                    width,
                    budget: nodes as u32,
                };
                let label = format!("动态 {}", dynamic.label());
                let row = |label: String, depth: u64, r: &Outputs| -> Result<TreeRow, Error> {
                    Ok(TreeRow {
                        draft: name,
                        label,
                        nodes,
                        tau: tau(r),
                        speedup: speedups(&card, depth, nodes, tau(r))?,
                        identical: identical_to(&run.generated, r),
                    })
                };
                // The static tree as demo 4 decodes it (the same run, kept once).
                let fixed = greedy::run(run, k, levels)?;
                let grown = greedy(&Drafter::Dynamic(dynamic), 0)?;
                Ok(vec![
                    row(shape_label(levels), levels.len() as u64, &fixed)?,
                    row(label, u64::from(DYNAMIC_DEPTH), &grown)?,
                ])
            })
            .collect::<Result<Vec<_>, Error>>()?;
        trees.extend(rows.into_iter().flatten());
    }
    let mut sampled = Vec::new();
    for (draft, &name) in drafts.iter().zip(&names) {
        for &t in &TEMPERATURES {
            for &levels in &SAMPLED {
                let drafter = Drafter::Tree(draft, TreeShape::new(levels)?);
                let mut rng = ChaCha8Rng::seed_from_u64(349);
                let r =
                    drafter.run(&target, &prompts, n_new, Sampling::Temperature(t), &mut rng)?;
                sampled.push(SampledRow {
                    draft: name,
                    label: shape_label(levels),
                    temperature: t,
                    tau: tau(&r),
                    alphas: alphas(&r, levels.len()),
                });
            }
        }
    }
    let (lookup, lookup_seconds) = lookups(&target, &prompts, n_new, &card)?;
    let generated = run.generated.slice(ndarray::s![..n, ..]).to_owned();
    // The trained model names its two targets; the random one has one.
    let trained = run.model == ToyModel::Trained;
    let plain = trained.then_some(PLAIN_TARGET);
    let mut skips = layer_skip(&run.params, run.cfg, &generated, &prompts, plain)?;
    if trained {
        // The same shape trained with early exits: its first layers against its own output.
        let lib = |e: train_lab::Error| Error::Library(e.to_string().into());
        let early = train_lab::shipped::layerskip().map_err(lib)?;
        let params = early.weights.to_params();
        let own = TransformerLM::new(&params, early.cfg, "LayerSkip")?;
        let generated = greedy_generate(&own, run.prompts.slice(ndarray::s![..n, ..]), n_new)?;
        let named = Some(LAYERSKIP_TARGET);
        skips.extend(layer_skip(&params, early.cfg, &generated, &prompts, named)?);
    }
    let heads = match trained {
        true => Some(head_figures(run, &prompts, n_new, &generated)?),
        false => None,
    };
    Ok(Demo7 {
        model: run.model,
        prompts: n,
        n_new,
        trees,
        sampled,
        lookup,
        lookup_seconds,
        layer_skip: skips,
        medusa: heads.as_ref().map_or(Vec::new(), |h| h.medusa.clone()),
        medusa_top1: heads.as_ref().map_or(Vec::new(), |h| h.medusa_top1.clone()),
        eagle: heads.as_ref().map_or(Vec::new(), |h| h.eagle.clone()),
        eagle_agreement: heads.as_ref().map(|h| h.eagle_agreement),
    })
}

/// One run of a draft head: its shape, its levels, its temperature (0: greedy).
type HeadRun = (TreeShape, &'static [u32], f64);

/// The runs of a draft head: a chain of [`GAMMA`] and [`STATIC`]'s trees greedy (T = 0),
/// [`SAMPLED`] at [`TEMPERATURES`]; each its shape, its levels and its temperature.
fn head_runs() -> Result<Vec<HeadRun>, Error> {
    const CHAIN: [u32; GAMMA as usize] = [1; GAMMA as usize];
    let greedy = std::iter::once(&CHAIN[..]).chain(STATIC).map(|s| (s, 0.0));
    let hot = TEMPERATURES
        .iter()
        .flat_map(|&t| SAMPLED.iter().map(move |&s| (s, t)));
    greedy
        .chain(hot)
        .map(|(levels, t)| Ok((TreeShape::new(levels)?, levels, t)))
        .collect()
}

/// A draft head's rows on `target` over `prompts`, `n_new` tokens each, each of `runs`
/// proposed by `proposer(shape)`; greedy output checked against the target's greedy output
/// `generated`; speedups on `card`. The greedy runs are demo 4's, of drafter `k` of `run`
/// ([`greedy::run`]).
fn head_rows<'s, P: Proposer>(
    (run, k): (&toy_model::ToyRun, usize),
    (target, prompts): (&TransformerLM<'_>, &[Vec<u32>]),
    (n_new, generated): (usize, &ndarray::Array2<u32>),
    (runs, card): (&'s [HeadRun], &Scenario),
    proposer: &dyn Fn(&'s TreeShape) -> P,
) -> Result<Vec<HeadRow>, Error> {
    let mut rows = Vec::new();
    for (shape, levels, t) in runs {
        let r = match *t {
            0.0 => greedy::run(run, k, levels)?,
            t => {
                let mut rng = ChaCha8Rng::seed_from_u64(349);
                let sampling = Sampling::Temperature(t);
                let p = proposer(shape);
                let r = speculative_generate_batch(target, &p, prompts, n_new, sampling, &mut rng);
                Arc::new(r?)
            }
        };
        rows.push(HeadRow {
            label: shape_label(levels),
            temperature: *t,
            nodes: shape.nodes(),
            tau: tau(&r),
            alphas: alphas(&r, levels.len()),
            speedup: speedups(card, levels.len() as u64, shape.nodes(), tau(&r))?,
            identical: (*t == 0.0).then(|| identical_to(generated, &r)),
        });
    }
    Ok(rows)
}

/// What the draft heads give on the trained target.
struct Heads {
    medusa: Vec<HeadRow>,
    medusa_top1: Vec<f64>,
    eagle: Vec<HeadRow>,
    eagle_agreement: (f64, f64),
}

/// Medusa's heads and EAGLE's head (`train_lab`'s shipped ones) on the trained `run`'s
/// target, as [`head_rows`] runs them: a level of Medusa's costs one head on the card
/// ([`medusa::card_cost`]), a level of EAGLE's a pass of its head (`Draft::Head`).
fn head_figures(
    run: &toy_model::ToyRun,
    prompts: &[Vec<u32>],
    n_new: usize,
    generated: &ndarray::Array2<u32>,
) -> Result<Heads, Error> {
    let target = run.target()?;
    let card = |draft: Draft| Scenario {
        draft,
        ctx: CTX,
        ..Scenario::LECTURE
    };
    let runs = head_runs()?;
    let trained = run.heads.as_ref().ok_or_else(|| {
        Error::Library("demo 7's heads run on the trained model, which has them".into())
    })?;
    let heads = &trained.medusa;
    let medusa_card = card(Draft::FixedCost(medusa::card_cost()));
    // Medusa's heads come after the draft models in demo 4's drafters, EAGLE's head next.
    let medusa_k = run.draft_models.len();
    let medusa = head_rows(
        (run, medusa_k),
        (&target, prompts),
        (n_new, generated),
        (&runs, &medusa_card),
        &|shape| MedusaDraft { heads, shape },
    )?;
    let head = trained.eagle.head()?;
    let eagle_card = card(Draft::Head);
    let mut eagle = head_rows(
        (run, medusa_k + 1),
        (&target, prompts),
        (n_new, generated),
        (&runs, &eagle_card),
        &|shape| EagleDraft { head: &head, shape },
    )?;
    // EAGLE-2's dynamic trees on the head, as many nodes as each static tree, after the
    // greedy rows.
    let mut dynamic = Vec::new();
    for levels in STATIC {
        let nodes = TreeShape::new(levels)?.nodes();
        let budget = nodes as u32;
        let proposer = EagleDynamic {
            head: &head,
            depth: DYNAMIC_DEPTH,
            width: DYNAMIC_WIDTH.max(budget.div_ceil(DYNAMIC_DEPTH)),
            budget,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(349);
        let r = speculative_generate_batch(
            &target,
            &proposer,
            prompts,
            n_new,
            Sampling::Greedy,
            &mut rng,
        )?;
        let depth = u64::from(DYNAMIC_DEPTH);
        dynamic.push(HeadRow {
            label: format!("动态 {}", proposer.label()),
            temperature: 0.0,
            nodes,
            tau: tau(&r),
            alphas: alphas(&r, DYNAMIC_DEPTH as usize),
            speedup: speedups(&eagle_card, depth, nodes, tau(&r))?,
            identical: Some(identical_to(generated, &r)),
        });
    }
    let greedy = runs.iter().filter(|r| r.2 == 0.0).count();
    eagle.splice(greedy..greedy, dynamic);
    Ok(Heads {
        medusa,
        medusa_top1: trained.medusa_top1.clone(),
        eagle,
        eagle_agreement: trained.eagle.agreement,
    })
}

/// The trained model's two targets in the layer-skip table.
pub const PLAIN_TARGET: &str = "训练过的目标";
/// See [`PLAIN_TARGET`].
pub const LAYERSKIP_TARGET: &str = "按 LayerSkip 训练的目标";

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
        let probe = std::hint::black_box(&probe);
        found += lookup_proposal(probe, MAX_NGRAM as usize, GAMMA as usize).len();
    }
    std::hint::black_box(found);
    let seconds = start.elapsed().as_secs_f64() / f64::from(reps);
    let t_base = decode_lab::target_pass_time(card, 1)?;
    let c = (seconds / t_base).min(decode_lab::MAX_DRAFT_COST);
    let mut rows = Vec::new();
    for max_ngram in 1..=MAX_NGRAM {
        let drafter = Drafter::Lookup(PromptLookup {
            max_ngram,
            gamma: GAMMA,
        });
        // One generator for both runs: greedy draws nothing from it.
        let mut rng = ChaCha8Rng::seed_from_u64(349);
        let greedy = drafter.run(target, prompts, n_new, Sampling::Greedy, &mut rng)?;
        let hot = drafter.run(target, prompts, n_new, Sampling::Temperature(1.0), &mut rng)?;
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
/// the speedup on the card's target cut to the same fraction of its layers. The target is
/// `params` of shape `cfg`, its greedy output on `prompts` `generated` (`[prompts,
/// n_new]`); `target` names it in the table (the trained model has two).
fn layer_skip(
    params: &Params,
    cfg: Config,
    generated: &ndarray::Array2<u32>,
    prompts: &[Vec<u32>],
    target: Option<&'static str>,
) -> Result<Vec<SkipRow>, Error> {
    let target_lm = TransformerLM::new(params, cfg, "目标")?;
    let card_layers = Scenario::LECTURE.target.n_layers;
    let toy_layers = cfg.n_layers;
    let n_new = generated.ncols();
    (1..toy_layers)
        .into_par_iter()
        .map(|k| -> Result<SkipRow, Error> {
            let draft = TransformerLM::new(params, config_like(&cfg, k), "前 k 层")?;
            let drafter = Drafter::Tree(&draft, TreeShape::chain(GAMMA)?);
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let r = drafter.run(&target_lm, prompts, n_new, Sampling::Greedy, &mut rng)?;
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
                target,
                layers: k,
                card_layers: layers,
                tau: tau(&r),
                c,
                speedup,
                identical: identical_to(generated, &r),
            })
        })
        .collect()
}

/// Whether every output of `r` equals the target's greedy one (a row of `generated`).
fn identical_to(generated: &ndarray::Array2<u32>, r: &[(Vec<u32>, SpecStats)]) -> bool {
    r.iter()
        .enumerate()
        .all(|(i, (t, _))| generated.row(i).iter().eq(t))
}
