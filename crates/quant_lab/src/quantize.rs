//! Symmetric abs-max int-N quantization per group of input weights.

use std::fmt;
use std::str::FromStr;

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;
use transformer_lab::{LayerParams, Params};

use crate::Error;

/// A weight quantization scheme: `bits`-bit signed integers, one scale per `group`
/// consecutive input-dimension weights of each output column. Written `"int{bits}-g{group}"`.
///
/// ```
/// let s: quant_lab::Scheme = "int4-g32".parse()?;
/// assert_eq!((s.bits, s.group), (4, 32));
/// assert_eq!(s.qmax(), 7);
/// assert_eq!(s.to_string(), "int4-g32");
/// # Ok::<(), quant_lab::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheme {
    /// Bits per weight, 2 to 8.
    pub bits: u32,
    /// Weights sharing one scale, ≥ 1.
    pub group: usize,
}

impl Scheme {
    /// Parses `"int{bits}-g{group}"` (the same as `text.parse()`): 2 to 8 bits, a group of
    /// at least 1. This is where a scheme given as text is checked, once.
    ///
    /// ```
    /// use quant_lab::Scheme;
    /// assert_eq!(Scheme::parse("int8-g128")?, Scheme { bits: 8, group: 128 });
    /// let e = Scheme::parse("int4").unwrap_err().to_string();
    /// assert!(e.contains("missing the group size"), "{e}");
    /// # Ok::<(), quant_lab::Error>(())
    /// ```
    ///
    /// Errors: text of another form, a bit width outside 2..=8, a group of 0.
    pub fn parse(text: &str) -> Result<Self, Error> {
        text.parse()
    }

    /// Checks a scheme built by hand (its fields are public): 2 to 8 bits, a group of at
    /// least 1. Errors say which field is wrong.
    pub fn validate(&self) -> Result<(), Error> {
        if !(2..=8).contains(&self.bits) {
            return Err(Error::Scheme(format!(
                "{self}: {} bits is not supported; use 2 to 8",
                self.bits
            )));
        }
        if self.group == 0 {
            return Err(Error::Scheme(format!(
                "{self}: the group size must be at least 1"
            )));
        }
        Ok(())
    }

    /// Largest quantized magnitude: `2^(bits−1) − 1` (7 for int4, 127 for int8).
    pub fn qmax(&self) -> i32 {
        (1 << self.bits.clamp(1, 31).saturating_sub(1)) - 1
    }

    /// Smallest quantized value: `−2^(bits−1)` (−8 for int4). Symmetric abs-max scaling
    /// never reaches it; it is the clamp's lower bound.
    pub fn qmin(&self) -> i32 {
        -(1 << self.bits.clamp(1, 31).saturating_sub(1))
    }

    /// Storage bits per weight including the scales, assuming an fp16 scale per group.
    ///
    /// Errors: a scheme that does not [`validate`](Self::validate) (a group of 0 would make
    /// it infinite).
    pub fn bits_per_weight(&self) -> Result<f64, Error> {
        self.validate()?;
        Ok(f64::from(self.bits) + 16.0 / self.group as f64)
    }
}

impl FromStr for Scheme {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let bad = |why: &str| {
            Error::Scheme(format!(
                "{text:?}: {why} (expected \"int{{bits}}-g{{group}}\", e.g. \"int4-g32\")"
            ))
        };
        let rest = text
            .strip_prefix("int")
            .ok_or_else(|| bad("must start with \"int\""))?;
        let (bits, group) = rest
            .split_once("-g")
            .ok_or_else(|| bad("missing the group size \"-g{group}\""))?;
        let bits: u32 = bits
            .parse()
            .map_err(|_| bad("the bit width is not a number"))?;
        let group: usize = group
            .parse()
            .map_err(|_| bad("the group size is not a number"))?;
        if !(2..=8).contains(&bits) {
            return Err(bad(&format!("{bits} bits is not supported; use 2 to 8")));
        }
        if group == 0 {
            return Err(bad("the group size must be at least 1"));
        }
        Ok(Scheme { bits, group })
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "int{}-g{}", self.bits, self.group)
    }
}

