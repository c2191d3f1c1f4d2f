//! The packed product on x86-64 CPUs with AVX-512: one 16-float register holds a whole
//! row of a panel, and 32 registers let a row block work on several panels at once, so
//! twice as many sums are in flight as the AVX2 kernel keeps (8 to 10 registers of 16
//! floats instead of 10 of 8). Measured beside the AVX2 kernel in `docs/performance.md`.
//!
//! Each output element is the same chain of fused multiply-adds as in the AVX2 kernel
//! (`_mm512_fmadd_ps` rounds each lane once, as `f32::mul_add` does, and the sums run
//! over `k` in order), so the bits are the same; the module's tests hold both kernels to
//! the documented chain.

use std::arch::x86_64::{
    __m512, _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_set1_ps, _mm512_setzero_ps, _mm512_storeu_ps,
};
use std::ops::Range;

use super::{Ahead, MR, NR, PackedMatrix};

/// `rows = a · W[:, panels]`, as the AVX2 kernel computes it: one row `G = 8` panels at a
/// time, two rows 4, blocks of three to five rows 2 (each block prefetching its share of
/// the next group, as the AVX2 kernel does for its next panel), the panels left over one
/// at a time. Panics on a CPU without AVX-512F (the caller checks
/// [`crate::cpu::has_avx512`] first).
pub(super) fn product_rows(
    a: &[f32],
    w: &PackedMatrix,
    panels: Range<usize>,
    rows: &mut [&mut [f32]],
) {
    assert!(
        crate::cpu::has_avx512(),
        "the AVX-512 kernel needs AVX-512F"
    );
    // SAFETY: `wide` needs nothing but a CPU with AVX-512F, AVX2 and FMA, which was
    // checked on the line above.
    #[allow(unsafe_code)]
    unsafe {
        wide(a, w, panels, rows);
    }
}

/// [`product_rows`] on a CPU known to have AVX-512F, AVX2 and FMA.
#[target_feature(enable = "avx512f,avx2,fma")]
fn wide(a: &[f32], w: &PackedMatrix, panels: Range<usize>, rows: &mut [&mut [f32]]) {
    let c0 = panels.start * NR;
    let (left, prefetch) = match rows.len() {
        1 => (by::<8>(a, w, panels.clone(), rows, c0, false), false),
        2 => (by::<4>(a, w, panels.clone(), rows, c0, false), false),
        _ => (by::<2>(a, w, panels.clone(), rows, c0, true), true),
    };
    by::<1>(a, w, left..panels.end, rows, c0, prefetch);
}

/// The groups of `G` panels of `panels` (`c0`: the column of `rows` where the piece
/// starts), every row block of at most [`MR`] rows over each group; returns the first
/// panel left over.
#[target_feature(enable = "avx512f,avx2,fma")]
fn by<const G: usize>(
    a: &[f32],
    w: &PackedMatrix,
    panels: Range<usize>,
    rows: &mut [&mut [f32]],
    c0: usize,
    prefetch: bool,
) -> usize {
    let k = w.k;
    let m = rows.len();
    let n_out = rows.first().map_or(0, |r| r.len());
    let blocks = m.div_ceil(MR);
    let block_rows = |b: usize| m / blocks + usize::from(b < m % blocks);
    let mut p = panels.start;
    while p + G <= panels.end {
        let group: [&[f32]; G] = std::array::from_fn(|g| w.panel(p + g));
        let mut r0 = 0;
        for b in 0..blocks {
            let r = block_rows(b);
            let a_block = &a[r0 * k..(r0 + r) * k];
            let out_block = &mut rows[r0..r0 + r];
            r0 += r;
            // The next group, a share of each of its panels prefetched by each block (past
            // the end of a piece too: the same thread usually takes the next piece).
            let ahead: [Option<Ahead<'_>>; G] = std::array::from_fn(|g| {
                let next = p + G + g;
                (prefetch && next < w.panels()).then(|| Ahead::share(w.panel(next), k, b, blocks))
            });
            macro_rules! rows {
                ($r:literal) => {{
                    let t = tile::<$r, G>(a_block, k, group, ahead);
                    for (row, t) in out_block.iter_mut().zip(&t) {
                        for (g, t) in t.iter().enumerate() {
                            let col = (p + g) * NR - c0;
                            let width = NR.min(n_out - col);
                            row[col..col + width].copy_from_slice(&t[..width]);
                        }
                    }
                }};
            }
            match out_block.len() {
                5 => rows!(5),
                4 => rows!(4),
                3 => rows!(3),
                2 => rows!(2),
                _ => rows!(1),
            }
        }
        p += G;
    }
    p
}

/// `R` rows of `a` (contiguous, `k` floats each) times `G` panels (`k × NR` each): `R · G`
/// registers of sums, each the documented chain; prefetches `ahead` meanwhile (a hint
/// only: the result is the same without it).
#[target_feature(enable = "avx512f,avx2,fma")]
fn tile<const R: usize, const G: usize>(
    a: &[f32],
    k: usize,
    group: [&[f32]; G],
    ahead: [Option<Ahead<'_>>; G],
) -> [[[f32; NR]; G]; R] {
    assert!(a.len() >= R * k, "R rows of k floats");
    assert!(group.iter().all(|p| p.len() >= k * NR), "panels of k rows");
    let first = ahead.iter().flatten().next();
    let (len, every) = first.map_or((0, 1), |h| (h.lines.len(), h.every));
    let (mut due, mut line) = (0, 0);
    let mut acc: [[__m512; G]; R] = [[_mm512_setzero_ps(); G]; R];
    // Raw pointers and plain loops: bounds checks and the row pointers reloaded from the
    // stack cost a quarter of the loop; a closure handed to `array::map` or `from_fn`
    // carries the target features and is not inlined into them.
    let a_rows = a.as_ptr();
    let panels: [*const f32; G] = group.map(<[f32]>::as_ptr);
    for kk in 0..k {
        if kk == due && line < len {
            for h in ahead.iter().flatten() {
                crate::cpu::prefetch_l2(&h.lines[line]);
            }
            line += NR;
            due += every;
        }
        let mut b = [_mm512_setzero_ps(); G];
        for (b, &p) in b.iter_mut().zip(&panels) {
            // SAFETY: kk < k, and each panel holds k rows of NR floats (asserted above):
            // row kk is 16 valid floats, what an unaligned 512-bit load reads.
            #[allow(unsafe_code)]
            let loaded = unsafe { _mm512_loadu_ps(p.add(kk * NR)) };
            *b = loaded;
        }
        for (r, sums) in acc.iter_mut().enumerate() {
            // SAFETY: r < R and kk < k, and `a` holds R rows of k floats (asserted above).
            #[allow(unsafe_code)]
            let x = _mm512_set1_ps(unsafe { *a_rows.add(r * k + kk) });
            for (s, &b) in sums.iter_mut().zip(&b) {
                *s = _mm512_fmadd_ps(x, b, *s);
            }
        }
    }
    let mut out = [[[0.0f32; NR]; G]; R];
    for (out, acc) in out.iter_mut().zip(&acc) {
        for (out, &sums) in out.iter_mut().zip(acc) {
            // SAFETY: `out` is 16 writable floats, what an unaligned 512-bit store writes.
            #[allow(unsafe_code)]
            unsafe {
                _mm512_storeu_ps(out.as_mut_ptr(), sums);
            }
        }
    }
    out
}
