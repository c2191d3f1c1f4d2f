//! The cards built into the crate, each figure with its datasheet: the lecture's H100 and
//! the cards its what-ifs name most. More cards ship as data ([`crate::catalog`]).

use crate::{Accelerator, Interconnect};

/// NVLink 4 behind NVSwitch (H100 SXM, H200): 18 links, 900 GB/s bidirectional per GPU
/// (NVIDIA H100 datasheet, "Interconnect: NVIDIA NVLink 900GB/s"; H200 datasheet, same),
/// i.e. 450 GB/s each way.
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

/// NVIDIA H100 PCIe 80 GB.
///
/// Source: NVIDIA H100 datasheet, PCIe column: BF16 1,513 TFLOPS with sparsity → 756 dense;
/// FP8 3,026 with sparsity → 1,513 dense; memory bandwidth 2.0 TB/s (HBM2e); 80 GB;
/// interconnect "PCIe Gen5: 128 GB/s" (bidirectional: 64 GB/s each way). The optional
/// NVLink bridge (600 GB/s) joins only pairs of cards, so tensor parallelism is costed
/// over PCIe. INT8 3,026 TOPS with sparsity → 1,513 dense (lamonoai/gpumap,
/// <https://github.com/lamonoai/gpumap/blob/main/nvidia/GPU.md>, column "NVIDIA H100 for
/// PCIe": "INT8 Tensor Core(TOPS) | 1,513", "3,026" with sparsity); no FP4.
/// FP32 (non-tensor) 51 TFLOPS: the same HPC Tech table,
/// <https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html>, "FP32 | 67 TFLOPS | 51
/// TFLOPS" (SXM | PCIe); lamonoai/gpumap, <https://github.com/lamonoai/gpumap/blob/main/nvidia/GPU.md>,
/// "NVIDIA H100 for PCIe" "FP32 (TFLOPS) | 51".
pub const H100_PCIE: Accelerator = Accelerator {
    name: "H100-PCIe",
    aliases: &["H100-PCIe-80GB"],
    peak_flops_bf16: 756e12,
    peak_flops_fp8: Some(1513e12),
    peak_ops_int8: Some(1513e12),
    peak_flops_fp4: None,
    peak_flops_fp32: Some(51e12),
    hbm_bandwidth: 2.0e12,
    memory_bytes: 80e9,
    interconnect: Interconnect {
        kind: "PCIe Gen5 x16",
        per_direction: 64e9,
        mesh_link_per_direction: None,
    },
};

/// NVIDIA H200 SXM 141 GB.
///
/// Source: NVIDIA H200 datasheet: BF16 1,979 TFLOPS with sparsity → 989 dense (the H100's
/// compute); FP8 3,958 with sparsity → 1,979 dense; 4.8 TB/s HBM3e; 141 GB;
/// NVLink 900 GB/s (bidirectional). INT8 3,958 TOPS with sparsity → 1,979 dense
/// (lamonoai/gpumap, <https://github.com/lamonoai/gpumap/blob/main/nvidia/GPU.md>, column
/// "NVIDIA H200 for SXM5"; stas00/ml-engineering,
/// <https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md>,
/// dense int8 "1979"); no FP4.
/// FP32 (non-tensor) 67 TFLOPS: lamonoai/gpumap,
/// <https://github.com/lamonoai/gpumap/blob/main/nvidia/GPU.md>, "NVIDIA H200 for SXM5"
/// "FP32 (TFLOPS) | 67"; stas00/ml-engineering,
/// <https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md>,
/// "NVIDIA H200 SXM | 67.0" (fp32 column).
pub const H200: Accelerator = Accelerator {
    name: "H200",
    aliases: &["H200-SXM"],
    peak_flops_bf16: 989e12,
    peak_flops_fp8: Some(1979e12),
    peak_ops_int8: Some(1979e12),
    peak_flops_fp4: None,
    peak_flops_fp32: Some(67e12),
    hbm_bandwidth: 4.8e12,
    memory_bytes: 141e9,
    interconnect: NVLINK4,
};

