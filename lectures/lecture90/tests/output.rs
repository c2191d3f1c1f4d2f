//! What lecture 90 prints (snapshots in `tests/snapshots/`), what it claims, checked against
//! values computed here by hand, and the command line every lecture shares. That it prints
//! what `tools/port_example/serving_sim.py` prints is `tools/port_example/check.sh`'s job.

use lecture_kit::testing::{check_command_line, output, report};
use lecture90::Cli;

#[test]
fn lecture90_prints_what_the_snapshot_pins() {
    insta::assert_snapshot!(output::<Cli>(&[]));
}

#[test]
fn the_command_line_behaves_like_every_lectures() {
    check_command_line::<Cli>(env!("CARGO_BIN_EXE_lecture90"));
}

/// Demo 1's batch-1 step by hand: Llama-3.1-8B streams 7,504,924,672 weights of 2 bytes and
/// reads 512 cached tokens' KV plus writes one new token's (131,072 bytes each), at 80% of the
/// H100's 3.35 TB/s; every row is memory-bound at context 512, so batch b costs the same
/// weights plus b times the KV; at batch 1 less than 1% of the peak FLOP/s is used.
#[test]
fn a_decode_step_reads_the_weights_once_and_every_sequences_kv() {
    let h100 = report::<Cli>(&["--demo", "1"]);
    let table = h100.table("demo1_table1").expect("demo 1's table");
    let batch = table.numbers("批大小");
    let step = table.numbers("一步");
    assert_eq!(batch, [1.0, 8.0, 32.0, 128.0, 256.0, 512.0]);
    for (b, t) in batch.iter().zip(&step) {
        let bytes = 2.0 * 7_504_924_672.0 + b * 513.0 * 131_072.0;
        let hand = bytes / (3.35e12 * 0.8);
        assert!(
            (t - hand).abs() < 1e-12 * hand,
            "batch {b}: {t} s, by hand {hand} s"
        );
    }
    assert_eq!(table.texts().iter().filter(|r| r[4] == "带宽").count(), 6);
    // At batch 1: 2 FLOPs per weight and token, plus attention, against 989 TFLOP/s.
    let flops = 2.0 * 7_504_924_672.0 + 4.0 * 131_072.0 * 512.0;
    let util = table.numbers("算力利用率")[0];
    assert!(
        (util - flops / step[0] / 989e12).abs() < 1e-11 && util < 0.01,
        "{util} (a fraction)"
    );
    // Tokens per second = batch / step on every card; they grow with the batch until compute
    // sets the time (A100 from batch 256 on), then stay: a step's FLOPs grow with the batch.
    for hw in ["H100", "H200", "A100", "B200", "MI300X"] {
        let report = report::<Cli>(&["--hw", hw, "--demo", "1"]);
        let table = report.table("demo1_table1").unwrap();
        let step = table.numbers("一步");
        let rate = table.numbers("每秒 token");
        for ((b, t), r) in batch.iter().zip(&step).zip(&rate) {
            assert!((r - b / t).abs() < 1e-9 * r, "{hw}, batch {b}");
        }
        assert!(
            rate.windows(2).all(|w| w[1] > w[0] * (1.0 - 1e-12)),
            "{hw}: {rate:?}"
        );
    }
}

/// Demo 2's load by hand: a prompt is uniform on 64..2047 tokens (mean 1055.5), an output
/// geometric with p = 1/200 (mean 200), the noise has mean 0; prefill costs one token's
/// compute, 2·7,504,924,672 + 4·32·32·128·512 FLOPs at 60% of 989 TFLOP/s, and a decode step
/// demo 1's 5.63 ms. ρ = rate · E[S] must come out within 3% of that for 2,000 requests.
#[test]
fn the_load_is_the_arrival_rate_times_the_mean_service_time() {
    let report = report::<Cli>(&["--demo", "2"]);
    let table = report.table("demo2_table1").expect("demo 2's table");
    let t_prefill = (2.0 * 7_504_924_672.0 + 4.0 * 131_072.0 * 512.0) / (989e12 * 0.6);
    let t_decode = (2.0 * 7_504_924_672.0 + 513.0 * 131_072.0) / (3.35e12 * 0.8);
    let mean_service = 1055.5 * t_prefill + 200.0 * t_decode;
    let rates = table.numbers("到达率（请求/秒）");
    let rho = table.numbers("负载 ρ");
    assert_eq!(rates, [0.3, 0.5, 0.7, 0.8]);
    for (r, rho) in rates.iter().zip(&rho) {
        let hand = r * mean_service;
        assert!(
            (rho / hand - 1.0).abs() < 0.03,
            "rate {r}: ρ = {rho}, by hand {hand}"
        );
    }
}

