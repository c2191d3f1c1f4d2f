//! Lecture 3's toy model as demos 3 and 4 use it (the script's `toy_ranks`): the target
//! generates greedily after its prompts, and the drafts rank the target's tokens among
//! their candidates.
//!
//! `--model random` (the default) is the script's: the random-initialised model, prompts
//! sampled from it, its first layer and its int4 copy as drafts. `--model trained` runs the
//! same measurement on the models `train_lab` trained on code (its shipped files): prompts
//! from the held-out text, and beside the same two drafts, the draft trained on the text,
//! the one distilled on the target, and the heads trained on the frozen target (Medusa's,
//! EAGLE's: [`super::heads`]).

use std::sync::{Arc, Mutex, OnceLock};

use decode_lab::{
    TransformerLM, TreeAcceptance, TreeShape, draft_ranks, round_accept_lengths,
    tree_accept_lengths,
};
use lecture_kit::Error;
use ndarray::{Array2, Axis, concatenate, s};
use quant_lab::{QCFG, Scheme, quantize_params, sample_tokens};
use serde::Serialize;
use transformer_lab::{Config, Params, config_like, greedy_generate, init_params};

use super::heads::{self, HEAD_NAMES, TrainedHeads};

/// Sequences the target generates.
pub const N_SEQ: usize = 64;
/// Prompt tokens per sequence (sampled from the model itself).
pub const PROMPT_LEN: usize = 8;
/// Tokens the target generates greedily after each prompt. Only 48: a random model
/// decoding greedily for long falls into repetition loops, which would inflate the
/// acceptance rate.
pub const N_NEW: usize = 48;
/// The strong draft's quantization: 4-bit weights, one scale per 32 (int4-g32).
pub const INT4_G32: Scheme = Scheme { bits: 4, group: 32 };
/// The names of the random model's drafts, in order: the target's first layer, and the
/// target in int4.
pub const DRAFT_NAMES: [&str; 2] = ["只用前 1 层（弱）", "INT4 量化的自己（强）"];
/// The names of the trained model's drafts, in order: the target's first layer and its
/// int4 copy (as the random model's), the draft trained on the text, the draft distilled
/// on the target's distributions.
pub const TRAINED_DRAFT_NAMES: [&str; 4] = [
    "只用前 1 层（未为早退训练）",
    "INT4 量化的自己",
    "训练过的小草稿（2 层、d 64）",
    "蒸馏的小草稿（2 层、d 64）",
];

/// Which toy model demos 3, 4 and 7 measure (`--model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToyModel {
    /// Lecture 3's model with random weights (init_params(QCFG, 0)), as the script runs it.
    #[default]
    Random,
    /// The same shape trained on code by train_lab, with drafts trained for real
    /// (crates/train_lab/data; not in the page).
    Trained,
}

/// The `--model` flag, for the demos that run the toy model (demo 3 reads it with its
/// other inputs; demos 4 and 7 read only it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::Args, Serialize)]
pub struct ModelFlag {
    /// The toy model demos 3, 4 and 7 measure: random (the script's random-initialised
    /// model) or trained (the same shape trained on code, with drafts trained for real).
    #[arg(long, value_enum, default_value_t = ToyModel::Random)]
    #[serde(skip_serializing_if = "ToyModel::is_random")]
    pub model: ToyModel,
}

impl ToyModel {
    /// Whether this is the script's model: exports name the model only when it is not, so
    /// the default export stays the script's.
    pub fn is_random(&self) -> bool {
        *self == ToyModel::Random
    }
}

impl lecture_kit::Inputs for ModelFlag {}

/// How deep a head's ranks go: EAGLE's head drafts as deep as demo 3's deepest shape.
pub const HEAD_LEVELS: usize = 6;

/// One draft's ranks of the target's generated tokens, every sequence's one after the
/// other (as the script concatenates them): 0 = the draft's first choice.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftRanks {
    /// The draft's name as printed.
    pub name: &'static str,
    /// `N_SEQ · N_NEW` ranks, sequence after sequence: at each position, the rank of the
    /// target's next token among the draft's first guesses there.
    pub ranks: Vec<u32>,
    /// A draft head's ranks level by level, round by round (`None` for a draft model,
    /// whose rank at a position is the same from any round's start).
    pub rounds: Option<RoundRanks>,
}

/// A draft head's ranks level by level: its guess at a level depends on where the round
/// started, so each round has its own row.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundRanks {
    /// The levels the head drafts.
    pub levels: usize,
    /// `N_SEQ · N_NEW` rows, one per round start (the same positions as
    /// [`DraftRanks::ranks`], whose entries are the rows' first), each the ranks of the
    /// target's tokens at levels 1, 2, … as far as the sequence goes.
    pub rows: Vec<Vec<u32>>,
}

