//! How weights and the KV cache are stored: bytes per element, and the peak they are
//! multiplied at. One `Display` / `FromStr` per dtype: the names a command line takes and
//! a table prints (`bf16`, `fp8`, `int4`).

use crate::Error;
use hw_specs::Accelerator;
use std::fmt;
use std::str::FromStr;

/// How weights are stored in device memory, and what a forward pass reads per weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeightDtype {
    /// bf16: 2 bytes per weight (the lecture's default).
    #[default]
    Bf16,
    /// FP8 (e4m3): 1 byte per weight; multiplied at the card's FP8 peak where it has one
    /// (W8A8, as TensorRT-LLM and vLLM run FP8 checkpoints).
    Fp8,
    /// INT4 with bf16 activations (W4A16, AWQ/GPTQ-style): 0.5 bytes per weight, group
    /// scales ignored; dequantized and multiplied at the bf16 peak.
    Int4,
    /// INT8 weights with 16-bit activations (W8A16, weight-only: GPTQ-Int8, gpt-fast's
    /// int8, TensorRT-LLM's weight-only int8): 1 byte per weight, dequantized and
    /// multiplied at the bf16 peak. Any card runs it.
    W8A16,
    /// INT8 weights and activations (W8A8, SmoothQuant-style): 1 byte per weight,
    /// multiplied at the card's INT8 tensor peak; refused on a card without one
    /// ([`WeightDtype::check_card`]).
    W8A8,
}

impl WeightDtype {
    /// Every weight dtype, in the order `--help` lists them.
    pub const ALL: [WeightDtype; 5] = [
        WeightDtype::Bf16,
        WeightDtype::Fp8,
        WeightDtype::W8A16,
        WeightDtype::W8A8,
        WeightDtype::Int4,
    ];

    /// Bytes per stored weight.
    pub fn bytes(self) -> f64 {
        match self {
            WeightDtype::Bf16 => 2.0,
            WeightDtype::Fp8 | WeightDtype::W8A16 | WeightDtype::W8A8 => 1.0,
            WeightDtype::Int4 => 0.5,
        }
    }

    /// The card's peak FLOP/s for matrix products with these weights: FP8's for FP8
    /// weights, INT8's for W8A8 (on a card without them, which [`WeightDtype::check_card`]
    /// refuses, its bf16 peak), bf16's for the 16-bit and weight-only formats.
    pub fn peak_flops(self, hw: &Accelerator) -> f64 {
        match self {
            WeightDtype::Fp8 => hw.peak_flops_fp8_or_bf16(),
            WeightDtype::W8A8 => hw.peak_ops_int8_or_bf16(),
            WeightDtype::Bf16 | WeightDtype::Int4 | WeightDtype::W8A16 => hw.peak_flops_bf16,
        }
    }

    /// Whether `hw` can run these weights as engines do: FP8 needs FP8 tensor cores
    /// (vLLM and TensorRT-LLM run FP8 checkpoints on an A100 as weight-only W8A16
    /// instead: say `w8a16`), W8A8 INT8 tensor cores; the others run anywhere.
    ///
    /// Errors: FP8 or W8A8 on a card without them, with the reason.
    ///
    /// ```
    /// use llm_math::WeightDtype;
    /// assert!(WeightDtype::Fp8.check_card(&hw_specs::H100).is_ok());
    /// let e = WeightDtype::Fp8.check_card(hw_specs::accelerator("A100").unwrap()).unwrap_err().to_string();
    /// assert!(e.contains("A100 has no FP8 tensor cores"), "{e}");
    /// assert!(WeightDtype::W8A16.check_card(hw_specs::accelerator("A100").unwrap()).is_ok());
    /// ```
    pub fn check_card(self, hw: &Accelerator) -> Result<(), Error> {
        if self == WeightDtype::Fp8 && hw.peak_flops_fp8.is_none() {
            return Err(Error::Invalid(format!(
                "{} has no FP8 tensor cores, so FP8 weights do not run at an FP8 rate there; \
                 engines serve such checkpoints as weight-only 8-bit (--weights w8a16)",
                hw.name
            )));
        }
        if self == WeightDtype::W8A8 && hw.peak_ops_int8.is_none() {
            return Err(Error::Invalid(format!(
                "{} has no INT8 tensor cores, so W8A8 weights have no INT8 rate there; \
                 weight-only 8-bit (--weights w8a16) runs at its 16-bit rate",
                hw.name
            )));
        }
        Ok(())
    }

    /// The name a command line takes: `bf16`, `fp8`, `w8a16`, `w8a8`, `int4`.
    pub fn name(self) -> &'static str {
        match self {
            WeightDtype::Bf16 => "bf16",
            WeightDtype::Fp8 => "fp8",
            WeightDtype::W8A16 => "w8a16",
            WeightDtype::W8A8 => "w8a8",
            WeightDtype::Int4 => "int4",
        }
    }

    /// Other names a command line takes for it: `int8` (weight-only) for `w8a16`,
    /// `w4a16` for `int4`, `fp16` for `bf16` (the same bytes and peak).
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            WeightDtype::Bf16 => &["fp16"],
            WeightDtype::Fp8 => &[],
            WeightDtype::W8A16 => &["int8"],
            WeightDtype::W8A8 => &[],
            WeightDtype::Int4 => &["w4a16"],
        }
    }
}

