//! The what-if flags, each checked against figures computed by hand from
//! SPEC §2's roofline (the validation table's commands: `tests/lecture/validation_commands.rs`).

use lecture_kit::testing::run;
use lecture06::Cli;
use serde_json::Value;

/// The typed figures of demo `id` from `--format json` with `args`.
fn data(args: &[&str], id: &str) -> Value {
    lecture_kit::testing::data::<Cli>(args, id)
}

fn t_base(args: &[&str]) -> f64 {
    let mut all = vec!["--demo", "1"];
    all.extend(args);
    data(&all, "demo1")["t_base_s"].as_f64().unwrap()
}

fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-12 * want.abs().max(1e-3),
        "{got} vs {want}"
    );
}

// Llama-3.1-8B at batch 1, context 1024 on an H100: weights 2 · 7,504,924,672 bytes; KV
// 131,072 bytes per token, read for 1024 cached tokens and written for 1 new one.
const W8B: f64 = 7_504_924_672.0;
const KV8B: f64 = 131_072.0;
const BW: f64 = 3.35e12;

#[test]
fn tp_2_halves_the_bytes_per_card_and_adds_two_all_reduces_per_layer() {
    // Per card: half the weights and half the KV heads. All-reduce: 2 · 32 layers of
    // 2 · (2 − 1)/2 · (1 token · 4096 · 2 bytes) over NVLink's 450 GB/s each way.
    let memory = (2.0 * W8B + 1025.0 * KV8B) / 2.0 / (BW * 0.8);
    let all_reduce = 64.0 * (4096.0 * 2.0) / 450e9;
    close(t_base(&["--tp", "2"]), memory + all_reduce + 1e-3);
}

#[test]
fn fp8_weights_and_kv_halve_their_bytes() {
    // FP8 and INT4 are the linear layers' formats (6,979,321,856 weights); the LM head and
    // the norms (525,602,816 streamed) stay at 2 bytes.
    let linear = 6_979_321_856.0;
    let sixteen = 525_602_816.0;
    close(
        t_base(&["--weights", "fp8"]),
        (linear + 2.0 * sixteen + 1025.0 * KV8B) / (BW * 0.8) + 1e-3,
    );
    close(
        t_base(&["--kv", "FP8"]),
        (2.0 * W8B + 1025.0 * KV8B / 2.0) / (BW * 0.8) + 1e-3,
    );
    close(
        t_base(&["--weights", "int4"]),
        (0.5 * linear + 2.0 * sixteen + 1025.0 * KV8B) / (BW * 0.8) + 1e-3,
    );
}

#[test]
fn overheads_take_units_and_efficiencies_scale_the_roofline() {
    let memory = (2.0 * W8B + 1025.0 * KV8B) / (BW * 0.8);
    close(t_base(&["--overhead-target", "2ms"]), memory + 2e-3);
    close(t_base(&["--overhead-target", "300us"]), memory + 300e-6);
    close(
        t_base(&["--eff-bandwidth", "0.4"]),
        (2.0 * W8B + 1025.0 * KV8B) / (BW * 0.4) + 1e-3,
    );
    // Decode at batch 1 is memory-bound: the compute efficiency does not show…
    close(t_base(&["--eff-compute", "0.3"]), memory + 1e-3);
    // …and the draft's overhead moves only the draft step.
    let d = data(&["--demo", "1", "--overhead-draft", "1ms"], "demo1");
    let draft_memory = (2.0 * 1_235_814_400.0 + 1025.0 * 32_768.0) / (BW * 0.8);
    close(d["t_draft_s"].as_f64().unwrap(), draft_memory + 1e-3);
}