impl DraftRanks {
    /// The fraction of the target's tokens among the draft's top `k` (rank below `k`):
    /// the script's `(rk < k).mean()`; 0 when there are none.
    pub fn top_k_fraction(&self, k: u32) -> f64 {
        let hits = self.ranks.iter().filter(|&&r| r < k).count();
        match self.ranks.len() {
            0 => 0.0,
            n => hits as f64 / n as f64,
        }
    }

    /// The ranks of each sequence.
    pub fn per_sequence(&self) -> Vec<&[u32]> {
        self.ranks.chunks(N_NEW).collect()
    }

    /// Whether the draft proposes trees as deep as `branching`: a draft model any, a
    /// head as deep as its levels.
    pub fn drafts(&self, branching: &[u32]) -> bool {
        self.rounds
            .as_ref()
            .is_none_or(|r| branching.len() <= r.levels)
    }

    /// The ranks by level of a round from each position of the first `sequences`
    /// sequences: a head's rows, a draft model's ranks from that position on within its
    /// sequence.
    pub fn rounds(&self, sequences: usize) -> Vec<&[u32]> {
        let n = sequences.saturating_mul(N_NEW);
        match &self.rounds {
            Some(r) => r.rows.iter().take(n).map(Vec::as_slice).collect(),
            None => {
                let seqs = self.per_sequence().into_iter().take(sequences);
                seqs.flat_map(|q| (0..q.len()).map(move |t| &q[t..]))
                    .collect()
            }
        }
    }

    /// Demo 3's acceptance of `tree` at every position: a draft model's over its ranks
    /// concatenated, as the script computes it (a round near a sequence's end runs on into
    /// the next one's ranks); a head's round by round.
    ///
    /// Errors: a tree known only by its size.
    pub fn accept(&self, tree: &TreeShape) -> Result<TreeAcceptance, decode_lab::Error> {
        match &self.rounds {
            Some(r) => round_accept_lengths(&r.rows, tree),
            None => tree_accept_lengths(&self.ranks, tree),
        }
    }

    /// The acceptance of `tree` on the first `sequences` sequences, each round within its
    /// own sequence ([`DraftRanks::rounds`]): what demo 4 sets beside decoding for real.
    ///
    /// Errors: a tree known only by its size.
    pub fn accept_within(
        &self,
        sequences: usize,
        tree: &TreeShape,
    ) -> Result<TreeAcceptance, decode_lab::Error> {
        round_accept_lengths(&self.rounds(sequences), tree)
    }
}

/// Where a draft's weights come from.
#[derive(Debug, Clone)]
pub enum DraftWeights {
    /// The target's own (a draft of its first layers).
    Target,
    /// Its own.
    Own(Params),
}

/// One draft of the run: its name, weights and shape.
#[derive(Debug, Clone)]
pub struct DraftModel {
    /// The draft's name as printed.
    pub name: &'static str,
    /// Its weights.
    pub weights: DraftWeights,
    /// Its shape.
    pub cfg: Config,
}

/// Everything the toy model run computes, kept for demos 4 and 7.
#[derive(Debug, Clone)]
pub struct ToyRun {
    /// Which model.
    pub model: ToyModel,
    /// The target's weights (`init_params(QCFG, 0)`, or the trained target's).
    pub params: Params,
    /// The target's shape (`QCFG`).
    pub cfg: Config,
    /// The drafts, in table order.
    pub draft_models: Vec<DraftModel>,
    /// The prompts, `[N_SEQ, PROMPT_LEN]`.
    pub prompts: Array2<u32>,
    /// The target's greedy continuations, `[N_SEQ, N_NEW]`.
    pub generated: Array2<u32>,
    /// Every draft's ranks of the generated tokens: the draft models' ([`ToyRun::drafts`]),
    /// then on the trained model the heads' ([`HEAD_NAMES`]).
    pub ranks: Vec<DraftRanks>,
    /// The trained target's heads (`None` on the random model).
    pub heads: Option<TrainedHeads>,
}

impl ToyRun {
    /// The target model.
    pub fn target(&self) -> Result<TransformerLM<'_>, Error> {
        Ok(TransformerLM::new(&self.params, self.cfg, "目标")?)
    }

    /// The drafts, in table order ([`DRAFT_NAMES`] or [`TRAINED_DRAFT_NAMES`]).
    pub fn drafts(&self) -> Result<Vec<TransformerLM<'_>>, Error> {
        let mut drafts = Vec::new();
        for d in &self.draft_models {
            let params = match &d.weights {
                DraftWeights::Target => &self.params,
                DraftWeights::Own(p) => p,
            };
            drafts.push(TransformerLM::new(params, d.cfg, d.name)?);
        }
        Ok(drafts)
    }
}

