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
//!   [`Role::Calibration`] among the first [`FITTED_ROWS`], and judged on the
//!   [`Role::HeldOut`] rest; [`MEASURED`] adds every cost term of [`crate::CostTerms`]
//!   (overlap, a round cost with a batch term, FP8 factors, all-reduce latency per card
//!   family, an MoE model's expert latency, …), fitted on every calibration row
//!   ([`fit_measured()`]).
//! - [`measurement`]: the published figures, a data file (`data/measurements.json`) read
//!   once ([`measurements`]), the scenario each one runs in, and the prompt tokens a step
//!   read from a closed-loop serving benchmark also carries ([`ClosedLoop`],
//!   [`step_time_with_prefill`]).
//! - [`engines`]: the serving engines a measurement names ([`ENGINES`], [`engine_name`]);
//!   [`engine`]: each engine's profile, refitted on its own rows drawn toward the pool
//!   ([`engine_profiles`]).
//! - [`fit`]: the grid search that finds [`FITTED`] ([`fit_calibration`]).
//! - [`fit_measured`](mod@fit_measured): the coordinate grid search that finds [`MEASURED`]
//!   ([`fit_measured()`], on [`MEASURED_GRID`]).
//! - [`summary`](mod@summary): every prediction ([`predictions`]), the median and worst ratio of each
//!   profile on each subset ([`summary()`]) and kind ([`summary_by_kind`]), and the batch
//!   series of the data ([`batch_series`]).
//! - [`intervals`]: how sure the planner is — an 80% interval from the residuals of rows
//!   like a row, made without its publisher ([`interval`]), and its coverage ([`coverage`]).
//! - [`support`]: which publishers' rows fix each constant of the pooled fit
//!   ([`term_support`]): a constant of one or two publishers rests on the other, or on
//!   none, when one is held out.
//! - [`trends`](mod@trends): the leave-one-publisher-out predictions judged on what a
//!   student relies on — ratios within a series, orderings, speedup trends, best γ
//!   ([`trends()`]).
//!
//! Every prediction is computed here; nothing predicted is typed in. A measured figure
//! often depends on things the roofline does not see (the context length the benchmark
//! reached, CUDA graphs, the sampler): each row says what was assumed. Prefill work mixed
//! into decode steps is modelled where the source gives the prompt and output lengths.
//!
//! [`Scenario::LECTURE`]: decode_lab::Scenario::LECTURE

pub mod cross;
pub mod engine;
pub mod engines;
pub mod fast;
pub mod fit;
pub mod fit_measured;
pub mod intervals;
pub mod measurement;
pub mod profile;
pub mod summary;
pub mod support;
pub mod trends;

pub use cross::{
    BatchBand, CrossPrediction, CrossSummary, PublisherOffset, SeriesSlope, cross_summary,
    fold_fits, leave_one_publisher_out, leave_one_publisher_out_on, publisher_offsets, publishers,
    seed_step_gaps, shares_within_25, step_series_slopes,
};
pub use engine::{
    ENGINE_PRIOR_PUBLISHERS, EngineProfile, MIN_ENGINE_ROWS, engine_axis_names, engine_profile,
    engine_profile_on, engine_profiles,
};
pub use engines::{ENGINES, engine_name};
pub use fast::FitRows;
pub use fit::{FIT_GRID, FITTED_ROWS, fit_calibration};
pub use fit_measured::{
    AXES, ENGINE_AXES, Fit, GridAxis, Indices, MEASURED_GRID, Moves, POOLED_AXES, fit_measured,
    grid_start, measured_at, moved_axes, search,
};
pub use intervals::{
    COVERAGE, Coverage, Interval, LEVELS, Likeness, MIN_LIKE, coverage, interval, interval_for,
    shipped_interval,
};
pub use measurement::{
    ClosedLoop, DraftKind, Kind, Measurement, Published, Quantity, Role, measurements,
    parse_measurements, step_time_with_prefill,
};
pub use profile::{CALIBRATIONS, Calibration, FITTED, MEASURED, SEED, calibration};
pub use summary::{
    BatchSeries, KindSummary, PROFILES, Prediction, ProfileSummary, RatioSummary, batch_series,
    predictions, summarize, summary, summary_by_kind,
};
pub use support::{
    FIXES_BY, TermSupport, ends_at, fold_span, move_factor, moves, support_on, term_support,
    thin_terms,
};
pub use trends::{GammaSweep, PairRatio, SpeedupTrend, Trends, trends};
