//! The weights of one matrix product, as `Params` stores them and packed for the kernel.

use ndarray::{ArrayView2, ArrayViewMut2};

use crate::gemm::{PackedMatrix, matmul_packed};
use crate::kernels::matmul_into;

/// The weights of one matrix product `y = x · W`: the parts of `W` as `Params` stores them
/// (side by side) and, on machines that run [`crate::gemm`]'s kernel, their packed copy.
#[derive(Debug, Clone)]
pub(crate) struct Linear<'p> {
    pub(crate) parts: Vec<ArrayView2<'p, f32>>,
    pub(crate) packed: Option<PackedMatrix>,
}

impl<'p> Linear<'p> {
    pub(crate) fn new(parts: Vec<ArrayView2<'p, f32>>, pack: bool) -> Self {
        let packed = if pack {
            // The parts were checked against the config (same rows); packing cannot fail.
            PackedMatrix::new(&parts).ok()
        } else {
            None
        };
        Linear { parts, packed }
    }

    /// `out = a · W`.
    pub(crate) fn apply(&self, a: ArrayView2<f32>, mut out: ArrayViewMut2<f32>, split: bool) {
        if let Some(w) = &self.packed {
            return matmul_packed(a, w, out, split);
        }
        let mut c0 = 0;
        for w in &self.parts {
            let cols = ndarray::s![.., c0..c0 + w.ncols()];
            matmul_into(a, *w, out.slice_mut(cols), split);
            c0 += w.ncols();
        }
    }
}