/// Quantizes and dequantizes one `[in, out]` weight matrix: for each output column and
/// each group of `scheme.group` consecutive rows, `s = absmax / qmax`,
/// `q = clamp(round(w / s), qmin, qmax)` (round half to even, as numpy), `ŵ = q · s`.
/// A group of zeros stays zero; a dequantized weight stays within ±`f32::MAX` (at
/// `±f32::MAX` itself, `q · s` would round past it).
///
/// Errors if the group size does not divide the input dimension, or a weight is NaN or
/// infinite (its group would have no finite scale).
///
/// ```
/// use ndarray::array;
/// let s: quant_lab::Scheme = "int4-g2".parse()?;
/// // Column 0: absmax 0.7 → step 0.1; 0.26 → round(2.6) = 3 → 0.3. Column 1: zeros.
/// let w = quant_lab::quantize_matrix(array![[0.7f32, 0.0], [0.26, 0.0]].view(), s)?;
/// assert!((w[[0, 0]] - 0.7).abs() < 1e-6 && (w[[1, 0]] - 0.3).abs() < 1e-6);
/// assert_eq!(w.column(1).to_vec(), vec![0.0, 0.0]);
/// # Ok::<(), quant_lab::Error>(())
/// ```
pub fn quantize_matrix(w: ArrayView2<f32>, scheme: Scheme) -> Result<Array2<f32>, Error> {
    // The fields are public: re-check what parsing would have checked.
    scheme.validate()?;
    let (rows, cols) = w.dim();
    if rows % scheme.group != 0 {
        return Err(Error::Scheme(format!(
            "{scheme}: group {} does not divide the input dimension {rows}",
            scheme.group
        )));
    }
    if let Some(((r, c), v)) = w.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(Error::Weights(format!(
            "{scheme}: weight [{r}, {c}] is {v}; only finite weights can be quantized"
        )));
    }
    let (qmin, qmax) = (scheme.qmin() as f32, scheme.qmax() as f32);
    let mut out = Array2::<f32>::zeros((rows, cols));
    // One block of `group` rows at a time: every column of the block is one group.
    let mut step = vec![0.0f32; cols];
    for (src, mut dst) in w
        .axis_chunks_iter(Axis(0), scheme.group)
        .zip(out.axis_chunks_iter_mut(Axis(0), scheme.group))
    {
        step.fill(0.0);
        for row in src.outer_iter() {
            for (m, &v) in step.iter_mut().zip(row.iter()) {
                *m = m.max(v.abs());
            }
        }
        for m in step.iter_mut() {
            *m /= qmax; // absmax → quantization step
        }
        for (row, mut q) in src.outer_iter().zip(dst.outer_iter_mut()) {
            for ((q, &v), &s) in q.iter_mut().zip(row.iter()).zip(step.iter()) {
                // A group of zeros has step 0 and stays 0.
                *q = if s == 0.0 {
                    0.0
                } else {
                    (round_half_even((v / s).clamp(qmin, qmax)) * s).clamp(-f32::MAX, f32::MAX)
                };
            }
        }
    }
    Ok(out)
}

/// `x.round_ties_even()` for |x| < 2²², from two additions: adding 1.5 · 2²³ leaves no
/// fraction bits, so the hardware rounds to the nearest integer, ties to even. Unlike
/// `round_ties_even` (a library call on baseline x86-64), it vectorises everywhere.
/// `copysign` keeps the sign of a result of zero (−0.3 → −0.0).
#[inline]
fn round_half_even(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    ((x + MAGIC) - MAGIC).copysign(x)
}

/// What [`quantize_params`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantReport {
    /// The scheme applied.
    pub scheme: Scheme,
    /// Names of the quantized matrices, e.g. `"layers[0].wq"`, `"lm_head"`.
    pub quantized: Vec<String>,
    /// Weights quantized.
    pub n_weights: usize,
    /// Their size in f32, bytes.
    pub bytes_before: usize,
    /// Their size packed at `bits` per weight plus an fp16 scale per group, bytes.
    pub bytes_after: usize,
    /// Largest |ŵ − w| over all quantized weights.
    pub max_abs_error: f32,
    /// √(Σ(ŵ − w)² / Σw²): the relative RMS error of the quantized weights.
    pub relative_rms_error: f64,
}

