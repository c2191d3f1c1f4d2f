//! A card of one's own, from a TOML file with the same fields as [`Accelerator`]
//! (`--hw path/to/card.toml`), validated like the built-in ones.
//!
//! ```toml
//! name = "RTX 4090"
//! peak_flops_bf16 = 165.2e12     # dense, FLOP/s
//! peak_flops_fp8 = 330.3e12      # optional: a card without FP8 tensor cores leaves it out
//! hbm_bandwidth = 1.008e12       # bytes/s
//! memory_bytes = 24e9            # bytes
//!
//! [interconnect]
//! kind = "PCIe Gen4 x16"
//! per_direction = 32e9           # bytes/s each way
//! # mesh_link_per_direction = …  # optional: a switchless mesh's link
//! ```

use serde::Deserialize;

use crate::{Accelerator, Interconnect, InvalidAccelerator};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CardFile {
    name: String,
    peak_flops_bf16: f64,
    peak_flops_fp8: Option<f64>,
    hbm_bandwidth: f64,
    memory_bytes: f64,
    interconnect: LinkFile,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkFile {
    kind: String,
    per_direction: f64,
    mesh_link_per_direction: Option<f64>,
}

impl Accelerator {
    /// A card from the text of a TOML file (see [the module](crate::card_file)), its name
    /// and link kind kept for the rest of the program (leaked, a few bytes: this is for a
    /// command line, once per card), [validated](Accelerator::validate).
    ///
    /// Errors: text that is not such a file (a field missing, unknown or of the wrong
    /// type, named by the TOML reader), or a card that cannot exist.
    ///
    /// ```
    /// let text = "name = 'mine'\npeak_flops_bf16 = 1e15\nhbm_bandwidth = 3e12\n\
    ///             memory_bytes = 80e9\n[interconnect]\nkind = 'PCIe'\nper_direction = 32e9\n";
    /// let card = hw_specs::Accelerator::from_toml(text)?;
    /// assert_eq!((card.name, card.peak_flops_fp8), ("mine", None));
    /// assert!(hw_specs::Accelerator::from_toml("name = 'x'").is_err());
    /// # Ok::<(), hw_specs::InvalidAccelerator>(())
    /// ```
    pub fn from_toml(text: &str) -> Result<Accelerator, InvalidAccelerator> {
        let file: CardFile = toml::from_str(text).map_err(|e| InvalidAccelerator {
            name: "card file".into(),
            reason: e.message().to_string(),
        })?;
        let card = Accelerator {
            name: Box::leak(file.name.into_boxed_str()),
            aliases: &[],
            peak_flops_bf16: file.peak_flops_bf16,
            peak_flops_fp8: file.peak_flops_fp8,
            hbm_bandwidth: file.hbm_bandwidth,
            memory_bytes: file.memory_bytes,
            interconnect: Interconnect {
                kind: Box::leak(file.interconnect.kind.into_boxed_str()),
                per_direction: file.interconnect.per_direction,
                mesh_link_per_direction: file.interconnect.mesh_link_per_direction,
            },
        };
        card.validate()?;
        Ok(card)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINE: &str = "name = 'mine'\npeak_flops_bf16 = 1e15\nhbm_bandwidth = 3e12\n\
                        memory_bytes = 80e9\n[interconnect]\nkind = 'PCIe'\nper_direction = 32e9\n";

    #[test]
    fn a_card_file_reads_as_the_fields_say_and_is_validated() {
        let card = Accelerator::from_toml(MINE).unwrap();
        assert_eq!(card.hbm_bandwidth, 3e12);
        assert_eq!(card.interconnect.kind, "PCIe");
        let unknown = format!("{MINE}\n[extra]\nx = 1\n");
        assert!(Accelerator::from_toml(&unknown).is_err());
        let typo = MINE.replace("hbm_bandwidth", "hbm_bandwith");
        let e = Accelerator::from_toml(&typo).unwrap_err().to_string();
        assert!(
            e.contains("hbm_bandwith") || e.contains("hbm_bandwidth"),
            "{e}"
        );
        let negative = MINE.replace("memory_bytes = 80e9", "memory_bytes = -1.0");
        let e = Accelerator::from_toml(&negative).unwrap_err().to_string();
        assert!(e.starts_with("mine: memory must be"), "{e}");
    }
}
