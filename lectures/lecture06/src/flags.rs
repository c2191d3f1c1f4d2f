//! The value parsers of lecture 6's what-if flags: each says which flag, what range it
//! takes and what it got, and keeps every figure the lecture prints finite (a value
//! outside its range would make a time infinite or a count wrap).

/// Parses a whole number of `what` in `min..=max` for `flag`.
fn count(flag: &str, what: &str, min: u64, max: u64, text: &str) -> Result<u64, String> {
    let range = || format!("{flag} takes {what} from {min} to {max}");
    let t = text.trim();
    if t.is_empty() {
        return Err(format!("{}, got nothing", range()));
    }
    match t.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("{}, got {text:?}", range())),
    }
}

/// The largest batch a flag takes: far beyond what any card holds, small enough that a
/// count prints as itself.
pub const MAX_BATCH: u64 = 1_000_000;
/// The longest context a flag takes, tokens (every model's maximum is below it).
pub const MAX_CTX: u64 = 10_000_000;
/// The most draft tokens a tree may verify in one round (`decode_lab::TreeShape`'s cap).
pub const MAX_TREE_NODES: u64 = 4096;
/// The longest fixed draft and the deepest tree: the longest draft `best_round` tries.
pub const MAX_GAMMA: u64 = decode_lab::MAX_GAMMA as u64;
/// The most cards of tensor parallelism.
pub const MAX_TP: u64 = 64;
/// The longest fixed per-pass overhead, seconds.
pub const MAX_OVERHEAD: f64 = 10.0;
/// The smallest efficiency (a fraction of peak): below it a pass takes longer than any
/// figure is meant to show.
pub const MIN_EFFICIENCY: f64 = 1e-3;
/// The largest fixed draft cost c (a draft step 10× a target step never pays).
pub const MAX_DRAFT_COST: f64 = 10.0;

/// `--batch LIST` (one value).
pub fn parse_batch(text: &str) -> Result<u64, String> {
    count("--batch", "batch sizes", 1, MAX_BATCH, text)
}

/// `--ctx LIST` (one value).
pub fn parse_ctx(text: &str) -> Result<u64, String> {
    count("--ctx", "context lengths in tokens", 1, MAX_CTX, text)
}

/// `--gamma N`.
pub fn parse_gamma(text: &str) -> Result<u32, String> {
    count("--gamma", "draft lengths", 1, MAX_GAMMA, text).map(|g| g as u32)
}

/// `--tp N`.
pub fn parse_tp(text: &str) -> Result<u64, String> {
    count("--tp", "numbers of cards", 1, MAX_TP, text)
}

/// `--draft-kv-window N`.
pub fn parse_window(text: &str) -> Result<u64, String> {
    count(
        "--draft-kv-window",
        "KV windows in tokens",
        1,
        MAX_CTX,
        text,
    )
}

/// `--tree-nodes N`.
pub fn parse_nodes(text: &str) -> Result<u64, String> {
    count(
        "--tree-nodes",
        "draft tokens per round",
        1,
        MAX_TREE_NODES,
        text,
    )
}

/// A finite number in `range` for `flag`; `-0` reads as `0`.
fn real(flag: &str, range: &str, ok: impl Fn(f64) -> bool, text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && ok(x) => Ok(x + 0.0),
        _ => Err(format!("{flag} takes {range}, got {text:?}")),
    }
}

/// `--alpha A`: a number in (0, 1].
pub fn parse_alpha(text: &str) -> Result<f64, String> {
    real(
        "--alpha",
        "an acceptance rate α in (0, 1]",
        |a| a > 0.0 && a <= 1.0,
        text,
    )
}

fn fraction(flag: &str, text: &str) -> Result<f64, String> {
    let ok = |f: f64| (MIN_EFFICIENCY..=1.0).contains(&f);
    real(flag, "a fraction of peak from 0.001 to 1", ok, text)
}

/// `--eff-compute F`: a fraction of peak FLOP/s in [0.001, 1].
pub fn parse_eff_compute(text: &str) -> Result<f64, String> {
    fraction("--eff-compute", text)
}

