//! Script 01 — decode 一步的账，与请求排队的延迟: `tools/port_example/serving_sim.py`, ported
//! line for line. `tools/port_example/check.sh` diffs the two outputs byte for byte: the same
//! NumPy random streams (`py_port::random`), reductions (`py_port::stats`) and number formats.

use lecture_flags::TargetOnCard;
use lecture_kit::value::{fixed, missing, percent, percent_fixed, py, thousands, time};
use lecture_kit::{Demo, Error, NoInputs, Out, row, seed, what_if};
use llm_math::{Deployment, ForwardCost, ForwardShape, critical_tokens, forward_cost};
use py_port::random::default_rng;
use py_port::stats::{mean, percentile, percentiles};

/// The script's demos. Demo 1 reads the card and the target (`--hw`, `--target`); demo 2
/// reads neither: its arrival rates are the script's, chosen for one H100's capacity (on a
/// slower card they would exceed it, and the queue has no steady state).
pub fn demos() -> Vec<Demo> {
    vec![Demo::new(1, demo1), Demo::new(2, demo2)]
}

/// Tokens already in each sequence's KV cache.
const CTX: u64 = 512;
/// The request kinds demo 2 draws.
const KINDS: [&str; 3] = ["聊天", "代码", "摘要"];

/// One decode step of `batch` sequences at [`CTX`] (the script's `step`).
fn step(m: &TargetOnCard, batch: u64) -> Result<ForwardCost, Error> {
    let shape = ForwardShape::decode(batch, CTX);
    Ok(forward_cost(
        m.target(),
        m.hw(),
        shape,
        &Deployment::LECTURE,
    )?)
}

/// 演示 1：批越大，一步多久、每秒多少 token、算力用了几成。
pub fn demo1(out: &mut Out, m: &TargetOnCard) -> Result<(), Error> {
    let hw = m.hw().name;
    let target = m.target().name;
    let peak = m.hw().peak_flops_bf16;
    out.header(format!(
        "演示 1：{target} 在一块 {hw} 上 decode 一步（上下文 {CTX}）"
    ));
    let crit = fixed(critical_tokens(m.hw(), &Deployment::LECTURE)?, 0);
    let ops = py(peak / m.hw().hbm_bandwidth);
    out.print(format!(
        "{hw} 的算力 / 带宽 = {ops} FLOP/字节；按 60% / 80% 的效率，临界批大小约 {crit} 个 token。"
    ));
    let mut rows = Vec::new();
    let mut too_big = Vec::new();
    for b in [1u64, 8, 32, 128, 256, 512] {
        let c = step(m, b)?;
        let bf = b as f64;
        // The script's card and model hold every batch; another pair may not (no number then).
        let Ok(t) = c.checked_time() else {
            let none = || missing("放不下");
            rows.push(row![b, none(), none(), none(), none()]);
            too_big.push(b.to_string());
            continue;
        };
        let bound = if c.is_compute_bound() {
            "算力"
        } else {
            "带宽"
        };
        let util = percent_fixed(c.flops / t / peak, 2);
        rows.push(row![b, time(t), thousands(bf / t), util, bound]);
    }
    out.table(
        ["批大小", "一步", "每秒 token", "算力利用率", "受限于"],
        rows,
    );
    let t1 = step(m, 1)?.time();
    let t512 = step(m, 512)?.time();
    let weights = fixed(2.0 * m.target().streamed_params() as f64 / 1e9, 1);
    let kv = 512.0 * CTX as f64 * m.target().kv_bytes_per_token() as f64;
    let kv = fixed(kv / 1e9, 1);
    let slower = fixed(t512 / t1, 1);
    let more = fixed(512.0 * t1 / t512, 0);
    let mut observations = vec![
        seed(format!(
            "批 1 时一步 {}，几乎全花在读 {weights} GB 权重上；算力只用了不到 1%。",
            time(t1)
        )),
        seed(format!(
            "批 512 一步 {}，是批 1 的 {slower} 倍，每秒 token 却多了 {more} 倍：读权重的时间被整批分摊。",
            time(t512)
        )),
        seed(format!(
            "可批 512 仍受带宽限制：每个序列的 KV 都要读，批 512、上下文 {CTX} 的 KV 有 {kv} GB，\
                 比权重还多；只有权重的读取被分摊，KV 的读取随批线性增长。"
        )),
    ];
    if !too_big.is_empty() {
        let memory = fixed(m.hw().memory_bytes / 1e9, 0);
        observations.insert(0, what_if(format!(
            "本配置：批 {} 在一块 {hw}（{memory} GB）上放不下：权重加上这么多序列的 KV 超出显存，没有一步可算。",
            too_big.join("、")
        )));
    }
    out.observations(observations);
    Ok(())
}