/// On lecture 3's model: the target greedily generates 64 sequences (8 prompt tokens + 48
/// new ones each); each draft then computes its logits on those real sequences, and we
/// record where the target's token ranks among the draft's candidates.
pub fn toy_ranks() -> Result<ToyRun, Error> {
    let p = init_params(&QCFG, 0)?;
    let prompts = sample_tokens(&p, &QCFG, N_SEQ, PROMPT_LEN, 3)?;
    let (int4, _) = quantize_params(&p, INT4_G32, true)?;
    let draft_models = vec![
        DraftModel {
            name: DRAFT_NAMES[0],
            weights: DraftWeights::Target,
            cfg: config_like(&QCFG, 1),
        },
        DraftModel {
            name: DRAFT_NAMES[1],
            weights: DraftWeights::Own(int4),
            cfg: QCFG,
        },
    ];
    measure(ToyModel::Random, p, QCFG, draft_models, prompts)
}

/// The same measurement on the trained models (`train_lab::shipped`): the trained target
/// continues the held-out prompts; its first layer, its int4 copy, the trained draft, the
/// distilled draft and the two heads rank its tokens.
pub fn trained_ranks() -> Result<ToyRun, Error> {
    let lib = |e: train_lab::Error| Error::Library(e.to_string().into());
    let target = train_lab::shipped::target().map_err(lib)?;
    let draft = train_lab::shipped::draft().map_err(lib)?;
    let distilled = train_lab::shipped::distilled().map_err(lib)?;
    let prompts = train_lab::shipped::prompts().map_err(lib)?;
    let p = target.weights.to_params();
    let (int4, _) = quantize_params(&p, INT4_G32, true)?;
    let own = |name, weights: DraftWeights, cfg| DraftModel { name, weights, cfg };
    let draft_models = vec![
        own(
            TRAINED_DRAFT_NAMES[0],
            DraftWeights::Target,
            config_like(&target.cfg, 1),
        ),
        own(TRAINED_DRAFT_NAMES[1], DraftWeights::Own(int4), target.cfg),
        own(
            TRAINED_DRAFT_NAMES[2],
            DraftWeights::Own(draft.weights.to_params()),
            draft.cfg,
        ),
        own(
            TRAINED_DRAFT_NAMES[3],
            DraftWeights::Own(distilled.weights.to_params()),
            distilled.cfg,
        ),
    ];
    let mut run = measure(ToyModel::Trained, p, target.cfg, draft_models, prompts)?;
    let heads = heads::load(&run.params)?;
    let seqs = concatenate(Axis(1), &[run.prompts.view(), run.generated.view()])?;
    // The round from position p of a sequence guesses its token p + 1 first, as a draft
    // model's rank at p: roots from the prompt's last token.
    let roots = (PROMPT_LEN - 1, N_NEW);
    let rows = heads.round_ranks(&run.target()?, seqs.view(), roots, HEAD_LEVELS)?;
    let levels = [heads.medusa.len(), HEAD_LEVELS];
    for ((name, rows), levels) in HEAD_NAMES.into_iter().zip(rows).zip(levels) {
        let first = rows.iter().map(|r| r.first().copied());
        let ranks = first.collect::<Option<Vec<u32>>>().ok_or_else(|| {
            Error::Library(format!("{name}: a round with nothing to rank").into())
        })?;
        run.ranks.push(DraftRanks {
            name,
            ranks,
            rounds: Some(RoundRanks { levels, rows }),
        });
    }
    run.heads = Some(heads);
    Ok(run)
}

/// The target continues `prompts` greedily; each draft ranks the target's tokens.
fn measure(
    model: ToyModel,
    params: Params,
    cfg: Config,
    draft_models: Vec<DraftModel>,
    prompts: Array2<u32>,
) -> Result<ToyRun, Error> {
    let tgt = TransformerLM::new(&params, cfg, "目标")?;
    let generated = greedy_generate(&tgt, prompts.view(), N_NEW)?;
    let seqs = concatenate(Axis(1), &[prompts.view(), generated.view()])?;
    let mut run = ToyRun {
        model,
        params,
        cfg,
        draft_models,
        prompts,
        generated,
        ranks: Vec::new(),
        heads: None,
    };
    let names: Vec<&'static str> = run.draft_models.iter().map(|d| d.name).collect();
    let mut out = Vec::new();
    for (name, dr) in names.into_iter().zip(run.drafts()?) {
        let lg = dr.full_logits(seqs.view())?;
        let mut ranks = Vec::new();
        for i in 0..seqs.nrows() {
            let first = PROMPT_LEN - 1;
            ranks.extend(draft_ranks(
                lg.slice(s![i, first.., ..]),
                seqs.slice(s![i, first..]),
            )?);
        }
        out.push(DraftRanks {
            name,
            ranks,
            rounds: None,
        });
    }
    run.ranks = out;
    Ok(run)
}

