//! INT4 weights dequantized on the card's vector units: a cost term of
//! [`CostTerms`](crate::CostTerms) (`int4_dequant_ops`), priced at the card's FP32 vector
//! peak.

use crate::Error;
use crate::units::finite_time;
use hw_specs::Accelerator;
use llm_math::WeightDtype;

/// The most vector operations per weight [`dequant_time`] takes: far above the dozen a
/// real INT4 kernel spends (unpack, convert, scale, zero point).
pub const MAX_DEQUANT_OPS: f64 = 1000.0;

pub(crate) fn check_dequant_ops(ops: f64) -> Result<f64, Error> {
    if ops.is_finite() && (0.0..=MAX_DEQUANT_OPS).contains(&ops) {
        Ok(ops)
    } else {
        Err(Error::Argument(format!(
            "INT4 dequantization ops per weight must be from 0 to {MAX_DEQUANT_OPS}, got {ops}"
        )))
    }
}

/// Time a pass spends dequantizing INT4 weights on the card's vector units, seconds:
/// `weights_read · ops_per_weight / hw.peak_flops_fp32`, for INT4 weights only (0 for
/// every other format, and for 0 ops). `weights_read` is the quantized weights one card
/// reads in the pass ([`llm_math::ModelConfig::streamed_quantized_params`]: the 16-bit LM
/// head and norms are read as they are).
///
/// Why: INT4 weight-only kernels unpack, convert and scale every weight on the vector
/// units before the 16-bit products, and that work is timed by the vector rate, not the
/// bandwidth. Held against the roofline, INT4 steps on the A100 (19.5 TFLOP/s FP32 for
/// 2.0 TB/s) are far slower than their bytes (the Qwen team's AWQ and GPTQ-Int4 rows in
/// vLLM, gpt-fast's int4, AutoAWQ on an A100), while the same formats on an RTX 4090
/// (82.6 TFLOP/s FP32 for 1.0 TB/s) and an RTX A6000 run close to them (AutoAWQ's
/// README, TinyChat): the card with the least vector rate per byte pays most.
///
/// Errors: ops outside 0 to [`MAX_DEQUANT_OPS`]; a weight count that is not finite and
/// ≥ 0; for INT4 weights with ops > 0, a card that cannot exist
/// ([`Accelerator::validate`]) or one without a `peak_flops_fp32`.
///
/// ```
/// use llm_math::WeightDtype;
/// use planner::dequant_time;
/// // 7e9 weights at 6 ops each on an A100's 19.5 TFLOP/s: 2.15 ms; bf16 weights: none.
/// let t = dequant_time(7e9, hw_specs::accelerator("A100").unwrap(), WeightDtype::Int4, 6.0)?;
/// assert!((t - 7e9 * 6.0 / 19.5e12).abs() < 1e-15);
/// assert_eq!(dequant_time(7e9, hw_specs::accelerator("A100").unwrap(), WeightDtype::Bf16, 6.0)?, 0.0);
/// # Ok::<(), planner::Error>(())
/// ```
pub fn dequant_time(
    weights_read: f64,
    hw: &Accelerator,
    weights: WeightDtype,
    ops_per_weight: f64,
) -> Result<f64, Error> {
    let ops = check_dequant_ops(ops_per_weight)?;
    if !(weights_read.is_finite() && weights_read >= 0.0) {
        return Err(Error::Argument(format!(
            "weights read must be a finite count ≥ 0, got {weights_read}"
        )));
    }
    if weights != WeightDtype::Int4 || ops == 0.0 {
        return Ok(0.0);
    }
    // The card only where its figures are used: every plan asks this for every pass.
    hw.validate().map_err(|e| Error::Argument(e.to_string()))?;
    let Some(rate) = hw.peak_flops_fp32 else {
        return Err(Error::Argument(format!(
            "{} has no FP32 vector peak (peak_flops_fp32) to price INT4 dequantization at: \
             give the card one, or price INT4 without dequantization (0 ops per weight)",
            hw.name
        )));
    };
    finite_time("INT4 dequantization time", weights_read * ops / rate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CostTerms;

    /// INT4's dequantization: by hand on an A100, nothing for other formats or at 0 ops,
    /// refused on a card without an FP32 vector peak, and a bad count named.
    #[test]
    fn int4_dequantization_costs_its_vector_work_by_hand() {
        let a100 = *hw_specs::accelerator("A100").unwrap();
        let t = dequant_time(1e9, &a100, WeightDtype::Int4, 4.0).unwrap();
        assert!((t - 4e9 / 19.5e12).abs() < 1e-18, "{t}");
        for w in WeightDtype::ALL {
            if w != WeightDtype::Int4 {
                assert_eq!(dequant_time(1e9, &a100, w, 4.0).unwrap(), 0.0, "{w:?}");
            }
        }
        let bare = Accelerator {
            peak_flops_fp32: None,
            ..a100
        };
        assert_eq!(
            dequant_time(1e9, &bare, WeightDtype::Int4, 0.0).unwrap(),
            0.0
        );
        let e = dequant_time(1e9, &bare, WeightDtype::Int4, 4.0).unwrap_err();
        assert!(e.to_string().contains("peak_flops_fp32"), "{e}");
        for ops in [-1.0, 1001.0, f64::NAN] {
            assert!(dequant_time(1e9, &a100, WeightDtype::Int4, ops).is_err());
            let bad = CostTerms {
                int4_dequant_ops: ops,
                ..CostTerms::NEUTRAL
            };
            assert!(
                bad.check()
                    .unwrap_err()
                    .to_string()
                    .contains("INT4 dequantization")
            );
        }
        assert!(dequant_time(f64::NAN, &a100, WeightDtype::Int4, 4.0).is_err());
        // A card that cannot exist is refused where its rate prices something, and not
        // looked at where nothing is priced (the pass's own checks refuse it).
        let broken = Accelerator {
            hbm_bandwidth: f64::NAN,
            ..a100
        };
        let e = dequant_time(1e9, &broken, WeightDtype::Int4, 4.0).unwrap_err();
        assert!(e.to_string().contains("memory bandwidth"), "{e}");
        assert_eq!(
            dequant_time(1e9, &broken, WeightDtype::Bf16, 4.0).unwrap(),
            0.0
        );
    }
}
