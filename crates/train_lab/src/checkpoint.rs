//! Trained weights as a safetensors file: f32 tensors named as the fields of
//! [`transformer_lab::Params`] (`embed`, `layers.{i}.wq`, …, `lm_head`, `[in, out]`
//! layout, as `transformer_lab`'s `export_weights` example writes them), the model's
//! shape and how it was trained in the header's string metadata.

use std::collections::HashMap;
use std::path::Path;

use safetensors::SafeTensors;
use safetensors::tensor::{Dtype, TensorView};
use transformer_lab::{Config, Params};

use crate::Error;
use crate::eagle::Eagle;
use crate::medusa::Heads;
use crate::weights::{Tensors, Weights};

fn file_err(path: &Path) -> impl Fn(String) -> Error + '_ {
    move |e| Error::File(format!("{}: {e}", path.display()))
}

/// The shape's fields as metadata.
fn config_fields(cfg: &Config) -> [(&'static str, String); 8] {
    [
        ("vocab", cfg.vocab.to_string()),
        ("d_model", cfg.d_model.to_string()),
        ("n_layers", cfg.n_layers.to_string()),
        ("n_heads", cfg.n_heads.to_string()),
        ("d_ff", cfg.d_ff.to_string()),
        ("max_seq", cfg.max_seq.to_string()),
        ("norm_eps", cfg.norm_eps.to_string()),
        ("rope_theta", cfg.rope_theta.to_string()),
    ]
}

/// Writes `w` (a model of shape `cfg`) to `path` with `meta` and the shape as metadata.
///
/// Errors: shapes that are not `cfg`'s, a file that cannot be written.
pub fn save(
    path: &Path,
    w: &Weights<f32>,
    cfg: &Config,
    meta: &[(String, String)],
) -> Result<(), Error> {
    let p = w.to_params();
    p.check_against(cfg)?;
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    let mut w = w.clone();
    let shapes = shapes(&p);
    for ((name, x), shape) in w.tensors_mut().into_iter().zip(shapes) {
        tensors.push((
            name,
            shape,
            x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ));
    }
    let mut metadata: HashMap<String, String> = config_fields(cfg)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    metadata.extend(meta.iter().cloned());
    write(path, &tensors, metadata)
}

/// Writes f32 tensors `(name, shape, little-endian bytes)` and `metadata` to `path`.
fn write(
    path: &Path,
    tensors: &[(String, Vec<usize>, Vec<u8>)],
    metadata: HashMap<String, String>,
) -> Result<(), Error> {
    let views = tensors
        .iter()
        .map(|(n, s, b)| Ok((n.as_str(), TensorView::new(Dtype::F32, s.clone(), b)?)))
        .collect::<Result<Vec<_>, safetensors::SafeTensorError>>()
        .map_err(|e| file_err(path)(e.to_string()))?;
    let bytes =
        safetensors::serialize(views, Some(metadata)).map_err(|e| file_err(path)(e.to_string()))?;
    std::fs::write(path, bytes).map_err(|e| file_err(path)(e.to_string()))
}

/// Writes Medusa's heads to `path`: tensors named as [`Heads`]'s `tensors_mut` names them
/// (`heads.0.w` `[d, d]`, `heads.0.bias` `[d]`, `heads.0.lm_head` `[d, vocab]`, …), the
/// heads' count, width and vocabulary in the metadata beside `meta`.
///
/// Errors: no head, heads of different shapes, a file that cannot be written.
pub fn save_heads(path: &Path, heads: &Heads<f32>, meta: &[(String, String)]) -> Result<(), Error> {
    let (d, vocab) = heads.dims();
    let ok = !heads.heads.is_empty()
        && heads
            .heads
            .iter()
            .all(|h| h.w.dim() == (d, d) && h.bias.len() == d && h.lm_head.dim() == (d, vocab));
    if !ok {
        return Err(Error::Shape(
            "Medusa heads of one width and vocabulary".into(),
        ));
    }
    let shapes = [vec![d, d], vec![d], vec![d, vocab]];
    let mut heads = heads.clone();
    let tensors: Vec<(String, Vec<usize>, Vec<u8>)> = heads
        .tensors_mut()
        .into_iter()
        .zip(shapes.iter().cycle())
        .map(|((name, x), shape)| {
            let bytes = x.iter().flat_map(|v| v.to_le_bytes()).collect();
            (name, shape.clone(), bytes)
        })
        .collect();
    let mut metadata: HashMap<String, String> = [
        ("medusa_heads", heads.heads.len()),
        ("d_model", d),
        ("vocab", vocab),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    metadata.extend(meta.iter().cloned());
    write(path, &tensors, metadata)
}

/// Medusa's heads read back, with the file's metadata.
#[derive(Debug, Clone)]
pub struct HeadsCheckpoint {
    /// The heads.
    pub heads: Heads<f32>,
    /// Every metadata entry.
    pub meta: HashMap<String, String>,
}

/// Reads Medusa's heads from the bytes of a file [`save_heads`] wrote.
///
/// Errors: bytes that are not safetensors, lack a count or a tensor, or hold a tensor of
/// another shape.
pub fn heads_from_bytes(bytes: &[u8]) -> Result<HeadsCheckpoint, Error> {
    let err = Error::File;
    let (_, header) = SafeTensors::read_metadata(bytes).map_err(|e| err(e.to_string()))?;
    let meta: HashMap<String, String> = header.metadata().clone().unwrap_or_default();
    let num = |k: &str| -> Result<usize, Error> {
        meta.get(k)
            .ok_or_else(|| err(format!("no {k:?} in the metadata")))?
            .parse()
            .map_err(|_| err(format!("{k} is not a count")))
    };
    let (k, d, vocab) = (num("medusa_heads")?, num("d_model")?, num("vocab")?);
    // The tensors' bytes, checked against the file's before anything is allocated.
    let per_head = d
        .checked_mul(d)
        .and_then(|dd| d.checked_mul(vocab).and_then(|dv| dd.checked_add(dv)))
        .and_then(|n| n.checked_add(d));
    let need = per_head
        .and_then(|n| n.checked_mul(k))
        .and_then(|n| n.checked_mul(4));
    if k == 0 || d == 0 || vocab == 0 || need.is_none_or(|n| n > bytes.len()) {
        return Err(err(format!(
            "{k} heads of width {d} and vocabulary {vocab} do not fit in {} bytes: not a \
             Medusa file this crate writes",
            bytes.len()
        )));
    }
    let st = SafeTensors::deserialize(bytes).map_err(|e| err(e.to_string()))?;
    let mut heads: Heads<f32> = Heads::new(k, &ndarray::Array2::zeros((d, vocab)));
    let shapes = [vec![d, d], vec![d], vec![d, vocab]];
    for ((name, x), shape) in heads.tensors_mut().into_iter().zip(shapes.iter().cycle()) {
        let t = st.tensor(&name).map_err(|e| err(format!("{name}: {e}")))?;
        if t.dtype() != Dtype::F32 || t.shape() != shape.as_slice() {
            return Err(err(format!(
                "{name} is {:?} {:?}, not F32 {shape:?}",
                t.dtype(),
                t.shape()
            )));
        }
        for (v, b) in x.iter_mut().zip(t.data().chunks_exact(4)) {
            *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
    }
    Ok(HeadsCheckpoint { heads, meta })
}

/// Each tensor's shape, in [`Weights::tensors_mut`]'s order.
fn shapes(p: &Params) -> Vec<Vec<usize>> {
    let mut out = vec![p.embed.shape().to_vec()];
    for l in &p.layers {
        out.push(l.attn_norm.shape().to_vec());
        for m in [&l.wq, &l.wk, &l.wv, &l.wo] {
            out.push(m.shape().to_vec());
        }
        out.push(l.mlp_norm.shape().to_vec());
        for m in [&l.w_gate, &l.w_up, &l.w_down] {
            out.push(m.shape().to_vec());
        }
    }
    out.push(p.final_norm.shape().to_vec());
    out.push(p.lm_head.shape().to_vec());
    out
}

/// The model's shape from a file's metadata.
fn config_from(meta: &HashMap<String, String>) -> Result<Config, Error> {
    let err = Error::File;
    let field = |k: &str| -> Result<&String, Error> {
        meta.get(k)
            .ok_or_else(|| err(format!("no {k:?} in the metadata")))
    };
    let num = |k: &str| -> Result<usize, Error> {
        field(k)?
            .parse()
            .map_err(|_| err(format!("{k} is not a count")))
    };
    let real = |k: &str| -> Result<f32, Error> {
        field(k)?
            .parse()
            .map_err(|_| err(format!("{k} is not a number")))
    };
    Ok(Config {
        vocab: num("vocab")?,
        d_model: num("d_model")?,
        n_layers: num("n_layers")?,
        n_heads: num("n_heads")?,
        d_ff: num("d_ff")?,
        max_seq: num("max_seq")?,
        norm_eps: real("norm_eps")?,
        rope_theta: real("rope_theta")?,
    })
}

/// A checkpoint read back: the model's shape, its weights and the metadata.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// The shape, from the metadata.
    pub cfg: Config,
    /// The weights.
    pub weights: Weights<f32>,
    /// Every metadata entry, the shape's included.
    pub meta: HashMap<String, String>,
}

/// Reads a checkpoint [`save`] wrote.
///
/// Errors: a file that cannot be read, is not safetensors, lacks a shape field or a
/// tensor, or holds a tensor of another shape.
pub fn load(path: &Path) -> Result<Checkpoint, Error> {
    let err = file_err(path);
    let bytes = std::fs::read(path).map_err(|e| err(e.to_string()))?;
    from_bytes(&bytes).map_err(|e| err(e.to_string()))
}

/// Reads a checkpoint from the bytes of a file [`save`] wrote (the shipped models are
/// compiled in as such bytes: [`crate::shipped`]).
///
/// Errors: bytes that are not safetensors, lack a shape field or a tensor, or hold a
/// tensor of another shape.
pub fn from_bytes(bytes: &[u8]) -> Result<Checkpoint, Error> {
    let err = Error::File;
    let (_, header) = SafeTensors::read_metadata(bytes).map_err(|e| err(e.to_string()))?;
    let meta: HashMap<String, String> = header.metadata().clone().unwrap_or_default();
    let cfg = config_from(&meta)?;
    let st = SafeTensors::deserialize(bytes).map_err(|e| err(e.to_string()))?;
    let mut weights: Weights<f32> = Weights::from_params(&transformer_lab::init_params(&cfg, 0)?);
    let want = shapes(&weights.to_params());
    for ((name, x), shape) in weights.tensors_mut().into_iter().zip(want) {
        let t = st.tensor(&name).map_err(|e| err(format!("{name}: {e}")))?;
        if t.dtype() != Dtype::F32 || t.shape() != shape.as_slice() {
            return Err(err(format!(
                "{name} is {:?} {:?}, not F32 {shape:?}",
                t.dtype(),
                t.shape()
            )));
        }
        for (v, b) in x.iter_mut().zip(t.data().chunks_exact(4)) {
            *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
    }
    Ok(Checkpoint { cfg, weights, meta })
}

/// Each tensor's shape of an EAGLE head for a target of shape `cfg`, in `tensors_mut`'s
/// order.
fn eagle_shapes(cfg: &Config) -> Vec<Vec<usize>> {
    let (d, ff) = (cfg.d_model, cfg.d_ff);
    let mut out = vec![vec![2 * d, d], vec![d], vec![d]];
    out.extend([vec![d, d], vec![d, d], vec![d, d], vec![d, d]]);
    out.extend([vec![d], vec![d, ff], vec![d, ff], vec![ff, d], vec![d]]);
    out
}

/// Writes EAGLE's head for a target of shape `cfg` to `path`: tensors named as its
/// `tensors_mut` names them (`fc`, `fc_bias`, `layer.wq`, …, `final_norm`), the target's
/// shape and `eagle = 1` in the metadata beside `meta`.
///
/// Errors: a head of other shapes than `cfg`'s, a file that cannot be written.
pub fn save_eagle(
    path: &Path,
    e: &Eagle<f32>,
    cfg: &Config,
    meta: &[(String, String)],
) -> Result<(), Error> {
    let mut e = e.clone();
    let shapes = eagle_shapes(cfg);
    let tensors: Vec<(String, Vec<usize>, Vec<u8>)> = e
        .tensors_mut()
        .into_iter()
        .zip(shapes)
        .map(|((name, x), shape)| {
            let bytes = x.iter().flat_map(|v| v.to_le_bytes()).collect();
            (name, shape, bytes)
        })
        .collect();
    let sized = |(_, shape, bytes): &(String, Vec<usize>, Vec<u8>)| {
        shape.iter().product::<usize>() * 4 == bytes.len()
    };
    if !tensors.iter().all(sized) {
        return Err(Error::Shape(format!(
            "an EAGLE head of other shapes than a target of {cfg:?}"
        )));
    }
    let mut metadata: HashMap<String, String> = config_fields(cfg)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    metadata.insert("eagle".into(), "1".into());
    metadata.extend(meta.iter().cloned());
    write(path, &tensors, metadata)
}

/// EAGLE's head read back: the target's shape it reads, the head, the metadata.
#[derive(Debug, Clone)]
pub struct EagleCheckpoint {
    /// The target's shape.
    pub cfg: Config,
    /// The head.
    pub eagle: Eagle<f32>,
    /// Every metadata entry.
    pub meta: HashMap<String, String>,
}

/// Reads EAGLE's head from the bytes of a file [`save_eagle`] wrote.
///
/// Errors: bytes that are not safetensors, lack a shape field or a tensor, or hold a
/// tensor of another shape.
pub fn eagle_from_bytes(bytes: &[u8]) -> Result<EagleCheckpoint, Error> {
    let err = Error::File;
    // The shape's fields as a model's file has them, through the same reader.
    let (_, header) = SafeTensors::read_metadata(bytes).map_err(|e| err(e.to_string()))?;
    let meta: HashMap<String, String> = header.metadata().clone().unwrap_or_default();
    if meta.get("eagle").map(String::as_str) != Some("1") {
        return Err(err(
            "not an EAGLE head (no eagle = 1 in the metadata)".into()
        ));
    }
    let cfg = config_from(&meta)?;
    let floats = eagle_shapes(&cfg).iter().try_fold(0usize, |sum, shape| {
        let n = shape.iter().try_fold(1usize, |p, &x| p.checked_mul(x))?;
        sum.checked_add(n)
    });
    if floats
        .and_then(|n| n.checked_mul(4))
        .is_none_or(|n| n > bytes.len())
    {
        return Err(err(format!(
            "an EAGLE head for a target of {cfg:?} does not fit in {} bytes",
            bytes.len()
        )));
    }
    let st = SafeTensors::deserialize(bytes).map_err(|e| err(e.to_string()))?;
    let mut eagle: Eagle<f32> = Eagle::new(&cfg, 0)?;
    for ((name, x), shape) in eagle.tensors_mut().into_iter().zip(eagle_shapes(&cfg)) {
        let t = st.tensor(&name).map_err(|e| err(format!("{name}: {e}")))?;
        if t.dtype() != Dtype::F32 || t.shape() != shape.as_slice() {
            return Err(err(format!(
                "{name} is {:?} {:?}, not F32 {shape:?}",
                t.dtype(),
                t.shape()
            )));
        }
        for (v, b) in x.iter_mut().zip(t.data().chunks_exact(4)) {
            *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
    }
    Ok(EagleCheckpoint { cfg, eagle, meta })
}