/// Quantizes every linear weight of every block (wq, wk, wv, wo, w_gate, w_up, w_down),
/// and the LM head when `include_lm_head`, with `scheme`; the embedding and the norm
/// gains stay f32. Returns the dequantized ("fake-quant") parameters, which run in the
/// ordinary forward pass, and a report.
///
/// ```
/// use quant_lab::{QCFG, Scheme, quantize_params};
/// let p = transformer_lab::init_params(&QCFG, 0)?;
/// let (q, report) = quantize_params(&p, Scheme::parse("int4-g32")?, true)?;
/// assert_eq!(report.quantized.len(), 4 * 7 + 1); // 7 matrices per block, and the head
/// assert_eq!(q.embed, p.embed);
/// # Ok::<(), quant_lab::Error>(())
/// ```
///
/// Errors: an invalid scheme built by hand (see [`Scheme::validate`]), or a group size
/// that does not divide some matrix's input dimension.
pub fn quantize_params(
    params: &Params,
    scheme: Scheme,
    include_lm_head: bool,
) -> Result<(Params, QuantReport), Error> {
    scheme.validate()?;
    // Every matrix to quantize, named, in a fixed order; quantized in parallel, the
    // report summed in that same order (so it does not depend on the thread count).
    let mut jobs: Vec<(String, &Array2<f32>)> = Vec::new();
    for (i, layer) in params.layers.iter().enumerate() {
        for (name, w) in layer.matrices() {
            jobs.push((format!("layers[{i}].{name}"), w));
        }
    }
    if include_lm_head {
        jobs.push(("lm_head".to_string(), &params.lm_head));
    }
    let done: Vec<(Array2<f32>, MatrixError)> = jobs
        .par_iter()
        .map(|(_, w)| {
            let q = quantize_matrix(w.view(), scheme)?;
            let e = MatrixError::between(&q, w);
            Ok((q, e))
        })
        .collect::<Result<_, Error>>()?;

    let mut report = QuantReport {
        scheme,
        quantized: jobs.iter().map(|(name, _)| name.clone()).collect(),
        n_weights: 0,
        bytes_before: 0,
        bytes_after: 0,
        max_abs_error: 0.0,
        relative_rms_error: 0.0,
    };
    let (mut err2, mut norm2) = (0.0f64, 0.0f64);
    for ((_, w), (_, e)) in jobs.iter().zip(&done) {
        let n = w.len();
        report.n_weights += n;
        report.bytes_before += 4 * n;
        report.bytes_after += (n * scheme.bits as usize).div_ceil(8) + 2 * (n / scheme.group);
        report.max_abs_error = report.max_abs_error.max(e.max_abs);
        err2 += e.sum_sq_error;
        norm2 += e.sum_sq_weight;
    }
    report.relative_rms_error = if norm2 > 0.0 {
        (err2 / norm2).sqrt()
    } else {
        0.0
    };

    let mut quantized = done.into_iter().map(|(q, _)| q);
    let mut next = || quantized.next().expect("one result per job");
    let layers = params
        .layers
        .iter()
        .map(|l| LayerParams {
            attn_norm: l.attn_norm.clone(),
            wq: next(),
            wk: next(),
            wv: next(),
            wo: next(),
            mlp_norm: l.mlp_norm.clone(),
            w_gate: next(),
            w_up: next(),
            w_down: next(),
        })
        .collect();
    let lm_head = if include_lm_head {
        next()
    } else {
        params.lm_head.clone()
    };
    let out = Params {
        embed: params.embed.clone(),
        layers,
        final_norm: params.final_norm.clone(),
        lm_head,
    };
    Ok((out, report))
}

/// Error statistics of one quantized matrix.
struct MatrixError {
    max_abs: f32,
    sum_sq_error: f64,
    sum_sq_weight: f64,
}

