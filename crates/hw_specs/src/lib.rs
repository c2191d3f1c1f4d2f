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

#[cfg(feature = "arbitrary")]
pub mod arbitrary;
mod builtin;
pub use builtin::{ACCELERATORS, H100};
pub mod card_file;
pub mod catalog;
pub mod user_file;

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
    /// Peak dense FP8 tensor throughput, FLOP/s (no 2:4 sparsity); `None` for a card
    /// without FP8 tensor cores (A100), which runs FP8 weights at its bf16 rate.
    pub peak_flops_fp8: Option<f64>,
    /// Peak dense INT8 tensor throughput, ops/s (no 2:4 sparsity); `None` for a card
    /// without an INT8 tensor path (V100), which runs INT8 weights at its bf16 rate.
    pub peak_ops_int8: Option<f64>,
    /// Peak dense FP4 tensor throughput, FLOP/s (no 2:4 sparsity); `None` for a card
    /// without FP4 tensor cores (every one before Blackwell), which runs FP4 weights at
    /// its FP8 rate, or its bf16 rate without FP8.
    pub peak_flops_fp4: Option<f64>,
    /// Peak FP32 throughput of the non-tensor (vector, CUDA-core) units, FLOP/s: where a
    /// kernel that dequantizes weights on the way to its products does that work
    /// (`planner::CostTerms::int4_dequant_ops`). `None` where no source prints it.
    pub peak_flops_fp32: Option<f64>,
    /// Peak HBM bandwidth, bytes/s.
    pub hbm_bandwidth: f64,
    /// Device memory, bytes (decimal: 80 GB = 80e9 bytes).
    pub memory_bytes: f64,
    /// The link tensor parallelism uses between cards of this kind.
    pub interconnect: Interconnect,
}

/// The GPU-to-GPU link of a card: what a tensor-parallel all-reduce travels over.
///
/// Vendors quote NVLink as a *bidirectional* total (H100: "900 GB/s" = 450 GB/s each
/// way). An all-reduce sends and receives at the same time, so the figure that limits
/// it is the **per-direction** bandwidth, which is what [`Interconnect::per_direction`]
/// holds; [`Interconnect::bidirectional`] gives the datasheet's total back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interconnect {
    /// What the link is, e.g. `"NVLink 4 (NVSwitch)"`, `"PCIe Gen5 x16"`.
    pub kind: &'static str,
    /// Bandwidth from one card to the others, each way, bytes/s, all links together.
    pub per_direction: f64,
    /// For a point-to-point mesh without a switch (MI300X's Infinity Fabric): the
    /// bandwidth of the one link between two cards, each way, bytes/s. A group of `n`
    /// cards then reaches at most `(n − 1)` links' worth. `None` behind a switch or a
    /// shared bus, where every group size sees [`Interconnect::per_direction`].
    pub mesh_link_per_direction: Option<f64>,
}

impl Interconnect {
    /// The datasheet's bidirectional total, bytes/s: twice the per-direction figure.
    pub fn bidirectional(&self) -> f64 {
        2.0 * self.per_direction
    }

    /// Per-direction bandwidth, bytes/s, one card can drive into an all-reduce among
    /// `n` cards: all of [`Interconnect::per_direction`] behind a switch; in a mesh,
    /// `min(per_direction, (n − 1) · link)`. `n ≤ 1` has no peer and returns 0.
    ///
    /// ```
    /// // MI300X: 7 Infinity Fabric links of 64 GB/s each way; a pair has one of them.
    /// let mi = hw_specs::accelerator("MI300X").unwrap().interconnect;
    /// assert_eq!(mi.all_reduce_bandwidth(2), 64e9);
    /// assert_eq!(mi.all_reduce_bandwidth(8), 448e9);
    /// assert_eq!(hw_specs::H100.interconnect.all_reduce_bandwidth(2), 450e9);
    /// ```
    pub fn all_reduce_bandwidth(&self, n: u64) -> f64 {
        if n <= 1 {
            return 0.0;
        }
        match self.mesh_link_per_direction {
            Some(link) => self.per_direction.min((n - 1) as f64 * link),
            None => self.per_direction,
        }
    }
}

