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
    /// Other names [`accelerator`] accepts for it (matched ignoring case, spaces, `-`, `_`).
    pub aliases: &'static [&'static str],
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
    aliases: &["H100-SXM", "H100-SXM5", "H100-80GB"],
    // 1979e12 / 2: the datasheet's figure is for 2:4 structured sparsity.
    peak_flops_bf16: 989e12,
    // HBM3, 3.35 TB/s.
    hbm_bandwidth: 3.35e12,
    // 80 GB, decimal, as the lecture says "80 GB".
    memory_bytes: 80e9,
};

/// NVIDIA H100 PCIe 80 GB.
///
/// Source: NVIDIA H100 datasheet, PCIe column: BF16 1,513 TFLOPS with sparsity → 756 dense;
/// memory bandwidth 2.0 TB/s (HBM2e); 80 GB.
pub const H100_PCIE: Accelerator = Accelerator {
    name: "H100-PCIe",
    aliases: &["H100-PCIe-80GB"],
    peak_flops_bf16: 756e12,
    hbm_bandwidth: 2.0e12,
    memory_bytes: 80e9,
};

/// NVIDIA H200 SXM 141 GB.
///
/// Source: NVIDIA H200 datasheet: BF16 1,979 TFLOPS with sparsity → 989 dense (the H100's
/// compute); 4.8 TB/s HBM3e; 141 GB.
pub const H200: Accelerator = Accelerator {
    name: "H200",
    aliases: &["H200-SXM"],
    peak_flops_bf16: 989e12,
    hbm_bandwidth: 4.8e12,
    memory_bytes: 141e9,
};

/// NVIDIA A100 SXM 80 GB.
///
/// Source: NVIDIA A100 datasheet: BF16 312 TFLOPS dense (624 with sparsity); 2,039 GB/s
/// HBM2e; 80 GB.
pub const A100: Accelerator = Accelerator {
    name: "A100",
    aliases: &["A100-SXM", "A100-80GB", "A100-SXM-80GB"],
    peak_flops_bf16: 312e12,
    hbm_bandwidth: 2.039e12,
    memory_bytes: 80e9,
};

/// NVIDIA B200, one GPU of an HGX B200 board.
///
/// Source: NVIDIA HGX B200 datasheet, per GPU: BF16 4.5 PFLOPS with sparsity → 2.25 dense;
/// 8 TB/s HBM3e; 180 GB (the HGX B200's per-GPU memory).
pub const B200: Accelerator = Accelerator {
    name: "B200",
    aliases: &["HGX-B200"],
    peak_flops_bf16: 2.25e15,
    hbm_bandwidth: 8.0e12,
    memory_bytes: 180e9,
};

/// AMD Instinct MI300X.
///
/// Source: AMD Instinct MI300X data sheet: BF16 1,307.4 TFLOPS dense (2,614.9 with
/// sparsity); 5.3 TB/s HBM3; 192 GB.
pub const MI300X: Accelerator = Accelerator {
    name: "MI300X",
    aliases: &["Instinct-MI300X"],
    peak_flops_bf16: 1307.4e12,
    hbm_bandwidth: 5.3e12,
    memory_bytes: 192e9,
};

/// NVIDIA L40S.
///
/// Source: NVIDIA L40S datasheet: BF16 362.05 TFLOPS dense (733 with sparsity); 864 GB/s
/// GDDR6; 48 GB.
pub const L40S: Accelerator = Accelerator {
    name: "L40S",
    aliases: &[],
    peak_flops_bf16: 362e12,
    hbm_bandwidth: 864e9,
    memory_bytes: 48e9,
};

/// Every accelerator [`accelerator`] knows, in the order `--list` shows them.
pub const ACCELERATORS: &[Accelerator] = &[H100, H100_PCIE, H200, A100, B200, MI300X, L40S];

/// A name [`accelerator`] does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownAccelerator(pub String);

impl std::fmt::Display for UnknownAccelerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = ACCELERATORS.iter().map(|a| a.name).collect();
        write!(
            f,
            "unknown accelerator \"{}\"; choose one of: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownAccelerator {}

/// Looks an accelerator up by name or alias, ignoring case, spaces, `-` and `_`
/// (`"h100 sxm"`, `"H100_SXM"` and `"H100"` are the same card).
///
/// ```
/// assert_eq!(hw_specs::accelerator("h200")?.hbm_bandwidth, 4.8e12);
/// assert_eq!(hw_specs::accelerator("H100 SXM")?, &hw_specs::H100);
/// assert!(hw_specs::accelerator("TPU").unwrap_err().to_string().contains("H100, H100-PCIe"));
/// # Ok::<(), hw_specs::UnknownAccelerator>(())
/// ```
pub fn accelerator(name: &str) -> Result<&'static Accelerator, UnknownAccelerator> {
    let key = normalize(name);
    ACCELERATORS
        .iter()
        .find(|a| normalize(a.name) == key || a.aliases.iter().any(|al| normalize(al) == key))
        .ok_or_else(|| UnknownAccelerator(name.to_string()))
}

/// Lower case, without spaces, `-` or `_`: the form names are compared in.
pub fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

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
    fn every_card_is_found_by_its_name_and_aliases_whatever_the_case() {
        for a in ACCELERATORS {
            assert_eq!(accelerator(a.name).unwrap(), a);
            assert_eq!(accelerator(&a.name.to_lowercase()).unwrap(), a);
            for alias in a.aliases {
                assert_eq!(accelerator(alias).unwrap(), a, "{alias}");
            }
        }
        assert_eq!(accelerator("a100_80gb").unwrap(), &A100);
    }

    #[test]
    fn names_and_aliases_never_collide() {
        let mut seen = std::collections::HashSet::new();
        for a in ACCELERATORS {
            for n in std::iter::once(&a.name).chain(a.aliases) {
                assert!(seen.insert(normalize(n)), "{n} names two cards");
            }
        }
    }

    #[test]
    fn the_registry_holds_the_issue_figures() {
        let f = |n: &str| {
            let a = accelerator(n).unwrap();
            (a.peak_flops_bf16, a.hbm_bandwidth, a.memory_bytes)
        };
        assert_eq!(f("H100-PCIe"), (756e12, 2.0e12, 80e9));
        assert_eq!(f("H200"), (989e12, 4.8e12, 141e9));
        assert_eq!(f("A100"), (312e12, 2.039e12, 80e9));
        assert_eq!(f("B200"), (2.25e15, 8.0e12, 180e9));
        assert_eq!(f("MI300X"), (1307.4e12, 5.3e12, 192e9));
        assert_eq!(f("L40S"), (362e12, 864e9, 48e9));
    }

    #[test]
    fn an_unknown_name_lists_the_choices() {
        let e = accelerator("V100").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown accelerator \"V100\"; choose one of: H100, H100-PCIe, H200, A100, B200, MI300X, L40S"
        );
    }

    #[test]
    fn ridge_point_is_flops_per_byte() {
        assert!((H100.ridge_point() - 989.0 / 3.35).abs() < 1e-9);
    }
}
