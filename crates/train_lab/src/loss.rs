//! Cross-entropy, forward and backward together: the loss of each position and the
//! gradient of the logits, `softmax(logits) − target`.

use ndarray::{Array2, ArrayView2};

use crate::weights::Real;

/// What each position should predict.
#[derive(Debug, Clone, Copy)]
pub enum Targets<'a> {
    /// The next token at each position, `[N]` (pre-training: the corpus itself).
    Tokens(&'a [u32]),
    /// A teacher's distribution at each position, `[N, vocab]`, each row summing to 1
    /// (distillation: the target model's probabilities).
    Probs(ArrayView2<'a, f32>),
}

impl Targets<'_> {
    /// Positions.
    pub fn len(&self) -> usize {
        match self {
            Targets::Tokens(t) => t.len(),
            Targets::Probs(p) => p.nrows(),
        }
    }

    /// Whether there are no positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Cross-entropy of each row of `logits [N, vocab]` against `targets`, in nats:
/// `log Σ_v e^(l_v) − l_y` for a token y, `log Σ_v e^(l_v) − Σ_v p_v l_v` for a
/// distribution p. Returns the sum over rows and the gradient of `scale` times that sum
/// with respect to the logits, `scale · (softmax(l) − target)`.
pub fn cross_entropy<T: Real>(
    logits: &Array2<T>,
    targets: Targets<'_>,
    scale: T,
) -> (f64, Array2<T>) {
    let mut d = logits.clone();
    let mut total = 0.0f64;
    for (n, mut row) in d.outer_iter_mut().enumerate() {
        let max = row.fold(T::neg_infinity(), |m, &v| m.max(v));
        let mut sum = T::zero();
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            sum += *v;
        }
        let lse = max + sum.ln();
        for v in row.iter_mut() {
            *v = *v / sum * scale; // scale · softmax
        }
        match targets {
            Targets::Tokens(tokens) => {
                let y = tokens[n] as usize;
                total += (lse - logits[[n, y]]).f64();
                row[y] -= scale;
            }
            Targets::Probs(p) => {
                let mut expected = T::zero(); // Σ_v p_v l_v
                for (v, (&pv, dv)) in p.row(n).iter().zip(row.iter_mut()).enumerate() {
                    let pv = T::of(f64::from(pv));
                    expected += pv * logits[[n, v]];
                    *dv -= pv * scale;
                }
                total += (lse - expected).f64();
            }
        }
    }
    (total, d)
}
