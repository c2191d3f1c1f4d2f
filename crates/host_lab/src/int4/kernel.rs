//! The portable kernel of [`crate::int4::matmul`]: the activations quantized to int8 per
//! row and group ([`QuantRows`]), and the integer sums of `a_q · nibble` in plain loops,
//! folded into f32 as the `int4` module documentation says. The AVX2 kernel
//! (`avx2.rs`) gives the same bits.

use std::ops::Range;

use super::matrix::{GROUP, Int4Matrix, OCTET, PANEL, from_bf16, round_half_even};

/// Activations quantized per row and group to int8 for [`crate::int4::matmul`].
pub(crate) struct QuantRows {
    /// `[m, k]` codes in −127..=127.
    pub(crate) q: Vec<i8>,
    /// `[m, groups]` scales.
    pub(crate) scale: Vec<f32>,
    /// `[m, groups]`: Σ of the codes of each group.
    pub(crate) sum: Vec<i32>,
}

/// Quantizes each row of `a` (contiguous, `k` floats per row) per group of [`GROUP`].
pub(crate) fn quantize_rows(a: &[f32]) -> QuantRows {
    let groups = a.len() / GROUP;
    let mut out = QuantRows {
        q: vec![0; a.len()],
        scale: vec![0.0; groups],
        sum: vec![0; groups],
    };
    for (g, (src, dst)) in a
        .chunks_exact(GROUP)
        .zip(out.q.chunks_exact_mut(GROUP))
        .enumerate()
    {
        let absmax = src.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let s = absmax / 127.0;
        out.scale[g] = s;
        if s == 0.0 || !s.is_finite() {
            continue;
        }
        let inv = 1.0 / s;
        let mut sum = 0i32;
        for (d, &x) in dst.iter_mut().zip(src) {
            let q = round_half_even((x * inv).clamp(-127.0, 127.0)) as i32;
            *d = q as i8;
            sum += q;
        }
        out.sum[g] = sum;
    }
    out
}

/// The kernel in plain loops: per panel, row and group, the integer sums of
/// `a_q · nibble` over the group's octets, folded into f32 as the module documentation says.
pub(crate) fn product_portable(
    a: &QuantRows,
    w: &Int4Matrix,
    panels: Range<usize>,
    rows: &mut [&mut [f32]],
) {
    let (k, groups) = (w.k, w.k / GROUP);
    let c0 = panels.start * PANEL;
    let n_out = rows.first().map_or(0, |r| r.len());
    for p in panels {
        let col = p * PANEL - c0;
        let width = PANEL.min(n_out - col);
        for (r, row) in rows.iter_mut().enumerate() {
            let mut total = [0.0f32; PANEL];
            for g in 0..groups {
                let mut acc = [0i32; PANEL];
                for o in g * GROUP / OCTET..(g + 1) * GROUP / OCTET {
                    let bytes = &w.codes[(p * (k / OCTET) + o) * 32..][..32];
                    let act = &a.q[r * k + o * OCTET..][..OCTET];
                    for (c, acc) in acc.iter_mut().enumerate() {
                        for i in 0..4 {
                            let b = i32::from(bytes[4 * c + i]);
                            *acc +=
                                (b & 0x0f) * i32::from(act[i]) + (b >> 4) * i32::from(act[4 + i]);
                        }
                    }
                }
                let sa = a.scale[r * groups + g];
                let shift = 8 * a.sum[r * groups + g];
                for (c, t) in total.iter_mut().enumerate() {
                    let sw = from_bf16(w.scales[(p * groups + g) * PANEL + c]);
                    *t = ((acc[c] - shift) as f32).mul_add(sw * sa, *t);
                }
            }
            row[col..col + width].copy_from_slice(&total[..width]);
        }
    }
}
