//! Lecture 3's toy model as demos 3 and 4 use it: the target generates greedily after
//! sampled prompts, and two drafts rank the target's tokens among their candidates.

use std::sync::OnceLock;

use decode_lab::{TransformerLM, autoregressive_generate, draft_ranks};
use lecture_kit::Error;
use ndarray::{Axis, concatenate, s};
use quant_lab::{QCFG, Scheme, quantize_params};
use transformer_lab::{config_like, init_params, sample_tokens_from};

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
/// Seed of the toy model's weights.
pub const PARAM_SEED: u64 = 0;
/// Seed of the prompts.
pub const PROMPT_SEED: u64 = 3;
/// Seed of the generation's RNG (unused by greedy decoding, kept as in the script).
pub const GEN_SEED: u64 = 0;

/// One draft's ranks: for every sequence, the rank of each of the target's generated
/// tokens among the draft's candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftRanks {
    /// The draft's name as printed.
    pub name: &'static str,
    /// `ranks[s][j]`: rank of generated token j of sequence s (0 = the draft's first choice).
    pub ranks: Vec<Vec<u32>>,
}

impl DraftRanks {
    /// The fraction of the target's tokens that are among the draft's top `k` candidates
    /// (rank below `k`), over every sequence; 0 when there are no tokens.
    pub fn top_k_fraction(&self, k: u32) -> f64 {
        let all = self.ranks.iter().flatten();
        let (hits, total) = all.fold((0, 0), |(h, t), &r| (h + usize::from(r < k), t + 1));
        if total == 0 {
            0.0
        } else {
            hits as f64 / total as f64
        }
    }
}

/// Everything demo 3 computes on the toy model, kept for demo 4.
#[derive(Debug, Clone)]
pub struct ToyRun {
    /// The target's weights (lecture 3's model, seed [`PARAM_SEED`]).
    pub params: transformer_lab::Params,
    /// The target quantized to int4-g32, LM head included (the strong draft's weights).
    pub int4: transformer_lab::Params,
    /// The prompts, `[N_SEQ, PROMPT_LEN]`.
    pub prompts: ndarray::Array2<u32>,
    /// The target's greedy continuations, `[N_SEQ, N_NEW]`.
    pub generated: ndarray::Array2<u32>,
    /// Both drafts' ranks of the generated tokens.
    pub ranks: Vec<DraftRanks>,
}

/// The draft shapes demos 3 and 4 run, in table order: per-level top-k (`[1; γ]` is a chain of γ).
pub const DEMO3_SHAPES: [&[u32]; 9] = [
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
/// The table's name for a shape: "链 γ=4" for a chain, "树 4×2×2×1" for a tree.
pub fn shape_label(branching: &[u32]) -> String {
    let levels: Vec<String> = branching.iter().map(u32::to_string).collect();
    match branching.iter().all(|&k| k == 1) {
        true => format!("链 γ={}", branching.len()),
        false => format!("树 {}", levels.join("×")),
    }
}

/// The names of demo 3's drafts, in order: the target's first layer, and the target in int4.
pub const DRAFT_NAMES: [&str; 2] = ["只用前 1 层（弱）", "INT4 量化的自己（强）"];

impl ToyRun {
    /// The target model.
    pub fn target(&self) -> Result<TransformerLM<'_>, Error> {
        Ok(TransformerLM::new(&self.params, QCFG, "目标")?)
    }

    /// The drafts, named as [`DRAFT_NAMES`]: the target's own first layer (sharing its
    /// weights) and the int4 copy.
    pub fn drafts(&self) -> Result<[TransformerLM<'_>; 2], Error> {
        Ok([
            TransformerLM::new(&self.params, config_like(&QCFG, 1), DRAFT_NAMES[0])?,
            TransformerLM::new(&self.int4, QCFG, DRAFT_NAMES[1])?,
        ])
    }
}

/// On lecture 3's model: the target greedily generates [`N_NEW`] tokens after each
/// of [`N_SEQ`] sampled prompts; each draft then computes its logits on those real
/// sequences, and we record where the target's token ranks in the draft's candidates.
///
/// The drafts: the target's own first layer ("只用前 1 层（弱）", sharing its weights) and
/// the target quantized to int4-g32, LM head included ("INT4 量化的自己（强）").
/// Independent work runs side by side: quantization with generation, the two drafts.
pub fn run() -> Result<ToyRun, Error> {
    let params = init_params(&QCFG, PARAM_SEED)?;
    let target = TransformerLM::new(&params, QCFG, "目标")?;
    let prompts = sample_tokens_from(&target, N_SEQ, PROMPT_LEN, PROMPT_SEED)?;
    let mut rng = py_port::random::default_rng(GEN_SEED);
    let (generated, quantized) = rayon::join(
        || autoregressive_generate(&target, prompts.view(), N_NEW, 0.0, &mut rng),
        || quantize_params(&params, INT4_G32, true),
    );
    let generated = generated?;
    let seqs = concatenate(Axis(1), &[prompts.view(), generated.view()]).expect("same rows");
    let (int4, _) = quantized?;
    let mut run = ToyRun {
        params,
        int4,
        prompts,
        generated,
        ranks: Vec::new(),
    };
    let ranks_of = |draft: &TransformerLM<'_>| -> Result<Vec<Vec<u32>>, Error> {
        let logits = draft.full_logits(seqs.view())?;
        let first = PROMPT_LEN - 1; // logits at the last prompt position predict token 0
        (0..seqs.nrows())
            .map(|i| {
                Ok(draft_ranks(
                    logits.slice(s![i, first.., ..]),
                    seqs.slice(s![i, first..]),
                )?)
            })
            .collect()
    };
    let [weak, int4] = run.drafts()?;
    let (weak_ranks, int4_ranks) = rayon::join(|| ranks_of(&weak), || ranks_of(&int4));
    let ranks = vec![
        DraftRanks {
            name: DRAFT_NAMES[0],
            ranks: weak_ranks?,
        },
        DraftRanks {
            name: DRAFT_NAMES[1],
            ranks: int4_ranks?,
        },
    ];
    run.ranks = ranks;
    Ok(run)
}

/// [`run`], computed once per process: demos 3 and 4 share it (and the kit's pass over
/// the default setup for the wording rule reuses it). It depends on no flag.
pub fn shared() -> Result<&'static ToyRun, Error> {
    static TOY: OnceLock<Result<ToyRun, String>> = OnceLock::new();
    let toy = TOY.get_or_init(|| run().map_err(|e| e.to_string()));
    toy.as_ref().map_err(|e| Error::Library(e.clone().into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_k_fraction_counts_ranks_below_k_over_all_sequences() {
        // Seven tokens over two sequences; by hand: 3 first choices, 5 in the top 2, 6 in
        // the top 4, all 7 in the top 8.
        let d = DraftRanks {
            name: "手算",
            ranks: vec![vec![0, 1, 5], vec![0, 0, 3, 1]],
        };
        let fractions = [1, 2, 4, 8].map(|k| d.top_k_fraction(k));
        assert_eq!(fractions, [3.0 / 7.0, 5.0 / 7.0, 6.0 / 7.0, 1.0]);
        assert_eq!(d.top_k_fraction(0), 0.0);
        let empty = DraftRanks {
            name: "空",
            ranks: vec![vec![]],
        };
        assert_eq!(empty.top_k_fraction(4), 0.0);
    }
}
