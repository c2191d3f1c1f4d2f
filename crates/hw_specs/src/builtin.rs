//! The card built into the crate as a constant, each figure with its datasheet: the
//! seed's H100 (`from hw_specs import H100`). Every other card ships as one data file
//! ([`crate::catalog`]).

use crate::{Accelerator, Interconnect};

/// NVLink 4 behind NVSwitch (H100 SXM): 18 links, 900 GB/s bidirectional per GPU
/// (NVIDIA H100 datasheet, "Interconnect: NVIDIA NVLink 900GB/s"), i.e. 450 GB/s each way.
const NVLINK4: Interconnect = Interconnect {
    kind: "NVLink 4 (NVSwitch)",
    per_direction: 450e9,
    mesh_link_per_direction: None,
};

/// NVIDIA H100 SXM5 80 GB.
///
/// Source: NVIDIA H100 Tensor Core GPU datasheet (2023), SXM column:
/// BF16 Tensor Core 1,979 TFLOPS *with sparsity*, i.e. 989 TFLOPS dense;
/// FP8 Tensor Core 3,958 TFLOPS with sparsity, i.e. 1,979 dense;
/// GPU memory bandwidth 3.35 TB/s; GPU memory 80 GB; NVLink 900 GB/s.
/// INT8 Tensor Core 3,958 TOPS with sparsity, i.e. 1,979 dense (lamonoai/gpumap's table of
/// the datasheets, <https://github.com/lamonoai/gpumap/blob/main/nvidia/GPU.md>, "INT8 Tensor
/// Core(TOPS) | 1,979" / "3,958" with sparsity; Glenn K. Lockwood, "H100",
/// <https://glennklockwood.com/garden/processors/h100>, "INT8 | 1978.9 | 3957.8"); no FP4.
/// FP32 (non-tensor) 67 TFLOPS: the H100 datasheet's table as HPC Tech reproduces it,
/// <https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html>, "FP32 | 67 TFLOPS | 51
/// TFLOPS" (SXM | PCIe); Glenn K. Lockwood, "H100",
/// <https://glennklockwood.com/garden/processors/h100>, "FP32 | 66.9".
pub const H100: Accelerator = Accelerator {
    name: "H100",
    aliases: &["H100-SXM", "H100-SXM5", "H100-80GB"],
    // 1979e12 / 2: the datasheet's figure is for 2:4 structured sparsity.
    peak_flops_bf16: 989e12,
    // 3958e12 / 2, same footnote.
    peak_flops_fp8: Some(1979e12),
    // 3958e12 / 2, same footnote.
    peak_ops_int8: Some(1979e12),
    peak_flops_fp4: None,
    peak_flops_fp32: Some(67e12),
    // HBM3, 3.35 TB/s.
    hbm_bandwidth: 3.35e12,
    // 80 GB, decimal, as the lecture says "80 GB".
    memory_bytes: 80e9,
    interconnect: NVLINK4,
};

/// The cards built in as constants: the seed's H100. Every other card is a data file
/// ([`crate::catalog`]); [`crate::catalog::all_accelerators`] lists them all.
pub const ACCELERATORS: &[Accelerator] = &[H100];
