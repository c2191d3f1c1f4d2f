//! The planner judged on trends (`planner::validation::trends`): by hand on rows whose
//! predictions are set by hand, then on the shipped data, leave-one-publisher-out.
#![allow(clippy::print_stderr)] // the figures on the shipped data, for the closing note (--nocapture)

mod common;

use common::row;

use planner::validation::{CrossPrediction, leave_one_publisher_out, parse_measurements, trends};

#[test]
fn trends_by_hand() {
    let rows = [
        row("A1", "P", "steps", 1, None),
        row("A2", "P", "steps", 8, None),
        row("A3", "P", "steps", 64, None),
        row("B1", "Q", "gammas", 1, Some(2)),
        row("B2", "Q", "gammas", 1, Some(4)),
        row("B3", "Q", "gammas", 1, Some(6)),
        row("B4", "Q", "gammas", 32, Some(4)),
    ];
    let ms = parse_measurements(&format!("[{}]", rows.join(","))).unwrap();
    // (measured, predicted) set by hand.
    let figures = [
        (10.0, 12.0),
        (12.0, 13.0),
        (30.0, 20.0),
        (2.0, 1.8),
        (2.4, 1.9),
        (2.2, 2.0),
        (1.2, 1.5),
    ];
    let cross: Vec<CrossPrediction> = ms
        .iter()
        .zip(figures)
        .map(|(m, (measured, predicted))| CrossPrediction {
            measurement: m,
            measured,
            predicted,
        })
        .collect();
    let t = trends(&cross);
    // Steps: A2/A1 1.2 vs 13/12 = 1.083 (0.90, in); A3/A1 3.0 vs 1.667 (0.56, out);
    // A3/A2 2.5 vs 1.538 (0.62, out). Gammas: B2/B1 1.2 vs 1.056 (0.88, in); B3/B1 1.1 vs
    // 1.111 (in); B4/B1 0.6 vs 0.833 (1.39, out); B3/B2 0.917 vs 1.053 (1.15, in); B4/B2
    // 0.5 vs 0.789 (out); B4/B3 0.545 vs 0.75 (out).
    assert_eq!(t.ratios.len(), 3 + 6);
    let within: Vec<bool> = t.ratios.iter().map(|r| r.within()).collect();
    assert_eq!(
        within,
        [true, false, false, true, true, false, true, false, false]
    );
    assert_eq!(t.ratios_right(), (4, 9));
    assert!((t.ratios_within() - 4.0 / 9.0).abs() < 1e-12);
    // Orderings: every step pair differs by more than 5% and is predicted the same way
    // (3 of 3); of Q's six pairs, B3 against B2 (2.2 < 2.4, predicted 2.0 > 1.9) is wrong,
    // the rest right: 8 of 9.
    assert_eq!(t.orderings, (8, 9));
    // Two rows predicted equal are not ordered: with A3 predicted 13 as A2 is, the pair
    // A3–A2 (measured 30 against 12, predicted 13 against 13) is wrong; A3–A1 (measured 30
    // against 10, predicted 13 against 12) stays right.
    let mut tied = cross.clone();
    tied[2].predicted = tied[1].predicted;
    assert_eq!(trends(&tied).orderings, (7, 9));
    // Speedup along the batch, the depth-4 chain: 2.4 → 1.2 measured (down), 1.9 → 1.5
    // predicted (down): right.
    assert_eq!(t.speedup_trends.len(), 1);
    let trend = &t.speedup_trends[0];
    assert_eq!((trend.batches, trend.right()), ((1, 32), true));
    // The γ sweep at batch 1: measured best 4, predicted best 6: within one? No — two.
    assert_eq!(t.gamma_sweeps.len(), 1);
    let sweep = &t.gamma_sweeps[0];
    assert_eq!((sweep.measured_best, sweep.predicted_best), (4, 6));
    assert_eq!(sweep.depths, [2, 4, 6]);
    assert!(!sweep.right());
    assert_eq!(
        (t.speedup_trends_right(), t.gamma_sweeps_right()),
        ((1, 1), (0, 1))
    );
}

#[test]
fn the_shipped_data_judged_on_trends() {
    let cross = leave_one_publisher_out().unwrap();
    let t = trends(&cross);
    let right = |(n, of): (usize, usize)| format!("{n} of {of}");
    eprintln!(
        "ratios within ±25%: {:.3} of {}; orderings {:.3} ({}); speedup trends {}; best γ {}",
        t.ratios_within(),
        t.ratios.len(),
        t.orderings_right(),
        right(t.orderings),
        right(t.speedup_trends_right()),
        right(t.gamma_sweeps_right()),
    );
    for s in &t.speedup_trends {
        eprintln!(
            "  trend {} {:?}: {:.3} vs {:.3}",
            s.series, s.batches, s.measured, s.predicted
        );
    }
    for s in &t.gamma_sweeps {
        eprintln!(
            "  sweep {} at {}: {} vs {}",
            s.series, s.batch, s.measured_best, s.predicted_best
        );
    }
    assert!(t.ratios.len() > 100 && t.orderings.1 > t.ratios.len());
    assert!(!t.speedup_trends.is_empty() && !t.gamma_sweeps.is_empty());
}
