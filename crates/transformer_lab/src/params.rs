//! The weights, and their seeded initialisation.

use ndarray::{Array1, Array2};
use ndarray_rand::RandomExt;
use ndarray_rand::rand_distr::Normal;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{Config, Error};

/// One transformer block's weights. Matrices are `[in, out]`: `y = x · W`.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerParams {
    /// RMSNorm gain before attention, `[d_model]`.
    pub attn_norm: Array1<f32>,
    /// Query projection, `[d_model, d_model]`.
    pub wq: Array2<f32>,
    /// Key projection, `[d_model, d_model]`.
    pub wk: Array2<f32>,
    /// Value projection, `[d_model, d_model]`.
    pub wv: Array2<f32>,
    /// Attention output projection, `[d_model, d_model]`.
    pub wo: Array2<f32>,
    /// RMSNorm gain before the MLP, `[d_model]`.
    pub mlp_norm: Array1<f32>,
    /// SwiGLU gate, `[d_model, d_ff]`.
    pub w_gate: Array2<f32>,
    /// SwiGLU up projection, `[d_model, d_ff]`.
    pub w_up: Array2<f32>,
    /// SwiGLU down projection, `[d_ff, d_model]`.
    pub w_down: Array2<f32>,
}

impl LayerParams {
    /// The block's linear weights with their names, in a fixed order (for quantization,
    /// reports and tests).
    pub fn matrices(&self) -> [(&'static str, &Array2<f32>); 7] {
        [
            ("wq", &self.wq),
            ("wk", &self.wk),
            ("wv", &self.wv),
            ("wo", &self.wo),
            ("w_gate", &self.w_gate),
            ("w_up", &self.w_up),
            ("w_down", &self.w_down),
        ]
    }

    /// Mutable access to the same matrices, same order as [`matrices`](Self::matrices).
    pub fn matrices_mut(&mut self) -> [(&'static str, &mut Array2<f32>); 7] {
        [
            ("wq", &mut self.wq),
            ("wk", &mut self.wk),
            ("wv", &mut self.wv),
            ("wo", &mut self.wo),
            ("w_gate", &mut self.w_gate),
            ("w_up", &mut self.w_up),
            ("w_down", &mut self.w_down),
        ]
    }
}

/// All weights of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Token embedding table, `[vocab, d_model]`.
    pub embed: Array2<f32>,
    /// The blocks, first to last.
    pub layers: Vec<LayerParams>,
    /// Final RMSNorm gain, `[d_model]`.
    pub final_norm: Array1<f32>,
    /// LM head (untied from `embed`), `[d_model, vocab]`.
    pub lm_head: Array2<f32>,
}

/// Standard deviation of the embedding table.
pub const EMBED_STD: f32 = 0.03;
/// Standard deviation of q, k, v, gate, up and the LM head.
pub const WEIGHT_STD: f32 = 0.02;

/// Random weights for `cfg`, reproducible from `seed`.
///
/// Every draw comes from one `ChaCha8Rng::seed_from_u64(seed)` (a named algorithm, so a
/// `rand` upgrade cannot change the model), in this order: embedding; then per block wq,
/// wk, wv, wo, w_gate, w_up, w_down; then the LM head. Embedding N(0, 0.03²); wq, wk, wv,
/// w_gate, w_up and lm_head N(0, 0.02²); the residual-branch outputs wo and w_down
/// N(0, (0.02/√(2·n_layers))²), GPT-2's scaling so the residual stream does not grow with
/// depth; norm gains 1. Errors if `cfg` is invalid.
///
/// ```
/// # let cfg = transformer_lab::Config { vocab: 16, d_model: 8, n_layers: 2, n_heads: 2,
/// #     d_ff: 12, max_seq: 8, norm_eps: 1e-5, rope_theta: 10000.0 };
/// let a = transformer_lab::init_params(&cfg, 0)?;
/// assert_eq!(a.layers[1].w_down.dim(), (12, 8));
/// assert_ne!(a.embed, transformer_lab::init_params(&cfg, 1)?.embed);
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub fn init_params(cfg: &Config, seed: u64) -> Result<Params, Error> {
    cfg.validate()?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (v, d, f) = (cfg.vocab, cfg.d_model, cfg.d_ff);
    let resid_std = WEIGHT_STD / (2.0 * cfg.n_layers as f32).sqrt();
    let mut normal = |rows: usize, cols: usize, std: f32| -> Array2<f32> {
        let dist = Normal::new(0.0f32, std).expect("a positive, finite standard deviation");
        Array2::random_using((rows, cols), dist, &mut rng)
    };
    let embed = normal(v, d, EMBED_STD);
    let layers = (0..cfg.n_layers)
        .map(|_| LayerParams {
            attn_norm: Array1::ones(d),
            wq: normal(d, d, WEIGHT_STD),
            wk: normal(d, d, WEIGHT_STD),
            wv: normal(d, d, WEIGHT_STD),
            wo: normal(d, d, resid_std),
            mlp_norm: Array1::ones(d),
            w_gate: normal(d, f, WEIGHT_STD),
            w_up: normal(d, f, WEIGHT_STD),
            w_down: normal(f, d, resid_std),
        })
        .collect();
    let lm_head = normal(d, v, WEIGHT_STD);
    Ok(Params {
        embed,
        layers,
        final_norm: Array1::ones(d),
        lm_head,
    })
}

impl Params {
    /// Checks that these weights can run a model of shape `cfg`: the embedding, head and
    /// norms match, there are at least `cfg.n_layers` blocks (a model may use only the
    /// first few), and every block used has the right shapes.
    pub fn check_against(&self, cfg: &Config) -> Result<(), Error> {
        cfg.validate()?;
        let (v, d, f) = (cfg.vocab, cfg.d_model, cfg.d_ff);
        let want = |name: String, got: (usize, usize), want: (usize, usize)| {
            if got == want {
                Ok(())
            } else {
                Err(Error::Shape(format!(
                    "{name} is {got:?}, the config needs {want:?}"
                )))
            }
        };
        want("embed".into(), self.embed.dim(), (v, d))?;
        want("lm_head".into(), self.lm_head.dim(), (d, v))?;
        want("final_norm".into(), (self.final_norm.len(), 1), (d, 1))?;
        if self.layers.len() < cfg.n_layers {
            return Err(Error::Shape(format!(
                "the config uses {} layers but the parameters have only {}",
                cfg.n_layers,
                self.layers.len()
            )));
        }
        for (i, l) in self.layers[..cfg.n_layers].iter().enumerate() {
            want(
                format!("layers[{i}].attn_norm"),
                (l.attn_norm.len(), 1),
                (d, 1),
            )?;
            want(
                format!("layers[{i}].mlp_norm"),
                (l.mlp_norm.len(), 1),
                (d, 1),
            )?;
            for (name, m) in l.matrices() {
                let shape = match name {
                    "w_gate" | "w_up" => (d, f),
                    "w_down" => (f, d),
                    _ => (d, d),
                };
                want(format!("layers[{i}].{name}"), m.dim(), shape)?;
            }
        }
        Ok(())
    }
}
