//! Timing a forward pass on this CPU ([`CpuDevice`]): how long a pass of `batch × n_new`
//! tokens after `ctx` cached ones takes, run by the scaled model, and a speculative round's
//! costs timed as the round pays them ([`round_costs`]).

use std::time::Instant;

use crate::measure::{MAX_RUNS, Sample};
use crate::{Error, Lm};

/// Times an [`Lm`] on this CPU.
///
/// Caches for `batch` sequences of `ctx` random tokens are prefilled once and reused
/// (each timed pass is rolled back); every pass is repeated up to `runs` times or until
/// one more run would take it past `budget` seconds (at least once, after one untimed
/// warm-up: in [`measure`](Self::measure) only when a pass is shorter than 50 ms), and the
/// median is the answer.
pub struct CpuDevice<'m, L: Lm> {
    model: &'m L,
    runs: usize,
    budget: f64,
    state: Option<(usize, usize, Vec<L::Cache>)>,
}

impl<'m, L: Lm> CpuDevice<'m, L> {
    /// A device running `model`, repeating each pass up to `runs` times within `budget`
    /// seconds. Errors: `runs` 0 or over [`MAX_RUNS`], a budget that is not a positive number.
    pub fn new(model: &'m L, runs: usize, budget: f64) -> Result<Self, Error> {
        if runs == 0 || runs > MAX_RUNS || !(budget.is_finite() && budget > 0.0) {
            return Err(Error::Argument(format!(
                "a device needs 1 to {MAX_RUNS} runs and a positive time budget, got {runs} and {budget}"
            )));
        }
        Ok(CpuDevice {
            model,
            runs,
            budget,
            state: None,
        })
    }

    /// Every timed run of one pass shape `batch × n_new` after `ctx` cached tokens, seconds:
    /// up to `runs` passes within the budget, after an untimed warm-up unless the first pass
    /// takes 50 ms or more. Errors as [`pass`](Self::pass).
    pub fn measure(&mut self, batch: usize, n_new: usize, ctx: usize) -> Result<Sample, Error> {
        let first = self.pass(batch, n_new, ctx)?;
        let mut runs = Vec::with_capacity(self.runs);
        if first > 0.05 {
            runs.push(first); // long enough to be warm from the start
        }
        let start = Instant::now();
        while runs.len() < self.runs
            && (runs.is_empty() || start.elapsed().as_secs_f64() + first < self.budget)
        {
            runs.push(self.pass(batch, n_new, ctx)?);
        }
        Sample::new(runs)
    }

    /// Every timed run of each pass shape `batch × n` for `n` in `ns`, seconds, the shapes
    /// taken in turn (one pass of each per round, up to `runs` rounds, a shape dropping out
    /// once one more run would take its own time past `budget`), so that a change of load on
    /// a shared host falls on every shape alike. Every shape has one untimed warm-up pass
    /// first (its first pass after a change of batch also fills its caches and the pass's
    /// scratch memory). Errors as [`pass`](Self::pass).
    pub fn measure_each(
        &mut self,
        batch: usize,
        ns: &[usize],
        ctx: usize,
    ) -> Result<Vec<Sample>, Error> {
        self.measure_each_with(batch, ns, ctx, &mut |_| Ok(()))
    }

    /// [`measure_each`](Self::measure_each), calling `before(i)` right before every timed
    /// pass, `i` the index in `ns` of its shape: a measurement of the machine taken there
    /// (its peak, its bandwidth) sees the host as loaded while that pass ran (see
    /// [`beside_each_pass`] to pair them). Errors as `measure_each`, and those of `before`.
    pub fn measure_each_with(
        &mut self,
        batch: usize,
        ns: &[usize],
        ctx: usize,
        before: &mut dyn FnMut(usize) -> Result<(), Error>,
    ) -> Result<Vec<Sample>, Error> {
        let mut runs: Vec<Vec<f64>> = vec![Vec::with_capacity(self.runs); ns.len()];
        let mut spent = vec![0.0f64; ns.len()];
        for &n in ns {
            self.pass(batch, n, ctx)?; // warm-up
        }
        loop {
            let due: Vec<bool> = (0..ns.len())
                .map(|i| {
                    let last = runs[i].last().copied().unwrap_or(0.0);
                    runs[i].len() < self.runs
                        && (runs[i].is_empty() || spent[i] + last < self.budget)
                })
                .collect();
            if !due.contains(&true) {
                break;
            }
            for (i, &n) in ns.iter().enumerate().filter(|&(i, _)| due[i]) {
                before(i)?;
                let t = self.pass(batch, n, ctx)?;
                runs[i].push(t);
                spent[i] += t;
            }
        }
        runs.into_iter().map(Sample::new).collect()
    }

