//! What the claim tests share: the lecture's figures, computed once per test binary.
#![allow(dead_code)] // each test binary uses some of these

use lecture_kit::Block;
use lecture06::spec_decode_on_hardware::Setup;
use lecture06::spec_decode_on_hardware::toy_model::{self, DraftRanks, ToyRun};
use once_cell::sync::Lazy;

use crate::demo_data::{self, Demo1, Demo2, DraftFigures};

pub static OUTPUT: Lazy<String> = Lazy::new(|| lecture_kit::testing::output::<lecture06::Cli>(&[]));
pub static SETUP: Lazy<Setup> = Lazy::new(Setup::default);
pub static DEMO1: Lazy<Demo1> = Lazy::new(|| demo_data::demo1(&SETUP).expect("8B fits on an H100"));
pub static DEMO2: Lazy<Demo2> = Lazy::new(|| demo_data::demo2(&SETUP));
pub static DEMO3: Lazy<Vec<DraftFigures>> = Lazy::new(|| demo_data::demo3(&SETUP).drafts);
pub static TOY: Lazy<ToyRun> = Lazy::new(|| toy_model::run().unwrap());
pub static RANKS: Lazy<Vec<DraftRanks>> = Lazy::new(|| TOY.ranks.clone());

/// What demo `n` prints for `setup`, as blocks (its observations resolved as the lecture
/// resolves them: seed sentences marked when one of its inputs changed).
pub fn blocks(setup: &Setup, n: u8) -> Vec<Block> {
    let report = lecture06::spec_decode_on_hardware::report(setup, &[n]).unwrap();
    report.sections.into_iter().next().unwrap().blocks
}

/// Blocks rendered as the terminal shows them.
pub fn text_of(blocks: Vec<Block>) -> String {
    let mut report = lecture_kit::Report::new(6, "test");
    report
        .sections
        .push(lecture_kit::Section::new("t", blocks, &()).unwrap());
    let mut out = Vec::new();
    lecture_kit::render::text(&mut out, &report).unwrap();
    String::from_utf8(out).unwrap()
}
