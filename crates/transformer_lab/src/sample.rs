//! Choosing the next token: greedy or temperature sampling, batched generation, and
//! sequences sampled from the model itself (the data lectures 3 and 6 evaluate on).

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis, concatenate};
use py_port::random::default_rng;
use rand::Rng;
use rayon::prelude::*;

use crate::forward::{MAX_SEQS_PER_CHUNK, in_worker};
use crate::{Config, Error, Params, TransformerLM};

/// Index of the largest entry; ties go to the lowest index.
///
/// Errors on an empty row or one holding a NaN: a NaN logit means the model's numbers
/// are broken, and no token is then the right one (NumPy's `argmax` would return the
/// NaN's index; `py_port::array::argmax` does that, for a port).
///
/// ```
/// use ndarray::array;
/// assert_eq!(transformer_lab::argmax(array![0.5f32, 2.0, 2.0, -1.0].view())?, 1);
/// assert!(transformer_lab::argmax(array![f32::NAN, -3.0].view()).is_err());
/// assert!(transformer_lab::argmax(array![f32::NAN].view()).is_err());
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub fn argmax(row: ArrayView1<f32>) -> Result<usize, Error> {
    if row.is_empty() {
        return Err(Error::Shape("argmax of an empty row".into()));
    }
    if let Some(at) = row.iter().position(|v| v.is_nan()) {
        return Err(Error::Shape(format!(
            "argmax of a row holding NaN (at {at} of {}): the model's logits are broken",
            row.len()
        )));
    }
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    Ok(best)
}

/// Draws an index from `softmax(logits / temperature)`; `temperature == 0` is [`argmax`]
/// (and draws nothing from `rng`).
///
/// As a NumPy script draws it: `rng.choice(len(l), p=p)` with `p` from [`softmax_probs`]
/// ([`py_port::random::choice_p`], one uniform draw of 53 bits), so a seeded `rng` gives the
/// same token on every machine, and a [`py_port::random::Generator`] the token NumPy draws.
/// Errors: `temperature` negative or not finite, and whatever [`softmax_probs`] rejects (an
/// empty vocabulary, a NaN or `+inf` logit, every logit `-inf`).
pub fn sample_categorical<R: Rng + ?Sized>(
    logits: ArrayView1<f32>,
    temperature: f64,
    rng: &mut R,
) -> Result<usize, Error> {
    if !temperature.is_finite() || temperature < 0.0 {
        return Err(Error::Temperature(temperature));
    }
    if logits.is_empty() {
        return Err(Error::Shape(
            "cannot sample from an empty vocabulary".into(),
        ));
    }
    if temperature == 0.0 {
        return argmax(logits);
    }
    let p = softmax_probs(logits, temperature)?;
    py_port::random::choice_p(&p, rng).map_err(|e| Error::Shape(e.to_string()))
}

/// `softmax(logits / temperature)` in f64, as a NumPy script writes it:
/// `e = np.exp((l - l.max()) / T)` on the float64 logits, then `p = e / e.sum()` (NumPy's
/// pairwise sum, [`py_port::stats::sum`]). Temperature 0 is greedy, as everywhere in this
/// crate: probability 1 on the [`argmax`], 0 elsewhere.
///
/// Errors: `temperature` negative or not finite; an empty row; a NaN or `+inf` logit, or
/// every logit `-inf` (the probabilities would be NaN). A `-inf` logit alone gets 0.
///
/// ```
/// use ndarray::array;
/// let p = transformer_lab::softmax_probs(array![0.0f32, 3f32.ln()].view(), 1.0)?;
/// assert!((p[0] - 0.25).abs() < 1e-7 && (p[1] - 0.75).abs() < 1e-7);
/// let greedy = transformer_lab::softmax_probs(array![0.0f32, 3.0, 3.0].view(), 0.0)?;
/// assert_eq!(greedy, vec![0.0, 1.0, 0.0]);
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub fn softmax_probs(logits: ArrayView1<f32>, temperature: f64) -> Result<Vec<f64>, Error> {
    if !temperature.is_finite() || temperature < 0.0 {
        return Err(Error::Temperature(temperature));
    }
    let best = argmax(logits)?;
    let max = f64::from(logits[best]);
    if max.is_infinite() || logits.iter().any(|l| l.is_nan()) {
        return Err(Error::Shape(format!(
            "cannot take the softmax of logits whose largest is {max} or that hold NaN"
        )));
    }
    if temperature == 0.0 {
        return Ok((0..logits.len())
            .map(|i| if i == best { 1.0 } else { 0.0 })
            .collect());
    }
    let e: Vec<f64> = logits
        .iter()
        .map(|&l| ((f64::from(l) - max) / temperature).exp())
        .collect();
    let total = py_port::stats::sum(&e);
    Ok(e.iter().map(|&e| e / total).collect())
}

