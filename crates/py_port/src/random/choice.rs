//! Choosing, shuffling and permuting: NumPy's `Generator.choice`, `shuffle`, `permutation`.

use super::*;

/// `rng.choice(len(p), p=p)`: one index drawn with probabilities `p`, on any bit generator,
/// by NumPy's algorithm — `cdf = cumsum(p)`, `cdf /= cdf[-1]`, one uniform `next_double`
/// (53 bits of one 64-bit word: what `rand`'s `random::<f64>()` draws too), and
/// `cdf.searchsorted(u, side='right')`. On a [`Generator`] it draws exactly what
/// [`Generator::choice_index`]`(p.len(), 1, true, Some(p))` and NumPy draw; code generic
/// over `rand::Rng` (a sampler) gets NumPy's draws when handed a [`Generator`].
///
/// Errs like NumPy: an empty `p`, an entry that is NaN or negative, or a sum more than
/// `sqrt(eps)` away from 1.
///
/// ```
/// use py_port::random::{choice_p, default_rng};
/// let p = [0.5, 0.25, 0.25];
/// let by_numpy = default_rng(42).choice_index(3, 4, true, Some(&p)).unwrap();
/// let mut rng = default_rng(42);
/// let one_by_one: Vec<usize> = (0..4).map(|_| choice_p(&p, &mut rng).unwrap()).collect();
/// assert_eq!(one_by_one, by_numpy);
/// assert!(choice_p(&[0.5, 0.4], &mut rng).is_err());
/// ```
pub fn choice_p<R: RngCore + ?Sized>(p: &[f64], rng: &mut R) -> Result<usize, Error> {
    if p.is_empty() {
        return Err(Error::invalid(
            "Generator.choice",
            "a cannot be empty unless no samples are taken",
        ));
    }
    check_p(p)?;
    Ok(search_right(&normalised_cdf(p), next_double(rng)))
}

/// NumPy's checks of `choice`'s `p`: no NaN (its Kahan sum is not NaN), no negative entry,
/// a sum within `sqrt(eps)` of 1.
fn check_p(p: &[f64]) -> Result<(), Error> {
    const METHOD: &str = "Generator.choice";
    let p_sum = kahan_sum(p);
    if p_sum.is_nan() {
        return Err(Error::invalid(METHOD, "Probabilities contain NaN"));
    }
    if p.iter().any(|&x| x < 0.0) {
        return Err(Error::invalid(METHOD, "Probabilities are not non-negative"));
    }
    if (p_sum - 1.0).abs() > P_SUM_ATOL {
        return Err(Error::invalid(METHOD, "Probabilities do not sum to 1"));
    }
    Ok(())
}

impl Generator {
    /// `choice(n, size, replace, p)` with an integer population `n`: `size` indices into
    /// `0..n` (NumPy returns them as int64; here `usize`). NumPy's `size=None` (one scalar)
    /// draws exactly what `size=1` draws: take element 0.
    ///
    /// NumPy's algorithms, in its order of draws:
    /// - `replace=True`, no `p`: `integers(0, n, size)`.
    /// - `replace=True`, with `p`: `cdf = cumsum(p) / cdf[-1]`, `size` uniform draws, and
    ///   `searchsorted(cdf, u, side='right')`.
    /// - `replace=False`, no `p`: for `n > 10000` and `size > n // 50` a partial Fisher–Yates
    ///   shuffle of `0..n` from the end (the last `size` elements); otherwise Floyd's
    ///   algorithm, then a shuffle of the result (NumPy's default `shuffle=True`). Both draw
    ///   with Lemire's bounded method, not the masked rejection of [`Generator::shuffle`].
    /// - `replace=False`, with `p`: rounds of `size - found` uniform draws on the CDF with the
    ///   already chosen entries zeroed, keeping first occurrences, until `size` are found.
    ///
    /// Errs like NumPy: a population of 0 with `size > 0`, `p` of the wrong length, with NaN
    /// or a negative entry, or not summing to 1 within `sqrt(eps)`; `size > n` without
    /// replacement, or fewer than `size` non-zero entries in `p`.
    ///
    /// ```
    /// let mut rng = py_port::random::default_rng(42);
    /// // NumPy 2.4.6: np.random.default_rng(42).choice(10, 3, replace=False) == [9, 0, 6]
    /// assert_eq!(rng.choice_index(10, 3, false, None).unwrap(), [9, 0, 6]);
    /// ```
    pub fn choice_index(
        &mut self,
        n: usize,
        size: usize,
        replace: bool,
        p: Option<&[f64]>,
    ) -> Result<Vec<usize>, Error> {
        const METHOD: &str = "Generator.choice";
        if n == 0 && size != 0 {
            return Err(Error::invalid(
                METHOD,
                "a must be a positive integer unless no samples are taken",
            ));
        }
        self.choice_from_population(n, size, replace, p)
    }

    /// `choice(a, size, replace, p)` with a sequence `a`: `size` elements of `a`, drawn as
    /// [`Generator::choice_index`] draws their indices.
    ///
    /// ```
    /// let mut rng = py_port::random::default_rng(42);
    /// // NumPy 2.4.6: default_rng(42).choice(["x", "y", "z"], 4, p=[0.5, 0.25, 0.25])
    /// //              == ['z', 'x', 'z', 'y']
    /// let got = rng.choice(&["x", "y", "z"], 4, true, Some(&[0.5, 0.25, 0.25])).unwrap();
    /// assert_eq!(got, ["z", "x", "z", "y"]);
    /// assert!(rng.choice::<u8>(&[], 1, true, None).is_err());
    /// ```
    pub fn choice<T: Clone>(
        &mut self,
        a: &[T],
        size: usize,
        replace: bool,
        p: Option<&[f64]>,
    ) -> Result<Vec<T>, Error> {
        if a.is_empty() && size != 0 {
            return Err(Error::invalid(
                "Generator.choice",
                "a cannot be empty unless no samples are taken",
            ));
        }
        let idx = self.choice_from_population(a.len(), size, replace, p)?;
        Ok(idx.into_iter().map(|i| a[i].clone()).collect())
    }