impl Accelerator {
    /// The roofline's ridge point: peak FLOP/s divided by peak bandwidth, in FLOP/byte.
    /// A kernel whose arithmetic intensity is below it is memory-bound.
    pub fn ridge_point(&self) -> f64 {
        self.peak_flops_bf16 / self.hbm_bandwidth
    }

    /// Peak dense FP8 throughput, FLOP/s, or the bf16 peak on a card without FP8 tensor
    /// cores (the FP8 weights are then upcast and multiplied at bf16 speed).
    pub fn peak_flops_fp8_or_bf16(&self) -> f64 {
        self.peak_flops_fp8.unwrap_or(self.peak_flops_bf16)
    }

    /// Peak dense INT8 throughput, ops/s, or the bf16 peak on a card without an INT8
    /// tensor path (the INT8 weights are then upcast and multiplied at bf16 speed).
    ///
    /// ```
    /// assert_eq!(hw_specs::H100.peak_ops_int8_or_bf16(), 1979e12);
    /// let v100 = hw_specs::accelerator("V100-SXM2-32GB")?;
    /// assert_eq!(v100.peak_ops_int8_or_bf16(), v100.peak_flops_bf16);
    /// # Ok::<(), hw_specs::UnknownAccelerator>(())
    /// ```
    pub fn peak_ops_int8_or_bf16(&self) -> f64 {
        self.peak_ops_int8.unwrap_or(self.peak_flops_bf16)
    }

    /// Peak dense FP4 throughput, FLOP/s, or on a card without FP4 tensor cores the rate
    /// the FP4 weights are upcast to: [`Accelerator::peak_flops_fp8_or_bf16`].
    ///
    /// ```
    /// assert_eq!(hw_specs::accelerator("B200").unwrap().peak_flops_fp4_or_fp8(), 9e15);
    /// assert_eq!(hw_specs::H100.peak_flops_fp4_or_fp8(), 1979e12);
    /// assert_eq!(hw_specs::accelerator("A100").unwrap().peak_flops_fp4_or_fp8(), 312e12);
    /// ```
    pub fn peak_flops_fp4_or_fp8(&self) -> f64 {
        self.peak_flops_fp4
            .unwrap_or_else(|| self.peak_flops_fp8_or_bf16())
    }

    /// Whether the card can exist: every peak (the optional FP8, INT8, FP4 and FP32 ones when
    /// present), the bandwidth and the memory from 1 (FLOP/s or op/s, byte/s, byte) to
    /// [`MAX_FIGURE`], the interconnect's bandwidths from 0 to it, and no control character
    /// in its name, aliases or link's kind. Every pass and capacity in
    /// the course's libraries asks this first, so a hand-built card with a NaN, negative
    /// or infinite figure is an error, never a NaN or negative time.
    ///
    /// ```
    /// assert!(hw_specs::H100.validate().is_ok());
    /// let broken = hw_specs::Accelerator { hbm_bandwidth: f64::NAN, ..hw_specs::H100 };
    /// let e = broken.validate().unwrap_err().to_string();
    /// assert_eq!(e, "H100: memory bandwidth must be a number from 1 to 1e20, got NaN");
    /// ```
    pub fn validate(&self) -> Result<(), InvalidAccelerator> {
        let positive = [
            ("dense bf16 peak", self.peak_flops_bf16),
            ("FP8 peak", self.peak_flops_fp8.unwrap_or(1.0)),
            ("INT8 peak", self.peak_ops_int8.unwrap_or(1.0)),
            ("FP4 peak", self.peak_flops_fp4.unwrap_or(1.0)),
            ("FP32 vector peak", self.peak_flops_fp32.unwrap_or(1.0)),
            ("memory bandwidth", self.hbm_bandwidth),
            ("memory", self.memory_bytes),
        ];
        let link = self.interconnect;
        let at_least_zero = [
            ("interconnect bandwidth", link.per_direction),
            (
                "mesh link bandwidth",
                link.mesh_link_per_direction.unwrap_or(0.0),
            ),
        ];
        let bad = |what: &str, v: f64, bound: &str| InvalidAccelerator {
            name: self.name.to_string(),
            reason: format!("{what} must be a number {bound} to {MAX_FIGURE:e}, got {v}"),
        };
        for (what, v) in positive {
            if !(1.0..=MAX_FIGURE).contains(&v) {
                return Err(bad(what, v, "from 1"));
            }
        }
        for (what, v) in at_least_zero {
            if !(0.0..=MAX_FIGURE).contains(&v) {
                return Err(bad(what, v, "from 0"));
            }
        }
        let texts = [("name", self.name), ("interconnect kind", link.kind)];
        let aliases = self.aliases.iter().map(|a| ("alias", *a));
        for (what, text) in texts.into_iter().chain(aliases) {
            // ASCII controls byte by byte, every byte (a loop without an early exit runs 32
            // bytes an instruction: a fit validates its cards millions of times); the
            // others (C1) are not ASCII, so only text that is not ASCII is decoded.
            let ascii_control = text
                .bytes()
                .fold(false, |seen, b| seen | b.is_ascii_control());
            let control = ascii_control || (!text.is_ascii() && text.chars().any(char::is_control));
            if control {
                // Named escaped: the text itself would move the terminal's cursor.
                return Err(InvalidAccelerator {
                    name: self.name.escape_debug().to_string(),
                    reason: format!(
                        "the {what} {:?} holds a control character (a terminal, an SVG \
                         and a table header cannot show one)",
                        text
                    ),
                });
            }
        }
        Ok(())
    }
}

