//! The training loop: the loss falls on a short run, the weights come out bit for bit the
//! same on one thread and on two, and a distilled student moves toward its teacher.

#![allow(clippy::print_stderr)] // the measured figures, for the closing note (--nocapture)

use train_lab::adamw::AdamW;
use train_lab::agree::{Reader, agreement};
use train_lab::train::{Schedule, StepLog, Teacher, bits_per_byte, train, train_from};
use train_lab::weights::Weights;
use transformer_lab::init_params;

mod common;
use common::{HELD_OUT, SMALL, TEXT};

fn schedule(steps: usize) -> Schedule {
    Schedule {
        steps,
        batch: 8,
        micro: 2,
        seq: 32,
        warmup: 5,
        floor: 0.1,
        seed: 3,
        exits: Vec::new(),
    }
}

fn trained(steps: usize, threads: usize) -> (Weights<f32>, Vec<StepLog>) {
    let mut w = Weights::from_params(&init_params(&SMALL, 5).unwrap());
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
        train(
            &mut w,
            &SMALL,
            TEXT.as_bytes(),
            &schedule(steps),
            &opt,
            &mut |l| logs.push(*l),
        )
    })
    .unwrap();
    (w, logs)
}

#[test]
fn the_held_out_loss_falls_on_a_short_run() {
    let w0 = Weights::from_params(&init_params(&SMALL, 5).unwrap());
    let before = bits_per_byte(&w0, &SMALL, HELD_OUT.as_bytes(), 32).unwrap();
    let (w, logs) = trained(80, 2);
    let after = bits_per_byte(&w, &SMALL, HELD_OUT.as_bytes(), 32).unwrap();
    eprintln!(
        "held-out bits per byte: {before:.3} → {after:.3}; train loss {:.3} → {:.3} nats",
        logs[0].loss,
        logs[logs.len() - 1].loss
    );
    // Random weights predict about uniformly: log2(256) = 8 bits.
    assert!((before - 8.0).abs() < 0.1, "{before}");
    assert!(after < before - 2.5, "{before} → {after}");
}

#[test]
fn the_weights_are_the_same_on_one_thread_and_on_two() {
    let (one, _) = trained(4, 1);
    let (two, _) = trained(4, 2);
    let w0: Weights<f32> = Weights::from_params(&init_params(&SMALL, 5).unwrap());
    assert_ne!(one, w0, "the steps moved the weights");
    let bits = |w: &Weights<f32>| -> Vec<u32> {
        let mut w = w.clone();
        w.tensors_mut()
            .iter()
            .flat_map(|(_, x)| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
            .collect()
    };
    assert!(bits(&one) == bits(&two), "one thread and two disagree");
}

#[test]
fn a_distilled_student_agrees_with_its_teacher_more_than_one_trained_on_the_text() {
    // The teacher: the small model trained above; the students: another seed's random one,
    // trained on the same windows with and without the teacher.
    let (teacher, _) = trained(40, 2);
    let t = Reader::full(&teacher, &SMALL);
    let opt = AdamW {
        lr: 1e-2,
        ..AdamW::SMALL
    };
    let student = |teach: Option<Teacher<'_>>| {
        let mut w = Weights::from_params(&init_params(&SMALL, 9).unwrap());
        train_from(
            &mut w,
            &SMALL,
            TEXT.as_bytes(),
            &schedule(60),
            &opt,
            teach,
            &mut |_| {},
        )
        .unwrap();
        agreement(t, Reader::full(&w, &SMALL), HELD_OUT.as_bytes(), 32, 20).unwrap()
    };
    let taught = student(Some(Teacher {
        w: &teacher,
        cfg: &SMALL,
    }));
    let read = student(None);
    eprintln!(
        "agreement with the teacher (argmax, sum of min(p, q)): distilled {:.3}, {:.3}; \
         trained on the text {:.3}, {:.3}",
        taught.greedy, taught.sampled, read.greedy, read.sampled
    );
    assert!(
        taught.greedy > read.greedy + 0.05,
        "{taught:?} against {read:?}"
    );
    assert!(taught.sampled > read.sampled, "{taught:?} against {read:?}");
}
