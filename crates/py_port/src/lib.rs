//! The porting kit for a Python/NumPy lecture script: what a Rust port needs so that its
//! output can be diffed against the script's, byte for byte.
//!
//! A lecture is ported by running both and diffing their output (house style: "same random
//! streams, same number formats"). Three things make that diff noisy unless the port copies
//! Python exactly, and this crate is those three things:
//!
//! - [`random`]: `numpy.random.default_rng(seed)`, bit for bit: PCG64 seeded through
//!   `SeedSequence`, and NumPy's own algorithms for each method (its ziggurat tables, Lemire
//!   bounded integers with its 32-bit buffering, Floyd sampling, its shuffle).
//! - [`format`](mod@format): Python's `repr(float)`, `float.hex()` and `format(x, spec)` /
//!   `f"{x:spec}"` for floats and ints, character for character.
//! - [`stats`]: NumPy's pairwise `sum` and `mean`, and `percentile` (its default linear
//!   method), bit for bit: the reductions a script prints.
//!
//! ```
//! use py_port::format::format_f64;
//! use py_port::random::default_rng;
//!
//! // Python:  rng = np.random.default_rng(42)
//! //          x = rng.normal(0, 1, 3)
//! //          print(f"{x.mean():.3f}", repr(x[0]))           # 0.005 0.30471707975443135
//! let mut rng = default_rng(42);
//! let x = rng.normal_n(0.0, 1.0, 3)?;
//! let mean = (x[0] + x[1] + x[2]) / 3.0;
//! assert_eq!(format_f64(mean, ".3f")?, "0.005");
//! assert_eq!(py_port::format::repr_f64(x[0]), "0.30471707975443135");
//!
//! // Python:  rng = np.random.default_rng(2024)
//! //          print(rng.integers(0, 6, size=4), f"{rng.random():.1%}")   # [1 4 0 1] 30.9%
//! let mut rng = default_rng(2024);
//! assert_eq!(rng.integers_n(0, 6, 4)?, [1, 4, 0, 1]);
//! assert_eq!(format_f64(rng.random(), ".1%")?, "30.9%");
//! # Ok::<(), py_port::Error>(())
//! ```
//!
//! Every value in these docs was printed by NumPy 2.4.6 on CPython 3.11.7.
//!
//! # How it is checked
//!
//! `tools/numpy_rng/check.sh` draws every method below with NumPy and with this crate
//! (11 seeds including 0, 42, 2³²+5, 2⁶³+7 and 2⁶⁴−1, 23 method/parameter cases, 10,000
//! draws each: 2,530,000 values) and `cmp`s the two; it then formats about 93,000
//! (value, spec) pairs with CPython and with [`format`](mod@format) and `cmp`s those. Without Python,
//! `cargo test` compares against small golden files NumPy and CPython wrote
//! (`tests/data/`).
//!
//! # Names
//!
//! | Python / NumPy | py_port | Differences |
//! |---|---|---|
//! | `np.random.default_rng(seed)` | [`random::default_rng`]`(seed: u64)` | a seed is required; seeds ≥ 2⁶⁴ through `SeedSequence` |
//! | `np.random.SeedSequence(entropy)` | [`random::SeedSequence::new`]`(u128)`, [`from_words`](random::SeedSequence::from_words)`(&[u32])` | no `spawn_key`, `spawn()`, or `pool_size` ≠ 4 |
//! | `Generator(PCG64(seed_seq))` | [`random::Generator::from_seed_sequence`] | |
//! | `rng.bit_generator.random_raw()` | [`random_raw`](random::Generator::random_raw) | |
//! | `rng.random()`, `random(n)` | [`random`](random::Generator::random), [`random_n`](random::Generator::random_n), [`fill_random`](random::Generator::fill_random) | float64 only |
//! | `rng.integers(low, high)`, `size=n` | [`integers`](random::Generator::integers), [`integers_n`](random::Generator::integers_n) → `Result<i64>` | int64 only; `high` is required (NumPy's `integers(n)` is `integers(0, n)`) |
//! | `rng.integers(low, high, endpoint=True)` | [`integers_inclusive`](random::Generator::integers_inclusive) | |
//! | `rng.standard_normal()` | [`standard_normal`](random::Generator::standard_normal), `_n` | float64 only |
//! | `rng.normal(loc, scale)` | [`normal`](random::Generator::normal), `_n` → `Result` | NaN `loc` or `scale` is an error (NumPy returns NaN) |
//! | `rng.standard_exponential()` | [`standard_exponential`](random::Generator::standard_exponential), `_n` | `method='zig'` (NumPy's default) only |
//! | `rng.exponential(scale)` | [`exponential`](random::Generator::exponential), `_n` → `Result` | NaN `scale` is an error |
//! | `rng.geometric(p)` | [`geometric`](random::Generator::geometric), `_n` → `Result<i64>` | counts trials (≥ 1), as NumPy; returns where NumPy would loop forever (≈10⁻¹⁶ per draw) |
//! | `rng.choice(n, size, replace, p)` | [`choice_index`](random::Generator::choice_index) → `Result<Vec<usize>>` | `size=None` is `size=1`, element 0; no `axis`, no `shuffle=False` |
//! | `rng.choice(a, size, replace, p)` | [`choice`](random::Generator::choice)`(&a, …)` → `Result<Vec<T>>` | 1-D `a` only |
//! | `rng.permutation(n)`, `permutation(x)` | [`permutation`](random::Generator::permutation) → `Vec<usize>`, [`permutation_of`](random::Generator::permutation_of) | 1-D only |
//! | `rng.shuffle(x)` | [`shuffle`](random::Generator::shuffle)`(&mut x)` | 1-D only |
//! | `repr(x)`, `str(x)` for a float | [`format::repr_f64`] | |
//! | `x.hex()` | [`format::float_hex`] | |
//! | `format(x, spec)`, `f"{x:spec}"`, float | [`format::format_f64`] → `Result<String>` | no `#`, `z`, `n`; width and precision ≤ 100,000 |
//! | `format(n, spec)`, int | [`format::format_i64`] → `Result<String>` | types `d` and none, or a float type (as Python, via `float(n)`); no `x o b c n` |
//! | the format-spec grammar | [`format::FormatSpec`] (`FromStr`) | errors instead of `ValueError` |
//! | `np.sum(x)`, `x.mean()` of float64 | [`stats::sum`], [`stats::mean`] → `Result` | pairwise, as NumPy; 1-D only; an empty mean is an error |
//! | `np.sum(x)`, `x.mean()` of float32 | [`stats::sum_f32`], [`stats::mean_f32`] → `Result` | pairwise in float32, a float32 result, as NumPy |
//! | `a.sum(axis)`, `a.mean(axis)` of a 2-D float64 or float32 array | [`array::sum_axis`], [`array::mean_axis`] → `Result` | along the rows pairwise, down the columns row after row, as NumPy; 2-D only |
//! | `max(xs, key=f)`, `min(xs, key=f)` | [`builtins::max_by_key`], [`builtins::min_by_key`] → `Result<&T>` | the first of equal keys, as Python (`Iterator::max_by` keeps the last) |
//! | `np.bincount(xs, minlength=m)` | [`builtins::bincount`] | non-negative integers (`usize`) only |
//! | `np.percentile(x, q)`, `q` a list | [`stats::percentile`], [`stats::percentiles`] → `Result` | `method='linear'` only; NaN data is an error (NumPy returns `nan`) |
//!
//! Errors: every function that can be given bad input returns [`Error`] (with NumPy's or
//! CPython's wording); none panics.
//!
//! A trap when porting: NumPy's `sum`/`mean` of 8 or more float64 values adds pairwise in
//! blocks, so `iter().sum()` can differ from it in the last bits; [`stats::sum`] adds as NumPy
//! does.

pub mod array;
pub mod builtins;
pub mod format;
pub mod random;
pub mod stats;

mod error;

pub use error::Error;
