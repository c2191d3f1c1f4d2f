//! train_lab's forward pass is the toy model's: its loss on random weights equals the
//! cross-entropy of `transformer_lab::reference`'s logits, an implementation written
//! separately (and itself checked against NumPy).

use train_lab::loss::Targets;
use train_lab::model::{Batch, Objective, loss};
use train_lab::weights::Weights;
use transformer_lab::{Config, init_params, reference};

const SMALL: Config = Config {
    vocab: 32,
    d_model: 16,
    n_layers: 3,
    n_heads: 2,
    d_ff: 24,
    max_seq: 16,
    norm_eps: 1e-5,
    rope_theta: 10000.0,
};

#[test]
fn the_loss_is_the_cross_entropy_of_the_reference_logits() {
    let p = init_params(&SMALL, 7).unwrap();
    let (b, t) = (3, 9);
    let tokens: Vec<u32> = (0..b * t).map(|i| (i * 7 % 32) as u32).collect();
    let next: Vec<u32> = (0..b * t).map(|i| (i * 5 % 32) as u32).collect();
    // By hand from the reference's logits: Σ log Σ e^l − l_next, in f64.
    let mut want = 0.0f64;
    for s in 0..b {
        let logits = reference::forward(&p, &SMALL, &tokens[s * t..(s + 1) * t]).unwrap();
        for (i, row) in logits.outer_iter().enumerate() {
            let lse = row.iter().map(|&l| f64::from(l).exp()).sum::<f64>().ln();
            want += lse - f64::from(row[next[s * t + i] as usize]);
        }
    }
    let batch = Batch {
        tokens: &tokens,
        b,
        t,
    };
    let obj = Objective::last(Targets::Tokens(&next), SMALL.n_layers);
    let w64: Weights<f64> = Weights::from_params(&p);
    let w32: Weights<f32> = Weights::from_params(&p);
    let got64 = loss(&w64, &SMALL, &batch, &obj).unwrap();
    let got32 = loss(&w32, &SMALL, &batch, &obj).unwrap();
    assert!((got64 - want).abs() / want < 1e-6, "{got64} vs {want}");
    assert!((got32 - want).abs() / want < 1e-5, "{got32} vs {want}");
}
