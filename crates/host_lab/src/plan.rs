//! What demo 6 measures, and how hard: [`Plan::demo`] and, for tests and unoptimised
//! builds, [`Plan::quick`] (re-exported by [`crate::figures`]).

/// What [`crate::figures::run`] measures, and how hard.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Seed of the scaled model's parameters.
    pub seed: u64,
    /// Whether the scaled model outgrows the last-level cache
    /// ([`crate::scaled::scaled_config`]: at least [`crate::scaled::CACHE_MULTIPLE`] caches,
    /// so that a decode step streams its weights from memory); otherwise the shallowest
    /// scaled model ([`crate::scaled::shallowest_config`], 2 layers, 58 MB), the same on
    /// every machine. The bandwidth probe streams 8 caches ([`crate::measure::stream_bytes`])
    /// or, with the shallow model, [`crate::measure::MIN_STREAM_BYTES`] (a large cache may
    /// then hold part of it).
    pub past_cache: bool,
    /// Runs of each machine measurement (peak, bandwidth).
    pub machine_runs: usize,
    /// Most runs of each timed pass shape; exactly this many rounds when a speculative
    /// round's costs are timed ([`crate::device::round_costs`], which has no budget).
    pub runs: usize,
    /// Seconds after which a pass shape stops being repeated (it runs at least once).
    pub pass_budget: f64,
    /// Tokens already cached per sequence in the forward-time sweep.
    pub ctx: usize,
    /// Batches of the sweep: 1 and two larger ones.
    pub batches: [usize; 3],
    /// The sweep feeds n = 1, 2, 4, … up to this many tokens per sequence.
    pub max_n: usize,
    /// The sweep skips passes of more tokens than this (batch × n): deep in the
    /// compute-bound regime the line only goes on, and those passes take most of the time.
    pub max_tokens: usize,
    /// Prompt length of the speculative decoding runs.
    pub prompt_len: usize,
    /// Tokens generated per sequence in the speculative decoding runs.
    pub n_new: usize,
    /// Drafted tokens per round.
    pub gamma: usize,
    /// Batch 1 and the batch at which the roofline says speculation stops paying.
    pub spec_batches: [usize; 2],
    /// Runs of plain and of speculative decoding each at batch 1 (alternating; the fastest
    /// counts); one at the larger batch, whose runs take seconds and whose speedup is far
    /// from 1 either way.
    pub spec_runs: usize,
}

impl Plan {
    /// The plan demo 6 runs: batches 1, 4, 8; n up to 512 after 64 cached tokens, at most
    /// 512 tokens a pass; 48 tokens after 16-token prompts with γ = 3 at batches 1 and 16.
    pub fn demo() -> Plan {
        Plan {
            seed: 0,
            past_cache: true,
            machine_runs: 7,
            runs: 9,
            pass_budget: 0.4,
            ctx: 64,
            batches: [1, 4, 8],
            max_n: 512,
            max_tokens: 512,
            prompt_len: 16,
            n_new: 48,
            gamma: 3,
            spec_batches: [1, 16],
            spec_runs: 7,
        }
    }

    /// A plan of a few seconds, for tests and unoptimised builds, on the shallowest scaled
    /// model (2 layers, 58 MB whatever the cache; on a virtual machine that reports a
    /// 260 MiB L3 the past-cache model is 1 GB): 3 runs of each machine figure, batches 1,
    /// 2, 4 fed n = 1, 2, 4 after 16 cached tokens, 8 tokens after 8-token prompts with
    /// γ = 3 at batches 1 and 16, one run each.
    pub fn quick() -> Plan {
        Plan {
            seed: 0,
            past_cache: false,
            machine_runs: 3,
            runs: 5,
            pass_budget: 0.1,
            ctx: 16,
            batches: [1, 2, 4],
            max_n: 4,
            max_tokens: 16,
            prompt_len: 8,
            n_new: 8,
            gamma: 3,
            spec_batches: [1, 16],
            spec_runs: 1,
        }
    }

    /// The context halfway through generation (`prompt_len + n_new / 2` tokens): where a
    /// draft's c and the speculative round's predictions are priced.
    pub fn mid_generation_ctx(&self) -> usize {
        self.prompt_len + self.n_new / 2
    }
}