/// An index drawn with probability `weights[i] / Σ weights`, as a NumPy script draws it:
/// `rng.choice(len(w), p=w / w.sum())` ([`py_port::random::choice_p`]: the cumulative
/// probabilities, one uniform draw, the first entry above it). A seeded `rng` gives the same
/// index on every machine, and a [`py_port::random::Generator`] the index NumPy draws. Zero
/// weights are never drawn.
///
/// Errors (before drawing): no weights, a negative or NaN weight, or a sum that is 0 or
/// not finite.
///
/// ```
/// let mut rng = py_port::random::default_rng(0);
/// assert_eq!(transformer_lab::draw_weighted(&[0.0, 3.0, 0.0], &mut rng)?, 1);
/// assert!(transformer_lab::draw_weighted(&[0.0, 0.0], &mut rng).is_err());
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub fn draw_weighted<R: Rng + ?Sized>(weights: &[f64], rng: &mut R) -> Result<usize, Error> {
    if let Some(w) = weights.iter().find(|w| w.is_nan() || **w < 0.0) {
        return Err(Error::Shape(format!("weights must be ≥ 0, got {w}")));
    }
    let total = py_port::stats::sum(weights);
    if !(total.is_finite() && total > 0.0) {
        return Err(Error::Shape(format!(
            "cannot draw from {} weights summing to {total}",
            weights.len()
        )));
    }
    let p: Vec<f64> = weights.iter().map(|&w| w / total).collect();
    py_port::random::choice_p(&p, rng).map_err(|e| Error::Shape(e.to_string()))
}

/// Generates `n_new` tokens after each of `prompts [B, T]`, the whole batch one step at
/// a time: prefill, then one [`TransformerLM::step`] per token. Returns the new tokens
/// `[B, n_new]`.
///
/// `temperature == 0` is greedy decoding ([`greedy_generate`]; `rng` is not used);
/// otherwise each token is drawn from `softmax(logits / temperature)` ([`sample_categorical`],
/// as NumPy's `rng.choice(vocab, p=p)`), sequences in batch order, from `rng`, the whole
/// batch stepping together.
///
/// The whole loop runs on the rayon pool, so `rng` must be `Send` (any seeded generator
/// is; pass one in — nothing here seeds itself).
///
/// Errors: an empty batch or prompt, a prompt token ≥ vocab, `T + n_new > max_seq`, a
/// negative or non-finite temperature.
pub fn autoregressive_generate<R: Rng + Send + ?Sized>(
    model: &TransformerLM<'_>,
    prompts: ArrayView2<u32>,
    n_new: usize,
    temperature: f64,
    rng: &mut R,
) -> Result<Array2<u32>, Error> {
    if !temperature.is_finite() || temperature < 0.0 {
        return Err(Error::Temperature(temperature));
    }
    if temperature == 0.0 {
        return greedy_generate(model, prompts, n_new);
    }
    check_generation(model, prompts, n_new)?;
    if n_new == 0 {
        return Ok(Array2::zeros((prompts.nrows(), 0)));
    }
    in_worker(|| {
        generate_loop(model, prompts, n_new, true, |row| {
            sample_categorical(row, temperature, rng)
        })
    })
}

