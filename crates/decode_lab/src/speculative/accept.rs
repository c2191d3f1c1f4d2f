//! How a token is chosen and a verified tree accepted: greedily, or by speculative
//! sampling ([`accept_among`] at each node of the walk; on a chain, Leviathan et al.'s);
//! and the draft's top-k children of a node.

use ndarray::{Array1, ArrayView1, ArrayView2};
use rand::Rng;
use transformer_lab::{argmax, draw_weighted, softmax_probs};

use super::lane::Node;
use crate::Error;

/// How the next token is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampling {
    /// The argmax (ties to the lowest id); trees or chains.
    Greedy,
    /// Drawn from `softmax(logits / T)`, T > 0: chains and trees (a tree's children drawn
    /// from the draft, verified by [`accept_among`]). `Temperature(0.0)` is
    /// [`Greedy`](Self::Greedy), as temperature 0 is everywhere in `transformer_lab`
    /// (`rng` unused).
    Temperature(f64),
}

impl Sampling {
    /// The temperature: 0 for greedy.
    ///
    /// Errors: a negative or non-finite temperature.
    pub fn temperature(&self) -> Result<f64, Error> {
        match *self {
            Sampling::Greedy => Ok(0.0),
            Sampling::Temperature(t) if !t.is_finite() || t < 0.0 => {
                Err(Error::Model(transformer_lab::Error::Temperature(t)))
            }
            Sampling::Temperature(t) => Ok(t),
        }
    }
}

/// The draft's `k` best tokens by logit, best first, ties to the lowest id.
pub(crate) fn top_k(logits: ArrayView1<f32>, k: usize) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..logits.len() as u32).collect();
    // A strict total order (no two ids compare equal), so the k best and their order
    // are unique: select them, then sort only those.
    let best_first = |a: &u32, b: &u32| {
        logits[*b as usize]
            .total_cmp(&logits[*a as usize])
            .then(a.cmp(b))
    };
    let k = k.min(ids.len());
    if k == 0 {
        return Vec::new();
    }
    if k < ids.len() {
        ids.select_nth_unstable_by(k - 1, best_first);
    }
    ids.truncate(k);
    ids.sort_by(best_first);
    ids
}

/// Greedy acceptance: the longest path from the root on which every node is the
/// target's argmax after its parent, and the target's argmax after the path's last node
/// (the bonus token). `logits [nodes, vocab]` are the target's, one row per node.
pub(crate) fn greedy_path(
    nodes: &[Node],
    logits: ArrayView2<f32>,
) -> Result<(Vec<usize>, u32), Error> {
    let mut path = vec![0usize];
    loop {
        let cur = *path.last().expect("the root");
        let want = argmax(logits.row(cur))? as u32;
        match (cur + 1..nodes.len())
            .find(|&i| nodes[i].parent == Some(cur) && nodes[i].token == want)
        {
            Some(child) => path.push(child),
            None => return Ok((path, want)),
        }
    }
}

/// `softmax(logits / t)` in f64, normalised. Errors on logits with no finite maximum.
pub(crate) fn probabilities(logits: ArrayView1<f32>, t: f64) -> Result<Array1<f64>, Error> {
    Ok(Array1::from(softmax_probs(logits, t)?))
}

/// Draws an index with probability proportional to `p` (one uniform draw from `rng`).
pub(crate) fn draw<R: Rng + ?Sized>(p: &Array1<f64>, rng: &mut R) -> Result<u32, Error> {
    let index = match p.as_slice() {
        Some(weights) => draw_weighted(weights, rng)?,
        // A strided array (a slice of another): its elements in order.
        None => draw_weighted(&p.to_vec(), rng)?,
    };
    Ok(index as u32)
}

/// What [`accept_among`] chose at one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The child at this index of the candidates was accepted: the walk goes on there.
    Child(usize),
    /// Every candidate was rejected (or there was none): the round ends with this token.
    Token(u32),
}

/// One node of multi-step speculative sampling (SpecInfer, Miao et al. 2024, Algorithm 2
/// and Theorem 4.2): `p` is the target's distribution after the node, `q` the draft's,
/// and `children` the candidate tokens, each drawn independently from `q`. In order, a
/// candidate x is accepted with probability min(1, p(x) / q(x)); on its rejection p
/// becomes normalise(max(0, p − q)) for the next one. When every candidate is rejected the
/// round's token is drawn from the last p (the residual); with no candidate, from p.
/// Whatever the number of candidates, the token this node emits (a candidate accepted, or
/// the drawn one) is distributed exactly as p: the first candidate contributes min(p, q),
/// the rest, by induction on the residual, max(0, p − q). One uniform draw per candidate
/// tried, one more for a drawn token, from `rng`, in that order.
///
/// Errors: `p` and `q` of different lengths or empty, a probability that is negative or
/// not finite, a candidate past the vocabulary or one `q` gives no chance (it cannot have
/// been drawn from it).
///
/// ```
/// use decode_lab::accept_among;
/// use ndarray::array;
/// let mut rng = rand::rngs::StdRng::seed_from_u64(0);
/// # use rand::SeedableRng;
/// let (p, q) = (array![0.5, 0.5], array![0.5, 0.5]);
/// assert!(accept_among(&p, &q, &[7], &mut rng).is_err()); // token 7 of a 2-token vocabulary
/// assert!(accept_among(&p, &array![1.0], &[0], &mut rng).is_err());
/// assert!(accept_among(&array![f64::NAN, 1.0], &q, &[0], &mut rng).is_err());
/// // p = q: the candidate is always accepted.
/// assert_eq!(accept_among(&p, &q, &[1], &mut rng)?, decode_lab::Choice::Child(0));
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn accept_among<R: Rng + ?Sized>(
    p: &Array1<f64>,
    q: &Array1<f64>,
    children: &[u32],
    rng: &mut R,
) -> Result<Choice, Error> {
    check_node(p, q, children)?;
    let mut p_now = p.clone();
    // What a final draw reads: the residual as computed (draw_weighted normalises it).
    let mut weights = p.clone();
    for (i, &x) in children.iter().enumerate() {
        let x = x as usize;
        if rng.random::<f64>() < (p_now[x] / q[x]).min(1.0) {
            return Ok(Choice::Child(i));
        }
        let residual = (&p_now - q).mapv(|v| v.max(0.0));
        let total = residual.sum();
        // p = q exactly leaves nothing to reject with; p itself is then the answer.
        if total > 0.0 {
            p_now = &residual / total;
            weights = residual;
        } else {
            weights = p_now.clone();
        }
    }
    Ok(Choice::Token(draw(&weights, rng)?))
}

