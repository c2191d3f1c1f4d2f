//! EAGLE's draft head: its gradient against finite differences for every tensor, a short
//! run that makes its first guess agree with its target on held-out text, and the same
//! head on one thread and on two.

#![allow(clippy::print_stderr)] // the measured figures, for the closing note (--nocapture)

use train_lab::adamw::AdamW;
use train_lab::eagle::{self, Eagle};
use train_lab::gradcheck::{TOLERANCE, check_eagle_gradients};
use train_lab::train::{Schedule, StepLog};
use train_lab::weights::{Tensors, Weights};
use transformer_lab::{Config, init_params};

mod common;
use common::{HELD_OUT, SMALL, TEXT};

/// Two heads of width 4, a vocabulary of 11: small enough for finite differences.
const TINY: Config = Config {
    vocab: 11,
    d_model: 8,
    n_layers: 2,
    n_heads: 2,
    d_ff: 12,
    max_seq: 8,
    norm_eps: 1e-5,
    rope_theta: 10000.0,
};

#[test]
fn every_tensor_of_the_head_matches_finite_differences() {
    let checks = check_eagle_gradients(&TINY, 3, (2, 4), 16).unwrap();
    assert_eq!(
        checks.len(),
        2 + 9 + 1,
        "fc, its bias, the block's 9, the final norm"
    );
    for c in &checks {
        eprintln!(
            "{:<16} {:>3} entries, worst relative error {:.1e}",
            c.name, c.entries, c.worst
        );
        assert!(c.entries > 0, "{c:?}");
        assert!(c.worst < TOLERANCE, "{} off by {:e}", c.name, c.worst);
    }
}

fn schedule(steps: usize) -> Schedule {
    Schedule {
        steps,
        batch: 8,
        micro: 2,
        seq: 31,
        warmup: 2,
        floor: 0.1,
        seed: 9,
        exits: Vec::new(),
    }
}

/// A target trained for 80 steps on the text (its held-out loss falls from 8 to under 5.5
/// bits per byte: `tests/train.rs`), so that its features carry something to predict.
fn trained_target() -> Weights<f32> {
    let mut w = Weights::from_params(&init_params(&SMALL, 5).unwrap());
    let sched = Schedule {
        seq: 32,
        ..schedule(80)
    };
    let opt = AdamW {
        lr: 1e-2,
        ..AdamW::SMALL
    };
    train_lab::train::train(&mut w, &SMALL, TEXT.as_bytes(), &sched, &opt, &mut |_| {}).unwrap();
    w
}

fn trained(target: &Weights<f32>, steps: usize, threads: usize) -> (Eagle<f32>, Vec<StepLog>) {
    let mut head = Eagle::new(&SMALL, 4).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut logs = Vec::new();
    let opt = AdamW {
        lr: 1e-2,
        ..AdamW::SMALL
    };
    pool.install(|| {
        eagle::train(
            target,
            &SMALL,
            &mut head,
            TEXT.as_bytes(),
            &schedule(steps),
            &opt,
            &mut |l| logs.push(*l),
        )
    })
    .unwrap();
    (head, logs)
}

#[test]
fn a_short_run_makes_the_head_agree_with_its_target_and_threads_do_not_change_it() {
    let target = trained_target();
    let before = Eagle::new(&SMALL, 4).unwrap();
    let (head, logs) = trained(&target, 40, 2);
    let agree =
        |e: &Eagle<f32>| eagle::agreement(&target, &SMALL, e, HELD_OUT.as_bytes(), 31).unwrap();
    let (was, now) = (agree(&before), agree(&head));
    eprintln!(
        "held-out agreement with the target {:.3} → {:.3}, with the text {:.3} → {:.3}; \
         loss {:.3} → {:.3}",
        was.with_target,
        now.with_target,
        was.with_text,
        now.with_text,
        logs[0].loss,
        logs[logs.len() - 1].loss
    );
    // The head learns to run the target one step ahead: its first guess becomes the
    // target's own far more often, and the text's byte too.
    assert!(now.with_target > was.with_target + 0.2, "{was:?} → {now:?}");
    assert!(now.with_text > was.with_text + 0.1, "{was:?} → {now:?}");
    assert!(logs[logs.len() - 1].loss < logs[0].loss * 0.8);
    let (one, _) = trained(&target, 3, 1);
    let (two, _) = trained(&target, 3, 2);
    assert_ne!(one, before, "the steps moved the head");
    let bits = |e: &Eagle<f32>| -> Vec<u32> {
        let mut e = e.clone();
        let tensors = e.tensors_mut();
        tensors
            .iter()
            .flat_map(|(_, x)| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
            .collect()
    };
    assert!(bits(&one) == bits(&two), "one thread and two disagree");
}

#[test]
fn a_head_that_does_not_fit_is_an_error() {
    let target = Weights::from_params(&init_params(&SMALL, 5).unwrap());
    let mut narrow = Eagle::new(&TINY, 1).unwrap();
    let e = eagle::train(
        &target,
        &SMALL,
        &mut narrow,
        TEXT.as_bytes(),
        &schedule(1),
        &AdamW::SMALL,
        &mut |_| {},
    );
    assert!(e.unwrap_err().to_string().contains("EAGLE head"));
    let head = Eagle::new(&SMALL, 1).unwrap();
    assert!(eagle::agreement(&target, &SMALL, &head, b"short", 31).is_err());
    assert!(eagle::agreement(&target, &SMALL, &head, HELD_OUT.as_bytes(), 32).is_err());
}
