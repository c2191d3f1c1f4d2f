//! The runner and the renderers on a two-demo lecture made up for the test (the shared command-line check runs on `tests/measured.rs`).

use std::io::{self, Write};

use lecture_kit::figure::{Axis, Figure, Panel, RefLine, Series};
use lecture_kit::testing::run;
use lecture_kit::value::{int, missing, parts, speedup};
use lecture_kit::{Demo, Error, Lecture, NoInputs, Options, Out, Script, row};

#[derive(Debug, Clone, clap::Parser)]
#[command(name = "lecture99")]
struct Toy {}

/// Demo `d`: a table with a two-value cell and a missing one, observations, and for demo 2
/// a figure.
fn demo(out: &mut Out, d: u8) -> Result<(), Error> {
    out.header(format!("演示 {d}"));
    let two = parts("γ={}, {}", [int(4).named("γ"), speedup(1.93).named("加速")]);
    out.table(["n", "γ, 加速"], [row![1, two], row![2, missing("放不下")]])
        .id(format!("demo{d}"));
    out.observations(["看"]);
    if d == 2 {
        let mut panel = Panel::new("", Axis::log("n"), Axis::linear("加速").times());
        panel.series.push(Series::line(
            "a",
            vec![(1.0, 1.5), (10.0, 2.0), (1000.0, 0.8)],
        ));
        panel.hlines.push(RefLine {
            y: 1.0,
            label: "1.0×".into(),
        });
        out.figure(Figure::new("图", vec![panel]).id("fig"));
    }
    out.data(d);
    Ok(())
}

impl Lecture for Toy {
    const NUMBER: u32 = 99;
    const DEFAULT_ONLY: &'static str = "【默认】";
    fn scripts() -> Vec<Script> {
        let demos = vec![
            Demo::new(1, |out, _: &NoInputs| demo(out, 1)),
            Demo::new(2, |out, _: &NoInputs| demo(out, 2)),
        ];
        vec![Script::new("01_toy", "玩具", demos)]
    }
}

#[test]
fn demos_are_printed_in_lecture_order_without_repeats() {
    let r = run::<Toy>(&["--demo", "2", "--demo", "1", "--demo", "2"]);
    assert_eq!(r.code, 0);
    let one = r.stdout.find("演示 1").unwrap();
    let two = r.stdout.find("演示 2").unwrap();
    assert!(one < two);
    assert_eq!(r.stdout.matches("演示 2\n").count(), 1, "{}", r.stdout);
}

