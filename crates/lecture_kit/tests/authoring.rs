//! The authoring API on a made-up lecture (`tests/support`): what a demo written like its
//! Python script prints and exports, and the default-only wording of its inputs.

mod support;

use lecture_kit::testing::{output, report, run, run_with};
use lecture_kit::value::MASKED;
use lecture_kit::{Datum, Error, NoInputs, Options, Out, run_demo};
use support::{Steps, Toy};

/// What `print_header`, `print`, `print_table` and `print_observations` print for demo 1
/// of the default setup, written out by hand from the Python formats: fmt_time, .3f, .0%,
/// .2f×, repr, ,.0f.
const DEMO1: &str = "
==========================
演示 1：3 步，每步 7.00 ms
==========================

前 n 步的时间：

| n |     时间 | 占全部 | 百分比 | 快多少 |
|---|----------|--------|--------|--------|
| 1 |  7.00 ms |  0.333 |    33% |  3.00× |
| 2 | 14.00 ms |  0.667 |    67% |  1.50× |
| 3 | 21.00 ms |  1.000 |   100% |  1.00× |
步长 0.007 秒，一千步 7,000 毫秒，每步 20,000 次加法

观察：
  1. 3 步共 21.00 ms，正好 3 步。
  2. 时间与步数成正比。
";

#[test]
fn a_demo_prints_what_its_python_script_prints() {
    assert_eq!(output::<Toy>(&["--demo", "1"]), DEMO1);
}

#[test]
fn csv_and_json_get_each_value_once_as_a_raw_number_with_its_unit() {
    let csv = output::<Toy>(&["--demo", "1", "--format", "csv"]);
    assert_eq!(
        csv.lines().collect::<Vec<_>>(),
        [
            "n,时间 [s],占全部 [×],百分比,快多少 [×]",
            "1,0.007,0.3333333333333333,0.3333333333333333,3.0",
            "2,0.014,0.6666666666666666,0.6666666666666666,1.5",
            "3,0.021,1.0,1.0,1.0",
        ]
    );
    let r = report::<Toy>(&["--demo", "1"]);
    assert_eq!((r.lecture, r.script.as_str()), (97, "01_steps"));
    assert_eq!(r.sections[0].id, "demo1");
    let t = r.table("demo1_table1").expect("the kit names the table");
    assert_eq!(t.caption, "前 n 步的时间", "the line printed before it");
    assert_eq!(t.numbers("时间"), [0.007, 0.014, 0.021]);
    assert_eq!(r.figures().next().unwrap().id, "demo1");
    assert_eq!(r.units, [("*_s".to_string(), "seconds".to_string())]);
}

#[test]
fn a_demos_typed_figures_come_back_from_its_run_and_into_the_json() {
    let steps = Steps {
        steps: 4,
        ..lecture_kit::inputs::defaults()
    };
    let ran = run_demo(1, support::demo1, &steps, "").unwrap();
    let d: &support::StepsData = ran.data().unwrap();
    assert_eq!(d.step_s, [0.007, 0.014, 0.021, 0.028]);
    assert!((d.total_s - 0.028).abs() < 1e-15);
    assert!(ran.data::<String>().is_none(), "not a String");
    let work = lecture_kit::inputs::defaults::<support::Work>();
    let none = run_demo(2, support::demo2, &work, "").unwrap();
    assert!(
        none.data::<support::StepsData>().is_none(),
        "demo 2 attaches nothing"
    );
    let r = report::<Toy>(&["--demo", "1"]);
    assert_eq!(r.sections[0].data["total_s"], 0.021);
    assert_eq!(
        r.setup["steps"], 3,
        "the setup: the inputs of the demos run"
    );
}

#[test]
fn an_input_a_demo_does_not_declare_leaves_its_figures_unchanged() {
    // Demo 2 reads --work, so it is not refused; demo 1 does not, and cannot see it.
    let default = report::<Toy>(&["--demo", "1", "--demo", "2"]);
    for work in ["1", "7", "100000", "999999"] {
        let other = report::<Toy>(&["--demo", "1", "--demo", "2", "--work", work]);
        assert_eq!(
            other.sections[0].blocks, default.sections[0].blocks,
            "--work {work}"
        );
        assert_eq!(
            other.sections[0].unread_flags,
            ["--work"],
            "and the kit knows it"
        );
    }
    // A declared input does move them.
    let longer = report::<Toy>(&["--demo", "1", "--step-time", "0.01"]);
    assert_eq!(
        longer.table("demo1_table1").unwrap().numbers("时间"),
        [0.01, 0.02, 0.03]
    );
    assert!(longer.sections[0].unread_flags.is_empty());
}