/// Greedy decoding: generates `n_new` tokens after each of `prompts [B, T]`, each the
/// argmax of its logits (ties to the lowest id), and returns them `[B, n_new]`. Draws
/// nothing, so it takes no random generator. Sequences never interact: fixed groups of
/// them are generated as independent parallel tasks, with no synchronisation between
/// steps.
///
/// Errors: an empty batch or prompt, a prompt token ≥ vocab, `T + n_new > max_seq`.
///
/// ```
/// use transformer_lab::{QCFG, TransformerLM, greedy_generate, init_params};
/// let p = init_params(&QCFG, 0)?;
/// let model = TransformerLM::new(&p, QCFG, "m")?;
/// let prompt = ndarray::array![[1u32, 2, 3]];
/// let new = greedy_generate(&model, prompt.view(), 4)?;
/// let by_hand = transformer_lab::reference::greedy_generate(&p, &QCFG, &[1, 2, 3], 4)?;
/// assert_eq!(new.row(0).to_vec(), by_hand);
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub fn greedy_generate(
    model: &TransformerLM<'_>,
    prompts: ArrayView2<u32>,
    n_new: usize,
) -> Result<Array2<u32>, Error> {
    check_generation(model, prompts, n_new)?;
    if n_new == 0 {
        return Ok(Array2::zeros((prompts.nrows(), 0)));
    }
    if prompts.nrows() <= MAX_SEQS_PER_CHUNK {
        return in_worker(|| generate_loop(model, prompts, n_new, true, argmax));
    }
    let groups: Vec<ArrayView2<u32>> = prompts
        .axis_chunks_iter(Axis(0), MAX_SEQS_PER_CHUNK)
        .collect();
    let parts = in_worker(|| {
        groups
            .into_par_iter()
            .map(|group| generate_loop(model, group, n_new, false, argmax))
            .collect::<Result<Vec<_>, Error>>()
    })?;
    let views: Vec<ArrayView2<u32>> = parts.iter().map(|p| p.view()).collect();
    Ok(concatenate(Axis(0), &views).expect("groups of equal width"))
}

/// The checks every generation makes before its first pass: a prompt of at least one
/// token, room in `max_seq` for the new tokens, and (through a pass when there are none to
/// generate) prompt tokens below the vocabulary size.
fn check_generation(
    model: &TransformerLM<'_>,
    prompts: ArrayView2<u32>,
    n_new: usize,
) -> Result<(), Error> {
    let t = prompts.ncols();
    if t == 0 {
        return Err(Error::Shape("a prompt needs at least one token".into()));
    }
    let max_seq = model.cfg().max_seq;
    if t.saturating_add(n_new) > max_seq {
        return Err(Error::TooLong {
            len: t.saturating_add(n_new),
            max: max_seq,
        });
    }
    if n_new == 0 {
        // Still validate the prompt tokens.
        model.full_logits(prompts)?;
    }
    Ok(())
}

/// Prefill `prompts`, then `n_new − 1` decode steps; `pick` chooses each next token from
/// its logits, sequences in batch order.
fn generate_loop(
    model: &TransformerLM<'_>,
    prompts: ArrayView2<u32>,
    n_new: usize,
    inner_split: bool,
    mut pick: impl FnMut(ArrayView1<f32>) -> Result<usize, Error>,
) -> Result<Array2<u32>, Error> {
    let (b, t) = prompts.dim();
    // The last generated token is never fed back, so the cache needs t + n_new − 1 slots.
    let mut cache = model.new_cache(b, t + n_new - 1)?;
    let prompt_logits = model.extend_with(&mut cache, prompts, inner_split)?;
    let mut logits = prompt_logits.index_axis(Axis(1), t - 1).to_owned();
    let mut columns: Vec<Array1<u32>> = Vec::with_capacity(n_new);
    loop {
        let next = logits
            .axis_iter(Axis(0))
            .map(|row| pick(row).map(|i| i as u32))
            .collect::<Result<Array1<u32>, Error>>()?;
        columns.push(next);
        if columns.len() == n_new {
            break;
        }
        let last = columns[columns.len() - 1].view().insert_axis(Axis(1));
        logits = model
            .extend_with(&mut cache, last, inner_split)?
            .index_axis_move(Axis(1), 0);
    }
    let views: Vec<ArrayView2<u32>> = columns
        .iter()
        .map(|c| c.view().insert_axis(Axis(1)))
        .collect();
    Ok(concatenate(Axis(1), &views).expect("columns of equal length"))
}

