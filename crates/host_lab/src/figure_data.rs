//! The figures [`crate::figures::run`] returns, as typed data (re-exported by
//! [`crate::figures`]).

use transformer_lab::Config;

use crate::Lm;
use crate::machine::Machine;
use crate::measure::{Sample, Streamed};
use crate::predict::PassPrediction;

/// This machine's roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineFigures {
    /// What was measured and read.
    pub machine: Machine,
    /// FLOPs per byte where compute and memory take equally long.
    pub ridge_point: f64,
    /// Critical batch for f32 weights (4 bytes), tokens per pass.
    pub critical_tokens_f32: f64,
    /// Critical batch for the INT4 draft's weights (4.25 bits), tokens per pass, at the
    /// f32 kernel's peak.
    pub critical_tokens_int4: f64,
    /// The INT4 kernel's measured compute ceiling at the rows of each speculative-decoding
    /// batch (`(rows, FLOP/s per run)`): the peak the INT4 draft's predictions use, since
    /// unpacking 4-bit codes makes its products slower than the f32 kernel's.
    pub int4_peaks: Vec<(usize, Sample)>,
    /// Seconds one parallel region costs, per run ([`crate::measure::dispatch`]): every
    /// prediction adds it once per region of the pass.
    pub dispatch: Sample,
    /// The packed f32 kernel's FLOP/s at 1 … 5 rows, on products of the model's inner
    /// dimension (`[r, d_model] · [d_model, 128]`), over its peak: the median of ratios of
    /// paired runs ([`crate::measure::kernel_efficiency`]; see
    /// [`crate::predict::blocked_peak`]).
    pub kernel_efficiency: Vec<f64>,
    /// How much longer the packed f32 kernel takes with its weights streamed from memory
    /// than reading them takes, at each measured row count, increasing
    /// ([`crate::measure::streamed_slowdown`]).
    pub streamed: Vec<Streamed>,
}

impl MachineFigures {
    /// The INT4 kernel's ceiling at `rows` rows (the nearest measured row count at or
    /// above it; the largest if none is).
    pub fn int4_peak(&self, rows: usize) -> f64 {
        self.int4_peaks
            .iter()
            .find(|(r, _)| *r >= rows)
            .or(self.int4_peaks.last())
            .map_or(f64::NAN, |(_, s)| s.median())
    }

    /// The packed f32 kernel's FLOP/s on a product of `rows` rows when its peak is `peak`
    /// ([`crate::predict::blocked_peak`] with [`kernel_efficiency`](Self::kernel_efficiency)).
    pub fn f32_peak(&self, peak: f64, rows: usize) -> f64 {
        crate::predict::blocked_peak(peak, &self.kernel_efficiency, rows)
    }

    /// The overlap of compute and memory the packed f32 kernel reaches on a product of
    /// `rows` rows streamed from memory: at each measured row count, the overlap its median
    /// [`streamed`](Self::streamed) slowdown implies
    /// ([`crate::predict::overlap_from_slowdown`]), its compute over its memory time being
    /// its rows over the critical batch ([`llm_math::critical_tokens_at`] of f32
    /// weights at the kernel's peak of that many rows, from the machine's median peak, and
    /// the median bandwidth of the reads paired with the slowdowns); interpolated between
    /// the measured counts in log rows and held at the ends ([`crate::predict::overlap_at`]).
    /// NaN if none was measured (or none with a positive peak and bandwidth).
    pub fn host_overlap(&self, rows: usize) -> f64 {
        let peak = self.machine.peak_flops();
        let points: Vec<(usize, f64)> = self
            .streamed
            .iter()
            .filter_map(|s| {
                let peak = self.f32_peak(peak, s.rows);
                let bandwidth = s.bandwidth.median();
                let f32_bytes = crate::F32_BYTES as f64;
                let critical = llm_math::critical_tokens_at(peak, bandwidth, f32_bytes).ok()?;
                let ratio = s.rows as f64 / critical;
                let overlap = crate::predict::overlap_from_slowdown(s.slowdown.median(), ratio);
                Some((s.rows, overlap))
            })
            .collect();
        crate::predict::overlap_at(&points, rows)
    }