#[test]
fn when_a_declared_input_changes_the_seed_sentence_is_marked_and_quotes_the_default() {
    let text = output::<Toy>(&["--demo", "1", "--steps", "5"]);
    let observations = text.split("观察：\n").nth(1).unwrap();
    assert_eq!(
        observations,
        "  1. 本配置：5 步共 35.00 ms。\n  2. 【默认 3 步】3 步共 21.00 ms，正好 3 步。\n  3. 时间与步数成正比。\n"
    );
    // As written when nothing the demo reads changed (demo 1 does not read --work; demo 2
    // does, so the flag is not refused), and noted after it.
    let text = output::<Toy>(&["--demo", "1", "--demo", "2", "--work", "5"]);
    let note = "\n（这个演示不读 --work，改了也不影响这里的数字。）\n";
    assert!(text.starts_with(&format!("{DEMO1}{note}")), "{text}");
    // With demo 1 alone, --work would change nothing: refused.
    assert_eq!(run::<Toy>(&["--demo", "1", "--work", "5"]).code, 2);
}

#[test]
fn each_demo_runs_once_and_reads_only_its_own_inputs() {
    let count = |n: u8, value: u64| {
        let runs = support::RUNS.lock().unwrap();
        runs.iter().filter(|&&r| r == (n, value)).count()
    };
    // A what-if run prints the marked sentence with the default's figures from one run on
    // its own inputs (the runs on the default setup cannot be told apart from other tests'
    // running in parallel, so only this one is counted).
    let text = output::<Toy>(&["--demo", "1", "--steps", "704"]);
    assert!(text.contains("【默认 3 步】3 步共 21.00 ms"), "{text}");
    assert_eq!(count(1, 704), 1);
    assert_eq!(
        lecture_kit::inputs::flags::<Steps>(),
        ["--steps", "--step-time"]
    );
    assert_eq!(lecture_kit::inputs::flags::<support::Work>(), ["--work"]);
}

#[test]
fn a_table_that_does_not_fit_its_headers_is_an_error_naming_it() {
    fn demo(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
        out.table(["a", "b"], [lecture_kit::row![1, 2], lecture_kit::row![3]]);
        Ok(())
    }
    let e = run_demo(4, demo, &NoInputs {}, "").err().unwrap();
    assert_eq!(
        e.to_string(),
        "demo 4: table demo4_table1: row 1 has 1 values for 2 headers"
    );
    assert_eq!(e.exit_code(), 1);
}

#[test]
fn a_column_of_names_is_left_aligned_by_header_and_a_header_it_lacks_is_an_error() {
    use lecture_kit::value::{boolean, label, number};
    fn demo(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
        let rows = [
            lecture_kit::row![label("8B"), number("12.50 ms", 0.0125), boolean("是", true)],
            lecture_kit::row![label("70B"), number("3.00 ms", 0.003), boolean("否", false)],
        ];
        out.table(["模型", "时间", "相同"], rows).left(["模型"]);
        Ok(())
    }
    let ran = run_demo(4, demo, &NoInputs {}, "").unwrap();
    let lecture_kit::Block::Table(t) = &ran.section.blocks[0] else {
        panic!("{:?}", ran.section.blocks)
    };
    // Names that start with a digit would be right-aligned as numbers were they not marked.
    assert_eq!(t.lefts(), [true, false, false]);
    assert_eq!(t.rows[1][1].values, [Datum::Number(0.003)]);
    assert_eq!(t.rows[1][2].values, [Datum::Bool(false)]);
    assert_eq!(t.texts()[0], ["8B", "12.50 ms", "是"]);

    fn typo(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
        out.table(["模型"], [lecture_kit::row![label("8B")]])
            .left(["型号"]);
        Ok(())
    }
    let e = run_demo(4, typo, &NoInputs {}, "").err().unwrap();
    assert_eq!(
        e.to_string(),
        "demo 4: table demo4_table1: no column \"型号\""
    );
}