#[test]
fn draft_kinds_are_costed_as_documented() {
    // A fixed cost: t_draft = c · t_base exactly.
    let d = data(&["--demo", "1", "--draft-cost", "0.1"], "demo1");
    close(d["c"].as_f64().unwrap(), 0.1);
    // An EAGLE-like head: one layer of the target (218,112,000 weights) plus its LM head
    // (128,256 · 4096) and final norm, one layer of KV (4,096 bytes per token), + 0.3 ms.
    let d = data(&["--demo", "1", "--draft-head"], "demo1");
    let head = 218_112_000.0 + 525_336_576.0 + 4096.0;
    close(
        d["t_draft_s"].as_f64().unwrap(),
        (2.0 * head + 1025.0 * 4096.0) / (BW * 0.8) + 0.3e-3,
    );
    // Self-speculation with a 256-token window at context 32768: the draft reads all the
    // weights but only 256 tokens of KV (+ the new one), at the target's overhead.
    let d = data(
        &["--demo", "1", "--draft-kv-window", "256", "--ctx", "32768"],
        "demo1",
    );
    close(
        d["t_base_s"].as_f64().unwrap(),
        (2.0 * W8B + 32_769.0 * KV8B) / (BW * 0.8) + 1e-3,
    );
    close(
        d["t_draft_s"].as_f64().unwrap(),
        (2.0 * W8B + 257.0 * KV8B) / (BW * 0.8) + 1e-3,
    );
}

#[test]
fn the_critical_batch_is_priced_at_the_fp8_factors_the_passes_use() {
    let critical = |args: &[&str]| {
        let d = data(&[&["--demo", "2"][..], args].concat(), "demo2");
        d["critical_tokens"].as_f64().unwrap()
    };
    // By hand, an H100 with FP8 weights (1 byte each, 1979 TFLOP/s FP8 peak) at 60% / 80%:
    // 1979e12 · 0.6 · 1 / (2 · 3.35e12 · 0.8) = 221.53 tokens.
    let fp8 = ["--weights", "fp8"];
    assert!((critical(&fp8) - 221.5299).abs() < 1e-3);
    // Bandwidth at 0.4 of that: 1187.4e12 / (2 · 3.35e12 · 0.32) = 1187.4 / 2.144 = 553.82.
    let slow_bandwidth = [&fp8[..], &["--fp8-bandwidth-factor", "0.4"]].concat();
    assert!((critical(&slow_bandwidth) - 553.8246).abs() < 1e-3);
    let text = run::<Cli>(&[&["--demo", "2"][..], &slow_bandwidth].concat()).stdout;
    assert!(text.contains("临界批大小约 554 个 token"), "{text}");
    // Compute at 0.5 of that: 1979e12 · 0.3 / 5.36e12 = 110.76.
    let slow_compute = [&fp8[..], &["--fp8-compute-factor", "0.5"]].concat();
    assert!((critical(&slow_compute) - 110.7649).abs() < 1e-3);
    // The factors apply to FP8 weights only (bf16 would keep 989e12 · 0.6 · 2 / 5.36e12 =
    // 221.42): with bf16 weights the flag would change nothing, so it is refused.
    let bf16 = run::<Cli>(&["--demo", "2", "--fp8-bandwidth-factor", "0.4"]);
    assert_eq!(bf16.code, 2, "{bf16:?}");
}

#[test]
fn an_explicit_fp8_compute_factor_prices_a_profiles_verification_too() {
    // The measured profile derives verification's cost per token from its efficiency at
    // FP8's compute factor (below 1): an explicit factor of 1 must reach it too, making
    // verification cheaper by that factor exactly (the cost is inversely proportional to it).
    let factor = planner::validation::MEASURED.cost_terms.fp8.compute;
    assert!(factor < 1.0, "{factor}");
    let cost = |args: &[&str]| {
        let argv = [&["--calibration", "measured", "--weights", "fp8"][..], args].concat();
        let inputs: lecture06::spec_decode_on_hardware::demo1::Inputs =
            lecture_kit::inputs::parse(&argv).unwrap();
        inputs.setup().plan.terms.verify_per_batch_token
    };
    let profile = cost(&[]);
    let explicit = cost(&["--fp8-compute-factor", "1"]);
    assert!(profile > 0.0);
    assert!(
        (explicit / profile - factor).abs() < 1e-12,
        "{explicit} / {profile}"
    );
    // An explicit cost wins over both.
    let fixed = cost(&["--fp8-compute-factor", "1", "--verify-us-per-token", "3"]);
    assert!((fixed - 3e-6).abs() < 1e-18, "{fixed}");
}