    /// [`crate::predict::predict`] for `model` at `peak` and `bandwidth`, with this
    /// machine's cost of the pass's parallel regions as its overhead.
    pub fn predict<L: Lm + ?Sized>(
        &self,
        model: &L,
        (peak, bandwidth): (f64, f64),
        batch: usize,
        ctx: usize,
        n_new: usize,
    ) -> PassPrediction {
        let regions = model.parallel_regions() as f64;
        crate::predict::predict(model, peak, bandwidth, batch, ctx, n_new)
            .with_overhead(regions * self.dispatch.median())
    }
}

/// The scaled model and its drafts, in bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFigures {
    /// The target's shape.
    pub cfg: Config,
    /// The last-level cache it was scaled against, bytes.
    pub llc_bytes: u64,
    /// Weight bytes one pass of the target reads (f32).
    pub target_bytes: u64,
    /// Weight bytes of the first-layer draft (f32).
    pub first_layer_bytes: u64,
    /// Weight bytes of the INT4 draft (codes and bf16 scales, f32 norms).
    pub int4_bytes: u64,
    /// Parallel regions one pass of the target starts ([`Lm::parallel_regions`]).
    pub target_regions: usize,
}

/// One point of the forward-time sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// Sequences.
    pub batch: usize,
    /// Tokens fed per sequence.
    pub n_new: usize,
    /// The timed runs, seconds.
    pub measured: Sample,
    /// The roofline's counts and times for this pass, at [`peak`](Self::peak) and
    /// [`bandwidth`](Self::bandwidth).
    pub predicted: PassPrediction,
    /// The peak FLOP/s the prediction uses: the median of the [`crate::measure::Probe`]s
    /// taken right before and right after each of this shape's timed passes
    /// ([`crate::device::beside_each_pass`]), so that it sees the host as loaded while
    /// these passes ran.
    pub peak: f64,
    /// The read bandwidth, bytes/s, the prediction uses (measured likewise, by the same
    /// probes).
    pub bandwidth: f64,
    /// The overlap the host's prediction uses: [`MachineFigures::host_overlap`] at this
    /// pass's `batch · n_new` rows.
    pub host_overlap: f64,
}

impl SweepPoint {
    /// The measured median, the roofline (max), the planner's, the host's
    /// ([`PassPrediction::overlapped`] at [`host_overlap`](Self::host_overlap)) and the
    /// additive prediction, seconds.
    pub fn times(&self) -> [f64; 5] {
        let p = &self.predicted;
        [
            self.measured.median(),
            p.roofline(),
            p.planner(),
            p.overlapped(self.host_overlap),
            p.additive(),
        ]
    }
}

/// Where time against tokens fed turns up, at one batch (see [`crate::predict::knee`]).
/// The predicted knees are found over every n, measured or not, so they use one machine:
/// the medians of all the probes of this batch's sweep (each [`SweepPoint`] uses its own).
#[derive(Debug, Clone, PartialEq)]
pub struct Knee {
    /// Sequences.
    pub batch: usize,
    /// From the measured medians (`None`: not reached by `max_n`).
    pub measured: Option<f64>,
    /// Under the roofline (max) prediction.
    pub roofline: Option<f64>,
    /// Under the planner's prediction ([`PassPrediction::planner`]).
    pub planner: Option<f64>,
    /// Under the host's prediction (the planner's formula at this machine's overlap).
    pub host: Option<f64>,
    /// Under the additive prediction.
    pub additive: Option<f64>,
}

impl Knee {
    /// The measured, roofline (max), planner's, host's and additive knees, in the order of
    /// [`SweepPoint::times`].
    pub fn all(&self) -> [Option<f64>; 5] {
        [
            self.measured,
            self.roofline,
            self.planner,
            self.host,
            self.additive,
        ]
    }
}

/// Which draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DraftKind {
    /// The target's first layer and head.
    FirstLayer,
    /// The whole target with INT4 weights.
    Int4,
}

