//! The cards and models students ask about are listed, and each prices a plain decode
//! step no faster than its weight read allows: one pass of a batch-1 decode streams every
//! weight the token uses once, at no more than the card's bandwidth.

use crate::common;

use common::demo1;
use lecture06::Cli;
use llm_math::WeightDtype;

/// Cards the data and students name beyond the lecture's own.
const CARDS: [&str; 10] = [
    "A100-40GB",
    "A800",
    "RTX-3090",
    "RTX-4090",
    "RTX-A6000",
    "L40",
    "V100-SXM2-32GB",
    "MI250X",
    "MI325X",
    "H20",
];

/// Models the data and students name beyond the lecture's own.
const MODELS: [&str; 16] = [
    "Llama-2-7B",
    "Llama-2-13B",
    "Llama-2-70B",
    "Vicuna-7B-v1.5",
    "Vicuna-13B-v1.5",
    "Vicuna-33B-v1.3",
    "Zephyr-7B-beta",
    "CodeLlama-34B",
    "TinyLlama-1.1B",
    "InternLM-20B",
    "Mixtral-8x7B",
    "Qwen2.5-32B",
    "QwQ-32B",
    "gpt-oss-120B",
    "Gemma-7B",
    "DeepSeek-V3",
];

/// Demo 1's plain step for `args` (with a draft head, which every target has), checked
/// against the weight read: at the lecture's 80% of the bandwidth and 1 ms a step, the
/// step takes at least the streamed weights at `min_bytes` each and at most half again
/// their read at `max_bytes` each (the KV cache of 1024 tokens and the LM head's wider
/// format on top).
fn step_is_bounded_by_the_weight_read(args: &[&str], min_bytes: f64, max_bytes: f64) {
    let all = [args, &["--draft-head"]].concat();
    let d = demo1(&all).unwrap_or_else(|| panic!("{args:?} does not price a step"));
    let value = |flag: &str| {
        let i = all.iter().position(|a| *a == flag).unwrap();
        all[i + 1]
    };
    let hw = hw_specs::accelerator(value("--hw")).unwrap();
    let target = llm_math::model(value("--target")).unwrap();
    let tp: f64 = all
        .iter()
        .position(|a| *a == "--tp")
        .map_or(1.0, |i| all[i + 1].parse().unwrap());
    let read = target.streamed_params() as f64 / (tp * 0.8 * hw.hbm_bandwidth);
    let step = d.t_base - 1e-3;
    assert!(d.t_base.is_finite(), "{args:?}");
    assert!(step >= read * min_bytes, "{args:?}: {step} s");
    assert!(step <= 1.5 * read * max_bytes, "{args:?}: {step} s");
}

#[test]
fn every_card_named_is_listed_and_prices_a_step() {
    let list = lecture_kit::testing::output::<Cli>(&["--list"]);
    for card in CARDS {
        assert!(list.contains(&format!("| {card} ")), "{card} not in --list");
        step_is_bounded_by_the_weight_read(&["--hw", card, "--target", "Llama-2-7B"], 2.0, 2.0);
    }
}

#[test]
fn every_model_named_is_listed_and_prices_a_step() {
    let list = lecture_kit::testing::output::<Cli>(&["--list"]);
    let fp8 = WeightDtype::Fp8.to_string();
    for model in MODELS {
        assert!(
            list.contains(&format!("| {model} ")),
            "{model} not in --list"
        );
        // FP8 on a B200: 1-byte linear weights, the LM head at 2. DeepSeek-V3's 671 GB
        // need the eight cards of a node; every other model fits on one.
        let tp = if model == "DeepSeek-V3" { "8" } else { "1" };
        let args = [
            "--hw",
            "B200",
            "--target",
            model,
            "--weights",
            &fp8,
            "--tp",
            tp,
        ];
        step_is_bounded_by_the_weight_read(&args, 1.0, 2.0);
    }
}
