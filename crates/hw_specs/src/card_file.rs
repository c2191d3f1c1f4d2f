//! A card of one's own, from a TOML file with the same fields as [`Accelerator`]
//! (`--hw path/to/card.toml`), validated like the built-in ones.
//!
//! ```toml
//! name = "RTX 4090"
//! peak_flops_bf16 = 165.2e12     # dense, FLOP/s
//! peak_flops_fp8 = 330.3e12      # optional: a card without FP8 tensor cores leaves it out
//! peak_ops_int8 = 660.6e12       # optional: dense INT8 ops/s; a card without leaves it out
//! # peak_flops_fp4 = …           # optional: dense FP4 FLOP/s (Blackwell and later)
//! peak_flops_fp32 = 82.6e12      # optional: FP32 of the non-tensor units, FLOP/s
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
    #[serde(default)]
    aliases: Vec<String>,
    peak_flops_bf16: f64,
    peak_flops_fp8: Option<f64>,
    peak_ops_int8: Option<f64>,
    peak_flops_fp4: Option<f64>,
    peak_flops_fp32: Option<f64>,
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

/// The largest card file read: a card is a dozen lines.
pub const MAX_CARD_BYTES: u64 = 64 << 10;

impl Accelerator {
    /// [`Accelerator::from_toml`] of the file at `path`. Only a regular file of at most
    /// [`MAX_CARD_BYTES`] is read.
    ///
    /// Errors: a file that cannot be read, is not a regular file or is too big, and as
    /// [`Accelerator::from_toml`]; the message starts with the path.
    pub fn from_toml_file(path: &std::path::Path) -> Result<Accelerator, InvalidAccelerator> {
        let shown = path.display();
        let text =
            crate::user_file::read(path, MAX_CARD_BYTES, "a card file").map_err(|reason| {
                InvalidAccelerator {
                    name: format!("{shown}"),
                    reason,
                }
            })?;
        Accelerator::from_toml(&text).map_err(|e| InvalidAccelerator {
            name: format!("{shown}: {}", e.name),
            reason: e.reason,
        })
    }

    /// A card from the text of a TOML file (see [the module](crate::card_file)), its name
    /// and link kind kept for the rest of the program (leaked, a few bytes: this is for a
    /// command line, once per card), [validated](Accelerator::validate).
    ///
    /// Errors: text that is not such a file (a field missing, unknown or of the wrong
    /// type, the field named), or a card that cannot exist.
    ///
    /// ```
    /// let text = "name = 'mine'\npeak_flops_bf16 = 1e15\nhbm_bandwidth = 3e12\n\
    ///             memory_bytes = 80e9\n[interconnect]\nkind = 'PCIe'\nper_direction = 32e9\n";
    /// let card = hw_specs::Accelerator::from_toml(text)?;
    /// assert_eq!((card.name, card.peak_flops_fp8, card.peak_ops_int8), ("mine", None, None));
    /// assert!(hw_specs::Accelerator::from_toml("name = 'x'").is_err());
    /// # Ok::<(), hw_specs::InvalidAccelerator>(())
    /// ```
    pub fn from_toml(text: &str) -> Result<Accelerator, InvalidAccelerator> {
        let file: CardFile = toml::from_str(text).map_err(|e| InvalidAccelerator {
            name: "card file".into(),
            reason: reason(text, &e),
        })?;
        let card = Accelerator {
            name: Box::leak(file.name.into_boxed_str()),
            aliases: leak_names(file.aliases),
            peak_flops_bf16: file.peak_flops_bf16,
            peak_flops_fp8: file.peak_flops_fp8,
            peak_ops_int8: file.peak_ops_int8,
            peak_flops_fp4: file.peak_flops_fp4,
            peak_flops_fp32: file.peak_flops_fp32,
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

/// `names` for the life of the process, as a card's aliases (a card is read once).
fn leak_names(names: Vec<String>) -> &'static [&'static str] {
    let names: Vec<&'static str> = names
        .into_iter()
        .map(|n| &*Box::leak(n.into_boxed_str()))
        .collect();
    Box::leak(names.into_boxed_slice())
}

/// What is wrong with a card file, its field named: a missing field's message names it; a
/// value's points into its `key = value` line.
fn reason(text: &str, e: &toml::de::Error) -> String {
    let message = e.message();
    if message.starts_with("missing field") {
        // Its span is the whole table, which starts at some other key.
        return message.to_string();
    }
    let message = match message.split_once(" as i128, expected") {
        // An integer beyond i64 (TOML's integers), which the reader then offers as i128.
        Some((value, _)) => format!(
            "{} is beyond a TOML integer's range; write it with an exponent (e.g. 1e20)",
            value.trim_start_matches("invalid type: integer ")
        ),
        None => message.to_string(),
    };
    match field_at(text, e) {
        Some(key) if !message.contains(key) => format!("{key}: {message}"),
        _ => message,
    }
}

/// The key of the `key = value` line a TOML error points into, if it points into one: the
/// reader's own message for a value of the wrong type does not name its field.
fn field_at<'t>(text: &'t str, e: &toml::de::Error) -> Option<&'t str> {
    let before = text.get(..e.span()?.start)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let (key, _) = text[line_start..].lines().next()?.split_once('=')?;
    let key = key.trim();
    (!key.is_empty() && !key.starts_with('#')).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINE: &str = "name = 'mine'\npeak_flops_bf16 = 1e15\nhbm_bandwidth = 3e12\n\
                        memory_bytes = 80e9\n[interconnect]\nkind = 'PCIe'\nper_direction = 32e9\n";