/// The run of `model`, computed once per process: demos 3, 4 and 7 share it.
pub fn shared(model: ToyModel) -> Result<&'static ToyRun, Error> {
    static RANDOM: OnceLock<Result<ToyRun, String>> = OnceLock::new();
    static TRAINED: OnceLock<Result<ToyRun, String>> = OnceLock::new();
    let toy = match model {
        ToyModel::Random => RANDOM.get_or_init(|| toy_ranks().map_err(|e| e.to_string())),
        ToyModel::Trained => TRAINED.get_or_init(|| trained_ranks().map_err(|e| e.to_string())),
    };
    toy.as_ref().map_err(|e| Error::Library(e.clone().into()))
}

/// Figures of a demo on each toy model, computed once per process and kept until
/// forgotten: the command line computes them once, and a test process that prints a demo
/// many ways (every demo, the sweep, the claims on its figures) decodes once per model.
pub struct Kept<T> {
    random: Mutex<Option<Arc<T>>>,
    trained: Mutex<Option<Arc<T>>>,
}

impl<T> Kept<T> {
    /// Nothing kept yet.
    pub const fn new() -> Self {
        Kept {
            random: Mutex::new(None),
            trained: Mutex::new(None),
        }
    }

    fn cell(&self, model: ToyModel) -> std::sync::MutexGuard<'_, Option<Arc<T>>> {
        let cell = match model {
            ToyModel::Random => &self.random,
            ToyModel::Trained => &self.trained,
        };
        cell.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The figures kept for `model`, or `compute`'s, kept if it succeeds. A second caller
    /// for the same model waits for the first instead of computing them again (so
    /// `compute` must not ask for the same model's figures, not even from a rayon task).
    pub fn get_or_compute(
        &self,
        model: ToyModel,
        compute: impl FnOnce() -> Result<T, Error>,
    ) -> Result<Arc<T>, Error> {
        let mut cell = self.cell(model);
        if let Some(kept) = cell.as_ref() {
            return Ok(Arc::clone(kept));
        }
        let figures = Arc::new(compute()?);
        *cell = Some(Arc::clone(&figures));
        Ok(figures)
    }

    /// Forgets what is kept for `model`: the next call computes it again.
    pub fn forget(&self, model: ToyModel) {
        *self.cell(model) = None;
    }
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_figures_are_computed_once_per_model_until_forgotten_and_a_failure_is_not_kept() {
        let kept: Kept<usize> = Kept::new();
        let calls = std::cell::Cell::new(0);
        // What `model` gets, offering `n` if anything is computed.
        let get = |model: ToyModel, n: usize| {
            let figures = kept.get_or_compute(model, || {
                calls.set(calls.get() + 1);
                Ok(n)
            });
            *figures.unwrap()
        };
        let fail =
            |model: ToyModel| kept.get_or_compute(model, || Err(Error::Library("no".into())));
        assert_eq!([get(ToyModel::Random, 1), get(ToyModel::Random, 2)], [1, 1]);
        assert_eq!(get(ToyModel::Trained, 3), 3);
        assert_eq!(calls.get(), 2);
        kept.forget(ToyModel::Random);
        assert_eq!(
            [get(ToyModel::Random, 4), get(ToyModel::Trained, 5)],
            [4, 3]
        );
        assert_eq!(
            *fail(ToyModel::Random).unwrap(),
            4,
            "kept, nothing computed"
        );
        kept.forget(ToyModel::Trained);
        assert!(fail(ToyModel::Trained).is_err());
        assert_eq!(get(ToyModel::Trained, 6), 6, "the failure was not kept");
        assert_eq!(calls.get(), 4);
    }

    #[test]
    fn the_top_k_fraction_counts_ranks_below_k() {
        // Seven tokens; by hand: 3 first choices, 5 in the top 2, 6 in the top 4, all 7 in
        // the top 8.
        let d = DraftRanks {
            name: "手算",
            ranks: vec![0, 1, 5, 0, 0, 3, 1],
            rounds: None,
        };
        let fractions = [1, 2, 4, 8].map(|k| d.top_k_fraction(k));
        assert_eq!(fractions, [3.0 / 7.0, 5.0 / 7.0, 6.0 / 7.0, 1.0]);
        assert_eq!(d.top_k_fraction(0), 0.0);
        let empty = DraftRanks {
            name: "空",
            ranks: vec![],
            rounds: None,
        };
        assert_eq!(empty.top_k_fraction(4), 0.0);
    }
}
