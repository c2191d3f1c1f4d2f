//! [`Int4Matrix`]: the weights stored as 4-bit codes in groups, each group with its bf16
//! scale, in panels of [`PANEL`] columns (see [`crate::int4`] for why).
//!
//! # Quantization
//! Symmetric abs-max per group, as `quant_lab`'s `int4-gN` scheme: `s = absmax / 7`,
//! `q = clamp(round_half_even(w / s), −8, 7)`, stored as the nibble `q + 8`. The scale is
//! stored rounded to bf16 (`s'`), so a weight reads back as `(nibble − 8) · s'`, which is
//! `quant_lab`'s dequantized value to within bf16 rounding of the scale (2⁻⁹ relative).
//!
//! # Layout
//! Columns are cut into panels of [`PANEL`] = 8 (one 8-lane register of sums). In a panel,
//! each *octet* of 8 input rows is 32 bytes: byte `4c + i` holds column `c`'s code of row
//! `i` in its low nibble and of row `4 + i` in its high nibble. One 32-byte load, a mask
//! and a shift give two registers of 32 codes (4 rows × 8 columns), each multiplied with 4
//! broadcast activation bytes by `vpmaddubsw` + `vpmaddwd` (AVX2) into the 8 column sums.
//! The portable kernel (`kernel.rs`) runs the same integer arithmetic in plain loops
//! and gives the same bits.

use std::fmt;

use ndarray::{Array2, ArrayView2};

use crate::Error;

/// Input rows sharing one scale (per output column).
pub const GROUP: usize = 64;
/// Columns per panel.
pub const PANEL: usize = 8;
/// Input rows per octet (32 bytes of codes per panel).
pub(crate) const OCTET: usize = 8;

/// A weight matrix `W [k, n]` of `y = x · W`, stored as 4-bit codes with one bf16 scale
/// per [`GROUP`] input rows of each column (see the module documentation).
#[derive(Clone)]
pub struct Int4Matrix {
    pub(crate) k: usize,
    pub(crate) n: usize,
    /// Panel p, octet o: 32 bytes at `(p · k/8 + o) · 32`.
    pub(crate) codes: Vec<u8>,
    /// Panel p, group g: 8 bf16 scales at `(p · groups + g) · 8`.
    pub(crate) scales: Vec<u16>,
}

impl fmt::Debug for Int4Matrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Int4Matrix [{} × {}], g{GROUP}", self.k, self.n)
    }
}

/// `x.round_ties_even()` by two additions (|x| < 2²²), as `quant_lab` rounds.
pub(crate) fn round_half_even(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    ((x + MAGIC) - MAGIC).copysign(x)
}

/// f32 → bf16, round to nearest even (finite inputs).
fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    let round = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(round) >> 16) as u16
}

/// bf16 → f32 (exact).
#[inline(always)]
pub(crate) fn from_bf16(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// Where column `c`'s code of input row `r` lives: (byte index, high nibble?).
fn code_at(k: usize, r: usize, c: usize) -> (usize, bool) {
    let (p, lane) = (c / PANEL, c % PANEL);
    let (o, i) = (r / OCTET, r % OCTET);
    ((p * (k / OCTET) + o) * 32 + 4 * lane + i % 4, i >= 4)
}

impl Int4Matrix {
    /// Quantizes the columns of `parts` (matrices with the same number of rows, side by
    /// side, as `W_q | W_k | W_v`). Errors: no parts, parts of different row counts, a row
    /// count that [`GROUP`] does not divide, a weight that is not finite.
    pub fn quantize(parts: &[ArrayView2<f32>]) -> Result<Self, Error> {
        let Some(first) = parts.first() else {
            return Err(Error::Argument(
                "nothing to quantize: no matrices given".into(),
            ));
        };
        let k = first.nrows();
        if parts.iter().any(|p| p.nrows() != k) {
            return Err(Error::Argument(
                "matrices quantized side by side need the same number of rows".into(),
            ));
        }
        if k == 0 || k % GROUP != 0 {
            return Err(Error::Argument(format!(
                "INT4 groups of {GROUP} rows do not divide an input dimension of {k}"
            )));
        }
        if parts.iter().any(|p| p.iter().any(|x| !x.is_finite())) {
            return Err(Error::Argument(
                "cannot quantize a weight that is not finite".into(),
            ));
        }
        let n: usize = parts.iter().map(|p| p.ncols()).sum();
        let panels = n.div_ceil(PANEL);
        let groups = k / GROUP;
        let mut codes = vec![0x88u8; panels * k / OCTET * 32]; // padding columns: code 8 = 0
        let mut scales = vec![0u16; panels * groups * PANEL];
        let mut c0 = 0;
        for part in parts {
            for j in 0..part.ncols() {
                let c = c0 + j;
                let col = part.column(j);
                for g in 0..groups {
                    let rows = g * GROUP..(g + 1) * GROUP;
                    let absmax = rows.clone().map(|r| col[r].abs()).fold(0.0f32, f32::max);
                    let s = absmax / 7.0;
                    scales[((c / PANEL) * groups + g) * PANEL + c % PANEL] = to_bf16(s);
                    for r in rows {
                        let q = if s == 0.0 {
                            0.0
                        } else {
                            round_half_even((col[r] / s).clamp(-8.0, 7.0))
                        };
                        let nib = (q as i32 + 8) as u8;
                        let (at, high) = code_at(k, r, c);
                        let byte = &mut codes[at];
                        *byte = if high {
                            (*byte & 0x0f) | (nib << 4)
                        } else {
                            (*byte & 0xf0) | nib
                        };
                    }
                }
            }
            c0 += part.ncols();
        }
        Ok(Int4Matrix {
            k,
            n,
            codes,
            scales,
        })
    }

    /// Rows of `W` (the inner dimension of the product).
    pub fn nrows(&self) -> usize {
        self.k
    }

    /// Columns of `W`.
    pub fn ncols(&self) -> usize {
        self.n
    }

    /// Bytes a product reads from this matrix: the codes and the scales, padding included.
    pub fn bytes(&self) -> usize {
        self.codes.len() + 2 * self.scales.len()
    }

    /// The weights as they read back, `(nibble − 8) · scale`, as an f32 matrix `[k, n]`.
    pub fn dequantize(&self) -> Array2<f32> {
        let groups = self.k / GROUP;
        Array2::from_shape_fn((self.k, self.n), |(r, c)| {
            let (at, high) = code_at(self.k, r, c);
            let byte = self.codes[at];
            let nib = if high { byte >> 4 } else { byte & 0x0f };
            let s = from_bf16(self.scales[((c / PANEL) * groups + r / GROUP) * PANEL + c % PANEL]);
            (f32::from(nib) - 8.0) * s
        })
    }

    pub(crate) fn panels(&self) -> usize {
        self.n.div_ceil(PANEL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(from_bf16(to_bf16(1.0)), 1.0);
        // 1 + 2⁻⁸ is halfway between bf16 neighbours 1 and 1 + 2⁻⁷: ties to even (1).
        assert_eq!(from_bf16(to_bf16(1.0 + 2f32.powi(-8))), 1.0);
        assert_eq!(
            from_bf16(to_bf16(1.0 + 3.0 * 2f32.powi(-8))),
            1.0 + 2f32.powi(-6)
        );
    }
}