/// `--eff-bandwidth F`: a fraction of peak bandwidth in [0.001, 1].
pub fn parse_eff_bandwidth(text: &str) -> Result<f64, String> {
    fraction("--eff-bandwidth", text)
}

/// `--draft-cost C`: a cost coefficient from 0 to 10.
pub fn parse_cost(text: &str) -> Result<f64, String> {
    real(
        "--draft-cost",
        "a cost coefficient c from 0 to 10 (a fraction of a target step)",
        |c| (0.0..=MAX_DRAFT_COST).contains(&c),
        text,
    )
}

/// `--tau T`: tokens per round, from 1 (the target's own) to 65 (the deepest tree + 1).
pub fn parse_tau(text: &str) -> Result<f64, String> {
    real(
        "--tau",
        "tokens per round τ from 1 (the target's own) to 65",
        |t| (1.0..=MAX_GAMMA as f64 + 1.0).contains(&t),
        text,
    )
}

/// `--overhead-target TIME`, `--overhead-draft TIME`: a duration with its unit — `1ms`,
/// `300us` (or `300µs`, `300μs`), `0.5ms`, `2s`, `800ns`, in any case — from 0 to 10 s, in
/// seconds. A bare number is refused: the unit is the point.
pub fn parse_duration(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let lower = t.to_lowercase();
    let units = [
        ("ns", 1e-9),
        ("us", 1e-6),
        ("µs", 1e-6),
        ("μs", 1e-6),
        ("ms", 1e-3),
        ("s", 1.0),
    ];
    let Some((number, scale)) = units
        .iter()
        .find_map(|&(u, scale)| lower.strip_suffix(u).map(|n| (n, scale)))
    else {
        return Err(format!(
            "a time needs a unit: s, ms, us (µs) or ns, e.g. 1ms or 300us, got {text:?}"
        ));
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale <= MAX_OVERHEAD => Ok(v * scale + 0.0),
        _ => Err(format!(
            "a time is a number from 0 to 10 s with a unit (e.g. 1ms), got {text:?}"
        )),
    }
}

/// `--overlap F`: how far a pass overlaps compute with memory, from 0 (a sum) to 1 (the
/// seed's `max`).
pub fn parse_overlap(text: &str) -> Result<f64, String> {
    real(
        "--overlap",
        "a fraction from 0 (compute + memory) to 1 (max)",
        |f| (0.0..=1.0).contains(&f),
        text,
    )
}

/// `--fp8-bandwidth-factor F`, `--fp8-compute-factor F`: a factor on FP8's efficiency in
/// [0.001, 1].
pub fn parse_fp8_factor(text: &str) -> Result<f64, String> {
    fraction("--fp8-bandwidth-factor/--fp8-compute-factor", text)
}

/// A cost in `unit` (µs or ms) from 0 to 10 s, for `flag`; returns seconds.
fn cost(flag: &str, unit: &str, scale: f64, text: &str) -> Result<f64, String> {
    let max = MAX_OVERHEAD / scale;
    let range = format!("a cost in {unit} from 0 to {max}");
    real(flag, &range, |x| (0.0..=max).contains(&x), text).map(|x| x * scale)
}

/// `--verify-us-per-token X`: microseconds per verified token of the batch.
pub fn parse_verify_us(text: &str) -> Result<f64, String> {
    cost("--verify-us-per-token", "µs", 1e-6, text)
}

/// `--round-overhead-ms X`: milliseconds per speculative round.
pub fn parse_round_ms(text: &str) -> Result<f64, String> {
    cost("--round-overhead-ms", "ms", 1e-3, text)
}

/// `--round-overhead-per-seq-ms X`: milliseconds per round per sequence of the batch.
pub fn parse_round_seq_ms(text: &str) -> Result<f64, String> {
    cost("--round-overhead-per-seq-ms", "ms", 1e-3, text)
}

/// `--draft-layer-ms X`: milliseconds per draft layer per draft step.
pub fn parse_draft_layer_ms(text: &str) -> Result<f64, String> {
    cost("--draft-layer-ms", "ms", 1e-3, text)
}