#[test]
fn batch_and_context_lists_replace_the_grid() {
    let d = data(
        &["--demo", "2", "--batch", "1,8", "--ctx", "8192,131072"],
        "demo2",
    );
    assert_eq!(d["ctxs_tokens"], serde_json::json!([8192, 131072]));
    let rows = d["grid"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["batch"], 8);
    // By hand: ⌊(80e9 − 2 · 8,030,261,248) / (131,072 · 131,072)⌋ = 3 sequences at 128K.
    assert_eq!(d["max_batch"], serde_json::json!([59, 3]));
    assert!(
        rows[1]["cells"][1].is_null(),
        "8 sequences of 128K do not fit"
    );
    let r = run::<Cli>(&["--ctx", "200000"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("context 200000 is longer than Llama-3.1-8B's maximum of 131072 tokens"),
        "{}",
        r.stderr
    );
    for bad in [&["--batch", "0"][..], &["--batch", "-4"], &["--ctx", "x"]] {
        let r = run::<Cli>(bad);
        assert_eq!(r.code, 2, "{bad:?}: {r:?}");
    }
}

#[test]
fn a_fixed_gamma_of_8_at_batch_512_is_a_slow_down() {
    let d = data(
        &[
            "--demo", "2", "--gamma", "8", "--batch", "512", "--ctx", "512",
        ],
        "demo2",
    );
    let cell = &d["grid"][0]["cells"][0];
    assert_eq!(cell["gamma"], 8);
    let speedup = cell["speedup"].as_f64().unwrap();
    assert!(speedup < 1.0, "{speedup}");
    let text = run::<Cli>(&[
        "--demo", "2", "--gamma", "8", "--batch", "512", "--ctx", "512",
    ])
    .stdout;
    assert!(text.contains(&format!("γ=8, {speedup:.2}× 变慢")), "{text}");
    assert!(text.contains("固定 γ"), "{text}");
    // The same γ at batch 1 still pays.
    let d = data(&["--demo", "1", "--gamma", "8"], "demo1");
    for b in d["best"].as_array().unwrap() {
        assert_eq!(b["round"]["gamma"], 8);
    }
}

#[test]
fn a_draft_of_another_vocabulary_is_refused_and_one_that_does_not_fit_is_printed() {
    for target in ["Mistral-7B-v0.3", "Qwen2.5-7B"] {
        let r = run::<Cli>(&["--target", target]);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(
            r.stderr
                .contains(&format!("Llama-3.2-1B cannot draft for {target}")),
            "{}",
            r.stderr
        );
        assert_eq!(r.stderr.lines().count(), 1);
    }
    // A same-family draft is fine.
    let r = run::<Cli>(&[
        "--target",
        "Qwen3-8B",
        "--draft",
        "Qwen3-0.6B",
        "--demo",
        "1",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // 405B of draft weights next to a 1B target on one 80 GB card: printed, not an error.
    let r = run::<Cli>(&[
        "--target",
        "Llama-3.2-1B",
        "--draft",
        "Llama-3.1-405B",
        "--demo",
        "1",
        "--demo",
        "2",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("加上草稿 Llama-3.1-405B 的权重"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("放不下"), "{}", r.stdout);
    assert!(
        !r.stdout.contains("c = 155"),
        "no figures for a draft that does not fit"
    );
    let d = data(
        &[
            "--target",
            "Llama-3.2-1B",
            "--draft",
            "Llama-3.1-405B",
            "--demo",
            "1",
        ],
        "demo1",
    );
    assert!(d.is_null());
}

#[test]
fn every_card_target_draft_and_knob_prints_finite_figures() {
    let drafts: [&[&str]; 4] = [
        &["--draft", "Llama-3.2-1B"],
        &["--draft-head"],
        &["--draft-cost", "0.05"],
        &["--draft-kv-window", "512"],
    ];
    let weights = ["bf16", "fp8", "int4"];
    let mut k = 0usize;
    let mut checked = 0usize;
    // The first seven cards and thirteen models listed: the lecture's and those its
    // what-ifs name most (every one is checked by the edge-value tests).
    for hw in hw_specs::catalog::all_accelerators().take(7) {
        for target in llm_math::catalog::all_models().take(13) {
            for (i, draft) in drafts.iter().enumerate() {
                for alpha in ["0.6", "1"] {
                    k += 1;
                    let tp = ["1", "2", "8"][(k + i) % 3].to_string();
                    let kv = if k.is_multiple_of(2) { "bf16" } else { "fp8" };
                    let mut args = vec!["--demo", "1", "--demo", "2", "--hw", hw.name];
                    args.extend(["--target", target.name, "--tp", &tp, "--alpha", alpha]);
                    args.extend(["--weights", weights[k % 3], "--kv", kv]);
                    args.extend(draft.iter());
                    if k.is_multiple_of(5) {
                        args.extend(["--gamma", "8"]);
                    }
                    // The command line refuses what cannot exist (another tokenizer, a
                    // tensor-parallel degree that does not divide the heads); a draft that
                    // does not fit is printed, so it stays in.
                    let report = match lecture_kit::report::<Cli>(&args) {
                        Err(lecture_kit::Error::Usage(_)) => continue,
                        other => other.unwrap_or_else(|e| panic!("{args:?}: {e}")),
                    };
                    checked += 1;
                    let text = format!("{:?}", report.sections);
                    assert!(
                        !text.contains("NaN") && !text.contains("inf"),
                        "{args:?}: {text}"
                    );
                }
            }
        }
    }
    assert!(checked >= 400, "only {checked} setups checked");
}

#[test]
fn a_best_draft_length_at_the_search_limit_says_so() {
    // A free, perfect draft: every longer draft pays more, so the best γ is the limit.
    let args = [
        "--demo",
        "2",
        "--draft-cost",
        "0",
        "--alpha",
        "1",
        "--batch",
        "1",
        "--ctx",
        "512",
    ];
    let text = run::<Cli>(&args).stdout;
    assert!(text.contains("γ=64（搜索上限）, "), "{text}");
    let d = data(&args, "demo2");
    assert_eq!(d["grid"][0]["cells"][0]["at_limit"], true);
    // A cheap draft's best lies inside the search: no mark, and nothing in the JSON.
    let d = data(
        &["--demo", "2", "--draft-cost", "0.02", "--alpha", "0.9"],
        "demo2",
    );
    assert_eq!(d["grid"][0]["cells"][0]["gamma"], 19);
    assert!(d["grid"][0]["cells"][0].get("at_limit").is_none());
}

/// `--per-seq-layer-us`: 2 µs for each of 8 sequences in each of 32 layers, 512 µs a step.
#[test]
fn the_cost_per_sequence_per_layer_adds_batch_times_layers() {
    let plain = t_base(&["--batch", "8"]);
    let with = t_base(&["--batch", "8", "--per-seq-layer-us", "2"]);
    close(with - plain, 2e-6 * 8.0 * 32.0);
}

/// `--prefill-tokens 512 --prefill-ctx 256` at batch 1: the step multiplies 513 tokens by
/// the weights and the prompt's attention, by hand — compute-bound at 60% of 989 TFLOP/s,
/// plus 1 ms.
#[test]
fn prompt_tokens_in_a_step_are_priced_by_hand() {
    let t = t_base(&["--prefill-tokens", "512", "--prefill-ctx", "256"]);
    let attn = 32.0 * 32.0 * 128.0;
    let flops = 2.0 * W8B * 513.0 + 4.0 * attn * 1024.0 + 4.0 * attn * 256.0 * 512.0;
    let bytes = 2.0 * W8B + (1024.0 + 1.0 + 256.0 + 512.0) * KV8B;
    let compute = flops / (989e12 * 0.6);
    let memory = bytes / (BW * 0.8);
    assert!(compute > memory);
    close(t, compute + 1e-3);
    // Half the tokens by default.
    close(
        t_base(&["--prefill-tokens", "512"]),
        t_base(&["--prefill-tokens", "512", "--prefill-ctx", "256"]),
    );
}

/// `--engine vllm` prices the step with the vLLM profile the library fits, and it is not
/// the pooled one.
#[test]
fn an_engine_prices_with_its_own_refitted_profile() {
    let vllm = planner::validation::engine_profile("vllm").unwrap();
    let s = vllm.calibration.apply(decode_lab::Scenario {
        batch: 8,
        ..decode_lab::Scenario::LECTURE
    });
    let plan = vllm.calibration.plan(&s);
    let want = decode_lab::Pricing::target_pass_time(&plan, &s, 1).unwrap();
    close(t_base(&["--batch", "8", "--engine", "vllm"]), want);
    let pooled = t_base(&["--batch", "8", "--calibration", "measured"]);
    assert!((pooled - want).abs() > 1e-6, "{pooled} vs {want}");
}

/// `--draft-tp 1` under `--tp 4`: the draft reads all its weights on one card, so its
/// step is slower and c is larger than with the draft split four ways.
#[test]
fn a_draft_on_fewer_cards_costs_more() {
    let c = |extra: &[&str]| {
        let mut args = vec!["--demo", "1", "--tp", "4", "--target", "Llama-3.1-70B"];
        args.extend(extra);
        data(&args, "demo1")["c"].as_f64().unwrap()
    };
    assert!(c(&["--draft-tp", "1"]) > c(&[]));
    close(c(&["--draft-tp", "4"]), c(&[]));
}

/// Demo 2's worked example verifies γ + 1 tokens of the γ asked for (the script's 5 at its
/// γ = 4), priced by the seed's pass time at the grid's largest batch and shortest context.
#[test]
fn demo2s_example_verifies_the_gamma_asked_for() {
    for (gamma, tokens) in [(None, 5u64), (Some("8"), 9), (Some("2"), 3)] {
        let mut args = vec!["--demo", "2"];
        args.extend(gamma.iter().flat_map(|g| ["--gamma", g]));
        let text = run::<Cli>(&args).stdout;
        let line = text.lines().find(|l| l.starts_with("例：")).unwrap();
        let said = format!("一次验证 {tokens} 个 token");
        assert!(line.contains(&said), "{args:?}: {line}");
        assert!(line.contains(&format!("批 × {tokens} = {} 个 token", 512 * tokens)));
        let s = decode_lab::Scenario {
            batch: 512,
            ctx: 512,
            ..decode_lab::Scenario::LECTURE
        };
        let want = decode_lab::target_pass_time(&s, tokens).unwrap();
        let got = data(&args, "demo2")["example"]["t_verify_s"]
            .as_f64()
            .unwrap();
        close(got, want);
    }
}

/// Against a mixture-of-experts target the draft is sized against the parameters a token
/// is multiplied by (what c compares), counted here from the catalogue.
#[test]
fn a_drafts_share_of_a_moe_target_is_of_its_active_parameters() {
    let args = [
        "--target",
        "Qwen3-30B-A3B",
        "--draft",
        "Qwen3-0.6B",
        "--demo",
        "1",
    ];
    let text = run::<Cli>(&args).stdout;
    let target = llm_math::catalog::model("Qwen3-30B-A3B").unwrap();
    let draft = llm_math::catalog::model("Qwen3-0.6B").unwrap();
    let active = target.active_params() as f64;
    assert!(active < 0.2 * target.n_params() as f64);
    let share = (100.0 * draft.n_params() as f64 / active).round();
    let said = format!("是目标每个 token 激活的 {:.2} B 的 {share}%", active / 1e9);
    assert!(text.contains(&said), "{said} not in {text}");
    // A dense target keeps the script's words.
    let dense = run::<Cli>(&["--demo", "1"]).stdout;
    assert!(dense.contains("草稿参数 1.24 B，是目标的 15%"));
}

/// A default draft of another tokenizer family is refused with the drafts that fit any
/// target, and the first of them then runs.
#[test]
fn refusing_the_default_draft_names_the_drafts_that_need_no_tokenizer() {
    for target in ["DeepSeek-V3", "Mixtral-8x7B"] {
        let r = run::<Cli>(&["--target", target, "--demo", "1"]);
        assert_eq!(r.code, 2);
        for flag in ["--draft-head", "--draft-cost", "--draft-kv-window"] {
            assert!(r.stderr.contains(flag), "{target}: {}", r.stderr);
        }
        let r = run::<Cli>(&["--target", target, "--draft-head", "--demo", "1"]);
        assert_eq!(r.code, 0, "{target}: {}", r.stderr);
    }
}

/// `--help` fits a terminal of 100 columns (CJK characters two wide) and its summary names
/// every opt-in demo and the trained model.
#[test]
fn help_fits_100_columns_and_names_every_demo() {
    use unicode_width::UnicodeWidthStr;
    let help = run::<Cli>(&["--help"]).stdout;
    let widest = help.lines().map(UnicodeWidthStr::width).max().unwrap();
    assert!(widest <= 100, "{widest} columns");
    let summary: String = help.split("Usage:").next().unwrap().into();
    for said in ["(4)", "(5)", "(6)", "(7)", "--model trained"] {
        assert!(summary.contains(said), "{said} not in {summary}");
    }
}
