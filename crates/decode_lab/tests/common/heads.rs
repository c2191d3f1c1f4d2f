//! Draft heads for the tests: Medusa's and EAGLE's, seeded, and the plain reference pieces
//! their checks are built from.

use decode_lab::speculative::{EagleHead, MedusaHead, MedusaHeads};
use ndarray::{Array1, Array2, ArrayView1, Axis, concatenate};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::{Config, Params, TransformerLM, config_like, init_params, reference};

/// `k` heads for a model of shape `cfg`, seeded: each block's matrix and bias drawn
/// uniformly in ±`scale` / √d, each LM head the target's own plus noise (as Medusa starts
/// its heads from the target's LM head).
pub fn medusa_heads(cfg: &Config, target: &Params, k: usize, seed: u64, scale: f32) -> MedusaHeads {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let d = cfg.d_model;
    let mut uniform =
        |n: usize, r: f32| -> Vec<f32> { (0..n).map(|_| rng.random_range(-r..=r)).collect() };
    let r = scale / (d as f32).sqrt();
    let heads = (0..k)
        .map(|_| MedusaHead {
            w: Array2::from_shape_vec((d, d), uniform(d * d, r)).unwrap(),
            bias: Array1::from(uniform(d, r)),
            lm_head: &target.lm_head
                + &Array2::from_shape_vec(target.lm_head.raw_dim(), uniform(d * cfg.vocab, r))
                    .unwrap(),
        })
        .collect();
    MedusaHeads::new(heads).unwrap()
}

/// The last normed hidden state of every position of `tokens`, from the reference forward.
pub fn hidden_states(p: &Params, cfg: &Config, tokens: &[u32]) -> Array2<f32> {
    let mut x = reference::embed(&p.embed, tokens).unwrap();
    for layer in &p.layers {
        x = reference::block(layer, cfg, &x);
    }
    reference::rms_norm(&x, p.final_norm.view(), cfg.norm_eps)
}

/// The `n` best tokens of `logits`, ties to the lowest id.
pub fn top(logits: ArrayView1<f32>, n: usize) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..logits.len() as u32).collect();
    ids.sort_by(|&a, &b| {
        logits[b as usize]
            .total_cmp(&logits[a as usize])
            .then(a.cmp(&b))
    });
    ids.truncate(n);
    ids
}

/// A head's weights for a target `p` of shape `cfg`: its fusion layer uniform in
/// ±`scale`/√(2d), one block from `init_params` with `seed`, the target's embedding and LM
/// head, a final norm's gain of 1.
pub struct EagleWeights {
    pub fc: Array2<f32>,
    pub bias: Array1<f32>,
    pub params: Params,
}

pub fn eagle_weights(cfg: &Config, p: &Params, seed: u64, scale: f32) -> EagleWeights {
    let d = cfg.d_model;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let r = scale / ((2 * d) as f32).sqrt();
    let fc = Array2::from_shape_fn((2 * d, d), |_| rng.random_range(-r..=r));
    let bias = Array1::from_shape_fn(d, |_| rng.random_range(-r..=r));
    let mut params = init_params(&config_like(cfg, 1), seed).unwrap();
    params.embed = p.embed.clone();
    params.lm_head = p.lm_head.clone();
    for l in &mut params.layers {
        l.wo *= 10.0;
        l.w_down *= 10.0;
    }
    EagleWeights { fc, bias, params }
}

/// [`eagle_weights`] with attention that matters: peaked scores and large values, so what
/// a node sees and where it sits change its output.
pub fn attending_eagle_weights(cfg: &Config, p: &Params, seed: u64) -> EagleWeights {
    let mut w = eagle_weights(cfg, p, seed, 1.0);
    for l in &mut w.params.layers {
        l.wq *= 8.0;
        l.wk *= 8.0;
        l.wv *= 4.0;
    }
    w
}

impl EagleWeights {
    /// The fused input of the pair (`feature`, `token`) by the reference: `[e(token) |
    /// feature] · W + b`, `e` the target's embedding (the head's own).
    pub fn fuse(&self, feature: ArrayView1<f32>, token: u32) -> Array1<f32> {
        let e = reference::embed(&self.params.embed, &[token]).unwrap();
        let a = concatenate(Axis(1), &[e.view(), feature.insert_axis(Axis(0))]).unwrap();
        (a.dot(&self.fc) + &self.bias).row(0).to_owned()
    }

    /// The head of shape `cfg`'s one block run from scratch over the fused pairs `inputs`:
    /// the output feature of the last.
    pub fn last_feature(&self, cfg: &Config, inputs: &[Array1<f32>]) -> Array1<f32> {
        let views: Vec<ArrayView1<f32>> = inputs.iter().map(|x| x.view()).collect();
        let x = ndarray::stack(Axis(0), &views).unwrap();
        let g = hidden(&self.params, &config_like(cfg, 1), x);
        g.row(g.nrows() - 1).to_owned()
    }

    /// The fused true pairs (f_j, x_{j+1}) for j < `root` of `tokens` on the target `p`:
    /// what the head has read when a round's root sits at `root`.
    pub fn committed_pairs(
        &self,
        p: &Params,
        cfg: &Config,
        tokens: &[u32],
        root: usize,
    ) -> Vec<Array1<f32>> {
        let f = hidden(p, cfg, reference::embed(&p.embed, &tokens[..root]).unwrap());
        (0..root)
            .map(|j| self.fuse(f.row(j), tokens[j + 1]))
            .collect()
    }
}

pub fn eagle_head<'p>(cfg: &Config, w: &'p EagleWeights) -> EagleHead<'p> {
    let layer = TransformerLM::new(&w.params, config_like(cfg, 1), "eagle").unwrap();
    EagleHead::new(w.fc.clone(), w.bias.clone(), layer).unwrap()
}

/// The last normed hidden state of every position of `x` (rows: embeddings or fused
/// inputs) through `layers` and the final norm of `p`.
pub fn hidden(p: &Params, cfg: &Config, x: Array2<f32>) -> Array2<f32> {
    let mut x = x;
    for layer in &p.layers {
        x = reference::block(layer, cfg, &x);
    }
    reference::rms_norm(&x, p.final_norm.view(), cfg.norm_eps)
}