impl DraftKind {
    /// Both drafts.
    pub const ALL: [DraftKind; 2] = [DraftKind::FirstLayer, DraftKind::Int4];
}

/// The draft cost coefficient c of one draft at batch 1: draft step / target step.
///
/// The target's step is timed back to back, as plain decoding runs it. The draft's steps
/// are timed as a speculative round runs them, γ at a time right after a verification
/// ([`crate::device::round_costs`]): a draft whose weights fit in the last-level cache
/// (the INT4 copy's 19 MB and the first layer's 30 MB fit a 32 MiB L3) stays there when
/// its steps are timed back to back, but every target pass evicts it, and the first draft
/// step of each round reads memory again.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftCost {
    /// Which draft.
    pub draft: DraftKind,
    /// Weight bytes of one draft step.
    pub weight_bytes: u64,
    /// The draft's step, seconds: per run the mean of the γ steps of one round
    /// ([`crate::device::round_costs`]).
    pub draft_step: Sample,
    /// The target's step, timed runs, seconds.
    pub target_step: Sample,
    /// Measured c (ratio of the medians).
    pub measured: f64,
    /// c under the roofline prediction.
    pub roofline: f64,
    /// c under the additive prediction.
    pub additive: f64,
}

/// One run of real speculative decoding against plain decoding.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecFigures {
    /// Sequences decoded together.
    pub batch: usize,
    /// Which draft.
    pub draft: DraftKind,
    /// Drafted tokens per round.
    pub gamma: usize,
    /// Measured τ: tokens per sequence-round.
    pub tau: f64,
    /// Plain greedy decoding, tokens per second (all sequences).
    pub plain_tokens_per_s: f64,
    /// Speculative decoding, tokens per second.
    pub spec_tokens_per_s: f64,
    /// `spec / plain`.
    pub measured_speedup: f64,
    /// `decode_lab`'s round accounting at the measured τ with roofline (max) times.
    pub predicted_roofline: f64,
    /// The same with additive times.
    pub predicted_additive: f64,
    /// The same accounting with the measured pass times: the step back to back, the draft
    /// step and the verification as a round pays them ([`crate::device::round_costs`]).
    pub accounted_measured: f64,
    /// Whether the speculative output is token for token the plain output.
    pub lossless: bool,
    /// The per-token acceptance rate that gives the measured τ at this γ.
    pub alpha: f64,
    /// `decode_lab::best_round`'s choice at that α with the additive times: `(γ, speedup)`,
    /// `(0, 1.0)` when the model says no γ pays.
    pub best_round_additive: (usize, f64),
    /// The same with roofline (max) times.
    pub best_round_roofline: (usize, f64),
}

/// Everything [`crate::figures::run`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFigures {
    /// (a) The machine.
    pub machine: MachineFigures,
    /// The scaled model.
    pub model: ModelFigures,
    /// (b) Forward time against tokens fed, every batch, n increasing.
    pub sweep: Vec<SweepPoint>,
    /// (b) The knee at each batch.
    pub knees: Vec<Knee>,
    /// (c) c of each draft.
    pub drafts: Vec<DraftCost>,
    /// (d) Speculative decoding at batch 1 (both drafts) and at the large batch (the
    /// better draft).
    pub spec: Vec<SpecFigures>,
    /// Seconds the whole run took.
    pub seconds: f64,
    /// Load averages (1, 5, 15 min) at the start and at the end, where the OS gives them.
    pub load: (Option<[f64; 3]>, Option<[f64; 3]>),
    /// The bandwidth and the peak measured again at the end (at most 3 runs each), over the
    /// figures of the start: far from 1, the host's load changed during the run and the
    /// measured times are not all comparable.
    pub drift: (f64, f64),
}

impl HostFigures {
    /// The sweep's points at one batch.
    pub fn sweep_at(&self, batch: usize) -> impl Iterator<Item = &SweepPoint> {
        self.sweep.iter().filter(move |p| p.batch == batch)
    }
}