/// Queueing theory against the simulation: the M/G/1 mean wait (Pollaczek–Khinchine) agrees
/// within 20% below ρ = 0.9, as the observation says; the delay percentiles grow with the
/// load; FIFO treats the three kinds alike (P50 and P99 within 15% of each other), and the
/// kinds' shares are the script's 60 / 25 / 15% within 3 points.
#[test]
fn the_simulated_wait_follows_pollaczek_khinchine_and_fifo_treats_every_kind_alike() {
    let report = report::<Cli>(&["--demo", "2"]);
    let table = report.table("demo2_table1").unwrap();
    let rho = table.numbers("负载 ρ");
    let sim = table.numbers("平均等待：模拟");
    let pk = table.numbers("平均等待：P-K 公式");
    for ((rho, sim), pk) in rho.iter().zip(&sim).zip(&pk).filter(|r| *r.0.0 < 0.9) {
        assert!(
            (sim / pk - 1.0).abs() < 0.2,
            "ρ = {rho}: {sim} s against {pk} s"
        );
    }
    for column in ["P50 延迟", "P99 延迟", "平均等待：模拟"] {
        let v = table.numbers(column);
        assert!(v.windows(2).all(|w| w[0] < w[1]), "{column}: {v:?}");
    }
    let kinds = report.table("demo2_table2").expect("the table by kind");
    for column in ["P50 延迟", "P99 延迟"] {
        let v = kinds.numbers(column);
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
        assert!(hi / lo < 1.15, "{column}: {v:?}");
    }
    let counts = kinds.numbers("请求数");
    assert_eq!(counts.iter().sum::<f64>(), 2000.0);
    for (n, share) in counts.iter().zip([0.6, 0.25, 0.15]) {
        assert!(
            (n / 2000.0 - share).abs() < 0.03,
            "{n} of 2000 against {share}"
        );
    }
}

/// A card and model the script never asked about may not hold every batch: those rows say
/// 放不下 and carry no number, and a sentence for the setup says which. By hand, an L40S
/// (48 GB) holds Llama-3.1-8B (16,060,522,496 bytes) and ⌊31,939,477,504 / (512 · 131,072)⌋ =
/// 475 sequences of 512 tokens: batch 512 does not fit, 256 does. Llama-3.1-70B's 141 GB
/// fit no H100 at all.
#[test]
fn a_batch_that_does_not_fit_prints_no_step_and_says_so() {
    let texts = |args: &[&str]| {
        let r = report::<Cli>(args);
        r.table("demo1_table1").unwrap().texts()
    };
    let l40s = texts(&["--demo", "1", "--hw", "L40S"]);
    let missing: Vec<&str> = l40s
        .iter()
        .filter(|r| r[1] == "放不下")
        .map(|r| r[0].as_str())
        .collect();
    assert_eq!(missing, ["512"]);
    assert!(l40s.iter().all(|r| r[1] == "放不下" || r[1].ends_with('s')));
    let text = output::<Cli>(&["--demo", "1", "--hw", "L40S"]);
    assert!(
        text.contains("本配置：批 512 在一块 L40S（48 GB）上放不下"),
        "{text}"
    );
    let big = texts(&["--demo", "1", "--target", "Llama-3.1-70B"]);
    assert!(
        big.iter().all(|r| r[1..].iter().all(|c| c == "放不下")),
        "{big:?}"
    );
    let text = output::<Cli>(&["--demo", "1", "--target", "Llama-3.1-70B"]);
    assert!(
        text.contains("本配置：批 1、8、32、128、256、512 在一块 H100（80 GB）上放不下"),
        "{text}"
    );
}
