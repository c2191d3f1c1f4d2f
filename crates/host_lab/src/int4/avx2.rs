//! The AVX2 kernel of [`crate::int4::matmul`]: the same integer arithmetic as
//! `kernel::product_portable`, 8 columns per register (see `matrix.rs` for the layout). Up to four rows of the input share each load and unpacking of the
//! codes. Same bits as the portable kernel (tested): integer sums are exact, and the
//! fold is the same fused multiply-add in the same order.
//!
//! This file and the dispatch in `int4` are the crate's `unsafe` code: `std::arch` intrinsics and unaligned loads from checked slices.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;
use std::ops::Range;

use super::kernel::QuantRows;
use super::matrix::{GROUP, Int4Matrix, PANEL};

/// Rows of the input per register block (at most).
const ROWS: usize = 4;

/// `rows = a · W[:, panels]` (see `kernel::product_portable`).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[allow(unsafe_code)]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn product(
    a: &QuantRows,
    w: &Int4Matrix,
    panels: Range<usize>,
    rows: &mut [&mut [f32]],
) {
    let (k, groups) = (w.k, w.k / GROUP);
    let per_panel = k / 8 * 32;
    let c0 = panels.start * PANEL;
    let n_out = rows.first().map_or(0, |r| r.len());
    let m = rows.len();
    for p in panels {
        let codes = &w.codes[p * per_panel..(p + 1) * per_panel];
        // The next panel's codes (past the end of a piece too: the same thread usually
        // takes the next piece), prefetched by the first row block; see `tile`.
        let next = w
            .codes
            .get((p + 1) * per_panel..(p + 2) * per_panel)
            .unwrap_or(&[]);
        let scales = &w.scales[p * groups * PANEL..(p + 1) * groups * PANEL];
        let col = p * PANEL - c0;
        let width = PANEL.min(n_out - col);
        let mut r0 = 0;
        while r0 < m {
            let r = ROWS.min(m - r0);
            let ahead = if r0 == 0 { next } else { &[] };
            macro_rules! block {
                ($r:literal) => {{
                    // SAFETY: AVX2 and FMA, as this function's own contract requires.
                    let t = unsafe { tile::<$r>(a, r0, k, groups, (codes, scales), ahead) };
                    for (row, t) in rows[r0..r0 + $r].iter_mut().zip(&t) {
                        row[col..col + width].copy_from_slice(&t[..width]);
                    }
                }};
            }
            match r {
                4 => block!(4),
                3 => block!(3),
                2 => block!(2),
                _ => block!(1),
            }
            r0 += r;
        }
    }
}

/// Four activation codes as one little-endian 32-bit word (byte i = `q[i]`).
#[inline(always)]
fn word(q: &[i8]) -> i32 {
    i32::from_le_bytes([q[0] as u8, q[1] as u8, q[2] as u8, q[3] as u8])
}

/// Rows `r0 .. r0 + R` of the quantized input times one panel: 8 column sums per row,
/// prefetching the codes in `ahead` meanwhile, one group's worth per group (a hint only:
/// the result is the same without it). A row of codes is unpacked with a handful of
/// instructions per 64 weights, so at one row of input the kernel computes about as long
/// as it reads memory. Without the prefetch a product from memory at one row was
/// 1.12–1.15× slower (medians of two sets of 15 runs of a scratch build switching the hint
/// on and off in one process, on the development machine; not kept in the tree). A likely
/// cause, not measured: the hardware prefetcher alone runs too little ahead for the
/// unpacking to overlap the reads.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[allow(unsafe_code, unused_unsafe)]
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn tile<const R: usize>(
    a: &QuantRows,
    r0: usize,
    k: usize,
    groups: usize,
    (codes, scales): (&[u8], &[u16]),
    ahead: &[u8],
) -> [[f32; PANEL]; R] {
    // Everything the loads below touch, checked once.
    assert!(codes.len() >= groups * GROUP / 8 * 32 && scales.len() >= groups * PANEL);
    assert!(a.q.len() >= (r0 + R) * k && a.scale.len() >= (r0 + R) * groups);
    // SAFETY (for the whole block): AVX2 and FMA are enabled on this function; every
    // pointer read is inside `codes` or `scales`, whose lengths were asserted above.
    unsafe {
        let mask = _mm256_set1_epi8(0x0f);
        let ones = _mm256_set1_epi16(1);
        let mut total = [_mm256_setzero_ps(); R];
        // A group's codes and each row's activations of the group as arrays of known
        // length, so that the loop over its octets carries no bounds checks (they were half
        // its instructions at one row).
        const OCTETS: usize = GROUP / 8;
        for g in 0..groups {
            let mut acc = [_mm256_setzero_si256(); R];
            if let Some(lines) = ahead.get(g * 32 * OCTETS..(g + 1) * 32 * OCTETS) {
                for line in lines.chunks(64) {
                    transformer_lab::cpu::prefetch_l2(&line[0]);
                }
            }
            let group: &[u8; 32 * OCTETS] = codes[g * 32 * OCTETS..(g + 1) * 32 * OCTETS]
                .try_into()
                .expect("a group of octets");
            let q_group: [&[i8; GROUP]; R] = std::array::from_fn(|r| {
                let start = (r0 + r) * k + g * GROUP;
                a.q[start..start + GROUP]
                    .try_into()
                    .expect("a group of activations")
            });
            for o in 0..OCTETS {
                let v = _mm256_loadu_si256(group[32 * o..].as_ptr().cast::<__m256i>());
                let lo = _mm256_and_si256(v, mask);
                let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(v), mask);
                for (acc, q) in acc.iter_mut().zip(&q_group) {
                    let alo = _mm256_set1_epi32(word(&q[8 * o..8 * o + 4]));
                    let ahi = _mm256_set1_epi32(word(&q[8 * o + 4..8 * o + 8]));
                    let plo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, alo), ones);
                    let phi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, ahi), ones);
                    *acc = _mm256_add_epi32(*acc, _mm256_add_epi32(plo, phi));
                }
            }
            let sw16 = _mm_loadu_si128(scales.as_ptr().add(g * PANEL).cast::<__m128i>());
            let sw = _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(sw16)));
            for (r, (t, acc)) in total.iter_mut().zip(&acc).enumerate() {
                let idx = (r0 + r) * groups + g;
                let shift = _mm256_set1_epi32(8 * a.sum[idx]);
                let f = _mm256_cvtepi32_ps(_mm256_sub_epi32(*acc, shift));
                let sc = _mm256_mul_ps(sw, _mm256_set1_ps(a.scale[idx]));
                *t = _mm256_fmadd_ps(f, sc, *t);
            }
        }
        let mut out = [[0.0f32; PANEL]; R];
        for (o, t) in out.iter_mut().zip(&total) {
            _mm256_storeu_ps(o.as_mut_ptr(), *t);
        }
        out
    }
}