    /// Times exactly one pass, seconds (prefilling the caches first if the last pass had
    /// another batch or context). Errors on a zero size or a pass past `max_seq`.
    pub fn pass(&mut self, batch: usize, n_new: usize, ctx: usize) -> Result<f64, Error> {
        if batch == 0 || n_new == 0 {
            return Err(Error::Argument(
                "a pass feeds at least one token to one sequence".into(),
            ));
        }
        let len = ctx.saturating_add(n_new);
        if len > self.model.max_seq() {
            return Err(transformer_lab::Error::TooLong {
                len,
                max: self.model.max_seq(),
            }
            .into());
        }
        let vocab = self.model.vocab() as u64;
        let token = |s: usize, i: usize| ((s as u64 * 7919 + i as u64 * 104_729) % vocab) as u32;
        if !matches!(&self.state, Some((b, c, _)) if *b == batch && *c == ctx) {
            let mut caches = (0..batch)
                .map(|_| self.model.new_cache())
                .collect::<Result<Vec<_>, Error>>()?;
            if ctx > 0 {
                let prompts: Vec<Vec<u32>> = (0..batch)
                    .map(|s| (0..ctx).map(|i| token(s, i)).collect())
                    .collect();
                let feeds: Vec<&[u32]> = prompts.iter().map(Vec::as_slice).collect();
                let mut refs: Vec<&mut L::Cache> = caches.iter_mut().collect();
                self.model.extend(&mut refs, &feeds)?;
            }
            self.state = Some((batch, ctx, caches));
        }
        let Some((_, _, caches)) = &mut self.state else {
            unreachable!("state set above");
        };
        let fed: Vec<Vec<u32>> = (0..batch)
            .map(|s| (0..n_new).map(|i| token(s + 1, ctx + i)).collect())
            .collect();
        let feeds: Vec<&[u32]> = fed.iter().map(Vec::as_slice).collect();
        let mut refs: Vec<&mut L::Cache> = caches.iter_mut().collect();
        let t0 = Instant::now();
        std::hint::black_box(self.model.extend(&mut refs, &feeds)?);
        let secs = t0.elapsed().as_secs_f64();
        for c in caches.iter_mut() {
            L::truncate(c, ctx);
        }
        Ok(secs)
    }
}

/// Pairs measurements taken between passes with the passes they bracket: `order[k]` is
/// the shape of the `k`-th timed pass, `probes[k]` was taken right before it and
/// `probes[k + 1]` right after it (so `probes` has one more entry than `order`: the last
/// one after the last pass). Returns, for each of `shapes` shapes, the probes on either
/// side of each of its passes, in time order (two per pass; one probe between two passes of
/// the same shape counts twice). Errors when the lengths do not fit or a shape is out of
/// range.
///
/// ```
/// use host_lab::device::beside_each_pass;
/// // Passes of shapes 0, 1, 0 with probes a | 0 | b | 1 | c | 0 | d.
/// let beside = beside_each_pass(&[0, 1, 0], &['a', 'b', 'c', 'd'], 2).unwrap();
/// assert_eq!(beside, [vec!['a', 'b', 'c', 'd'], vec!['b', 'c']]);
/// ```
pub fn beside_each_pass<T: Copy>(
    order: &[usize],
    probes: &[T],
    shapes: usize,
) -> Result<Vec<Vec<T>>, Error> {
    if probes.len() != order.len() + 1 || order.iter().any(|&i| i >= shapes) {
        return Err(Error::Argument(format!(
            "{} probes cannot bracket {} passes of {shapes} shapes ({order:?})",
            probes.len(),
            order.len()
        )));
    }
    let mut beside = vec![Vec::new(); shapes];
    for (k, &i) in order.iter().enumerate() {
        beside[i].extend([probes[k], probes[k + 1]]);
    }
    Ok(beside)
}