#[test]
fn bad_flags_exit_2_with_one_line_naming_the_choices() {
    for (args, want) in [
        (&["--demo", "3"][..], "--demo takes 1 or 2 (got \"3\")"),
        (&["--demo", "-7"], "--demo takes 1 or 2 (got \"-7\")"),
        (
            &["--bogus"],
            "valid flags: --script, --demo, --format, --out, --plot, --list",
        ),
        (
            &["--script", "x"],
            "unknown script \"x\"; choose one of: 01_toy",
        ),
        (&["--format", "csv"], "the chosen demos have 2 tables"),
        (
            &["--list", "--plot", "/tmp/never"],
            "--plot: --list draws no figure (drop --plot)",
        ),
        // clap's tip is a clause of its own.
        (
            &["--demos", "1"],
            "unexpected argument '--demos' found; tip: a similar argument exists: '--demo'",
        ),
    ] {
        let r = run::<Toy>(args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(r.stderr.starts_with("lecture99: "), "{r:?}");
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
        assert!(r.stderr.trim_end().ends_with("see --help"), "{}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1);
    }
}

/// A reader that takes `limit` bytes and then closes (`lecture | head -c N`), counting
/// flushes and writes.
struct Pipe {
    limit: usize,
    taken: usize,
    writes: usize,
    flushes: usize,
}

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writes += 1;
        if self.taken >= self.limit {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let n = buf.len().min(self.limit - self.taken);
        self.taken += n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.flushes += 1;
        Ok(())
    }
}

#[test]
fn output_is_written_in_one_buffered_pass_and_a_closed_pipe_is_success() {
    let mut pipe = Pipe {
        limit: usize::MAX,
        taken: 0,
        writes: 0,
        flushes: 0,
    };
    let mut err = Vec::new();
    assert_eq!(
        lecture_kit::run::<Toy>(["lecture99"], &mut pipe, &mut err, Options::default()),
        0
    );
    assert_eq!((pipe.writes, pipe.flushes), (1, 1), "one write, one flush");
    let mut closed = Pipe { limit: 10, ..pipe };
    closed.taken = 0;
    let code = lecture_kit::run::<Toy>(["lecture99"], &mut closed, &mut err, Options::default());
    assert_eq!(code, 0, "a reader that leaves early is no error");
    assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
}

#[test]
fn a_file_that_cannot_be_written_exits_1_and_names_it() {
    // A missing folder is made (as --plot makes its own); one below a file cannot be.
    let file = std::env::temp_dir().join(format!("kit-runner-a-file-{}", std::process::id()));
    std::fs::write(&file, "").unwrap();
    let below = file.join("x.txt");
    let r = run::<Toy>(&["--out", below.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains(file.to_str().unwrap()), "{}", r.stderr);
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn text_prints_cells_and_csv_prints_their_values() {
    let text = run::<Toy>(&["--demo", "1"]).stdout;
    assert!(text.contains("| 1 | γ=4, 1.93× |"), "{text}");
    assert!(text.contains("| 2 | 放不下     |"), "{text}");
    let csv = run::<Toy>(&["--demo", "1", "--format", "csv"]).stdout;
    assert_eq!(
        csv,
        "n,\"γ, 加速 · γ\",γ, 加速 · 加速 [×]\n1,4,1.93\n2,,\n"
            .replace("γ, 加速 · 加速 [×]", "\"γ, 加速 · 加速 [×]\"")
    );
}

#[test]
fn svg_figures_are_written_with_human_ticks_and_the_cjk_font_list() {
    let dir = std::env::temp_dir().join(format!("kit-figs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let r = run::<Toy>(&["--plot", dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let svg = std::fs::read_to_string(dir.join("fig.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::trim))
        .collect();
    for want in ["1", "10", "100", "1K", "1.0×", "图", "a"] {
        assert!(texts.contains(&want), "{want}: {texts:?}");
    }
    assert!(texts.iter().all(|t| !t.ends_with(".0")), "{texts:?}");
    assert!(
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .all(|n| n
                .attribute("font-family")
                .unwrap()
                .starts_with("Noto Sans CJK SC"))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_panel_with_nothing_to_draw_says_why_instead_of_drawing_axes() {
    let mut panel = Panel::new("", Axis::linear("x"), Axis::linear("y"));
    panel.message = Some("Llama-3.1-70B 放不下".into());
    let svg = lecture_kit::render::svg::to_string(&Figure::new("t", vec![panel]).id("x")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::trim))
        .collect();
    assert!(texts.contains(&"Llama-3.1-70B 放不下"), "{texts:?}");
    assert!(
        !texts.contains(&"x") && !texts.contains(&"y"),
        "no axes: {texts:?}"
    );
}

/// How many times [`Counted`]'s demo has run.
static COUNTED_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[derive(Debug, Clone, clap::Parser)]
#[command(name = "lecture98")]
struct Counted {}

impl Lecture for Counted {
    const NUMBER: u32 = 98;
    const DEFAULT_ONLY: &'static str = "【默认】";
    fn scripts() -> Vec<Script> {
        let demos = vec![Demo::new(1, |out, _: &NoInputs| {
            COUNTED_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            demo(out, 2)
        })];
        vec![Script::new("01_counted", "计数", demos)]
    }
}

#[test]
fn renderings_of_one_run_print_what_separate_runs_print_and_the_demos_run_once() {
    use lecture_kit::testing::run_renderings;
    use std::sync::atomic::Ordering;
    let formats: [&[&str]; 4] = [
        &[],
        &["--format", "json"],
        &["--format", "markdown"],
        &["--format", "xml"],
    ];
    let before = COUNTED_RUNS.load(Ordering::SeqCst);
    let together = run_renderings::<Counted>(&["--demo", "1"], &formats);
    assert_eq!(COUNTED_RUNS.load(Ordering::SeqCst), before + 1, "one run");
    for (more, got) in formats.iter().zip(&together) {
        let args: Vec<&str> = ["--demo", "1"].iter().chain(more.iter()).copied().collect();
        let alone = run::<Counted>(&args);
        assert_eq!(got, &alone, "{args:?}");
    }
    assert_eq!(together[3].code, 2, "a bad format is refused as by run");
    // A failing run is made anew for each rendering, and fails in each.
    let bad = run_renderings::<Counted>(&["--demo", "7"], &formats[..2]);
    assert!(bad.iter().all(|r| r.code == 2), "{bad:?}");
}

#[test]
#[should_panic(expected = "run each --out or --plot with `run`")]
fn renderings_that_write_files_are_refused() {
    lecture_kit::testing::run_renderings::<Counted>(&["--demo", "1"], &[&[], &["--plot=figs"]]);
}
