//! Accelerator spec sheets: the three numbers a roofline model needs.
//!
//! Lecture 1 (§3, "the roofline") reduces an accelerator to its peak dense
//! throughput, its memory bandwidth and its memory capacity. Every later lecture
//! that asks "how long does this take on real hardware?" starts from one of the
//! [`Accelerator`] constants here.
//!
//! ```
//! use hw_specs::H100;
//! // The ridge point: FLOPs the H100 can do per byte it reads.
//! let ridge = H100.ridge_point();
//! assert!((ridge - 295.2).abs() < 0.1);
//! ```

/// One accelerator as the roofline model sees it.
///
/// All figures are vendor peak numbers in SI units (FLOP/s, bytes/s, bytes); the
/// efficiencies actually reached are applied by the model that uses them
/// (see `llm_math::COMPUTE_EFFICIENCY`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accelerator {
    /// Short name used in lecture text, e.g. `"H100"`.
    pub name: &'static str,
    /// Peak dense bf16 tensor throughput, FLOP/s (no 2:4 sparsity).
    pub peak_flops_bf16: f64,
    /// Peak HBM bandwidth, bytes/s.
    pub hbm_bandwidth: f64,
    /// Device memory, bytes (decimal: 80 GB = 80e9 bytes).
    pub memory_bytes: f64,
}

impl Accelerator {
    /// The roofline's ridge point: peak FLOP/s divided by peak bandwidth, in FLOP/byte.
    /// A kernel whose arithmetic intensity is below it is memory-bound.
    pub fn ridge_point(&self) -> f64 {
        self.peak_flops_bf16 / self.hbm_bandwidth
    }
}

/// NVIDIA H100 SXM5 80 GB.
///
/// Source: NVIDIA H100 Tensor Core GPU datasheet (2023), SXM column:
/// BF16 Tensor Core 1,979 TFLOPS *with sparsity*, i.e. 989 TFLOPS dense;
/// GPU memory bandwidth 3.35 TB/s; GPU memory 80 GB.
pub const H100: Accelerator = Accelerator {
    name: "H100",
    // 1979e12 / 2: the datasheet's figure is for 2:4 structured sparsity.
    peak_flops_bf16: 989e12,
    // HBM3, 3.35 TB/s.
    hbm_bandwidth: 3.35e12,
    // 80 GB, decimal, as the lecture says "80 GB".
    memory_bytes: 80e9,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h100_matches_the_sxm_datasheet() {
        assert_eq!(H100.peak_flops_bf16, 989e12);
        assert_eq!(H100.hbm_bandwidth, 3.35e12);
        assert_eq!(H100.memory_bytes, 80e9);
    }

    #[test]
    fn ridge_point_is_flops_per_byte() {
        assert!((H100.ridge_point() - 989.0 / 3.35).abs() < 1e-9);
    }
}
