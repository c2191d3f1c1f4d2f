//! Lecture 3's toy model as demos 3 and 4 use it (the script's `toy_ranks`): the target
//! generates greedily after sampled prompts, and two drafts rank the target's tokens among
//! their candidates.

use std::sync::OnceLock;

use decode_lab::{TransformerLM, draft_ranks};
use lecture_kit::Error;
use ndarray::{Array2, Axis, concatenate, s};
use quant_lab::{QCFG, Scheme, quantize_params, sample_tokens};
use transformer_lab::{Params, config_like, greedy_generate, init_params};

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
/// The names of the drafts, in order: the target's first layer, and the target in int4.
pub const DRAFT_NAMES: [&str; 2] = ["只用前 1 层（弱）", "INT4 量化的自己（强）"];

/// One draft's ranks of the target's generated tokens, every sequence's one after the
/// other (as the script concatenates them): 0 = the draft's first choice.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftRanks {
    /// The draft's name as printed.
    pub name: &'static str,
    /// `N_SEQ · N_NEW` ranks, sequence after sequence.
    pub ranks: Vec<u32>,
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
}

/// Everything the toy model run computes, kept for demo 4.
#[derive(Debug, Clone)]
pub struct ToyRun {
    /// The target's weights (`init_params(QCFG, 0)`).
    pub params: Params,
    /// The target quantized to int4-g32, LM head included (the strong draft's weights).
    pub int4: Params,
    /// The prompts, `[N_SEQ, PROMPT_LEN]`.
    pub prompts: Array2<u32>,
    /// The target's greedy continuations, `[N_SEQ, N_NEW]`.
    pub generated: Array2<u32>,
    /// Both drafts' ranks of the generated tokens.
    pub ranks: Vec<DraftRanks>,
}

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

/// On lecture 3's model: the target greedily generates 64 sequences (8 prompt tokens + 48
/// new ones each); each draft then computes its logits on those real sequences, and we
/// record where the target's token ranks among the draft's candidates.
pub fn toy_ranks() -> Result<ToyRun, Error> {
    let p = init_params(&QCFG, 0)?;
    let tgt = TransformerLM::new(&p, QCFG, "目标")?;
    let prompts = sample_tokens(&p, &QCFG, N_SEQ, PROMPT_LEN, 3)?;
    let generated = greedy_generate(&tgt, prompts.view(), N_NEW)?;
    let seqs = concatenate(Axis(1), &[prompts.view(), generated.view()])?;
    let (int4, _) = quantize_params(&p, INT4_G32, true)?;
    let mut run = ToyRun {
        params: p,
        int4,
        prompts,
        generated,
        ranks: Vec::new(),
    };
    let mut out = Vec::new();
    for (name, dr) in DRAFT_NAMES.into_iter().zip(run.drafts()?) {
        let lg = dr.full_logits(seqs.view())?;
        let mut ranks = Vec::new();
        for i in 0..seqs.nrows() {
            let first = PROMPT_LEN - 1;
            ranks.extend(draft_ranks(
                lg.slice(s![i, first.., ..]),
                seqs.slice(s![i, first..]),
            )?);
        }
        out.push(DraftRanks { name, ranks });
    }
    run.ranks = out;
    Ok(run)
}

/// [`toy_ranks`], computed once per process: demos 3 and 4 share it. It depends on no flag.
pub fn shared() -> Result<&'static ToyRun, Error> {
    static TOY: OnceLock<Result<ToyRun, String>> = OnceLock::new();
    let toy = TOY.get_or_init(|| toy_ranks().map_err(|e| e.to_string()));
    toy.as_ref().map_err(|e| Error::Library(e.clone().into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_k_fraction_counts_ranks_below_k() {
        // Seven tokens; by hand: 3 first choices, 5 in the top 2, 6 in the top 4, all 7 in
        // the top 8.
        let d = DraftRanks {
            name: "手算",
            ranks: vec![0, 1, 5, 0, 0, 3, 1],
        };
        let fractions = [1, 2, 4, 8].map(|k| d.top_k_fraction(k));
        assert_eq!(fractions, [3.0 / 7.0, 5.0 / 7.0, 6.0 / 7.0, 1.0]);
        assert_eq!(d.top_k_fraction(0), 0.0);
        let empty = DraftRanks {
            name: "空",
            ranks: vec![],
        };
        assert_eq!(empty.top_k_fraction(4), 0.0);
    }
}