/// How the KV cache is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KvDtype {
    /// bf16: 2 bytes per element (the lecture's default).
    #[default]
    Bf16,
    /// FP8: 1 byte per element.
    Fp8,
}

impl KvDtype {
    /// Every KV dtype, in the order `--help` lists them.
    pub const ALL: [KvDtype; 2] = [KvDtype::Bf16, KvDtype::Fp8];

    /// Bytes per cached K or V element.
    pub fn bytes(self) -> u64 {
        match self {
            KvDtype::Bf16 => 2,
            KvDtype::Fp8 => 1,
        }
    }

    /// The name a command line takes: `bf16`, `fp8`.
    pub fn name(self) -> &'static str {
        match self {
            KvDtype::Bf16 => "bf16",
            KvDtype::Fp8 => "fp8",
        }
    }
}

impl fmt::Display for WeightDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for KvDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses one of `all` by its name, any case; the error lists the names.
fn parse<T: Copy>(
    text: &str,
    all: &[T],
    name: fn(T) -> &'static str,
    what: &str,
) -> Result<T, Error> {
    let t = text.trim();
    all.iter()
        .copied()
        .find(|&d| name(d).eq_ignore_ascii_case(t))
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|&d| name(d)).collect();
            Error::Invalid(format!(
                "unknown {what} {text:?}; choose one of: {}",
                names.join(", ")
            ))
        })
}

impl FromStr for WeightDtype {
    type Err = Error;

    /// `bf16`, `fp8`, `w8a16`, `w8a8` or `int4` (or an alias: [`WeightDtype::aliases`]), any case.
    ///
    /// ```
    /// use llm_math::WeightDtype;
    /// assert_eq!("FP8".parse::<WeightDtype>()?, WeightDtype::Fp8);
    /// assert_eq!("int8".parse::<WeightDtype>()?, WeightDtype::W8A16);
    /// assert_eq!("W4A16".parse::<WeightDtype>()?, WeightDtype::Int4);
    /// assert_eq!(WeightDtype::Int4.to_string(), "int4");
    /// assert!("fp4".parse::<WeightDtype>().unwrap_err().to_string().contains("bf16, fp8, w8a16, w8a8, int4"));
    /// # Ok::<(), llm_math::Error>(())
    /// ```
    fn from_str(text: &str) -> Result<Self, Error> {
        let t = text.trim();
        if let Some(&d) = WeightDtype::ALL
            .iter()
            .find(|d| d.aliases().iter().any(|a| a.eq_ignore_ascii_case(t)))
        {
            return Ok(d);
        }
        parse(text, &WeightDtype::ALL, WeightDtype::name, "weight dtype")
    }
}

impl FromStr for KvDtype {
    type Err = Error;

    /// `bf16` or `fp8`, any case.
    fn from_str(text: &str) -> Result<Self, Error> {
        parse(text, &KvDtype::ALL, KvDtype::name, "KV-cache dtype")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_reads_back_its_own_name_in_any_case() {
        for d in WeightDtype::ALL {
            assert_eq!(d.to_string().to_uppercase().parse::<WeightDtype>(), Ok(d));
        }
        for d in KvDtype::ALL {
            assert_eq!(format!(" {d} ").parse::<KvDtype>(), Ok(d));
        }
        for (alias, d) in [
            ("fp16", WeightDtype::Bf16),
            ("INT8", WeightDtype::W8A16),
            ("w4a16", WeightDtype::Int4),
        ] {
            assert_eq!(alias.parse::<WeightDtype>(), Ok(d));
        }
        assert_eq!(
            "int4".parse::<KvDtype>().unwrap_err().to_string(),
            "unknown KV-cache dtype \"int4\"; choose one of: bf16, fp8"
        );
    }

    /// FP8 and W8A8 only where the card has their tensor cores; the peaks they run at.
    #[test]
    fn each_format_runs_at_its_cards_peak_or_is_refused_with_the_reason() {
        use hw_specs::H100;
        assert_eq!(WeightDtype::Fp8.peak_flops(&H100), 1979e12);
        assert_eq!(
            WeightDtype::W8A8.peak_flops(hw_specs::accelerator("A100").unwrap()),
            624e12
        );
        assert_eq!(
            WeightDtype::W8A16.peak_flops(hw_specs::accelerator("A100").unwrap()),
            hw_specs::accelerator("A100").unwrap().peak_flops_bf16
        );
        assert!(
            WeightDtype::W8A8
                .check_card(hw_specs::accelerator("A100").unwrap())
                .is_ok()
        );
        let v100 = hw_specs::accelerator("V100-SXM2-32GB").unwrap();
        let e = WeightDtype::W8A8.check_card(v100).unwrap_err().to_string();
        assert!(
            e.contains("no INT8 tensor cores") && e.contains("w8a16"),
            "{e}"
        );
        for w in WeightDtype::ALL {
            let ok = w.check_card(hw_specs::accelerator("A100").unwrap()).is_ok();
            assert_eq!(ok, w != WeightDtype::Fp8, "{w} on an A100");
        }
    }

    #[test]
    fn bytes_per_element_are_the_formats_widths() {
        // bf16 is 16 bits, fp8 and both int8 formats 8; int4 packs two weights per byte.
        assert_eq!(
            WeightDtype::ALL.map(WeightDtype::bytes),
            [2.0, 1.0, 1.0, 1.0, 0.5]
        );
        assert_eq!(KvDtype::ALL.map(KvDtype::bytes), [2, 1]);
    }
}