/// `n_seq` sequences of `length` tokens sampled from the model `(params, cfg)` itself:
/// the first token uniform over the vocabulary, the rest drawn at temperature 1, all from
/// NumPy's `default_rng(seed)`, as the Python module draws them:
///
/// ```text
/// rng = np.random.default_rng(seed)
/// seqs = rng.integers(0, vocab, size=(n_seq, 1))
/// until length: p = softmax(float64(logits at the last position)); one rng.choice(vocab, p=p)
///               per sequence, in sequence order (the whole batch one step at a time)
/// ```
///
/// Returns `[n_seq, length]`. Lecture 3 evaluates its quantized
/// models on these sequences and lecture 6 takes its prompts from them; `quant_lab`
/// re-exports this function under the name the Python lectures import it by.
///
/// Errors: `n_seq` or `length` 0, `length > max_seq`, a batch whose cache would exceed
/// [`MAX_FLOATS`](crate::MAX_FLOATS), parameters that do not fit `cfg`.
///
/// ```
/// let p = transformer_lab::init_params(&transformer_lab::QCFG, 0)?;
/// let s = transformer_lab::sample_tokens(&p, &transformer_lab::QCFG, 2, 5, 3)?;
/// assert_eq!(s.dim(), (2, 5));
/// let model = transformer_lab::TransformerLM::new(&p, transformer_lab::QCFG, "m")?;
/// assert_eq!(s, transformer_lab::sample_tokens_from(&model, 2, 5, 3)?);
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub fn sample_tokens(
    params: &Params,
    cfg: &Config,
    n_seq: usize,
    length: usize,
    seed: u64,
) -> Result<Array2<u32>, Error> {
    let model = TransformerLM::new(params, *cfg, "sampler")?;
    sample_tokens_from(&model, n_seq, length, seed)
}

/// [`sample_tokens`] from a model already built (the same tokens for the same parameters
/// and configuration, without building the model again).
///
/// Errors: `n_seq` or `length` 0, `length > max_seq`, a batch whose cache would exceed
/// [`MAX_FLOATS`](crate::MAX_FLOATS).
pub fn sample_tokens_from(
    model: &TransformerLM<'_>,
    n_seq: usize,
    length: usize,
    seed: u64,
) -> Result<Array2<u32>, Error> {
    if n_seq == 0 || length == 0 {
        return Err(Error::Shape(format!(
            "sample_tokens needs n_seq ≥ 1 and length ≥ 1, got {n_seq} × {length}"
        )));
    }
    if length > model.cfg().max_seq {
        return Err(Error::TooLong {
            len: length,
            max: model.cfg().max_seq,
        });
    }
    // The generation's cache is the largest allocation: refuse it before the first one.
    crate::cache::check_size(model.cfg(), n_seq, length)?;
    let mut rng = default_rng(seed);
    let first = rng.integers_n(0, model.cfg().vocab as i64, n_seq);
    let first = first.map_err(|e| Error::Shape(e.to_string()))?;
    let first = Array2::from_shape_fn((n_seq, 1), |(i, _)| first[i] as u32);
    let rest = autoregressive_generate(model, first.view(), length - 1, 1.0, &mut rng)?;
    Ok(concatenate(Axis(1), &[first.view(), rest.view()]).expect("same number of rows"))
}
