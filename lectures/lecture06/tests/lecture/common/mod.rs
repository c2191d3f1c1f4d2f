//! What the claim tests share: the demos' typed figures (each demo's own data type) for a
//! command line, and what the default run prints, computed once per process and shared by every module.

use lecture_kit::{Block, Figure, Inputs, Out, Report, Section};
use lecture06::spec_decode_on_hardware::demo3::toy_model::{self, DraftRanks, ToyRun};
use lecture06::spec_decode_on_hardware::{demo1, demo2, demo3};
use lecture06::{Cli, DEFAULT_ONLY};
use once_cell::sync::Lazy;

pub static OUTPUT: Lazy<String> = Lazy::new(|| lecture_kit::testing::output::<Cli>(&[]));
pub static DEMO1: Lazy<demo1::Demo1> = Lazy::new(|| demo1(&[]).expect("8B fits on an H100"));
pub static DEMO2: Lazy<demo2::Demo2> = Lazy::new(|| demo2(&[]));
pub static DEMO3: Lazy<Vec<demo3::DraftShapes>> = Lazy::new(|| demo3(&[]).drafts);
/// The random model's run, as the demos share it.
pub static TOY: Lazy<&'static ToyRun> =
    Lazy::new(|| toy_model::shared(toy_model::ToyModel::Random).unwrap());
pub static RANKS: Lazy<Vec<DraftRanks>> = Lazy::new(|| TOY.ranks.clone());

/// The inputs `args` give a demo.
pub fn inputs<I: Inputs>(args: &[&str]) -> I {
    lecture_kit::inputs::parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// Runs demo `number` (`run`) on the inputs `args` give it: its section and its figures.
pub fn ran<I: Inputs, T: Clone + 'static>(
    number: u8,
    run: fn(&mut Out, &I) -> Result<(), lecture_kit::Error>,
    args: &[&str],
) -> (Section, Option<T>) {
    let ran = lecture_kit::run_demo(number, run, &inputs(args), DEFAULT_ONLY)
        .unwrap_or_else(|e| panic!("demo {number} {args:?}: {e}"));
    let data = ran.data::<T>().cloned();
    (ran.section, data)
}

/// Demo 1's figures for `args`; `None` where it prints why it cannot compute.
pub fn demo1(args: &[&str]) -> Option<demo1::Demo1> {
    ran(1, demo1::run, args).1
}

/// Demo 2's figures for `args`.
pub fn demo2(args: &[&str]) -> demo2::Demo2 {
    ran(2, demo2::run, args)
        .1
        .expect("demo 2 attaches its figures")
}

/// Demo 3's figures for `args`.
pub fn demo3(args: &[&str]) -> demo3::Demo3 {
    ran(3, demo3::run, args)
        .1
        .expect("demo 3 attaches its figures")
}

/// The report `lecture06` makes for `args` (refusing what it refuses).
pub fn report(args: &[&str]) -> Report {
    lecture_kit::testing::report::<Cli>(args)
}

/// What demo `n` prints for `args` (demo `n` chosen, and whichever demos `args` choose), as
/// blocks: its observations resolved as the lecture resolves them (seed sentences marked
/// unless its inputs are the default setup).
pub fn blocks(args: &[&str], n: u8) -> Vec<Block> {
    let demo = n.to_string();
    let mut all = vec!["--demo", demo.as_str()];
    all.extend_from_slice(args);
    let id = format!("demo{n}");
    let section = report(&all).sections.into_iter().find(|s| s.id == id);
    section.expect("the demo was chosen").blocks
}

/// Demo `n`'s observations for `args`, as sentences.
pub fn observations(args: &[&str], n: u8) -> Vec<String> {
    let items = blocks(args, n).into_iter().filter_map(|b| match b {
        Block::Observations(items) => Some(items),
        _ => None,
    });
    items.flatten().collect()
}

/// The figures of demos 1–3 for `args`, as the lecture prints them: knee, batch, trees.
pub fn figures(args: &[&str]) -> [Figure; 3] {
    let mut all = vec!["--demo", "1", "--demo", "2", "--demo", "3"];
    all.extend_from_slice(args);
    let figures: Vec<Figure> = report(&all).figures().cloned().collect();
    figures.try_into().expect("one figure per demo")
}

/// Blocks rendered as the terminal shows them.
pub fn text_of(blocks: Vec<Block>) -> String {
    let mut report = Report::new(6, "test");
    report
        .sections
        .push(Section::new("t", blocks, &()).unwrap());
    let mut out = Vec::new();
    lecture_kit::render::text(&mut out, &report).unwrap();
    String::from_utf8(out).unwrap()
}