/// The two costs of a speculative round timed as a round pays them: per run, `gamma` steps
/// of `draft` (one token per sequence; their mean) right after the target's pass of
/// `gamma + 1` tokens per sequence, then that pass. One untimed draft step and one untimed
/// target pass come first, so that the draft's KV caches are filled before the target runs.
///
/// The first draft step of each run so finds the CPU caches as a verification left them,
/// the later ones as the previous draft step left them, as in real speculative decoding: a
/// draft small enough for the last-level cache stays there when its steps are timed back
/// to back, but every verification evicts it. Each verification finds the CPU caches as the
/// draft steps left them. Both devices' KV caches are rolled back after every pass. (The
/// real loop's first draft step of a round feeds 1 or 2 tokens; this one always 1.) Every
/// run is timed, whatever the devices' budgets.
///
/// Returns `(draft step, verification)`, seconds, `runs` values each. Errors: `runs` or
/// `gamma` 0 or over [`MAX_RUNS`], and the errors of [`CpuDevice::pass`].
pub fn round_costs<T: Lm, D: Lm>(
    target: &mut CpuDevice<'_, T>,
    draft: &D,
    (batch, ctx): (usize, usize),
    gamma: usize,
    runs: usize,
) -> Result<(Sample, Sample), Error> {
    if runs == 0 || runs > MAX_RUNS || gamma == 0 || gamma > MAX_RUNS {
        return Err(Error::Argument(format!(
            "a round needs 1 to {MAX_RUNS} runs and draft steps, got {runs} runs and γ = {gamma}"
        )));
    }
    // Every pass is timed once: the device's own run count and budget are not used.
    let mut draft = CpuDevice::new(draft, 1, 1.0)?;
    let verify = gamma.saturating_add(1);
    draft.pass(batch, 1, ctx)?;
    target.pass(batch, verify, ctx)?;
    let (mut steps, mut passes) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        let mut sum = 0.0;
        for _ in 0..gamma {
            sum += draft.pass(batch, 1, ctx)?;
        }
        steps.push(sum / gamma as f64);
        passes.push(target.pass(batch, verify, ctx)?);
    }
    Ok((Sample::new(steps)?, Sample::new(passes)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaled::SCALED_BASE;

    #[test]
    fn every_shape_runs_once_a_round_and_the_machine_is_measured_before_each_timed_pass() {
        let log = std::sync::Mutex::new(Vec::new());
        let m = Logged {
            name: 'T',
            log: &log,
        };
        // Passes of nothing against a budget of seconds: the run count decides.
        let mut dev = CpuDevice::new(&m, 3, 10.0).unwrap();
        let mut before = Vec::new();
        let samples = dev
            .measure_each_with(2, &[1, 2, 4], 4, &mut |i| {
                before.push((i, log.lock().unwrap().len()));
                Ok(())
            })
            .unwrap();
        assert!(samples.iter().all(|s| s.runs.len() == 3));
        // The log: the 4 cached tokens prefilled, one warm-up of each shape, then 3 rounds.
        let fed: Vec<usize> = log.lock().unwrap().iter().map(|&(_, n)| n).collect();
        let round = [1, 2, 4];
        let expected: Vec<usize> = [4]
            .into_iter()
            .chain(round.into_iter().cycle().take(4 * 3))
            .collect();
        assert_eq!(fed, expected);
        // `before(i)` came right before each timed pass (none before a warm-up), with the
        // index of the shape that pass fed.
        let timed: Vec<(usize, usize)> = (0..9).map(|k| (k % 3, 4 + k)).collect();
        assert_eq!(before, timed);
        let refuse = dev.measure_each_with(1, &[1], 4, &mut |_| {
            Err(Error::Measure("the probe failed".into()))
        });
        assert!(matches!(refuse, Err(Error::Measure(m)) if m == "the probe failed"));
        assert!(dev.measure_each(1, &[1, 20], 0).is_err(), "past max_seq");
    }

    #[test]
    fn probes_pair_with_the_passes_on_either_side_of_them() {
        // Shapes 1, 0, 1, 1: probes 10 | 1 | 11 | 0 | 12 | 1 | 13 | 1 | 14.
        let beside = beside_each_pass(&[1, 0, 1, 1], &[10, 11, 12, 13, 14], 3).unwrap();
        assert_eq!(beside, [vec![11, 12], vec![10, 11, 12, 13, 13, 14], vec![]]);
        assert!(beside_each_pass(&[0], &[1], 1).is_err(), "a probe short");
        assert!(
            beside_each_pass(&[0], &[1, 2, 3], 1).is_err(),
            "a probe over"
        );
        assert!(beside_each_pass(&[2], &[1, 2], 2).is_err(), "no such shape");
        assert_eq!(
            beside_each_pass::<u8>(&[], &[7], 0).unwrap(),
            Vec::<Vec<u8>>::new()
        );
    }

    /// A model that runs nothing and logs every pass: its name and the tokens fed to each
    /// sequence.
    struct Logged<'l> {
        name: char,
        log: &'l std::sync::Mutex<Vec<(char, usize)>>,
    }

    impl Lm for Logged<'_> {
        type Cache = usize;
        fn vocab(&self) -> usize {
            4
        }
        fn max_seq(&self) -> usize {
            16
        }
        fn new_cache(&self) -> Result<usize, Error> {
            Ok(0)
        }
        fn cache_len(cache: &usize) -> usize {
            *cache
        }
        fn truncate(cache: &mut usize, len: usize) {
            *cache = len.min(*cache);
        }
        fn extend(
            &self,
            caches: &mut [&mut usize],
            feeds: &[&[u32]],
        ) -> Result<ndarray::Array2<f32>, Error> {
            for (c, f) in caches.iter_mut().zip(feeds) {
                **c += f.len();
            }
            self.log.lock().unwrap().push((self.name, feeds[0].len()));
            Ok(ndarray::Array2::zeros((
                feeds.iter().map(|f| f.len()).sum(),
                4,
            )))
        }
        fn weight_bytes(&self) -> u64 {
            0
        }
        fn kv_bytes_per_token(&self) -> u64 {
            0
        }
        fn config(&self) -> transformer_lab::Config {
            SCALED_BASE
        }
    }

    #[test]
    fn a_round_runs_its_draft_steps_right_after_a_verification_and_rolls_back_every_pass() {
        let log = std::sync::Mutex::new(Vec::new());
        let (t, d) = (
            Logged {
                name: 'T',
                log: &log,
            },
            Logged {
                name: 'D',
                log: &log,
            },
        );
        let mut target = CpuDevice::new(&t, 1, 1.0).unwrap();
        let (steps, passes) = round_costs(&mut target, &d, (2, 6), 3, 2).unwrap();
        assert_eq!((steps.runs.len(), passes.runs.len()), (2, 2));
        // Each model first prefills its 6 cached tokens (untimed), the draft before the
        // target's first pass; then every run: 3 draft steps, one verification of 4 tokens.
        let round = [('D', 1), ('D', 1), ('D', 1), ('T', 4)];
        let mut expected = vec![('D', 6), ('D', 1), ('T', 6), ('T', 4)];
        expected.extend(round.iter().chain(&round));
        assert_eq!(*log.lock().unwrap(), expected);
        // The caches were rolled back after every pass: 6 cached + 10 fed fill max_seq
        // exactly, one more token does not fit.
        assert!(round_costs(&mut target, &d, (2, 6), 9, 1).is_ok());
        assert!(round_costs(&mut target, &d, (2, 6), 10, 1).is_err());
        assert!(round_costs(&mut target, &d, (2, 6), 0, 4).is_err());
        assert!(round_costs(&mut target, &d, (2, 6), 3, 0).is_err());
        assert!(round_costs(&mut target, &d, (2, 6), usize::MAX, 1).is_err());
        // A pass too long to count is an error, not an overflow.
        assert!(round_costs(&mut target, &d, (2, 6), usize::MAX - 1, 1).is_err());
        assert!(target.pass(1, usize::MAX, 6).is_err());
    }
}
