//! A made-up lecture on the authoring API, for the kit's tests: demo 1 computes (n steps of
//! a fixed time), demo 2 measures (wall-clock time of a loop on this machine) and stays in
//! the default run.
#![allow(dead_code)] // each test binary uses some of it

use std::time::{Instant, SystemTime};

use lecture_kit::value::{int, measured, parts, percent, py, ratio, speedup, thousands, time};
use lecture_kit::{
    Axis, Demo, Error, Figure, Inputs, Lecture, Out, Panel, Script, Series, always, row, seed,
    what_if,
};
use serde::Serialize;

/// `lecture97`: the made-up lecture's command line.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "lecture97")]
pub struct Toy {}

/// What demo 1 attaches for the JSON export and its claim tests.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepsData {
    pub total_s: f64,
    pub step_s: Vec<f64>,
}

/// What demo 1 reads.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize)]
pub struct Steps {
    /// Steps of demo 1.
    #[arg(long, default_value_t = 3)]
    pub steps: u64,
    /// Time of one step, seconds.
    #[arg(long, default_value_t = 7e-3)]
    pub step_time: f64,
}

impl Inputs for Steps {}

/// What demo 2 reads.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize)]
pub struct Work {
    /// Additions per measured loop of demo 2.
    #[arg(long, default_value_t = 20_000)]
    pub work: u64,
}

impl Inputs for Work {
    /// Demo 2 times its additions three times: at most [`MAX_WORK`] of them.
    fn check(&self) -> Result<(), String> {
        if self.work > MAX_WORK {
            return Err(format!(
                "--work {}: demo 2 times that many additions three times, at most {MAX_WORK}",
                self.work
            ));
        }
        Ok(())
    }
}

/// The most additions demo 2 times.
pub const MAX_WORK: u64 = 1_000_000_000;

/// Every run of a demo in this process, `(demo, its --steps or --work)`: a test that
/// expects a demo not to run looks for its own value here.
pub static RUNS: std::sync::Mutex<Vec<(u8, u64)>> = std::sync::Mutex::new(Vec::new());

/// Records a run in [`RUNS`].
fn ran(demo: u8, value: u64) -> Result<(), Error> {
    let mut runs = RUNS
        .lock()
        .map_err(|e| Error::Library(e.to_string().into()))?;
    runs.push((demo, value));
    Ok(())
}

/// The demos.
pub fn demos() -> Vec<Demo> {
    vec![Demo::new(1, demo1), Demo::new(2, demo2)]
}

impl Lecture for Toy {
    const NUMBER: u32 = 97;
    const DEFAULT_ONLY: &'static str = "【默认 3 步】";
    const UNITS: &'static [(&'static str, &'static str)] = &[("*_s", "seconds")];
    fn scripts() -> Vec<Script> {
        vec![Script::new("01_steps", "步数与时间", demos())]
    }
}

/// 演示 1: n steps of a fixed time.
pub fn demo1(out: &mut Out, s: &Steps) -> Result<(), Error> {
    ran(1, s.steps)?;
    out.header(format!(
        "演示 1：{} 步，每步 {}",
        s.steps,
        time(s.step_time)
    ));
    let total = s.steps as f64 * s.step_time;
    let rows = (1..=s.steps).map(|n| {
        let share = n as f64 / s.steps as f64;
        row![
            n,
            time(n as f64 * s.step_time),
            ratio(share, 3),
            percent(share),
            speedup(1.0 / share)
        ]
    });
    out.print("\n前 n 步的时间：");
    out.table(["n", "时间", "占全部", "百分比", "快多少"], rows);
    // Demo 1 does not read --work: it can only print the default's.
    let per_step = thousands(lecture_kit::inputs::defaults::<Work>().work as f64);
    out.print(parts(
        "步长 {} 秒，一千步 {} 毫秒，每步 {} 次加法",
        [py(s.step_time), thousands(1e6 * s.step_time), per_step],
    ));
    // The script's sentence is about the default setup: its figures are the default's.
    let d = lecture_kit::inputs::defaults::<Steps>();
    let d_total = time(d.steps as f64 * d.step_time);
    out.observations([
        what_if(format!("本配置：{} 步共 {}。", s.steps, time(total))),
        seed(format!("{} 步共 {d_total}，正好 3 步。", d.steps)),
        always("时间与步数成正比。"),
    ]);
    let step_s = (1..=s.steps).map(|n| n as f64 * s.step_time).collect();
    out.data(StepsData {
        total_s: total,
        step_s,
    });
    let points = (1..=s.steps)
        .map(|n| (n as f64, 1e3 * n as f64 * s.step_time))
        .collect();
    out.figure(Figure::new(
        "前 n 步的时间",
        vec![
            Panel::new("", Axis::linear("n"), Axis::linear("毫秒"))
                .with([Series::line("时间", points)]),
        ],
    ));
    Ok(())
}

/// 演示 2: the wall-clock time of adding `work` numbers, three times, on this machine.
pub fn demo2(out: &mut Out, s: &Work) -> Result<(), Error> {
    ran(2, s.work)?;
    out.header("演示 2：在这台机器上实测");
    let mut rows = Vec::new();
    let mut points = Vec::new();
    for i in 1..=3u64 {
        let start = Instant::now();
        let sum: u64 = (0..s.work).map(|k| std::hint::black_box(k ^ i)).sum();
        let t = start.elapsed().as_secs_f64();
        rows.push(row![
            i,
            int(s.work).unit("additions"),
            measured(time(t)),
            int(sum % 7)
        ]);
        points.push((i as f64, 1e6 * t));
    }
    out.table(["第几次", "加法", "用时", "校验"], rows);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)?
        .as_nanos();
    let now = int(i64::try_from(now % 1_000_000_007)?);
    if std::env::var_os("KIT_TOY_LEAK").is_some() {
        out.print(parts("本次运行的时刻：{}", [now])); // not marked: a bug the check catches
    } else {
        out.print(parts("本次运行的时刻：{}", [measured(now)]));
    }
    let mut panel = Panel::new("", Axis::linear("第几次"), Axis::linear("微秒"));
    panel.series.push(Series::dots("用时", points));
    panel.measured = true;
    out.figure(Figure::new("实测用时", vec![panel]).id("measured"));
    out.observations(["实测的时间每次都不一样。"]);
    Ok(())
}