    fn choice_from_population(
        &mut self,
        pop_size: usize,
        size: usize,
        replace: bool,
        p: Option<&[f64]>,
    ) -> Result<Vec<usize>, Error> {
        const METHOD: &str = "Generator.choice";
        if let Some(p) = p {
            if p.len() != pop_size {
                return Err(Error::invalid(METHOD, "a and p must have same size"));
            }
            check_p(p)?;
        }
        if replace {
            return Ok(match p {
                Some(p) => {
                    let cdf = normalised_cdf(p);
                    (0..size)
                        .map(|_| search_right(&cdf, self.next_double()))
                        .collect()
                }
                None => {
                    // pop_size > 0 here unless size == 0.
                    let high = pop_size as u64;
                    (0..size)
                        .map(|_| self.bounded_u64(high.wrapping_sub(1)) as usize)
                        .collect()
                }
            });
        }
        if size > pop_size {
            return Err(Error::invalid(
                METHOD,
                "Cannot take a larger sample than population when replace is False",
            ));
        }
        if let Some(p) = p {
            if p.iter().filter(|&&x| x > 0.0).count() < size {
                return Err(Error::invalid(
                    METHOD,
                    "Fewer non-zero entries in p than size",
                ));
            }
            let mut p = p.to_vec();
            let mut found: Vec<usize> = Vec::with_capacity(size);
            while found.len() < size {
                let x = self.random_n(size - found.len())?;
                for &i in &found {
                    p[i] = 0.0;
                }
                let cdf = normalised_cdf(&p);
                // np.unique(new, return_index=True) with the indices sorted: first occurrences
                // in order of appearance.
                let mut seen = HashSet::new();
                for u in x {
                    let i = search_right(&cdf, u);
                    if seen.insert(i) {
                        found.push(i);
                    }
                }
            }
            return Ok(found);
        }
        let (pop, sz) = (pop_size as u64, size as u64);
        if pop_size > 10_000 && size > pop_size / 50 {
            // Tail shuffle: the last `size` elements of a partial Fisher–Yates shuffle.
            let mut idx: Vec<u64> = (0..pop).collect();
            self.shuffle_int(&mut idx, (pop - sz).max(1));
            return Ok(idx[pop_size - size..].iter().map(|&i| i as usize).collect());
        }
        // Floyd's algorithm. NumPy keeps the set in an open-addressing table sized from
        // 1.2 * size; only membership matters for the result.
        let mut set = HashSet::with_capacity(size);
        let mut out: Vec<u64> = Vec::with_capacity(size);
        for j in pop - sz..pop {
            let val = self.bounded_u64(j);
            if set.insert(val) {
                out.push(val);
            } else {
                set.insert(j);
                out.push(j);
            }
        }
        self.shuffle_int(&mut out, 1);
        Ok(out.into_iter().map(|i| i as usize).collect())
    }

    /// NumPy's `_shuffle_int(n, first, data)`: swaps `data[i]` with `data[j]`, `j` Lemire-bounded
    /// in `[0, i]`, for `i` from `n - 1` down to `first`.
    fn shuffle_int(&mut self, data: &mut [u64], first: u64) {
        for i in (first..data.len() as u64).rev() {
            let j = self.bounded_u64(i);
            data.swap(i as usize, j as usize);
        }
    }

    /// `shuffle(x)`: shuffles `x` in place, Fisher–Yates from the end, `x[i]` swapped with
    /// `x[j]` for `j = random_interval(i)` (masked rejection on buffered 32-bit words), `i`
    /// from `len - 1` down to 1. NumPy's path for lists and 1-D arrays alike.
    ///
    /// ```
    /// let mut rng = py_port::random::default_rng(42);
    /// let mut x = [1, 2, 3, 4, 5];
    /// rng.shuffle(&mut x);
    /// // NumPy 2.4.6: x = [1, 2, 3, 4, 5]; np.random.default_rng(42).shuffle(x); x == [5, 3, 4, 2, 1]
    /// assert_eq!(x, [5, 3, 4, 2, 1]);
    /// ```
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.random_interval(i as u64) as usize;
            x.swap(i, j);
        }
    }

    /// `permutation(n)`: `np.arange(n)` shuffled by [`Generator::shuffle`] (NumPy's int64
    /// elements are `usize` here).
    ///
    /// ```
    /// // NumPy 2.4.6: np.random.default_rng(42).permutation(5) == [4, 2, 3, 1, 0]
    /// assert_eq!(py_port::random::default_rng(42).permutation(5)?, [4, 2, 3, 1, 0]);
    /// assert!(py_port::random::default_rng(42).permutation(usize::MAX).is_err());
    /// # Ok::<(), py_port::Error>(())
    /// ```
    pub fn permutation(&mut self, n: usize) -> Result<Vec<usize>, Error> {
        super::check_size("Generator.permutation", n)?;
        let mut v: Vec<usize> = (0..n).collect();
        self.shuffle(&mut v);
        Ok(v)
    }

    /// `permutation(x)` for a 1-D sequence: a shuffled copy.
    pub fn permutation_of<T: Clone>(&mut self, x: &[T]) -> Vec<T> {
        let mut v = x.to_vec();
        self.shuffle(&mut v);
        v
    }
}
