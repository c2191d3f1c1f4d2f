//! The setup's inputs: each flag changes the one input that names it, and every field of
//! the setup belongs to an input (so a demo's view of nothing is the default).

use clap::Parser;
use lecture_kit::{Inputs, Lecture as _};
use lecture06::Cli;
use lecture06::spec_decode_on_hardware::setup::DEMO1_CTX;
use lecture06::spec_decode_on_hardware::{Input, Setup};

#[test]
fn demo1_runs_at_the_first_of_each_list_given() {
    assert_eq!(Setup::default().demo1_point(), (1, DEMO1_CTX));
    let setup = |args: &[&str]| {
        let argv = std::iter::once("lecture06").chain(args.iter().copied());
        Cli::try_parse_from(argv).unwrap().setup().unwrap()
    };
    assert_eq!(setup(&["--batch", "8,64"]).demo1_point(), (8, DEMO1_CTX));
    assert_eq!(setup(&["--ctx", "32768"]).demo1_point(), (1, 32768));
    // The script's grid typed out: demo 1 still runs at the first value given.
    assert_eq!(setup(&["--ctx", "512,4096,32768"]).demo1_point(), (1, 512));
}

fn setup(args: &[&str]) -> Setup {
    let argv = std::iter::once("lecture06").chain(args.iter().copied());
    Cli::try_parse_from(argv).unwrap().setup().unwrap()
}

/// One flag for each input, each changing only that input.
const ONE_FLAG_EACH: [(&[&str], Input); 9] = [
    (&["--hw", "H200"], Input::Hw),
    (&["--target", "Llama-3.2-3B"], Input::Target),
    (&["--draft-head"], Input::Draft),
    (&["--alpha", "0.7"], Input::Alpha),
    (&["--tp", "2"], Input::Assumptions),
    (&["--draft-layer-ms", "0.1"], Input::DraftCosts),
    (&["--gamma", "3"], Input::Gamma),
    (
        &["--tau", "2.5", "--tree-nodes", "6", "--gamma", "3"],
        Input::Tree,
    ),
    (&["--ctx", "8192"], Input::Grid),
];

#[test]
fn each_flag_changes_the_one_input_that_names_it() {
    assert!(Setup::default().changed().is_empty());
    for (args, input) in ONE_FLAG_EACH {
        let s = setup(args);
        assert_eq!(s.changed(), [input], "{args:?}");
        assert!(Setup::flags(input).contains(&args[0]), "{args:?}");
    }
    // A profile sets the draft's costs too (fitted: 0.53 ms a draft step).
    let calibrated = setup(&["--calibration", "fitted"]);
    assert_eq!(
        calibrated.changed(),
        [Input::Assumptions, Input::DraftCosts]
    );
}

#[test]
fn every_field_belongs_to_an_input_so_a_view_of_nothing_is_the_default() {
    // Every flag at once: each input differs from the default.
    let mut all: Vec<&str> = ONE_FLAG_EACH
        .iter()
        .filter(|(_, i)| *i != Input::Gamma) // --gamma is the tree's depth with --tau
        .flat_map(|(a, _)| a.iter().copied())
        .collect();
    all.extend(["--calibration", "fitted", "--batch", "4,8"]);
    let s = setup(&all);
    assert_eq!(
        s.changed(),
        Setup::INPUTS
            .iter()
            .copied()
            .filter(|&i| i != Input::Gamma)
            .collect::<Vec<_>>()
    );
    let s = Setup {
        gamma: Some(5),
        ..s
    };
    assert_eq!(s.changed(), Setup::INPUTS, "every input differs");
    assert_eq!(s.view(&[]), Setup::default(), "no field outside the inputs");
    assert_eq!(s.view(Setup::INPUTS), s);
    for &input in Setup::INPUTS {
        let view = s.view(&[input]);
        assert_eq!(view.changed(), [input], "{input:?}");
    }
}

#[test]
fn a_round_is_computed_only_where_its_batch_fits() {
    let s = Setup::default();
    // By hand: one H100's 80 GB less Llama-3.1-8B's 16.06 GB of bf16 weights, over
    // 32768 · 131,072 bytes (4.29 GB) of KV per sequence: 14.9, so 14 sequences.
    let fits = s.fitting_batch(32768).unwrap();
    assert_eq!(fits, 14);
    assert_eq!(
        s.fitting_round(fits, 32768).unwrap(),
        Some(s.round(fits, 32768, 0.8).unwrap())
    );
    assert_eq!(s.fitting_round(fits + 1, 32768).unwrap(), None);
    // A target whose weights do not fit: no round at any batch.
    let mut too_big = Setup::default();
    too_big.base.target = llm_math::LLAMA31_405B;
    assert_eq!(too_big.fitting_round(1, 512).unwrap(), None);
}