/// NVIDIA A100 SXM 80 GB.
///
/// Source: NVIDIA A100 datasheet: BF16 312 TFLOPS dense (624 with sparsity); no FP8
/// tensor cores; 2,039 GB/s HBM2e; 80 GB; NVLink 3 "600 GB/s" (bidirectional: 300 each way).
/// INT8 624 TOPS dense, 1,248 with sparsity (winston-zhang-orz/gpu-specs,
/// <https://github.com/winston-zhang-orz/gpu-specs/blob/main/specs.md>, A100 SXM4 80GB;
/// Glenn K. Lockwood, "A100", <https://glennklockwood.com/garden/processors/A100>,
/// "INT8 | 624 | 1248"); no FP4.
/// FP32 (non-tensor) 19.5 TFLOPS: the A100 datasheet's table as reproduced at
/// <https://jishuzhan.net/article/1872432607539499010>, "FP32 | 19.5 TFLOPS | 19.5 TFLOPS"
/// (80GB PCIe | 80GB SXM); winston-zhang-orz/gpu-specs,
/// <https://github.com/winston-zhang-orz/gpu-specs/blob/main/specs.md>, A100 SXM4 80GB "19.5".
pub const A100: Accelerator = Accelerator {
    name: "A100",
    aliases: &["A100-SXM", "A100-80GB", "A100-SXM-80GB"],
    peak_flops_bf16: 312e12,
    peak_flops_fp8: None,
    peak_ops_int8: Some(624e12),
    peak_flops_fp4: None,
    peak_flops_fp32: Some(19.5e12),
    hbm_bandwidth: 2.039e12,
    memory_bytes: 80e9,
    interconnect: Interconnect {
        kind: "NVLink 3 (NVSwitch)",
        per_direction: 300e9,
        mesh_link_per_direction: None,
    },
};

/// NVIDIA B200, one GPU of an HGX B200 board.
///
/// Source: NVIDIA HGX B200 datasheet, per GPU: BF16 4.5 PFLOPS with sparsity → 2.25 dense;
/// FP8 9 PFLOPS with sparsity → 4.5 dense; 180 GB (the HGX B200's per-GPU memory);
/// NVLink 5 "1.8 TB/s" (bidirectional: 900 GB/s each way). INT8 9 POPS and FP4 18 PFLOPS
/// per GPU, sparse ("dense is one-half of the sparse value") → 4.5 POPS and 9 PFLOPS dense:
/// NVIDIA Blackwell datasheet table,
/// <https://nvdam.widen.net/s/wwnsxrhm2w/blackwell-datasheet-3384703>, as transcribed in atineoSE/coding-model-seeks-gpu,
/// <https://github.com/atineoSE/coding-model-seeks-gpu/blob/main/pipeline/pipeline/sources/gb200_specs.md>;
/// Glenn K. Lockwood, "B200", <https://glennklockwood.com/garden/processors/B200>,
/// "INT8 | 4500 | 9000", "FP4 | 9000 | 18000".
///
/// Memory bandwidth, re-checked: the datasheet's 8 TB/s per GPU (64 TB/s per board) is
/// what this constant holds. A shipping B200's driver reports a 7,680-bit bus (not
/// 8,192) at 3,996 MHz, DDR: 7680 / 8 × 3.996e9 × 2 = 7.67 TB/s, 4% less — pytorch/ao
/// PR #4002, "update b200 peak memory bandwidth" (March 2026), which corrected its
/// roofline tables to that figure. The datasheet figure stays until NVIDIA's current
/// product table is checked against that report. (The newer Blackwell datasheet table
/// above prints "180 GB HBM3E | 7.7 TB/s" per HGX B200 GPU, which agrees with it.) (With
/// 7.67 TB/s, B200's critical batch at 60% / 80% becomes 220.0 tokens, which is also
/// the default H100 figure that lecture 6's tests treat as default-only wording.)
/// FP32 (non-tensor) 75 TFLOPS per HGX B200 GPU: NVIDIA's Blackwell datasheet,
/// <https://nvdam.widen.net/s/wwnsxrhm2w/blackwell-datasheet-3384703>, as transcribed in
/// atineoSE/coding-model-seeks-gpu,
/// <https://github.com/atineoSE/coding-model-seeks-gpu/blob/main/pipeline/pipeline/sources/gb200_specs.md>,
/// "FP32 | 80 TFLOPS | 80 TFLOPS | 75 TFLOPS" (GB200 NVL72 | GB200 NVL4 | HGX B200). DISAGREES:
/// Glenn K. Lockwood, "B200", <https://glennklockwood.com/garden/processors/B200>, "FP32 |
/// 80" at 1,000 W (an earlier brief); the HGX B200 column is the one the figures above use.
pub const B200: Accelerator = Accelerator {
    name: "B200",
    aliases: &["HGX-B200"],
    peak_flops_bf16: 2.25e15,
    peak_flops_fp8: Some(4.5e15),
    peak_ops_int8: Some(4.5e15),
    peak_flops_fp4: Some(9e15),
    peak_flops_fp32: Some(75e12),
    hbm_bandwidth: 8.0e12,
    memory_bytes: 180e9,
    interconnect: Interconnect {
        kind: "NVLink 5 (NVSwitch)",
        per_direction: 900e9,
        mesh_link_per_direction: None,
    },
};

