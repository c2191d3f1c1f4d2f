//! A catalogue: the values of one kind a crate knows, each a constant built in or one data
//! file shipped with the crate, read once, in the order `--list` shows them ([`Catalog`]).
//! The cards are one ([`all_accelerators`]: the seed's H100 built in, every other card
//! one file of `data/cards/*.toml` in the format of [`crate::card_file`], each figure's
//! source in a `# source …:` comment); `llm_math`'s models are another.

use std::sync::OnceLock;

use crate::{Accelerator, H100};

/// One entry of a catalogue: a value built into the crate, or the text of a data file.
#[derive(Debug)]
pub enum Entry<T: 'static> {
    /// A constant (the seed's names: `H100`, `LLAMA31_8B`, `LLAMA32_1B`).
    Built(&'static T),
    /// A data file's text (`include_str!`), read by the catalogue's reader.
    File(&'static str),
}

/// The values of one kind a crate knows, in order: built-in constants and data files, the
/// files read once, the first time the catalogue is asked.
pub struct Catalog<T: 'static> {
    entries: &'static [Entry<T>],
    read: fn(&'static str) -> Result<T, String>,
    values: OnceLock<Vec<T>>,
}

impl<T: Clone + 'static> Catalog<T> {
    /// A catalogue of `entries`, its files read by `read`.
    pub const fn new(
        entries: &'static [Entry<T>],
        read: fn(&'static str) -> Result<T, String>,
    ) -> Self {
        Catalog {
            entries,
            read,
            values: OnceLock::new(),
        }
    }

    /// Every value, in the catalogue's order. A shipped file that does not read is a bug
    /// in the data, which the crates' tests read every one of; it stops the process with
    /// the file's error.
    pub fn all(&'static self) -> impl Iterator<Item = &'static T> {
        let values = self.values.get_or_init(|| {
            let read = |e: &Entry<T>| match e {
                Entry::Built(value) => (*value).clone(),
                Entry::File(text) => (self.read)(text)
                    .unwrap_or_else(|e| panic!("a shipped data file does not read: {e}")),
            };
            self.entries.iter().map(read).collect()
        });
        values.iter()
    }

    /// The texts of the catalogue's data files, in order (for the tests that hold each
    /// file against its sources).
    pub fn files(&'static self) -> impl Iterator<Item = &'static str> {
        self.entries.iter().filter_map(|e| match e {
            Entry::File(text) => Some(*text),
            Entry::Built(_) => None,
        })
    }

    /// The value one of whose `names` is `name`, compared as [`crate::normalize`] does
    /// (any case, spaces, `-` and `_` ignored).
    pub fn find(
        &'static self,
        name: &str,
        names: impl Fn(&'static T) -> Vec<&'static str>,
    ) -> Option<&'static T> {
        let key = crate::normalize(name);
        self.all()
            .find(|v| names(v).iter().any(|n| crate::normalize(n) == key))
    }
}

/// The cards: the seed's H100, then one data file per card, in the order `--list` shows
/// them.
static CARDS: Catalog<Accelerator> = Catalog::new(
    &[
        Entry::Built(&H100),
        Entry::File(include_str!("../data/cards/h100-pcie.toml")),
        Entry::File(include_str!("../data/cards/h200.toml")),
        Entry::File(include_str!("../data/cards/a100.toml")),
        Entry::File(include_str!("../data/cards/b200.toml")),
        Entry::File(include_str!("../data/cards/mi300x.toml")),
        Entry::File(include_str!("../data/cards/l40s.toml")),
        Entry::File(include_str!("../data/cards/a100-40gb.toml")),
        Entry::File(include_str!("../data/cards/rtx-4090.toml")),
        Entry::File(include_str!("../data/cards/rtx-a6000.toml")),
        Entry::File(include_str!("../data/cards/l40.toml")),
        Entry::File(include_str!("../data/cards/l4.toml")),
        Entry::File(include_str!("../data/cards/v100-sxm2-32gb.toml")),
        Entry::File(include_str!("../data/cards/mi250x.toml")),
        Entry::File(include_str!("../data/cards/mi325x.toml")),
        Entry::File(include_str!("../data/cards/a800.toml")),
        Entry::File(include_str!("../data/cards/h800.toml")),
        Entry::File(include_str!("../data/cards/h20.toml")),
        Entry::File(include_str!("../data/cards/gh200.toml")),
        Entry::File(include_str!("../data/cards/b100.toml")),
        Entry::File(include_str!("../data/cards/gb200.toml")),
        Entry::File(include_str!("../data/cards/a10.toml")),
        Entry::File(include_str!("../data/cards/t4.toml")),
        Entry::File(include_str!("../data/cards/rtx-3090.toml")),
        Entry::File(include_str!("../data/cards/rtx-5090.toml")),
        Entry::File(include_str!("../data/cards/rtx-6000-ada.toml")),
        Entry::File(include_str!("../data/cards/gaudi2.toml")),
        Entry::File(include_str!("../data/cards/gaudi3.toml")),
    ],
    |text| Accelerator::from_toml(text).map_err(|e| e.to_string()),
);

/// Every card the registry knows, in the order `--list` shows them: what
/// [`crate::accelerator`] looks names up in.
pub fn all_accelerators() -> impl Iterator<Item = &'static Accelerator> {
    CARDS.all()
}

/// The card one of whose names (or aliases) is `name`.
pub(crate) fn find_accelerator(name: &str) -> Option<&'static Accelerator> {
    CARDS.find(name, |a| {
        std::iter::once(a.name)
            .chain(a.aliases.iter().copied())
            .collect()
    })
}

/// The shipped card files' texts, in order.
pub fn card_files() -> impl Iterator<Item = &'static str> {
    CARDS.files()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_card_reads_validates_and_cites_each_figure() {
        let shipped: Vec<&Accelerator> = all_accelerators().skip(1).collect();
        assert_eq!(shipped.len(), card_files().count());
        for (text, card) in card_files().zip(shipped) {
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

    /// The shipped cards as their files say: 27 of them, each new figure read (INT8 where
    /// a source prints one, FP4 on Blackwell only), and no name shadowing the built-in card.
    #[test]
    fn the_shipped_cards_hold_their_int8_and_fp4_figures() {
        let shipped: Vec<&Accelerator> = all_accelerators().skip(1).collect();
        assert_eq!(shipped.len(), 27);
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
        for c in all_accelerators() {
            // A vector unit never outruns the card's dense 16-bit tensor cores.
            if let Some(fp32) = c.peak_flops_fp32 {
                assert!(fp32 < c.peak_flops_bf16, "{}", c.name);
            }
        }
        for &c in &shipped {
            let blackwell = ["GB200", "B100", "RTX-5090", "B200"].contains(&c.name);
            assert_eq!(c.peak_flops_fp4.is_some(), blackwell, "{}", c.name);
            // Dense INT8 is never below the bf16 rate, nor dense FP4 below FP8.
            if let Some(int8) = c.peak_ops_int8 {
                assert!(int8 >= c.peak_flops_bf16, "{}", c.name);
            }
            if let Some(fp4) = c.peak_flops_fp4 {
                assert!(fp4 >= c.peak_flops_fp8_or_bf16(), "{}", c.name);
            }
            for built_in in crate::ACCELERATORS {
                let names = std::iter::once(&built_in.name).chain(built_in.aliases);
                for n in names {
                    assert_ne!(crate::normalize(n), crate::normalize(c.name), "{}", c.name);
                }
            }
        }
    }
}