/// The largest figure a card may have, in its unit (FLOP/s, bytes/s, bytes): 10²⁰, a
/// thousand times B200's FP8 peak, so that no product of figures overflows.
pub const MAX_FIGURE: f64 = 1e20;

/// A card whose figures cannot exist ([`Accelerator::validate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidAccelerator {
    /// The card's name.
    pub name: String,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for InvalidAccelerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.name, self.reason)
    }
}

impl std::error::Error for InvalidAccelerator {}

/// A name [`accelerator`] does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownAccelerator(pub String);

impl std::fmt::Display for UnknownAccelerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = catalog::all_accelerators().map(|a| a.name).collect();
        write!(
            f,
            "unknown accelerator \"{}\"; the closest: {} (of {} cards)",
            self.0,
            closest_names(&self.0, &names).join(", "),
            names.len()
        )
    }
}

/// The (at most) five of `names` closest to `name` (Jaro–Winkler similarity, ignoring
/// case; ties keep `names`' order): what an unknown card's or model's error suggests,
/// where the whole list would be longer than a reader reads.
///
/// ```
/// let names = ["H100", "H200", "A100", "MI300X", "L40S", "B200"];
/// assert_eq!(hw_specs::closest_names("h10", &names)[0], "H100");
/// assert_eq!(hw_specs::closest_names("x", &names).len(), 5);
/// ```
pub fn closest_names<'a>(name: &str, names: &[&'a str]) -> Vec<&'a str> {
    let wanted = name.to_lowercase();
    let mut scored: Vec<(f64, usize)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (strsim::jaro_winkler(&wanted, &n.to_lowercase()), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.iter().take(5).map(|&(_, i)| names[i]).collect()
}

impl std::error::Error for UnknownAccelerator {}

