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
}

impl WeightDtype {
    /// Every weight dtype, in the order `--help` lists them.
    pub const ALL: [WeightDtype; 3] = [WeightDtype::Bf16, WeightDtype::Fp8, WeightDtype::Int4];

    /// Bytes per stored weight.
    pub fn bytes(self) -> f64 {
        match self {
            WeightDtype::Bf16 => 2.0,
            WeightDtype::Fp8 => 1.0,
            WeightDtype::Int4 => 0.5,
        }
    }

    /// The card's peak FLOP/s for matrix products with these weights: FP8's where the
    /// weights are FP8 and the card has FP8 tensor cores, bf16's otherwise.
    pub fn peak_flops(self, hw: &Accelerator) -> f64 {
        match self {
            WeightDtype::Fp8 => hw.peak_flops_fp8_or_bf16(),
            WeightDtype::Bf16 | WeightDtype::Int4 => hw.peak_flops_bf16,
        }
    }

    /// The name a command line takes: `bf16`, `fp8`, `int4`.
    pub fn name(self) -> &'static str {
        match self {
            WeightDtype::Bf16 => "bf16",
            WeightDtype::Fp8 => "fp8",
            WeightDtype::Int4 => "int4",
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

    /// `bf16`, `fp8` or `int4`, any case.
    ///
    /// ```
    /// use llm_math::WeightDtype;
    /// assert_eq!("FP8".parse::<WeightDtype>()?, WeightDtype::Fp8);
    /// assert_eq!(WeightDtype::Int4.to_string(), "int4");
    /// assert!("fp4".parse::<WeightDtype>().unwrap_err().to_string().contains("bf16, fp8, int4"));
    /// # Ok::<(), llm_math::Error>(())
    /// ```
    fn from_str(text: &str) -> Result<Self, Error> {
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
        assert_eq!(
            "int4".parse::<KvDtype>().unwrap_err().to_string(),
            "unknown KV-cache dtype \"int4\"; choose one of: bf16, fp8"
        );
    }

    #[test]
    fn bytes_per_element_are_the_formats_widths() {
        // bf16 and fp8 are 16 and 8 bits; int4 packs two weights per byte.
        assert_eq!(WeightDtype::ALL.map(WeightDtype::bytes), [2.0, 1.0, 0.5]);
        assert_eq!(KvDtype::ALL.map(KvDtype::bytes), [2, 1]);
    }
}