/// The arguments of [`accept_among`] are a node's: two distributions over one vocabulary
/// and candidates the draft's `q` can have drawn.
fn check_node(p: &Array1<f64>, q: &Array1<f64>, children: &[u32]) -> Result<(), Error> {
    if p.is_empty() || p.len() != q.len() {
        return Err(Error::Argument(format!(
            "p and q must be distributions over one vocabulary, got {} and {} entries",
            p.len(),
            q.len()
        )));
    }
    let probability = |v: &f64| v.is_finite() && *v >= 0.0;
    if !p.iter().all(probability) || !q.iter().all(probability) {
        return Err(Error::Argument(
            "p and q must hold finite probabilities of at least 0".into(),
        ));
    }
    for &x in children {
        match q.get(x as usize) {
            Some(&chance) if chance > 0.0 => {}
            Some(_) => {
                return Err(Error::Argument(format!(
                    "candidate {x} has no chance under q, so it cannot have been drawn from it"
                )));
            }
            None => {
                return Err(Error::Argument(format!(
                    "candidate {x} is past the vocabulary of {} tokens",
                    q.len()
                )));
            }
        }
    }
    Ok(())
}

/// Multi-step speculative sampling over a whole tree (`logits [nodes, vocab]` the
/// target's, `q[i]` the draft's distribution at node i, from which node i's children were
/// drawn): from the root, [`accept_among`] the node's children at temperature `t`, down
/// the accepted child, until a node emits a drawn token. On a chain this is Leviathan et
/// al.'s speculative sampling. Returns the accepted path (node indices from the root) and
/// that token.
pub(crate) fn sampled_path<R: Rng + ?Sized>(
    nodes: &[Node],
    q: &[Option<Array1<f64>>],
    logits: ArrayView2<f32>,
    t: f64,
    rng: &mut R,
) -> Result<(Vec<usize>, u32), Error> {
    let mut path = vec![0usize];
    loop {
        let cur = *path.last().expect("the root");
        let p = probabilities(logits.row(cur), t)?;
        let children: Vec<usize> = (cur + 1..nodes.len())
            .filter(|&i| nodes[i].parent == Some(cur))
            .collect();
        let tokens: Vec<u32> = children.iter().map(|&i| nodes[i].token).collect();
        let choice = match q.get(cur).and_then(Option::as_ref) {
            Some(qc) if !children.is_empty() => accept_among(&p, qc, &tokens, rng)?,
            _ => Choice::Token(draw(&p, rng)?),
        };
        match choice {
            Choice::Child(i) => path.push(children[i]),
            Choice::Token(token) => return Ok((path, token)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn top_k_is_best_first_with_ties_to_the_lowest_id() {
        assert_eq!(
            top_k(array![0.5f32, 2.0, 2.0, -1.0, 3.0].view(), 3),
            vec![4, 1, 2]
        );
        assert_eq!(top_k(array![1.0f32, 1.0].view(), 5), vec![0, 1]);
        assert_eq!(top_k(array![1.0f32, 1.0].view(), 0), Vec::<u32>::new());
        // Against sorting every id, on logits with many ties, for every k.
        let logits = ndarray::Array1::from_shape_fn(40, |i| ((i * 7) % 5) as f32 - 2.0);
        let mut all: Vec<u32> = (0..40).collect();
        all.sort_by(|&a, &b| {
            logits[b as usize]
                .total_cmp(&logits[a as usize])
                .then(a.cmp(&b))
        });
        for k in 0..=41 {
            assert_eq!(top_k(logits.view(), k), all[..k.min(40)], "k = {k}");
        }
    }

    #[test]
    fn probabilities_are_a_tempered_softmax() {
        let p = probabilities(array![0.0f32, 2f32.ln()].view(), 1.0).unwrap();
        // ln 2 is rounded to f32, so the ratio is 2 to within 1e-7.
        assert!((p[0] - 1.0 / 3.0).abs() < 1e-7 && (p[1] - 2.0 / 3.0).abs() < 1e-7);
        let flat = probabilities(array![0.0f32, 2f32.ln()].view(), 1e9).unwrap();
        assert!((flat[0] - 0.5).abs() < 1e-6);
    }
}
