//! Demo 4 in the page decodes each draft in a worker of its own and hands the figures to
//! the worker that answers: what is handed in is what prints, and what cannot be demo 4's
//! figures is refused. (Its own file: a hand-in lasts for the process.)

mod common;

use common::marked;
use lecture_kit::web::Answer;
use lecture06::spec_decode_on_hardware::demo3::SHAPES;
use lecture06_web::{answer, demo4_hand_in, setup};

#[test]
fn handed_in_drafts_print_as_demo_4_without_running_again() {
    let drafts = setup().demo4_drafts;
    assert_eq!(drafts, 2);
    // Refused: not a list of shapes, another length, a draft demo 4 does not have.
    assert!(demo4_hand_in(0, "{}").is_err());
    let short = serde_json::to_string(&marked(0)[..3]).unwrap();
    assert!(demo4_hand_in(0, &short).is_err());
    let fine = serde_json::to_string(&marked(0)).unwrap();
    assert!(demo4_hand_in(drafts, &fine).is_err());
    let demo4 = || {
        let flags = ["--demo".to_string(), "4".to_string()];
        let Answer::Page { html } = answer(&flags).answer else {
            panic!("demo 4 refused");
        };
        html
    };
    for k in 0..drafts {
        demo4_hand_in(k, &serde_json::to_string(&marked(k)).unwrap()).unwrap();
    }
    let html = demo4();
    for k in 0..drafts {
        for i in 0..SHAPES.len() {
            let rounds = 90_000 + 100 * k + i;
            assert!(
                shows(&html, rounds),
                "draft {k} shape {i}: {rounds} not in the page"
            );
        }
    }
    // Handed in again after demo 4 printed (a worker answering a second run): the new
    // figures print, not the ones kept from the first.
    for k in 0..drafts {
        let mut again = marked(k);
        for shape in &mut again {
            shape.rounds -= 10_000;
        }
        demo4_hand_in(k, &serde_json::to_string(&again).unwrap()).unwrap();
    }
    let html = demo4();
    for k in 0..drafts {
        for i in 0..SHAPES.len() {
            let rounds = 80_000 + 100 * k + i;
            assert!(shows(&html, rounds), "again: {rounds} not in the page");
            assert!(
                !shows(&html, rounds + 10_000),
                "again: {} still in the page",
                rounds + 10_000
            );
        }
    }
}

/// Whether a count is in the page: its tables print counts with thousands separators or
/// none; either way the digits.
fn shows(html: &str, rounds: usize) -> bool {
    let digits = rounds.to_string();
    let grouped = format!("{},{:03}", rounds / 1000, rounds % 1000);
    html.contains(&digits) || html.contains(&grouped)
}
