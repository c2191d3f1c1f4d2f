//! The toy model against golden logits computed outside Rust: `tools/golden/golden.py`
//! runs the forward pass in float64 NumPy, with its own RMSNorm, RoPE, attention and
//! SwiGLU, on the weights of `init_params(QCFG, 0)` exported to safetensors by
//! `examples/export_weights.rs`. `tools/golden/check.sh` regenerates the file and checks
//! it is unchanged; this test checks the Rust code against it.

use ndarray::Array2;
use transformer_lab::{Config, QCFG, TransformerLM, init_params, reference};

const GOLDEN: &str = include_str!("../../../tools/golden/qcfg_seed0_logits.txt");

/// The fast model and the reference may differ from float64 NumPy by this much.
const TOL: f64 = 1e-4;

/// One sequence of the golden file: its tokens and the logits of each position.
struct Golden {
    tokens: Vec<u32>,
    logits: Vec<Vec<f64>>,
}

/// The `# config` line the export writes for `cfg` and `seed` (keys sorted).
fn config_line(cfg: &Config, seed: u64) -> String {
    format!(
        "# config d_ff={} d_model={} max_seq={} n_heads={} n_layers={} norm_eps={} rope_theta={} seed={seed} vocab={}",
        cfg.d_ff,
        cfg.d_model,
        cfg.max_seq,
        cfg.n_heads,
        cfg.n_layers,
        cfg.norm_eps,
        cfg.rope_theta,
        cfg.vocab
    )
}

fn parse() -> (String, Vec<Golden>) {
    let mut config = String::new();
    let mut seqs: Vec<Golden> = Vec::new();
    for line in GOLDEN.lines() {
        if line.starts_with("# config ") {
            config = line.to_string();
        } else if let Some(rest) = line.strip_prefix("# sequence ") {
            let (_, tokens) = rest.split_once(": tokens ").expect("a sequence header");
            let tokens = tokens
                .split_whitespace()
                .map(|t| t.parse().expect("a token id"))
                .collect();
            seqs.push(Golden {
                tokens,
                logits: Vec::new(),
            });
        } else if !line.starts_with('#') {
            let row = line
                .split_whitespace()
                .map(|v| v.parse().expect("a number"))
                .collect();
            seqs.last_mut()
                .expect("rows after a header")
                .logits
                .push(row);
        }
    }
    (config, seqs)
}

fn check(name: &str, got: &Array2<f32>, want: &Golden) {
    assert_eq!(got.nrows(), want.logits.len(), "{name}: positions");
    for (t, (row, golden)) in got.outer_iter().zip(&want.logits).enumerate() {
        assert_eq!(row.len(), golden.len(), "{name}: vocabulary");
        let worst = row
            .iter()
            .zip(golden)
            .map(|(&a, &b)| (f64::from(a) - b).abs())
            .fold(0.0, f64::max);
        assert!(
            worst <= TOL,
            "{name}, sequence {:?}, position {t}: max |Δ| = {worst:e}",
            want.tokens
        );
    }
}

#[test]
fn the_golden_file_is_for_qcfg_and_seed_0() {
    let (config, seqs) = parse();
    assert_eq!(config, config_line(&QCFG, 0), "regenerate the golden file");
    assert_eq!(seqs.len(), 3);
    let positions: usize = seqs.iter().map(|s| s.tokens.len()).sum();
    assert_eq!(positions, 1 + 13 + 12);
    assert!(
        seqs.iter()
            .all(|s| s.logits.len() == s.tokens.len() && s.logits.iter().all(|r| r.len() == 256))
    );
}

#[test]
fn the_model_matches_the_numpy_golden_logits() {
    let (_, seqs) = parse();
    let p = init_params(&QCFG, 0).unwrap();
    let m = TransformerLM::new(&p, QCFG, "target").unwrap();
    for seq in &seqs {
        let tokens = Array2::from_shape_vec((1, seq.tokens.len()), seq.tokens.clone()).unwrap();
        let fast = m.full_logits(tokens.view()).unwrap();
        check(
            "full_logits",
            &fast.index_axis_move(ndarray::Axis(0), 0),
            seq,
        );
        // Decoding one token at a time through the cache lands on the same numbers.
        let mut cache = m.new_cache(1, seq.tokens.len()).unwrap();
        let steps: Vec<f32> = seq
            .tokens
            .iter()
            .flat_map(|&t| m.step(&mut cache, ndarray::arr1(&[t]).view()).unwrap())
            .collect();
        let steps = Array2::from_shape_vec((seq.tokens.len(), QCFG.vocab), steps).unwrap();
        check("step by step", &steps, seq);
        check(
            "reference",
            &reference::forward(&p, &QCFG, &seq.tokens).unwrap(),
            seq,
        );
    }
}