impl MatrixError {
    fn between(q: &Array2<f32>, w: &Array2<f32>) -> Self {
        let mut e = MatrixError {
            max_abs: 0.0,
            sum_sq_error: 0.0,
            sum_sq_weight: 0.0,
        };
        for (&a, &b) in q.iter().zip(w.iter()) {
            let d = a - b;
            e.max_abs = e.max_abs.max(d.abs());
            e.sum_sq_error += f64::from(d) * f64::from(d);
            e.sum_sq_weight += f64::from(b) * f64::from(b);
        }
        e
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn magic_rounding_is_round_ties_even_bit_for_bit() {
        let mut x = -130.0f32;
        while x <= 130.0 {
            for v in [x, x + 0.5, -(x + 0.5)] {
                assert_eq!(
                    round_half_even(v).to_bits(),
                    v.round_ties_even().to_bits(),
                    "{v}"
                );
            }
            x += 0.173;
        }
        for v in [
            0.5f32, 1.5, 2.5, -0.5, -2.5, -0.0, 0.0, -0.3, 7.499_999, 127.5,
        ] {
            assert_eq!(
                round_half_even(v).to_bits(),
                v.round_ties_even().to_bits(),
                "{v}"
            );
        }
        assert!(round_half_even(f32::NAN).is_nan());
    }
    use super::*;
    use ndarray::{Array2, s};
    use transformer_lab::init_params;

    fn scheme(s: &str) -> Scheme {
        s.parse().unwrap()
    }

    #[test]
    fn malformed_schemes_are_errors_that_name_the_problem() {
        let err = |s: &str| s.parse::<Scheme>().unwrap_err().to_string();
        assert!(
            err("int4").contains("missing the group size"),
            "{}",
            err("int4")
        );
        assert!(err("int9-g32").contains("9 bits is not supported"));
        assert!(err("int1-g32").contains("1 bits is not supported"));
        assert!(err("int4-g0").contains("at least 1"));
        assert!(err("fp8-g32").contains("must start with \"int\""));
        assert!(err("intx-g32").contains("bit width is not a number"));
        assert!(err("int4-gx").contains("group size is not a number"));
        assert_eq!(
            scheme("int8-g128"),
            Scheme {
                bits: 8,
                group: 128
            }
        );
    }

    #[test]
    fn a_hand_built_invalid_scheme_is_an_error_not_a_panic() {
        let w = Array2::<f32>::zeros((4, 4));
        assert!(quantize_matrix(w.view(), Scheme { bits: 4, group: 0 }).is_err());
        assert!(quantize_matrix(w.view(), Scheme { bits: 0, group: 2 }).is_err());
        assert!(quantize_matrix(w.view(), Scheme { bits: 40, group: 2 }).is_err());
        let p = init_params(&crate::QCFG, 0).unwrap();
        let e = quantize_params(&p, Scheme { bits: 9, group: 32 }, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad quantization scheme: int9-g32: 9 bits is not supported; use 2 to 8"
        );
        let e = quantize_params(&p, Scheme { bits: 4, group: 0 }, true).unwrap_err();
        assert!(e.to_string().contains("at least 1"), "{e}");
    }

    #[test]
    fn a_group_that_does_not_divide_the_input_dimension_is_an_error() {
        let p = init_params(&crate::QCFG, 0).unwrap();
        let e = quantize_params(&p, scheme("int4-g48"), false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("group 48 does not divide the input dimension 128"),
            "{e}"
        );
        assert!(quantize_matrix(Array2::zeros((10, 3)).view(), scheme("int4-g4")).is_err());
    }

    #[test]
    fn values_already_on_the_grid_round_trip_exactly() {
        // Column absmax 7·0.25 makes the int4 step 0.25: every k·0.25, |k| ≤ 7, is on the grid.
        let ks = [-7.0f32, -3.0, 0.0, 1.0, 7.0, 2.0, -5.0, 4.0];
        let w = Array2::from_shape_fn((32, 4), |(r, c)| {
            if r == 0 {
                7.0 * 0.25
            } else {
                ks[(r + c) % ks.len()] * 0.25
            }
        });
        assert_eq!(quantize_matrix(w.view(), scheme("int4-g32")).unwrap(), w);
    }

    #[test]
    fn int4_error_stays_under_half_a_step_and_int8_is_more_accurate() {
        let p = init_params(&crate::QCFG, 1).unwrap();
        let w = &p.layers[0].w_up; // [128, 384]
        let q4 = quantize_matrix(w.view(), scheme("int4-g32")).unwrap();
        for c in 0..w.ncols() {
            for g in (0..w.nrows()).step_by(32) {
                let src = w.slice(s![g..g + 32, c]);
                let half_step = src.iter().fold(0.0f32, |m, v| m.max(v.abs())) / 7.0 / 2.0;
                for (r, &v) in src.iter().enumerate() {
                    let e = (q4[[g + r, c]] - v).abs();
                    assert!(
                        e <= half_step * (1.0 + 1e-5),
                        "col {c} row {}: {e} > {half_step}",
                        g + r
                    );
                }
            }
        }
        let (_, r4) = quantize_params(&p, scheme("int4-g32"), true).unwrap();
        let (_, r8) = quantize_params(&p, scheme("int8-g32"), true).unwrap();
        assert!(
            r8.relative_rms_error < r4.relative_rms_error / 10.0,
            "{r8:?} {r4:?}"
        );
        assert!(r8.max_abs_error < r4.max_abs_error);
        // Uniform rounding error has RMS step/√12; with a ~N(0,σ) group the int4 step is
        // about 2.3σ/7, so the relative RMS error lands near 0.1.
        assert!(
            (0.05..0.15).contains(&r4.relative_rms_error),
            "{}",
            r4.relative_rms_error
        );
    }

    #[test]
    fn the_report_counts_what_was_quantized_and_the_packed_size() {
        let p = init_params(&crate::QCFG, 0).unwrap();
        let (q, r) = quantize_params(&p, scheme("int4-g32"), false).unwrap();
        // Per block: 4·128² + 3·128·384 = 212,992 weights; 4 blocks.
        assert_eq!(r.n_weights, 4 * 212_992);
        assert_eq!(r.quantized.len(), 28);
        assert_eq!(r.bytes_before, 4 * r.n_weights);
        // 4 bits + an fp16 scale per 32 weights = 4.5 bits per weight.
        assert_eq!(r.bytes_after, r.n_weights * 9 / 16);
        assert_eq!(q.lm_head, p.lm_head, "lm_head untouched unless asked");
        assert_eq!(q.embed, p.embed, "the embedding stays f32");
        assert_ne!(q.layers[3].w_down, p.layers[3].w_down);
        let (q2, r2) = quantize_params(&p, scheme("int4-g32"), true).unwrap();
        assert_eq!(r2.quantized.last().map(String::as_str), Some("lm_head"));
        assert_eq!(r2.n_weights, r.n_weights + 128 * 256);
        assert_ne!(q2.lm_head, p.lm_head);
    }
}