    /// An ESC in a card's name once reached the terminal and made `--plot` write an SVG
    /// that is not XML; a newline split a table's header.
    #[test]
    fn a_control_character_in_a_cards_text_is_refused_and_named_escaped() {
        for (from, to) in [
            ("name = 'mine'", "name = \"mi\\u001bne\""),
            ("name = 'mine'", "name = \"mi\\nne\""),
            ("kind = 'PCIe'", "kind = \"PC\\u0000Ie\""),
            // DEL, and a C1 control (CSI) in text that is not ASCII.
            ("name = 'mine'", "name = \"mi\\u007fne\""),
            ("name = 'mine'", "name = \"mï\\u009bne\""),
        ] {
            let e = Accelerator::from_toml(&MINE.replace(from, to))
                .unwrap_err()
                .to_string();
            assert!(e.contains("control character"), "{e}");
            assert!(!e.chars().any(char::is_control), "{e:?}");
        }
        // Text that is not ASCII, without a control character, is a name like any other.
        let card = Accelerator::from_toml(&MINE.replace("'mine'", "'mïne µ'")).unwrap();
        assert_eq!(card.name, "mïne µ");
    }

    #[test]
    fn a_missing_field_and_a_too_big_integer_are_named_as_they_are() {
        // A missing field's error spans the whole table: it once blamed the first key.
        let missing = MINE.replace("hbm_bandwidth = 3e12\n", "");
        let e = Accelerator::from_toml(&missing).unwrap_err().to_string();
        assert_eq!(e, "card file: missing field `hbm_bandwidth`");
        let huge = MINE.replace("memory_bytes = 80e9", "memory_bytes = 99999999999999999999");
        let e = Accelerator::from_toml(&huge).unwrap_err().to_string();
        assert_eq!(
            e,
            "card file: memory_bytes: `99999999999999999999` is beyond a TOML integer's \
             range; write it with an exponent (e.g. 1e20)"
        );
    }

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

    #[test]
    fn int8_and_fp4_peaks_are_optional_and_validated() {
        let bare = Accelerator::from_toml(MINE).unwrap();
        assert_eq!((bare.peak_ops_int8, bare.peak_flops_fp4), (None, None));
        let peaks = "peak_flops_bf16 = 1e15\npeak_ops_int8 = 2e15\npeak_flops_fp4 = 4e15";
        let full = Accelerator::from_toml(&MINE.replace("peak_flops_bf16 = 1e15", peaks)).unwrap();
        assert_eq!(full.peak_ops_int8, Some(2e15));
        assert_eq!(full.peak_flops_fp4, Some(4e15));
        assert_eq!(full.peak_flops_fp4_or_fp8(), 4e15);
        for (line, field) in [
            ("peak_ops_int8 = -1.0", "mine: INT8 peak must be"),
            ("peak_ops_int8 = nan", "mine: INT8 peak must be"),
            ("peak_flops_fp4 = 0.0", "mine: FP4 peak must be"),
            ("peak_flops_fp4 = inf", "mine: FP4 peak must be"),
        ] {
            let text = MINE.replace("hbm_bandwidth", &format!("{line}\nhbm_bandwidth"));
            let e = Accelerator::from_toml(&text).unwrap_err().to_string();
            assert!(e.starts_with(field), "{e}");
        }
        // Of the wrong type: the field is named (the reader alone does not name it).
        let text = MINE.replace("hbm_bandwidth", "peak_ops_int8 = 'fast'\nhbm_bandwidth");
        let e = Accelerator::from_toml(&text).unwrap_err().to_string();
        assert_eq!(
            e,
            "card file: peak_ops_int8: invalid type: string \"fast\", expected f64"
        );
        // A misspelt new field is still refused.
        let text = MINE.replace("hbm_bandwidth", "peak_ops_int4 = 1e15\nhbm_bandwidth");
        let e = Accelerator::from_toml(&text).unwrap_err().to_string();
        assert!(e.contains("peak_ops_int4"), "{e}");
    }
}
