//! Normal, exponential and geometric draws: NumPy's ziggurats and `random_geometric`.

use super::*;
use rand::distr::Distribution;

/// NumPy's `standard_normal` as a [`rand`] distribution: its ziggurat
/// (`random_standard_normal`, 256 strips, tables `ki_double`/`wi_double`/`fi_double`) on the
/// 64-bit words of any bit generator, one word per draw 99.3% of the time.
///
/// On a [`Generator`] (whose `next_u64` is NumPy's `next_uint64`) it draws exactly what
/// [`Generator::standard_normal`] and NumPy draw, so a whole array can be filled the
/// ecosystem's way, in C order as NumPy fills it:
///
/// ```
/// use ndarray::Array2;
/// use ndarray_rand::RandomExt;
/// use py_port::random::{StandardNormal, default_rng};
///
/// // NumPy 2.4.6: np.random.default_rng(42).standard_normal((2, 3))[0, 0] == 0.30471707975443135
/// let x: Array2<f64> = Array2::random_using((2, 3), StandardNormal, &mut default_rng(42));
/// assert_eq!(x[[0, 0]], 0.30471707975443135);
/// let mut rng = default_rng(42);
/// let one_by_one: Vec<f64> = (0..6).map(|_| rng.standard_normal()).collect();
/// assert_eq!(x.into_raw_vec_and_offset().0, one_by_one);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StandardNormal;

impl Distribution<f64> for StandardNormal {
    fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        loop {
            let r = rng.next_u64();
            let idx = (r & 0xff) as usize;
            let r = r >> 8;
            let sign = r & 0x1;
            let rabs = (r >> 1) & 0x000f_ffff_ffff_ffff;
            let mut x = rabs as f64 * WI_DOUBLE[idx];
            if sign & 0x1 == 1 {
                x = -x;
            }
            if rabs < KI_DOUBLE[idx] {
                return x; // 99.3% of the time
            }
            if idx == 0 {
                // The tail beyond r, by Marsaglia's method; 1 - U avoids log(0).
                loop {
                    let xx = -ZIGGURAT_NOR_INV_R * (-next_double(rng)).ln_1p();
                    let yy = -(-next_double(rng)).ln_1p();
                    if yy + yy > xx * xx {
                        return if (rabs >> 8) & 0x1 == 1 {
                            -(ZIGGURAT_NOR_R + xx)
                        } else {
                            ZIGGURAT_NOR_R + xx
                        };
                    }
                }
            } else if (FI_DOUBLE[idx - 1] - FI_DOUBLE[idx]) * next_double(rng) + FI_DOUBLE[idx]
                < (-0.5 * x * x).exp()
            {
                return x;
            }
        }
    }
}

impl Generator {
    /// `standard_normal()`: NumPy's ziggurat (`random_standard_normal`, 256 strips, tables
    /// `ki_double`/`wi_double`/`fi_double`), one 64-bit word per draw 99.3% of the time.
    ///
    /// ```
    /// // NumPy 2.4.6: np.random.default_rng(42).standard_normal() == 0.30471707975443135
    /// assert_eq!(py_port::random::default_rng(42).standard_normal(), 0.30471707975443135);
    /// ```
    pub fn standard_normal(&mut self) -> f64 {
        StandardNormal.sample(self)
    }

    /// `standard_normal(size=n)`. Errs when `n` is past [`super::MAX_SIZE`].
    pub fn standard_normal_n(&mut self, n: usize) -> Result<Vec<f64>, Error> {
        check_size("Generator.standard_normal", n)?;
        Ok((0..n).map(|_| self.standard_normal()).collect())
    }

    /// `normal(loc, scale)`: `loc + scale * standard_normal()`. Errs when `scale < 0` (as NumPy,
    /// which also rejects `-0.0`) and, unlike NumPy, when `loc` or `scale` is NaN.
    pub fn normal(&mut self, loc: f64, scale: f64) -> Result<f64, Error> {
        check_location("Generator.normal", "loc", loc)?;
        check_scale("Generator.normal", scale)?;
        Ok(loc + scale * self.standard_normal())
    }

    /// `normal(loc, scale, size=n)`.
    pub fn normal_n(&mut self, loc: f64, scale: f64, n: usize) -> Result<Vec<f64>, Error> {
        check_location("Generator.normal", "loc", loc)?;
        check_scale("Generator.normal", scale)?;
        check_size("Generator.normal", n)?;
        Ok((0..n)
            .map(|_| loc + scale * self.standard_normal())
            .collect())
    }

