//! Writes the toy model's weights, `init_params(QCFG, seed)`, to a safetensors file, for
//! the independent NumPy implementation in `tools/golden/` to read.
//!
//! ```text
//! cargo run -p transformer_lab --example export_weights -- OUT.safetensors [SEED]
//! ```
//!
//! Tensors are f32, little-endian, named as the fields of `Params`, with the same `[in,
//! out]` layout (`y = x · W`): `embed [vocab, d_model]`, `layers.{i}.attn_norm`,
//! `layers.{i}.wq`, … `layers.{i}.w_down`, `final_norm`, `lm_head [d_model, vocab]`. The
//! header's metadata holds the configuration and the seed.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use ndarray::{ArrayBase, Data, Dimension};
use safetensors::tensor::{Dtype, TensorView};
use transformer_lab::{Config, QCFG, init_params};

fn main() -> ExitCode {
    match run() {
        Ok(path) => {
            // Examples may print: this is the tool's whole output.
            #[allow(clippy::print_stdout)]
            {
                println!("wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("export_weights: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<PathBuf, Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .ok_or("usage: export_weights OUT.safetensors [SEED]")?,
    );
    let seed: u64 = match args.next() {
        Some(s) => s
            .parse()
            .map_err(|_| format!("SEED must be a number, got {s:?}"))?,
        None => 0,
    };
    let params = init_params(&QCFG, seed)?;

    // Every tensor's little-endian bytes, under its name.
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    let mut add = |name: String, a: &dyn AsTensor| tensors.push((name, a.shape(), a.le_bytes()));
    add("embed".into(), &params.embed);
    for (i, layer) in params.layers.iter().enumerate() {
        add(format!("layers.{i}.attn_norm"), &layer.attn_norm);
        add(format!("layers.{i}.mlp_norm"), &layer.mlp_norm);
        for (name, w) in layer.matrices() {
            add(format!("layers.{i}.{name}"), w);
        }
    }
    add("final_norm".into(), &params.final_norm);
    add("lm_head".into(), &params.lm_head);

    let views = tensors
        .iter()
        .map(|(name, shape, bytes)| {
            Ok((
                name.as_str(),
                TensorView::new(Dtype::F32, shape.clone(), bytes)?,
            ))
        })
        .collect::<Result<Vec<_>, safetensors::SafeTensorError>>()?;
    let bytes = safetensors::serialize(views, Some(metadata(&QCFG, seed)))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, bytes)?;
    Ok(path)
}

/// The configuration and the seed, as the header's string metadata.
fn metadata(cfg: &Config, seed: u64) -> HashMap<String, String> {
    let fields = [
        ("vocab", cfg.vocab.to_string()),
        ("d_model", cfg.d_model.to_string()),
        ("n_layers", cfg.n_layers.to_string()),
        ("n_heads", cfg.n_heads.to_string()),
        ("d_ff", cfg.d_ff.to_string()),
        ("max_seq", cfg.max_seq.to_string()),
        ("norm_eps", cfg.norm_eps.to_string()),
        ("rope_theta", cfg.rope_theta.to_string()),
        ("seed", seed.to_string()),
        (
            "init",
            "transformer_lab::init_params(QCFG, seed)".to_string(),
        ),
    ];
    fields
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// A 1-D or 2-D f32 array as a safetensors tensor.
trait AsTensor {
    fn shape(&self) -> Vec<usize>;
    fn le_bytes(&self) -> Vec<u8>;
}

impl<S: Data<Elem = f32>, D: Dimension> AsTensor for ArrayBase<S, D> {
    fn shape(&self) -> Vec<usize> {
        ArrayBase::shape(self).to_vec()
    }

    /// Row-major order (`iter` walks the logical order whatever the memory layout).
    fn le_bytes(&self) -> Vec<u8> {
        self.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
}
