//! Demo 6 (opt-in, not in the original script; `--release` recommended): the roofline of
//! the machine in front of you — its peak and bandwidth measured, the forward time, the knee
//! and c predicted and then timed, speculative decoding timed for real (`host_lab`). Every
//! number is measured here and now, so every one is a measured value (masked in snapshots).

use std::sync::{Arc, Mutex};

use host_lab::figures::{self, DraftKind, HostFigures, Plan};
use host_lab::predict::{KNEE_FACTOR, planner_overlap};
use lecture_kit::value::{
    fixed, int, label, measured as m, missing, parts, percent, ratio, speedup, time,
};
use lecture_kit::{Axis, Error, Figure, NoInputs, Out, Panel, Series, Value, always, row};

/// The five curves of a forward pass, in the order of `SweepPoint::times`.
const CURVES: [&str; 5] = [
    "实测",
    "预测 max",
    "预测 规划器",
    "预测 本机重叠",
    "预测 相加",
];
/// The columns of the forward-time and the speculative-decoding tables.
const FORWARD: &str = "批|n|实测|预测 max|预测 规划器|预测 本机重叠|预测 相加|实测 / max|实测 / 规划器|实测 / 本机重叠|实测 / 相加";
const SPEC: &str = "批|草稿|实测 τ|普通|投机|实测加速|预测 max|预测 相加|与普通解码逐字相同";

/// 演示 6: prints this machine's [`measured`] figures.
pub fn run(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
    let figures = measured()?;
    print(out, &figures);
    Ok(())
}

/// What demo 6 measures: [`Plan::demo`], or in an unoptimised build [`Plan::quick`].
pub fn plan() -> Plan {
    if cfg!(debug_assertions) {
        Plan::quick()
    } else {
        Plan::demo()
    }
}

/// Demo 6's measurement in this process ([`measured`]).
static MEASURED: Mutex<Option<Arc<HostFigures>>> = Mutex::new(None);

/// This machine measured on demo 6's [`plan`], its progress on stderr, once per process:
/// once a measurement succeeds, a later call gets the same figures (one that fails is
/// kept by no one: the next call measures again). The command line runs demo 6 once; in a
/// test binary, the every-demo check and demo 6's claims share one measurement (a quick
/// plan is seconds of both cores). A second caller waits for the first, so two
/// measurements never run side by side.
///
/// Errors as [`figures::run`]: too little memory for the plan, a measurement that fails.
pub fn measured() -> Result<Arc<HostFigures>, Error> {
    let mut kept = MEASURED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(figures) = kept.as_ref() {
        return Ok(Arc::clone(figures));
    }
    let figures = Arc::new(figures::run(&plan(), &mut std::io::stderr())?);
    *kept = Some(Arc::clone(&figures));
    Ok(figures)
}