/// Demo 2's checksum column, by hand: Σ_{k<20000} (k xor 1) = Σ k = 199,990,000 =
/// 7 × 28,570,000, so 0 (for the first run; it is computed, not measured).
#[test]
fn measured_values_print_or_mask_and_the_json_says_which() {
    let masked = output::<Toy>(&["--demo", "2"]);
    assert!(
        masked.contains(&format!("|      1 | 20000 | {MASKED} |    0 |")),
        "{masked}"
    );
    assert!(
        masked.contains(&format!("本次运行的时刻：{MASKED}")),
        "{masked}"
    );
    let live = run_with::<Toy>(&["--demo", "2"], Options::default()).stdout;
    assert!(!live.contains(MASKED), "{live}");

    let json = |options| {
        let out = run_with::<Toy>(&["--demo", "2", "--format", "json"], options).stdout;
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let cell =
        |doc: &serde_json::Value| doc["sections"][0]["blocks"][1]["content"]["rows"][0][2].clone();
    let live = json(Options::default());
    assert_eq!(cell(&live)["measured"], true);
    assert!(
        cell(&live)["values"][0].as_f64().unwrap() > 0.0,
        "the number when not masked"
    );
    let masked = json(Options {
        mask_measured: true,
    });
    assert_eq!(cell(&masked)["measured"], true);
    assert_eq!(
        cell(&masked)["values"][0],
        serde_json::Value::Null,
        "no number when masked"
    );
    assert_eq!(cell(&masked)["text"], MASKED);
    let plain = &masked["sections"][0]["blocks"][1]["content"]["rows"][0][1];
    assert!(
        plain.get("measured").is_none(),
        "a computed cell says nothing: {plain}"
    );
    assert_eq!(plain["values"][0], 20000);
    // The measured panel draws words instead of points.
    let figure = &masked["sections"][0]["blocks"][3]["content"];
    assert_eq!(figure["panels"][0]["message"], MASKED);
    assert_eq!(figure["panels"][0]["series"], serde_json::json!([]));
}

#[test]
fn the_csv_of_a_masked_table_has_empty_fields_where_the_measurements_were() {
    let csv = run::<Toy>(&["--demo", "2", "--format", "csv"]).stdout;
    assert_eq!(csv.lines().nth(1), Some("1,20000,,0"), "{csv}");
    assert_eq!(
        csv.lines().next(),
        Some("第几次,加法 [additions],用时 [s],校验")
    );
    assert!(
        matches!(report::<Toy>(&["--demo", "2"]).table("demo2_table1").unwrap().rows[0][2].values[0], Datum::Number(t) if t > 0.0)
    );
}

#[test]
fn a_view_that_cannot_exist_or_a_flag_no_demo_reads_is_refused_before_any_demo_runs() {
    let ran = |run: (u8, u64)| support::RUNS.lock().unwrap().contains(&run);
    // Demo 2 refuses its --work; demo 1, whose view is fine and which comes first, must
    // not run either: every chosen demo's view is checked before the first one runs.
    let r = run::<Toy>(&["--steps", "701", "--work", "2000000000"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("--work 2000000000: demo 2 times that many additions"),
        "{}",
        r.stderr
    );
    assert!(!ran((1, 701)), "demo 1 ran before the refusal");
    // Demo 1 alone does not read --work: refused as a flag that changes nothing, before
    // demo 1 runs.
    let r = run::<Toy>(&["--demo", "1", "--steps", "702", "--work", "5"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--work changes nothing"), "{}", r.stderr);
    assert!(!ran((1, 702)), "demo 1 ran before the refusal");
    // Within the limit, both run.
    let r = run::<Toy>(&["--steps", "703", "--work", "1000"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(ran((1, 703)) && ran((2, 1000)));
}

#[test]
fn a_number_that_is_not_finite_is_an_error_wherever_a_demo_puts_it() {
    use lecture_kit::value::{fixed, measured, parts, time};
    use lecture_kit::{Axis, Figure, Panel, Series, row};
    fn table(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
        out.table(
            ["n", "时间"],
            [row![1, time(1e-3)], row![2, time(f64::NAN)]],
        );
        Ok(())
    }
    fn line(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
        out.print(parts("峰值 {}", [measured(fixed(f64::INFINITY, 1))]));
        Ok(())
    }
    fn sentence(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
        out.observations([format!("加速 {}×。", fixed(f64::NAN, 2))]);
        Ok(())
    }
    fn figure(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
        let points = vec![(1.0, 2.0), (2.0, f64::NEG_INFINITY)];
        let panel = Panel::new("", Axis::linear("n"), Axis::linear("y"))
            .with([Series::line("曲线", points)]);
        out.figure(Figure::new("图", vec![panel]));
        Ok(())
    }
    fn fine(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
        // Words that merely contain the letters are not numbers.
        out.print("information, finance, nanotube, Infineon, Infinity Fabric");
        out.table(["n"], [row![1]]);
        Ok(())
    }
    for (run, says) in [
        (
            table as fn(&mut Out, &NoInputs) -> Result<(), Error>,
            "row 2, column \"时间\"",
        ),
        (line, "a value of the line"),
        (sentence, "the observation"),
        (figure, "series \"曲线\""),
    ] {
        let e = run_demo(1, run, &NoInputs {}, "")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("demo 1: a number that is not finite") && e.contains(says),
            "{e}"
        );
    }
    assert!(run_demo(1, fine, &NoInputs {}, "").is_ok());
}

/// A table captioned by a line that holds a measured value: the caption carries the mask
/// in place of the value, in a live run too, so two runs that measure different values
/// give the same caption (the JSON and Markdown exports print it).
#[test]
fn a_caption_taken_from_a_measured_line_is_the_same_whatever_was_measured() {
    use lecture_kit::row;
    use lecture_kit::value::{measured, parts, time};
    fn demo(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
        let clock = std::time::Instant::now().elapsed().as_secs_f64() + 1e-9;
        out.print(parts("查一次 {}（本机实测）：", [measured(time(clock))]));
        out.table(["n"], [row![1]]);
        Ok(())
    }
    let caption = || {
        let ran = run_demo(1, demo, &NoInputs {}, "").unwrap();
        let table = ran.section.blocks.iter().find_map(|b| match b {
            lecture_kit::Block::Table(t) => Some(t.caption.clone()),
            _ => None,
        });
        table.expect("the demo prints a table")
    };
    assert_eq!(caption(), format!("查一次 {MASKED}（本机实测）"));
}