/// Looks an accelerator up by name or alias, ignoring case, spaces, `-` and `_`
/// (`"h100 sxm"`, `"H100_SXM"` and `"H100"` are the same card).
///
/// ```
/// assert_eq!(hw_specs::accelerator("h200")?.hbm_bandwidth, 4.8e12);
/// assert_eq!(hw_specs::accelerator("H100 SXM")?, &hw_specs::H100);
/// assert!(hw_specs::accelerator("MI300").unwrap_err().to_string().contains("the closest: MI300X"));
/// # Ok::<(), hw_specs::UnknownAccelerator>(())
/// ```
pub fn accelerator(name: &str) -> Result<&'static Accelerator, UnknownAccelerator> {
    catalog::find_accelerator(name).ok_or_else(|| UnknownAccelerator(name.to_string()))
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
    fn every_shipped_card_validates_and_a_broken_field_is_named() {
        for a in catalog::all_accelerators() {
            assert_eq!(a.validate(), Ok(()), "{}", a.name);
        }
        let broken = [
            Accelerator {
                peak_flops_bf16: 0.0,
                ..H100
            },
            Accelerator {
                peak_flops_fp8: Some(f64::INFINITY),
                ..H100
            },
            Accelerator {
                peak_ops_int8: Some(f64::NAN),
                ..H100
            },
            Accelerator {
                peak_flops_fp4: Some(0.5),
                ..*crate::accelerator("B200").unwrap()
            },
            Accelerator {
                peak_flops_fp4: Some(2.0 * MAX_FIGURE),
                ..*crate::accelerator("B200").unwrap()
            },
            Accelerator {
                peak_flops_fp32: Some(0.0),
                ..H100
            },
            Accelerator {
                hbm_bandwidth: -1.0,
                ..H100
            },
            Accelerator {
                memory_bytes: f64::NAN,
                ..H100
            },
        ];
        let fields = [
            "bf16 peak",
            "FP8 peak",
            "INT8 peak",
            "FP4 peak",
            "FP4 peak",
            "FP32 vector peak",
            "bandwidth",
            "memory",
        ];
        assert_eq!(broken.len(), fields.len());
        for (a, field) in broken.iter().zip(fields) {
            let e = a.validate().unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
        // Absent INT8 / FP4 / FP32 figures are not errors.
        let bare = Accelerator {
            peak_ops_int8: None,
            peak_flops_fp4: None,
            peak_flops_fp32: None,
            ..H100
        };
        assert_eq!(bare.validate(), Ok(()));
        let mut link = H100;
        link.interconnect.per_direction = f64::NAN;
        assert!(link.validate().unwrap_err().reason.contains("interconnect"));
    }

    #[test]
    fn every_card_is_found_by_its_name_and_aliases_whatever_the_case() {
        for a in catalog::all_accelerators() {
            assert_eq!(accelerator(a.name).unwrap(), a);
            assert_eq!(accelerator(&a.name.to_lowercase()).unwrap(), a);
            for alias in a.aliases {
                assert_eq!(accelerator(alias).unwrap(), a, "{alias}");
            }
        }
        assert_eq!(
            accelerator("a100_80gb").unwrap(),
            crate::accelerator("A100").unwrap()
        );
    }

    #[test]
    fn names_and_aliases_never_collide() {
        let mut seen = std::collections::HashSet::new();
        for a in catalog::all_accelerators() {
            for n in std::iter::once(&a.name).chain(a.aliases) {
                assert!(seen.insert(normalize(n)), "{n} names two cards");
            }
        }
    }

    /// `names` are the first cards `--list` shows: the seed's H100 and the six its
    /// what-ifs name most, whose datasheet figures the tests below hold.
    fn the_first_listed(names: &[&str]) {
        let listed: Vec<&str> = catalog::all_accelerators().map(|a| a.name).collect();
        assert_eq!(&listed[..names.len()], names);
    }

    /// The datasheets quote sparse peaks; the registry holds dense ones. Every dense
    /// figure must be half the sparse figure the source prints (numbers as printed in
    /// the datasheets named on each constant), so a retyped or unhalved figure fails.
    #[test]
    fn dense_peaks_are_half_the_sparse_figures_the_datasheets_print() {
        // (card, datasheet bf16 with sparsity TFLOPS, FP8 with sparsity TFLOPS)
        let sparse = [
            (H100, 1979.0, Some(3958.0)), // H100 datasheet, SXM
            (
                *crate::accelerator("H100-PCIe").unwrap(),
                1513.0,
                Some(3026.0),
            ), // H100 datasheet, PCIe
            (*crate::accelerator("H200").unwrap(), 1979.0, Some(3958.0)), // H200 datasheet
            (*crate::accelerator("A100").unwrap(), 624.0, None), // A100 datasheet (no FP8)
            (*crate::accelerator("B200").unwrap(), 4500.0, Some(9000.0)), // HGX B200 datasheet, per GPU
            (*crate::accelerator("MI300X").unwrap(), 2614.9, Some(5229.8)), // AMD MI300X data sheet
            (*crate::accelerator("L40S").unwrap(), 733.0, Some(1466.0)), // L40S datasheet (bf16 dense 362.05)
        ];
        the_first_listed(&sparse.map(|(card, ..)| card.name));
        for (card, bf16, fp8) in sparse {
            let dense = card.peak_flops_bf16 / 1e12;
            assert!(
                (2.0 * dense / bf16 - 1.0).abs() < 0.013,
                "{} bf16",
                card.name
            );
            match (card.peak_flops_fp8, fp8) {
                (Some(d), Some(s)) => {
                    assert!((2.0 * d / 1e12 / s - 1.0).abs() < 1e-3, "{} fp8", card.name)
                }
                (None, None) => assert_eq!(card.peak_flops_fp8_or_bf16(), card.peak_flops_bf16),
                _ => panic!("{}: FP8 support disagrees with its datasheet", card.name),
            }
            // FP8 tensor cores double the bf16 rate on every card that has them.
            if let Some(d) = card.peak_flops_fp8 {
                assert!(
                    (d / card.peak_flops_bf16 - 2.0).abs() < 0.03,
                    "{}",
                    card.name
                );
            }
        }
    }

    /// INT8 and FP4, as for bf16 and FP8: each dense figure is half the sparse one its
    /// source prints (MI300X's source prints only the dense one, rounded: 2600).
    #[test]
    fn dense_int8_and_fp4_peaks_are_half_the_sparse_figures_printed() {
        // (card, INT8 with sparsity TOPS, FP4 with sparsity TFLOPS)
        let sparse = [
            (H100, 3958.0, None),
            (*crate::accelerator("H100-PCIe").unwrap(), 3026.0, None),
            (*crate::accelerator("H200").unwrap(), 3958.0, None),
            (*crate::accelerator("A100").unwrap(), 1248.0, None),
            (*crate::accelerator("B200").unwrap(), 9000.0, Some(18000.0)),
            (*crate::accelerator("MI300X").unwrap(), 2.0 * 2614.9, None),
            (*crate::accelerator("L40S").unwrap(), 1466.0, None),
        ];
        the_first_listed(&sparse.map(|(card, ..)| card.name));
        for (card, int8, fp4) in sparse {
            let dense = card.peak_ops_int8.expect("every built-in card has INT8");
            assert!(
                (2.0 * dense / 1e12 / int8 - 1.0).abs() < 1e-3,
                "{}",
                card.name
            );
            assert_eq!(card.peak_ops_int8_or_bf16(), dense);
            match (card.peak_flops_fp4, fp4) {
                (Some(d), Some(s)) => assert!((2.0 * d / 1e12 / s - 1.0).abs() < 1e-3),
                (None, None) => {
                    assert_eq!(card.peak_flops_fp4_or_fp8(), card.peak_flops_fp8_or_bf16())
                }
                _ => panic!("{}: FP4 support disagrees with its source", card.name),
            }
            // INT8 runs at the FP8 rate where there is FP8, at twice bf16 (A100) otherwise.
            let ratio = dense / card.peak_flops_fp8.unwrap_or(2.0 * card.peak_flops_bf16);
            assert!((ratio - 1.0).abs() < 1e-3, "{}", card.name);
        }
        assert!(
            (crate::accelerator("MI300X").unwrap().peak_ops_int8.unwrap() / 1e12 - 2600.0).abs()
                < 15.0
        );
        assert_eq!(
            crate::accelerator("B200").unwrap().peak_flops_fp4_or_fp8(),
            2.0 * crate::accelerator("B200").unwrap().peak_flops_fp8.unwrap()
        );
    }

    /// The ridge point against figures the sources state themselves: NVIDIA's H100
    /// datasheet gives 989 TFLOPS over 3.35 TB/s, i.e. ≈ 295 FLOP/byte (the figure
    /// lecture 1 quotes); A100: 312 TFLOPS / 2.039 TB/s ≈ 153.
    #[test]
    fn ridge_points_match_the_lecture_figures() {
        assert!((H100.ridge_point() - 295.2).abs() < 0.1);
        assert!((crate::accelerator("A100").unwrap().ridge_point() - 153.0).abs() < 0.1);
        // A bandwidth-bound card has the lower ridge: H200 has H100's compute and more bandwidth.
        assert!(crate::accelerator("H200").unwrap().ridge_point() < H100.ridge_point());
    }

    /// Vendors quote bidirectional totals; the registry keeps per-direction figures.
    /// Each pair: (card, the bidirectional figure its datasheet prints, GB/s).
    #[test]
    fn interconnects_hold_half_the_bidirectional_datasheet_figure() {
        let printed = [
            (H100, 900.0),                                      // "NVLink: 900GB/s"
            (*crate::accelerator("H100-PCIe").unwrap(), 128.0), // "PCIe Gen5: 128GB/s"
            (*crate::accelerator("H200").unwrap(), 900.0),      // "NVLink: 900GB/s"
            (*crate::accelerator("A100").unwrap(), 600.0),      // "NVLink: 600GB/s"
            (*crate::accelerator("B200").unwrap(), 1800.0),     // "NVLink 5: 1.8TB/s"
            (*crate::accelerator("MI300X").unwrap(), 896.0), // "peak aggregate P2P bandwidth 896 GB/s"
            (*crate::accelerator("L40S").unwrap(), 64.0), // "PCIe Gen4 x16: 64GB/s bidirectional"
        ];
        the_first_listed(&printed.map(|(card, _)| card.name));
        for (card, bidi) in printed {
            assert_eq!(
                card.interconnect.bidirectional(),
                bidi * 1e9,
                "{}",
                card.name
            );
            assert_eq!(card.interconnect.all_reduce_bandwidth(1), 0.0);
        }
        // MI300X: 7 links of 128 GB/s bidirectional each → 896 in all.
        assert_eq!(
            crate::accelerator("MI300X")
                .unwrap()
                .interconnect
                .mesh_link_per_direction,
            Some(128e9 / 2.0)
        );
        assert_eq!(
            crate::accelerator("MI300X")
                .unwrap()
                .interconnect
                .all_reduce_bandwidth(4),
            3.0 * 64e9
        );
    }

    /// B200 keeps the datasheet's 8 TB/s (see its doc for the 7.67 TB/s a shipping
    /// driver reports): its ridge point is 2.25e15 / 8e12 = 281.25 FLOP/byte, below
    /// H100's 295.2 — B200's bandwidth grew more than its bf16 peak.
    #[test]
    fn b200_has_the_datasheet_figures_and_a_lower_ridge_than_h100() {
        assert_eq!(
            (
                crate::accelerator("B200").unwrap().hbm_bandwidth,
                crate::accelerator("B200").unwrap().memory_bytes
            ),
            (8.0e12, 180e9)
        );
        assert!(
            (crate::accelerator("B200").unwrap().ridge_point() - 281.25).abs() < 1e-9,
            "{}",
            crate::accelerator("B200").unwrap().ridge_point()
        );
        assert!(crate::accelerator("B200").unwrap().ridge_point() < H100.ridge_point());
    }

    #[test]
    fn an_unknown_name_suggests_the_closest_ones() {
        let e = accelerator("H10").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown accelerator \"H10\"; the closest: H100, H100-PCIe, H20"),
            "{e}"
        );
        let n = catalog::all_accelerators().count();
        assert!(e.ends_with(&format!("(of {n} cards)")), "{e}");
        // Five at most, each a card's name, however far the name is from all of them.
        let names: Vec<&str> = catalog::all_accelerators().map(|a| a.name).collect();
        let far = closest_names("zzzzzzzz", &names);
        assert_eq!(far.len(), 5);
        assert!(far.iter().all(|f| names.contains(f)));
        assert_eq!(closest_names("mi300x", &names)[0], "MI300X");
    }
}