/// Prints demo 6 for figures measured by [`figures::run`].
pub fn print(out: &mut Out, f: &HostFigures) {
    out.header("演示 6（实测，本机）：这台机器的屋顶线——峰值与带宽实测，前向时间、拐点与 c 先预测再计时，投机解码真跑一遍");
    if cfg!(debug_assertions) {
        out.print("（未优化构建，只跑小计划：2 层的模型，未必大过末级缓存；要看这台机器的真数字：cargo run --release -p lecture06 -- --demo 6）");
    }
    out.print(machine_line(f));
    out.print(model_line(f));
    out.print(parts(
        "\n一次前向给每个序列送进 n 个 token 要多久（预测用每次计时前后重测的峰值与带宽、每个 n 取它自己那几次计时前后的中位数，\
         及内核在 B·n 行时的效率；max = 屋顶线，计算藏在访存下；相加 = 计算 + 访存；规划器 = 两者之间，计算有 {} 藏在访存下，\
         是演示 5 的 measured 标定按引擎公开数据拟合的，从没见过这台机器；本机重叠 = 同一公式，藏住的比例换成这台机器实测的：\
         内核乘 1、2、4 … 64 行、权重从内存流进来（另一组矩阵，不是这个模型；和一次前向一样，一个乘积接一个，每个切成块分给各线程），\
         比单读这些权重慢多少，B·n 行取其间按对数插值的；都加上这一次前向开的 {} 个并行区）：",
        [percent(planner_overlap()), int(f.model.target_regions)],
    ));
    out.table(FORWARD.split('|'), f.sweep.iter().map(forward_row))
        .id("demo6_forward");
    out.print(format!(
        "\n拐点：时间涨到送 1 个 token 时 {KNEE_FACTOR} 倍的 n（未到：扫到最大的 n 也没涨到；\
         预测的拐点在所有 n 上找，用这一批全部计时前后重测的峰值与带宽的中位数）："
    ));
    let knees = f.knees.iter().map(|k| {
        let batch = row![k.batch];
        [batch, k.all().map(knee).to_vec()].concat()
    });
    let headers = "批|实测拐点|预测 max|预测 规划器|预测 本机重叠|预测 相加";
    out.table(headers.split('|'), knees).id("demo6_knee");
    out.print(
        "\n草稿的代价系数 c = 草稿一步 / 目标一步（批 1；草稿按投机解码里的样子计时：每轮 γ 步，\
         紧跟在目标的一次验证之后，验证刚把草稿的权重挤出缓存）：",
    );
    let c = f.drafts.iter().map(|d| {
        let c = [d.measured, d.roofline, d.additive].map(|c| m(fixed(c, 3)));
        [row![draft(d.draft), mb(d.weight_bytes)], c.to_vec()].concat()
    });
    let headers = "草稿|权重（MB）|实测 c|预测 c max|预测 c 相加";
    out.table(headers.split('|'), c).id("demo6_c");
    let gamma = f.spec.first().map_or(0, |s| s.gamma);
    out.print(format!(
        "\n真跑投机解码（贪心，γ = {gamma}）：每秒 token 数实测，加速比实测，与在实测 τ 下预测的："
    ));
    out.table(SPEC.split('|'), f.spec.iter().map(spec_row))
        .id("demo6_spec");
    out.print(tail_line(f));
    out.observations([
        always(
            "批 1 时送进 2 个、4 个 token 和送进 1 个差不多久：一次前向的时间花在把权重从内存读进来，CPU 上也一样——\
             验证 γ + 1 个 token 几乎白捡。",
        ),
        always(
            "批越大拐点越早：B·n 个 token 共用一次读权重，越过临界批后时间随 token 数线性增长。\
             max 假设计算完全藏在访存下，是乐观的一端；相加不假设任何重叠，是悲观的一端；\
             规划器取引擎上拟合的重叠，在两者之间；本机重叠是这台机器自己量出来的，和峰值、带宽一样。",
        ),
        always(
            "c 不只看草稿读的字节：INT4 副本只读目标约八分之一的字节，可批 1 时每个 4 位码都要先拆开才能乘，\
             这要算力，c 比字节之比高；它猜中的也多。第一层在这个随机初始化的模型上几乎猜不中（τ 接近 1），\
             省下的目标步数抵不上草稿的花费。",
        ),
        always(
            "在屋顶线说投机不再划算的大批上，实测也不划算：验证 γ + 1 个 token 不再白捡，草稿的每一步也要付钱。",
        ),
    ]);
    out.figure(figure(f));
}

/// Gigas with `digits` decimals, measured.
fn giga(x: f64, digits: usize) -> Value {
    m(fixed(x / 1e9, digits))
}

/// Megabytes with one decimal, measured.
fn mb(bytes: u64) -> Value {
    m(fixed(bytes as f64 / 1e6, 1).unit("MB"))
}

/// The line on the machine: threads, peak, bandwidth, ridge, critical batch, the kernel's
/// efficiency at 1 and 2 rows, a parallel region's cost, the overlap it reaches.
fn machine_line(f: &HostFigures) -> Value {
    let mc = &f.machine;
    let machine = &mc.machine;
    let eff = |r: usize| {
        let e = mc.kernel_efficiency.get(r);
        m(e.map_or(missing("？"), |&e| percent(e)))
    };
    // The overlap at a measured row count only ("？" for one the plan did not measure).
    let hidden = |rows: usize| match mc.streamed.iter().any(|s| s.rows == rows) {
        true => m(percent(mc.host_overlap(rows))),
        false => m(missing("？")),
    };
    let values = [
        m(int(machine.threads)),
        giga(machine.peak_flops(), 1),
        giga(machine.bandwidth_bytes(), 2),
        m(fixed(mc.ridge_point, 2)),
        m(fixed(mc.critical_tokens_f32, 1)),
        eff(0),
        eff(1),
        m(fixed(mc.dispatch.median() * 1e6, 1).unit("µs")),
        hidden(1),
        hidden(2),
        hidden(4),
        hidden(8),
    ];
    parts(
        "本机 {} 个线程：打包内核峰值 {} GFLOP/s，读带宽 {} GB/s → 脊点 {} FLOP/字节，f32 权重的临界批 {} 个 token；\
         1 行、2 行的乘积是峰值（200 行的乘积）的 {}、{}；开一个空并行区再汇合至少要 {} µs；\
         权重从内存流进来时，内核乘 1、2、4、8 行，计算与访存中较短的一方有 {}、{}、{}、{} 藏在另一方下。",
        values,
    )
}