    /// `standard_exponential()`: NumPy's exponential ziggurat (`random_standard_exponential`,
    /// tables `ke_double`/`we_double`/`fe_double`; NumPy's default `method='zig'`).
    pub fn standard_exponential(&mut self) -> f64 {
        loop {
            let mut ri = self.pcg.next_u64();
            ri >>= 3;
            let idx = (ri & 0xff) as usize;
            ri >>= 8;
            let x = ri as f64 * WE_DOUBLE[idx];
            if ri < KE_DOUBLE[idx] {
                return x; // 98.9% of the time
            }
            if idx == 0 {
                // 1 - U avoids log(0).
                return ZIGGURAT_EXP_R - (-self.next_double()).ln_1p();
            }
            if (FE_DOUBLE[idx - 1] - FE_DOUBLE[idx]) * self.next_double() + FE_DOUBLE[idx]
                < (-x).exp()
            {
                return x;
            }
            // Rejected: NumPy calls random_standard_exponential again, as this loop does.
        }
    }

    /// `standard_exponential(size=n)`. Errs when `n` is past [`super::MAX_SIZE`].
    pub fn standard_exponential_n(&mut self, n: usize) -> Result<Vec<f64>, Error> {
        check_size("Generator.standard_exponential", n)?;
        Ok((0..n).map(|_| self.standard_exponential()).collect())
    }

    /// `exponential(scale)`: `scale * standard_exponential()`. Errs when `scale < 0` (or
    /// `-0.0`, as NumPy) and, unlike NumPy, when `scale` is NaN.
    pub fn exponential(&mut self, scale: f64) -> Result<f64, Error> {
        check_scale("Generator.exponential", scale)?;
        Ok(scale * self.standard_exponential())
    }

    /// `exponential(scale, size=n)`.
    pub fn exponential_n(&mut self, scale: f64, n: usize) -> Result<Vec<f64>, Error> {
        check_scale("Generator.exponential", scale)?;
        check_size("Generator.exponential", n)?;
        Ok((0..n)
            .map(|_| scale * self.standard_exponential())
            .collect())
    }

    /// `geometric(p)`: the number of trials up to and including the first success, so at
    /// least 1 (`rand_distr::Geometric` counts failures instead). Errs unless `0 < p <= 1`.
    ///
    /// NumPy's `random_geometric`: for `p >= 1/3` a sequential search over the CDF with one
    /// uniform draw, otherwise inversion, `ceil(-E / log1p(-p))` with a standard exponential
    /// `E`, clipped to `i64::MAX`. One difference: where NumPy's search would loop forever
    /// (the rounded CDF stops short of a uniform draw just below 1, about once in 10^16
    /// draws), this returns the count reached when the CDF stops growing.
    ///
    /// ```
    /// let mut rng = py_port::random::default_rng(42);
    /// // NumPy 2.4.6: np.random.default_rng(42).geometric(0.2, size=5) == [11, 11, 11, 2, 1]
    /// assert_eq!(rng.geometric_n(0.2, 5).unwrap(), [11, 11, 11, 2, 1]);
    /// assert!(rng.geometric(0.0).is_err());
    /// ```
    pub fn geometric(&mut self, p: f64) -> Result<i64, Error> {
        check_probability("Generator.geometric", p)?;
        Ok(self.geometric_unchecked(p))
    }

    /// `geometric(p, size=n)`.
    pub fn geometric_n(&mut self, p: f64, n: usize) -> Result<Vec<i64>, Error> {
        check_probability("Generator.geometric", p)?;
        check_size("Generator.geometric", n)?;
        Ok((0..n).map(|_| self.geometric_unchecked(p)).collect())
    }

    fn geometric_unchecked(&mut self, p: f64) -> i64 {
        if p >= GEOMETRIC_SEARCH_MIN_P {
            // random_geometric_search
            let mut x: i64 = 1;
            let mut sum = p;
            let mut prod = p;
            let q = 1.0 - p;
            let u = self.next_double();
            while u > sum {
                prod *= q;
                let next = sum + prod;
                if next == sum {
                    break; // NumPy would loop forever here; see the doc comment.
                }
                sum = next;
                x += 1;
            }
            x
        } else {
            // random_geometric_inversion
            let z = (-self.standard_exponential() / (-p).ln_1p()).ceil();
            if z >= INT64_MAX_AS_F64 {
                i64::MAX
            } else {
                z as i64
            }
        }
    }
}
