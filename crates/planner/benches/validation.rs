//! `cargo bench -p planner`: demo 5's computation without its once-per-process caches.
//! The pooled `measured` fit searched from the seed's values over every calibration row
//! ([`fit_measured`]'s search), and the leave-one-publisher-out folds over every row, each
//! refitting the pooled profile and the engines' from that fit.

use divan::Bencher;
use divan::counter::ItemsCount;
use planner::validation::{
    FitRows, Measurement, Moves, POOLED_AXES, Role, fit_measured, grid_start,
    leave_one_publisher_out_on, measurements, search,
};

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 5)]
fn pooled_fit(bencher: Bencher) {
    let calibration: Vec<&Measurement> = measurements()
        .unwrap()
        .iter()
        .filter(|m| m.role == Role::Calibration)
        .collect();
    bencher
        .counter(ItemsCount::new(calibration.len()))
        .bench(|| {
            let rows = FitRows::new(&calibration).unwrap();
            search(&rows, grid_start(), &POOLED_AXES, Moves::Scan).unwrap()
        });
}

#[divan::bench(sample_count = 5)]
fn leave_one_publisher_out(bencher: Bencher) {
    let ms = measurements().unwrap();
    let (start, _) = fit_measured().unwrap();
    bencher
        .counter(ItemsCount::new(ms.len()))
        .bench(|| leave_one_publisher_out_on(ms, start).unwrap());
}
