//! A checkpoint written and read back holds the same weights, shape and metadata.

use train_lab::checkpoint::{load, save};
use train_lab::weights::Weights;
use transformer_lab::{Config, init_params};

#[test]
fn a_checkpoint_reads_back_what_was_written() {
    let cfg = Config {
        vocab: 256,
        d_model: 16,
        n_layers: 2,
        n_heads: 2,
        d_ff: 24,
        max_seq: 8,
        ..transformer_lab::QCFG
    };
    let mut w: Weights<f32> = Weights::from_params(&init_params(&cfg, 4).unwrap());
    // Norm gains off 1, so a swapped tensor would show.
    for (i, (_, x)) in w.tensors_mut().into_iter().enumerate() {
        x[0] += i as f32;
    }
    let path = std::env::temp_dir().join(format!(
        "train_lab-checkpoint-{}.safetensors",
        std::process::id()
    ));
    save(&path, &w, &cfg, &[("note".into(), "hello".into())]).unwrap();
    let back = load(&path);
    std::fs::remove_file(&path).unwrap();
    let back = back.unwrap();
    assert_eq!(back.cfg, cfg);
    assert_eq!(back.weights, w);
    assert_eq!(back.meta["note"], "hello");
}
