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
            if card.peak_flops_fp8.is_some() {
                fields.push("peak_flops_fp8");
            }
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
}