/// `--all-reduce-us X`: microseconds per tensor-parallel all-reduce.
pub fn parse_all_reduce_us(text: &str) -> Result<f64, String> {
    cost("--all-reduce-us", "µs", 1e-6, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_state_their_range_and_what_they_got() {
        assert_eq!(parse_batch("16"), Ok(16));
        assert_eq!(
            parse_batch("abc").unwrap_err(),
            "--batch takes batch sizes from 1 to 1000000, got \"abc\""
        );
        assert_eq!(
            parse_batch("").unwrap_err(),
            "--batch takes batch sizes from 1 to 1000000, got nothing"
        );
        assert!(
            parse_batch("18446744073709551615")
                .unwrap_err()
                .contains("1000000")
        );
        assert!(parse_ctx("0").is_err() && parse_ctx("-5").is_err());
        assert_eq!(parse_gamma("64"), Ok(64));
        assert!(parse_gamma("65").unwrap_err().contains("from 1 to 64"));
        assert!(
            parse_tp("7x")
                .unwrap_err()
                .starts_with("--tp takes numbers of cards")
        );
        assert!(parse_nodes("4097").is_err() && parse_window("1").is_ok());
    }

    #[test]
    fn reals_are_finite_in_range_and_never_negative_zero() {
        assert_eq!(parse_alpha("0.7"), Ok(0.7));
        assert_eq!(parse_alpha("1"), Ok(1.0));
        for bad in ["0", "-0.3", "1.5", "NaN", "x", "-inf", ""] {
            let e = parse_alpha(bad).unwrap_err();
            assert!(
                e.starts_with("--alpha takes an acceptance rate α in (0, 1]"),
                "{bad}: {e}"
            );
        }
        let zero = parse_cost("-0").unwrap();
        assert!(zero == 0.0 && zero.is_sign_positive());
        assert!(parse_cost("11").is_err() && parse_cost("inf").is_err());
        assert!(
            parse_eff_bandwidth("5e-324")
                .unwrap_err()
                .starts_with("--eff-bandwidth takes")
        );
        assert!(parse_eff_compute("0.001").is_ok());
        assert!(parse_tau("100").is_err() && parse_tau("65").is_ok() && parse_tau("0.9").is_err());
    }

    #[test]
    fn cost_terms_are_read_in_their_units_and_bounded() {
        assert_eq!(parse_verify_us("20"), Ok(20.0 * 1e-6));
        assert_eq!(parse_round_ms("0.35"), Ok(0.35 * 1e-3));
        assert!(
            parse_round_ms("1e308")
                .unwrap_err()
                .contains("from 0 to 10000")
        );
        assert!(parse_all_reduce_us("-1").is_err() && parse_overlap("1.5").is_err());
        assert_eq!(parse_overlap("0"), Ok(0.0));
        assert!(parse_fp8_factor("0").is_err() && parse_fp8_factor("0.93").is_ok());
    }

    #[test]
    fn durations_need_a_unit_in_any_case_and_either_mu() {
        assert_eq!(parse_duration("1ms"), Ok(1e-3));
        assert_eq!(parse_duration("1MS"), Ok(1e-3));
        assert_eq!(parse_duration("300us"), Ok(300.0 * 1e-6));
        assert_eq!(parse_duration("300µs"), Ok(300.0 * 1e-6)); // U+00B5 MICRO SIGN
        assert_eq!(parse_duration("300μs"), Ok(300.0 * 1e-6)); // U+03BC GREEK SMALL MU
        assert_eq!(parse_duration("0.5 ms"), Ok(0.5e-3));
        assert_eq!(parse_duration("2s"), Ok(2.0));
        assert_eq!(parse_duration("1e-3s"), Ok(1e-3));
        assert!(parse_duration("1").unwrap_err().contains("needs a unit"));
        for bad in ["-1ms", "NaNms", "1e308s", "11s", "infms"] {
            let e = parse_duration(bad).unwrap_err();
            assert!(
                e.contains("a time is a number from 0 to 10 s"),
                "{bad}: {e}"
            );
        }
        assert!(
            parse_duration("ms").is_err() && parse_duration("1h").unwrap_err().contains("unit")
        );
    }
}
