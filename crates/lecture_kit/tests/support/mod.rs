//! A made-up lecture on the authoring API, for the kit's tests: demo 1 computes (n steps of
//! a fixed time), demo 2 measures (wall-clock time of a loop on this machine) and stays in
//! the default run.
#![allow(dead_code)] // each test binary uses some of it

use std::time::{Instant, SystemTime};

use lecture_kit::value::{int, measured, parts, percent, py, ratio, speedup, thousands, time};
use lecture_kit::{
    Axis, CommonArgs, Demo, Error, Figure, Inputs, Lecture, Out, Panel, Script, Series, always,
    row, seed, what_if,
};

/// `lecture97`: the made-up lecture's command line.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "lecture97")]
pub struct Toy {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Steps of demo 1.
    #[arg(long, default_value_t = Setup::default().steps)]
    pub steps: u64,
    /// Time of one step, seconds.
    #[arg(long, default_value_t = Setup::default().step_s)]
    pub step_time: f64,
    /// Additions per measured loop of demo 2.
    #[arg(long, default_value_t = Setup::default().work)]
    pub work: u64,
}

/// What demo 1 attaches for the JSON export and its claim tests.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Steps {
    pub total_s: f64,
    pub step_s: Vec<f64>,
}

/// What the demos are computed for.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    pub steps: u64,
    pub step_s: f64,
    pub work: u64,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            steps: 3,
            step_s: 7e-3,
            work: 20_000,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Steps,
    StepTime,
    Work,
}

impl Inputs for Setup {
    type Input = Input;
    const INPUTS: &'static [Input] = &[Input::Steps, Input::StepTime, Input::Work];
    const UNITS: &'static [(&'static str, &'static str)] = &[("*_s", "seconds")];

    fn flags(input: Input) -> &'static [&'static str] {
        match input {
            Input::Steps => &["--steps"],
            Input::StepTime => &["--step-time"],
            Input::Work => &["--work"],
        }
    }

    fn same(&self, other: &Self, input: Input) -> bool {
        match input {
            Input::Steps => self.steps == other.steps,
            Input::StepTime => self.step_s == other.step_s,
            Input::Work => self.work == other.work,
        }
    }

    fn take(&mut self, input: Input, from: &Self) {
        match input {
            Input::Steps => self.steps = from.steps,
            Input::StepTime => self.step_s = from.step_s,
            Input::Work => self.work = from.work,
        }
    }

    fn default_only(sentence: &str) -> String {
        format!("【默认 3 步】{sentence}")
    }

    /// Demo 2 times its additions three times: at most [`MAX_WORK`] of them.
    fn check(&self, reads: &[Input]) -> Result<(), String> {
        if reads.contains(&Input::Work) && self.work > MAX_WORK {
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

/// The demos, registered as plain functions with the inputs each reads.
pub const DEMOS: &[Demo<Setup>] = &[
    Demo {
        number: 1,
        reads: &[Input::Steps, Input::StepTime],
        run: demo1,
    },
    Demo {
        number: 2,
        reads: &[Input::Work],
        run: demo2,
    },
];

impl Lecture for Toy {
    const NUMBER: u32 = 97;
    type Setup = Setup;
    const SCRIPTS: &'static [Script<Setup>] = &[Script {
        name: "01_steps",
        title: "步数与时间",
        registry: DEMOS,
        default_demos: &[1, 2],
    }];
    fn common(&self) -> &CommonArgs {
        &self.common
    }
    fn setup(&self) -> Result<Setup, Error> {
        Ok(Setup {
            steps: self.steps,
            step_s: self.step_time,
            work: self.work,
        })
    }
}

/// 演示 1: n steps of a fixed time.
pub fn demo1(out: &mut Out, s: &Setup) -> Result<(), Error> {
    ran(1, s.steps)?;
    out.header(format!("演示 1：{} 步，每步 {}", s.steps, time(s.step_s)));
    let total = s.steps as f64 * s.step_s;
    let rows = (1..=s.steps).map(|n| {
        let share = n as f64 / s.steps as f64;
        row![
            n,
            time(n as f64 * s.step_s),
            ratio(share, 3),
            percent(share),
            speedup(1.0 / share)
        ]
    });
    out.print("\n前 n 步的时间：");
    out.table(["n", "时间", "占全部", "百分比", "快多少"], rows);
    // `s.work` is not declared: the view gives demo 1 the default's, so --work cannot move it.
    let per_step = thousands(s.work as f64);
    out.print(parts(
        "步长 {} 秒，一千步 {} 毫秒，每步 {} 次加法",
        [py(s.step_s), thousands(1e6 * s.step_s), per_step],
    ));
    out.observations([
        what_if(format!("本配置：{} 步共 {}。", s.steps, time(total))),
        seed(format!("{} 步共 {}，正好 3 步。", s.steps, time(total))),
        always("时间与步数成正比。"),
    ]);
    let step_s = (1..=s.steps).map(|n| n as f64 * s.step_s).collect();
    out.data(Steps {
        total_s: total,
        step_s,
    });
    let points = (1..=s.steps)
        .map(|n| (n as f64, 1e3 * n as f64 * s.step_s))
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
pub fn demo2(out: &mut Out, s: &Setup) -> Result<(), Error> {
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
