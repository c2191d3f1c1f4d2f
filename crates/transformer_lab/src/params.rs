//! The weights, and their seeded initialisation.

use ndarray::{Array1, Array2};
use ndarray_rand::RandomExt;
use py_port::random::{StandardNormal, default_rng};

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
pub const EMBED_STD: f64 = 0.03;
/// Standard deviation of q, k, v, gate, up and the LM head.
pub const WEIGHT_STD: f64 = 0.02;

/// Random weights for `cfg`, reproducible from `seed`, drawn as the Python module draws
/// them: from NumPy's `default_rng(seed)` ([`py_port::random::default_rng`], bit for bit),
/// each matrix `rng.standard_normal(shape) * std` in float64, then cast to float32.
///
/// The order of the draws is the Python's: the embedding `[vocab, d_model]` (std 0.03), the
/// LM head `[d_model, vocab]` (0.02), then block by block wq, wk, wv (0.02), wo
/// (0.02/√(2·n_layers)), w_gate, w_up (0.02), w_down (0.02/√(2·n_layers)). The residual
/// branches' outputs wo and w_down are scaled down as in GPT-2, so the residual stream does
/// not grow with depth; norm gains are 1. Errors if `cfg` is invalid.
///
/// ```
/// # let cfg = transformer_lab::Config { vocab: 16, d_model: 8, n_layers: 2, n_heads: 2,
/// #     d_ff: 12, max_seq: 8, norm_eps: 1e-5, rope_theta: 10000.0 };
/// let a = transformer_lab::init_params(&cfg, 0)?;
/// assert_eq!(a.layers[1].w_down.dim(), (12, 8));
/// // NumPy: np.float32(np.random.default_rng(0).standard_normal() * 0.03)
/// assert_eq!(a.embed[[0, 0]], 0.003_771_906_7_f32);
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub fn init_params(cfg: &Config, seed: u64) -> Result<Params, Error> {
    cfg.validate()?;
    let mut rng = default_rng(seed);
    let (v, d, f) = (cfg.vocab, cfg.d_model, cfg.d_ff);
    let resid_std = WEIGHT_STD / (2.0 * cfg.n_layers as f64).sqrt();
    // (rng.standard_normal(shape) * std).astype(np.float32)
    let mut normal = |shape: (usize, usize), std: f64| -> Array2<f32> {
        let z: Array2<f64> = Array2::random_using(shape, StandardNormal, &mut rng);
        z.mapv(|z| (z * std) as f32)
    };
    let embed = normal((v, d), EMBED_STD);
    let lm_head = normal((d, v), WEIGHT_STD);
    let layers = (0..cfg.n_layers)
        .map(|_| LayerParams {
            attn_norm: Array1::ones(d),
            wq: normal((d, d), WEIGHT_STD),
            wk: normal((d, d), WEIGHT_STD),
            wv: normal((d, d), WEIGHT_STD),
            wo: normal((d, d), resid_std),
            mlp_norm: Array1::ones(d),
            w_gate: normal((d, f), WEIGHT_STD),
            w_up: normal((d, f), WEIGHT_STD),
            w_down: normal((f, d), resid_std),
        })
        .collect();
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
