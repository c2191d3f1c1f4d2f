//! The roofline held against published measurements: decode step times and
//! speculative-decoding speedups from serving-framework docs, vendor blogs and engine
//! pull requests, each with its citation, and what this crate predicts for it under
//! named profiles of assumptions.
//!
//! - [`profile`]: the profiles. [`SEED`] is lecture 6's assumptions (60% of peak FLOP/s,
//!   80% of peak bandwidth, 1 ms per target pass, 0.3 ms per draft step, verification
//!   costed by the roofline alone, free all-reduces), read from [`Scenario::LECTURE`];
//!   [`FITTED`] is the same model with its overheads, bandwidth efficiency, all-reduce
//!   latency and verification cost per extra token fitted on the measurements marked
//!   [`Role::Calibration`], and judged on the [`Role::HeldOut`] rest.
//! - [`measurement`]: the published figures, a data file (`data/measurements.json`) read
//!   once ([`measurements`]), and the scenario each one runs in.
//! - [`fit`]: the grid search that finds [`FITTED`] ([`fit_calibration`]).
//! - [`summary`]: every prediction ([`predictions`]) and the median and worst ratio of each
//!   profile on each subset ([`summary()`]).
//!
//! Every prediction is computed here; nothing predicted is typed in. A measured figure
//! often depends on things the roofline does not see (the context length the benchmark
//! reached, prefill work mixed into decode steps at high concurrency, CUDA graphs, the
//! sampler): each row says what was assumed.
//!
//! [`Scenario::LECTURE`]: crate::Scenario::LECTURE

pub mod fit;
pub mod measurement;
pub mod profile;
pub mod summary;

pub use fit::{FIT_GRID, fit_calibration};
pub use measurement::{Measurement, Published, Quantity, Role, measurements, parse_measurements};
pub use profile::{CALIBRATIONS, Calibration, FITTED, SEED, calibration};
pub use summary::{Prediction, ProfileSummary, RatioSummary, predictions, summarize, summary};
