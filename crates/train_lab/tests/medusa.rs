//! Medusa's heads: their gradient against finite differences, a short run on a small
//! trained-for-the-test target that lowers every head's held-out loss, the same heads on
//! one thread and on two, and the file they are shipped in read back as written.

#![allow(clippy::print_stderr)] // the measured figures, for the closing note (--nocapture)

use train_lab::adamw::AdamW;
use train_lab::checkpoint::{heads_from_bytes, save_heads};
use train_lab::gradcheck::{TOLERANCE, check_head_gradients};
use train_lab::medusa::{self, Heads};
use train_lab::train::{Schedule, StepLog};
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
        warmup: 2,
        floor: 0.1,
        seed: 7,
        exits: Vec::new(),
    }
}

#[test]
fn every_heads_tensor_matches_finite_differences() {
    let checks = check_head_gradients((3, 6, 9), 4, 10, 20).unwrap();
    assert_eq!(checks.len(), 3 * 3, "every tensor of every head is checked");
    for c in &checks {
        eprintln!(
            "{:<16} {:>3} entries, worst relative error {:.1e}",
            c.name, c.entries, c.worst
        );
        assert!(c.entries > 0, "{c:?}");
        assert!(c.worst < TOLERANCE, "{} off by {:e}", c.name, c.worst);
    }
}

/// `steps` of the heads on a fixed random target (a target's training is not what this
/// checks), on `threads` threads.
fn trained(target: &Weights<f32>, steps: usize, threads: usize) -> (Heads<f32>, Vec<StepLog>) {
    let mut heads = Heads::new(3, &target.lm_head);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut logs = Vec::new();
    let opt = AdamW {
        lr: 1e-2,
        weight_decay: 0.0,
        ..AdamW::SMALL
    };
    pool.install(|| {
        medusa::train(
            target,
            &SMALL,
            &mut heads,
            TEXT.as_bytes(),
            &schedule(steps),
            &opt,
            &mut |l| logs.push(*l),
        )
    })
    .unwrap();
    (heads, logs)
}

#[test]
fn a_short_run_lowers_every_heads_held_out_loss() {
    let target = Weights::from_params(&init_params(&SMALL, 5).unwrap());
    let before = Heads::new(3, &target.lm_head);
    let (heads, logs) = trained(&target, 40, 2);
    let score = |h: &Heads<f32>| medusa::held_out(&target, &SMALL, h, HELD_OUT.as_bytes(), 32);
    let (was, now) = (score(&before).unwrap(), score(&heads).unwrap());
    for (k, (a, b)) in was.iter().zip(&now).enumerate() {
        eprintln!(
            "head {}: {:.3} → {:.3} bits per byte, top-1 {:.3} → {:.3}",
            k + 1,
            a.bits,
            b.bits,
            a.top1,
            b.top1
        );
        // A random target's hidden state says little: the heads learn the bytes' frequencies.
        assert!(b.bits < a.bits - 1.0, "head {}: {a:?} → {b:?}", k + 1);
    }
    assert!(logs[logs.len() - 1].loss < logs[0].loss);
}

#[test]
fn the_heads_are_the_same_on_one_thread_and_on_two_and_read_back_as_written() {
    let target = Weights::from_params(&init_params(&SMALL, 5).unwrap());
    let (one, _) = trained(&target, 3, 1);
    let (two, _) = trained(&target, 3, 2);
    assert_ne!(
        one,
        Heads::new(3, &target.lm_head),
        "the steps moved the heads"
    );
    let bits = |h: &Heads<f32>| -> Vec<u32> {
        let mut h = h.clone();
        let tensors = train_lab::weights::Tensors::tensors_mut(&mut h);
        tensors
            .iter()
            .flat_map(|(_, x)| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
            .collect()
    };
    assert!(bits(&one) == bits(&two), "one thread and two disagree");
    let dir = std::env::temp_dir().join(format!("medusa-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("heads.safetensors");
    save_heads(&path, &one, &[("about".into(), "a test".into())]).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let back = heads_from_bytes(&bytes).unwrap();
    assert_eq!(back.heads, one);
    assert_eq!(back.meta["about"], "a test");
    assert_eq!(back.meta["medusa_heads"], "3");
    assert!(heads_from_bytes(&bytes[..50]).is_err());
}

#[test]
fn heads_that_do_not_fit_their_target_are_errors() {
    let target = Weights::from_params(&init_params(&SMALL, 5).unwrap());
    let mut narrow = Heads::new(2, &ndarray::Array2::<f32>::zeros((16, 256)));
    let opt = AdamW::SMALL;
    let e = medusa::train(
        &target,
        &SMALL,
        &mut narrow,
        TEXT.as_bytes(),
        &schedule(1),
        &opt,
        &mut |_| {},
    );
    assert!(e.unwrap_err().to_string().contains("heads of"));
    let heads = Heads::new(2, &target.lm_head);
    assert!(medusa::held_out(&target, &SMALL, &heads, b"too short", 32).is_err());
    let h = ndarray::Array2::<f32>::zeros((4, 32));
    let lambdas = medusa::weights(2);
    let few: [&[u32]; 1] = [&[1, 2, 3, 4]];
    assert!(medusa::loss_and_grad(&heads, &h, &few, &lambdas, 4.0).is_err());
    let outside: [&[u32]; 2] = [&[1, 2, 3, 4], &[1, 2, 3, 256]];
    assert!(medusa::loss_and_grad(&heads, &h, &outside, &lambdas, 4.0).is_err());
}