/// The line on the scaled model and its drafts.
fn model_line(f: &HostFigures) -> Value {
    let md = &f.model;
    let llc_share = md.target_bytes as f64 / md.llc_bytes as f64;
    let values = [
        m(int(md.cfg.n_layers)),
        mb(md.target_bytes),
        m(fixed(llc_share, 1)),
        draft(DraftKind::FirstLayer).into(),
        mb(md.first_layer_bytes),
        draft(DraftKind::Int4).into(),
        mb(md.int4_bytes),
    ];
    parts(
        "放大的模型（第 3 讲的结构）：{} 层，f32 权重 {} MB，是末级缓存的 {} 倍；草稿：{} {} MB，{} {} MB。",
        values,
    )
}

/// A row of the forward-time table: batch, n, the measured and predicted times, measured
/// over each prediction.
fn forward_row(p: &host_lab::figures::SweepPoint) -> Vec<Value> {
    let [t, r, pl, h, a] = p.times();
    let times = [t, r, pl, h, a].map(|x| m(time(x)));
    let ratios = [r, pl, h, a].map(|x| m(ratio(t / x, 2)));
    [
        row![p.batch, int(p.n_new).unit("tokens")],
        times.to_vec(),
        ratios.to_vec(),
    ]
    .concat()
}

/// A row of the speculative-decoding table.
fn spec_row(s: &host_lab::figures::SpecFigures) -> Vec<Value> {
    let tps = [s.plain_tokens_per_s, s.spec_tokens_per_s];
    let tps = tps.map(|x| m(fixed(x, 1).unit("tokens/s")));
    let x = [
        s.measured_speedup,
        s.predicted_roofline,
        s.predicted_additive,
    ];
    let x = x.map(|x| m(speedup(x)));
    let same = m(label(if s.lossless { "是" } else { "否" }));
    let first = row![s.batch, draft(s.draft), m(fixed(s.tau, 2))];
    [first, tps.to_vec(), x.to_vec(), vec![same]].concat()
}

/// The closing line: how long it took, the load, how the machine drifted, and whether
/// other work was already running when the measurement began.
fn tail_line(f: &HostFigures) -> Value {
    let load = |l: Option<[f64; 3]>| m(l.map_or(missing("未知"), |l| fixed(l[0], 1)));
    // Half the threads already busy before this run began: the peak and bandwidth measured
    // are shares, and every figure above is low and scattered (a measured remark, masked).
    let threads = f.machine.machine.threads as f64;
    let busy = f.load.0.is_some_and(|l| l[0] >= 0.5 * threads);
    let remark = match busy {
        true => {
            "开始时主机已经很忙（负载不低于线程数的一半）：峰值和带宽有一部分被别的进程分走，上面的实测偏低、偏散，换一台空闲的机器再测。"
        }
        false => "",
    };
    let values = [
        m(fixed(f.seconds, 0)),
        load(f.load.0),
        load(f.load.1),
        m(fixed(f.drift.0, 2)),
        m(fixed(f.drift.1, 2)),
        m(label(remark)),
    ];
    parts(
        "\n（全程 {} s，1 分钟负载 {} → {}；结束时再测一次：带宽是开始时的 {} 倍，峰值 {} 倍。{}）",
        values,
    )
}

fn draft(kind: DraftKind) -> &'static str {
    match kind {
        DraftKind::FirstLayer => "目标的第一层",
        DraftKind::Int4 => "INT4 副本",
    }
}

/// A knee measured or predicted on this machine's figures: tokens, or 未到.
fn knee(n: Option<f64>) -> Value {
    m(n.map_or(missing("未到"), |n| fixed(n, 1).unit("tokens")))
}

/// Figure `host.svg`: forward time against tokens fed, one log–log panel per batch — the
/// measured medians as markers, the four predictions as lines, and the knees of all five
/// as one series of markers, each on its own curve at twice that curve's time for n = 1
/// (the knee table says which is which). Six series, one per colour of the palette.
pub fn figure(f: &HostFigures) -> Figure {
    let panels = f.knees.iter().map(|k| {
        let x = "每个序列送进的 token 数 n（对数坐标）";
        let y = "一次前向（ms，对数坐标）";
        let mut panel = Panel::new(format!("批 {}", k.batch), Axis::log(x), Axis::log(y));
        let mut knees = Vec::new();
        for (i, name) in CURVES.into_iter().enumerate() {
            let pts: Vec<_> = f
                .sweep_at(k.batch)
                .map(|p| (p.n_new as f64, 1e3 * p.times()[i]))
                .collect();
            knees.extend(
                k.all()[i]
                    .zip(pts.first())
                    .map(|(n, t1)| (n, KNEE_FACTOR * t1.1)),
            );
            panel.series.push(if i == 0 {
                Series::dots(name, pts)
            } else {
                Series::line(name, pts)
            });
        }
        panel.series.push(Series::dots(
            format!("拐点（每条曲线涨到 n = 1 时 {KNEE_FACTOR} 倍处）"),
            knees,
        ));
        panel.measured = true;
        panel
    });
    Figure::new("演示 6：本机一次前向的时间，预测与实测", panels.collect()).id("host")
}