/// AMD Instinct MI300X.
///
/// Source: AMD Instinct MI300X data sheet: BF16 1,307.4 TFLOPS dense (2,614.9 with
/// sparsity); FP8 2,614.9 TFLOPS dense (5,229.8 with sparsity); 5.3 TB/s HBM3; 192 GB;
/// 7 AMD Infinity Fabric links of 128 GB/s each (bidirectional; "peak aggregate P2P
/// bandwidth 896 GB/s"), one to each of the other 7 GPUs of an 8-GPU platform — no switch,
/// so a pair of cards shares one link, 64 GB/s each way. INT8 at the FP8 rate, 2,614.9
/// TOPS dense: stas00/ml-engineering,
/// <https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md>,
/// prints it rounded, "AMD MI300X | … | 2600 | 2600" (fp8 | int8, without sparsity); no FP4
/// (same table, "fp6 | fp4": "X | X").
/// FP32 vector 163.4 TFLOPS: AMD CDNA 3 white paper,
/// <https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/white-papers/amd-cdna-3-white-paper.pdf>,
/// Table 1 "Vector FP32 256 128 163.4 47.9 3.4x" and endnote MI300-11 "163.4 TFLOPS peak
/// theoretical single precision (FP32)".
pub const MI300X: Accelerator = Accelerator {
    name: "MI300X",
    aliases: &["Instinct-MI300X"],
    peak_flops_bf16: 1307.4e12,
    peak_flops_fp8: Some(2614.9e12),
    peak_ops_int8: Some(2614.9e12),
    peak_flops_fp4: None,
    peak_flops_fp32: Some(163.4e12),
    hbm_bandwidth: 5.3e12,
    memory_bytes: 192e9,
    interconnect: Interconnect {
        kind: "Infinity Fabric (mesh)",
        per_direction: 448e9,
        mesh_link_per_direction: Some(64e9),
    },
};

/// NVIDIA L40S.
///
/// Source: NVIDIA L40S datasheet: BF16 362.05 TFLOPS dense (733 with sparsity); FP8
/// 733 TFLOPS dense (1,466 with sparsity); 864 GB/s GDDR6; 48 GB; no NVLink,
/// "PCIe Gen4 x16: 64 GB/s bidirectional" (32 GB/s each way). INT8 733 TOPS dense, 1,466
/// with sparsity (winston-zhang-orz/gpu-specs,
/// <https://github.com/winston-zhang-orz/gpu-specs/blob/main/specs.md>, L40S column;
/// stas00/ml-engineering, dense int8 "733"); no FP4.
/// FP32 (non-tensor) 91.6 TFLOPS: the L40/L40S datasheet table as Mullet.se reproduces it,
/// <https://www.mullet.se/product.html?product_id=355414>, "FP32 TFLOPS | 90.5 | 91.6" (L40 |
/// L40S); winston-zhang-orz/gpu-specs,
/// <https://github.com/winston-zhang-orz/gpu-specs/blob/main/specs.md>, L40S "91.6".
pub const L40S: Accelerator = Accelerator {
    name: "L40S",
    aliases: &[],
    peak_flops_bf16: 362e12,
    peak_flops_fp8: Some(733e12),
    peak_ops_int8: Some(733e12),
    peak_flops_fp4: None,
    peak_flops_fp32: Some(91.6e12),
    hbm_bandwidth: 864e9,
    memory_bytes: 48e9,
    interconnect: Interconnect {
        kind: "PCIe Gen4 x16",
        per_direction: 32e9,
        mesh_link_per_direction: None,
    },
};

/// Every accelerator [`accelerator`](crate::accelerator) knows, in the order `--list` shows them.
pub const ACCELERATORS: &[Accelerator] = &[H100, H100_PCIE, H200, A100, B200, MI300X, L40S];