/// 演示 2：泊松到达、先来先服务的一台服务器：P50 / P99 延迟，模拟的平均等待对 P-K 公式。
pub fn demo2(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
    out.header("演示 2：请求随机到达，一台服务器先来先服务——到达率逼近服务能力时的 P50 / P99 延迟");
    let mut rng = default_rng(349);
    let n = 2000;
    let kinds = rng.choice(&KINDS, n, true, Some(&[0.6, 0.25, 0.15]))?;
    let prompt = rng.integers_n(64, 2048, n)?;
    let out_len = rng.geometric_n(1.0 / 200.0, n)?;
    let noise = rng.normal_n(0.0, 0.05, n)?;
    let m = &lecture_kit::inputs::defaults::<TargetOnCard>(); // one H100, Llama-3.1-8B
    let c1 = step(m, 1)?; // 预填充每 token 按算力受限估；decode 一步取 roofline 的慢者
    let t_prefill = c1.compute_time;
    let t_decode = c1.time();
    let service: Vec<f64> = (0..n)
        .map(|i| (prompt[i] as f64 * t_prefill + out_len[i] as f64 * t_decode) * (1.0 + noise[i]))
        .collect();
    let es = mean(&service)?;
    let es2 = mean(&service.iter().map(|s| s * s).collect::<Vec<_>>())?;
    let mean_out = mean(&out_len.iter().map(|&k| k as f64).collect::<Vec<_>>())?;
    let cap = fixed(1.0 / es, 2);
    let mean_out = fixed(mean_out, 1);
    out.print(format!(
        "{n} 个请求：平均服务时间 {}，服务能力约 {cap} 请求/秒；平均输出 {mean_out} 个 token。",
        time(es)
    ));
    let mut rows = Vec::new();
    let mut latency = Vec::new();
    let mut rate = 0.0;
    let mut rho = 0.0;
    for r in [0.3, 0.5, 0.7, 0.8] {
        (rate, rho) = (r, r * es);
        let mut arrive = rng.exponential_n(1.0 / rate, n)?;
        (1..n).for_each(|i| arrive[i] += arrive[i - 1]); // np.cumsum
        let mut wait = vec![0.0; n];
        let mut free = 0.0;
        for i in 0..n {
            wait[i] = f64::max(free - arrive[i], 0.0);
            free = arrive[i] + wait[i] + service[i];
        }
        latency = (0..n).map(|i| wait[i] + service[i]).collect();
        let p50 = percentile(&latency, 50.0)?;
        let p99 = percentile(&latency, 99.0)?;
        let pk = rate * es2 / (2.0 * (1.0 - rho));
        rows.push(row![
            py(rate),
            percent(rho),
            time(p50),
            time(p99),
            time(mean(&wait)?),
            time(pk)
        ]);
    }
    out.table(
        [
            "到达率（请求/秒）",
            "负载 ρ",
            "P50 延迟",
            "P99 延迟",
            "平均等待：模拟",
            "平均等待：P-K 公式",
        ],
        rows,
    );

    out.print(format!("\n到达率 {} 请求/秒时，按请求类型：", py(rate)));
    let mut rows = Vec::new();
    for k in KINDS {
        let lat: Vec<f64> = (0..n)
            .filter(|&i| kinds[i] == k)
            .map(|i| latency[i])
            .collect();
        let share = percent_fixed(lat.len() as f64 / n as f64, 1);
        let p50 = percentile(&lat, 50.0)?;
        let p99 = percentile(&lat, 99.0)?;
        rows.push(row![k, lat.len(), share, time(p50), time(p99)]);
    }
    out.table(["类型", "请求数", "占比", "P50 延迟", "P99 延迟"], rows);
    let p = percentiles(&latency, &[50.0, 99.0])?;
    let rho = percent(rho);
    let tail = fixed(p[1] / p[0], 1);
    out.observations([
        "负载 ρ 越接近 1，排队时间涨得越快（P-K 公式里的 1 / (1 − ρ)）：服务时间没变，延迟却成倍上涨。".to_string(),
        format!("ρ = {rho} 时 P99 是 P50 的 {tail} 倍；三类请求的 P50、P99 几乎一样：\
                 先来先服务时延迟主要是排队，与请求本身多长关系不大。"),
        "模拟的平均等待与公式在中等负载下相差不到两成；负载越高，有限个请求的模拟越难收敛到稳态。".to_string(),
    ]);
    Ok(())
}
