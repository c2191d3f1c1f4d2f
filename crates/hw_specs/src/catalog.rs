//! The cards shipped as data (`data/cards/*.toml`, the format of [`crate::card_file`],
//! each figure's source in a `# source …:` comment), beside the ones built in
//! ([`ACCELERATORS`]); [`all_accelerators`] is both, the registry [`crate::accelerator`]
//! and `--list` read.

use once_cell::sync::Lazy;

use crate::{ACCELERATORS, Accelerator};

/// The shipped files, in the order `--list` shows them.
pub const CARD_FILES: &[&str] = &[
    include_str!("../data/cards/a100-40gb.toml"),
    include_str!("../data/cards/rtx-4090.toml"),
    include_str!("../data/cards/rtx-a6000.toml"),
    include_str!("../data/cards/l40.toml"),
    include_str!("../data/cards/l4.toml"),
    include_str!("../data/cards/v100-sxm2-32gb.toml"),
    include_str!("../data/cards/mi250x.toml"),
    include_str!("../data/cards/mi325x.toml"),
    include_str!("../data/cards/a800.toml"),
    include_str!("../data/cards/h800.toml"),
    include_str!("../data/cards/h20.toml"),
    include_str!("../data/cards/gh200.toml"),
    include_str!("../data/cards/b100.toml"),
    include_str!("../data/cards/gb200.toml"),
    include_str!("../data/cards/a10.toml"),
    include_str!("../data/cards/t4.toml"),
    include_str!("../data/cards/rtx-3090.toml"),
    include_str!("../data/cards/rtx-5090.toml"),
    include_str!("../data/cards/rtx-6000-ada.toml"),
    include_str!("../data/cards/gaudi2.toml"),
    include_str!("../data/cards/gaudi3.toml"),
];

static SHIPPED: Lazy<Vec<Accelerator>> = Lazy::new(|| {
    CARD_FILES
        .iter()
        .map(|text| {
            Accelerator::from_toml(text)
                .unwrap_or_else(|e| panic!("a shipped card file does not read: {e}"))
        })
        .collect()
});

/// Every card the registry knows: the built-in ones, then the shipped files.
pub fn all_accelerators() -> impl Iterator<Item = &'static Accelerator> {
    ACCELERATORS.iter().chain(SHIPPED.iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_card_reads_validates_and_cites_each_figure() {
        assert_eq!(SHIPPED.len(), CARD_FILES.len());
        for (text, card) in CARD_FILES.iter().zip(SHIPPED.iter()) {
            let mut fields = vec![
                "peak_flops_bf16",
                "hbm_bandwidth",
                "memory_bytes",
                "interconnect",
            ];
            let optional = [
                ("peak_flops_fp8", card.peak_flops_fp8),
                ("peak_ops_int8", card.peak_ops_int8),
                ("peak_flops_fp4", card.peak_flops_fp4),
                ("peak_flops_fp32", card.peak_flops_fp32),
            ];
            fields.extend(
                optional
                    .iter()
                    .filter(|(_, v)| v.is_some())
                    .map(|(f, _)| *f),
            );
            for field in fields {
                let cited = text.lines().any(|l| {
                    let named = l.strip_prefix(&format!("# source {field}"));
                    named.is_some_and(|rest| rest.starts_with([':', ' '])) && l.contains("http")
                });
                assert!(cited, "{}: no source for {field}", card.name);
            }
            assert_eq!(crate::accelerator(card.name), Ok(card), "found by its name");
        }
        let names: Vec<String> = all_accelerators()
            .map(|a| crate::normalize(a.name))
            .collect();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} twice");
        }
    }

    /// The shipped cards as their files say: 21 of them, each new figure read (INT8 where
    /// a source prints one, FP4 on Blackwell only), and no name shadowing a built-in card.
    #[test]
    fn the_shipped_cards_hold_their_int8_and_fp4_figures() {
        assert_eq!(SHIPPED.len(), 21);
        let card = |name: &str| crate::accelerator(name).unwrap();
        assert_eq!(card("T4").peak_ops_int8, Some(130e12));
        assert_eq!(card("T4").peak_flops_bf16, 65e12);
        assert_eq!(card("RTX-4090").peak_ops_int8, Some(660.6e12));
        assert_eq!(card("GB200").peak_flops_fp4, Some(10e15));
        assert_eq!(card("B100").peak_flops_fp4, Some(7e15));
        assert_eq!(card("RTX-5090").peak_flops_fp4, Some(1676e12));
        assert_eq!(card("A800").peak_ops_int8, Some(624e12));
        for no_int8 in ["V100-SXM2-32GB", "Gaudi2", "Gaudi3"] {
            let c = card(no_int8);
            assert_eq!(c.peak_ops_int8, None, "{no_int8}");
            assert_eq!(c.peak_ops_int8_or_bf16(), c.peak_flops_bf16);
        }
        // FP32 vector peaks, from the datasheets; Gaudi publishes none.
        assert_eq!(card("RTX-4090").peak_flops_fp32, Some(82.6e12));
        assert_eq!(card("A100-40GB").peak_flops_fp32, Some(19.5e12));
        assert_eq!(card("MI250X").peak_flops_fp32, Some(47.9e12));
        assert_eq!(card("Gaudi2").peak_flops_fp32, None);
        assert_eq!(card("Gaudi3").peak_flops_fp32, None);
        for c in SHIPPED.iter().chain(ACCELERATORS) {
            // A vector unit never outruns the card's dense 16-bit tensor cores.
            if let Some(fp32) = c.peak_flops_fp32 {
                assert!(fp32 < c.peak_flops_bf16, "{}", c.name);
            }
        }
        for c in SHIPPED.iter() {
            let blackwell = ["GB200", "B100", "RTX-5090"].contains(&c.name);
            assert_eq!(c.peak_flops_fp4.is_some(), blackwell, "{}", c.name);
            // Dense INT8 is never below the bf16 rate, nor dense FP4 below FP8.
            if let Some(int8) = c.peak_ops_int8 {
                assert!(int8 >= c.peak_flops_bf16, "{}", c.name);
            }
            if let Some(fp4) = c.peak_flops_fp4 {
                assert!(fp4 >= c.peak_flops_fp8_or_bf16(), "{}", c.name);
            }
            for built_in in ACCELERATORS {
                let names = std::iter::once(&built_in.name).chain(built_in.aliases);
                for n in names {
                    assert_ne!(crate::normalize(n), crate::normalize(c.name), "{}", c.name);
                }
            }
        }
    }
}
