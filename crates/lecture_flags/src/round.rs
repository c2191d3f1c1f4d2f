//! What a speculative round asks beside the roofline's setup, as flag groups: the
//! acceptance rate ([`Alpha`]), a fixed γ ([`Gamma`]), a tree known by its size and
//! measured acceptance ([`MeasuredTree`]), and the batch × context grid a demo sweeps
//! ([`Grid`]).

use clap::{Arg, ArgMatches, Command, FromArgMatches};
use decode_lab::{Scenario, TreeShape};
use lecture_kit::parse::{count, real};
use serde::Serialize;

use crate::roofline::{MAX_BATCH, MAX_CTX, MAX_GAMMA, MAX_TREE_NODES};

/// The most values `--batch` or `--ctx` may list: the grid's rows and columns, each a
/// column of figures in the printed table (so at most 64 × 64 points).
pub const MAX_LIST: usize = 64;

/// The batch sizes and contexts a demo sweeps (`--batch LIST`, `--ctx LIST`): the lists
/// given, or a demo's own (the script's) where none is given.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args, Serialize)]
#[command(next_help_heading = "What if")]
pub struct Grid {
    /// Batch sizes, e.g. 1,8,32 (demo 2's rows; a single-point demo runs at the first).
    #[arg(long = "batch", value_name = "LIST", value_delimiter = ',',
          value_parser = count("batch sizes", 1, MAX_BATCH), allow_negative_numbers = true)]
    pub batches: Vec<u64>,
    /// Context lengths, e.g. 8192,131072 (demo 2's columns; a single-point demo runs at the
    /// first).
    #[arg(long = "ctx", value_name = "LIST", value_delimiter = ',',
          value_parser = count("context lengths in tokens", 1, MAX_CTX),
          allow_negative_numbers = true)]
    #[serde(rename = "ctxs_tokens")]
    pub ctxs: Vec<u64>,
}

impl Grid {
    /// The batches given, or `script`'s.
    pub fn batches_or(&self, script: &[u64]) -> Vec<u64> {
        given_or(&self.batches, script)
    }

    /// The contexts given, or `script`'s.
    pub fn ctxs_or(&self, script: &[u64]) -> Vec<u64> {
        given_or(&self.ctxs, script)
    }

    /// The point a single-point demo runs at: the first batch and context given, or
    /// `script`'s.
    pub fn point_or(&self, script: (u64, u64)) -> (u64, u64) {
        let batch = self.batches.first().copied().unwrap_or(script.0);
        let ctx = self.ctxs.first().copied().unwrap_or(script.1);
        (batch, ctx)
    }

    /// Refuses a list longer than [`MAX_LIST`] or with a value twice.
    pub fn check(&self) -> Result<(), String> {
        for (flag, list) in [("--batch", &self.batches), ("--ctx", &self.ctxs)] {
            if list.len() > MAX_LIST {
                return Err(format!(
                    "{flag} lists {} values; at most {MAX_LIST} (a table of {MAX_LIST} rows or \
                     columns is already more than a slide shows)",
                    list.len()
                ));
            }
            let twice = list
                .iter()
                .enumerate()
                .find(|(i, v)| list[..*i].contains(v));
            if let Some((_, v)) = twice {
                return Err(format!("{flag} lists {v} twice; give each value once"));
            }
        }
        Ok(())
    }
}

fn given_or(given: &[u64], script: &[u64]) -> Vec<u64> {
    if given.is_empty() {
        script.to_vec()
    } else {
        given.to_vec()
    }
}

/// `--gamma N`: a fixed draft length γ (as engines run) instead of the best one; with
/// `--tau`, the depth of the measured tree ([`MeasuredTree`]), and then no fixed γ.
///
/// Read by hand rather than derived: whether `--gamma` is a fixed γ depends on whether
/// `--tau` was given, which a demo that reads only γ still needs to know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Gamma {
    /// The fixed γ, or `None` for the best one.
    pub gamma: Option<u32>,
    /// The measured tree's depth (`--gamma` beside `--tau`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_depth: Option<u32>,
}

impl Gamma {
    /// How a table names its γ: "固定 γ" when fixed, else "最优 γ" ([`crate::chrome`]).
    pub fn name(&self) -> &'static str {
        crate::chrome::gamma_name(self.gamma.is_some())
    }
}

impl clap::Args for Gamma {
    fn augment_args(command: Command) -> Command {
        command.arg(
            Arg::new("gamma")
                .long("gamma")
                .value_name("N")
                .value_parser(count("draft lengths", 1, MAX_GAMMA))
                .allow_negative_numbers(true)
                .help_heading("What if")
                .help(
                    "A fixed draft length γ (as engines run) instead of the best one; speedups \
                     below 1.0× are printed as slow-downs. With --tau: the depth of the \
                     measured tree",
                ),
        )
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl FromArgMatches for Gamma {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let given = matches.get_one::<u64>("gamma").map(|&g| g as u32);
        let with_tau = matches.try_contains_id("tau").unwrap_or(false);
        Ok(match with_tau {
            true => Gamma {
                gamma: None,
                tree_depth: given,
            },
            false => Gamma {
                gamma: given,
                tree_depth: None,
            },
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// A tree known by its size and its measured acceptance length (`--tau`, `--tree-nodes`,
/// its depth `--gamma`): a demo prints its speedup.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
#[command(next_help_heading = "What if")]
pub struct MeasuredTree {
    /// A measured acceptance length τ (tokens per round): the speedup of a tree of
    /// --tree-nodes nodes and --gamma levels.
    #[arg(long, value_name = "T", allow_hyphen_values = true,
          value_parser = real("tokens per round τ from 1 (the target's own) to 65",
                              |t| (1.0..=MAX_GAMMA as f64 + 1.0).contains(&t)))]
    pub tau: Option<f64>,
    /// Draft tokens verified per round of the measured tree (with --tau).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = count("draft tokens per round", 1, MAX_TREE_NODES))]
    pub tree_nodes: Option<u64>,
}

impl MeasuredTree {
    /// The tree and its τ, if `--tau` was given; a usage error when its size is missing or
    /// cannot hold it (depth from `gamma`).
    pub fn tree(&self, gamma: &Gamma) -> Result<Option<(TreeShape, f64)>, String> {
        let (tau, nodes, depth) = match (self.tau, self.tree_nodes, gamma.tree_depth) {
            (None, None, _) => return Ok(None),
            (Some(tau), Some(nodes), Some(depth)) => (tau, nodes, depth),
            (None, Some(_), _) => return Err("--tree-nodes needs --tau (and --gamma)".into()),
            (Some(_), _, _) => {
                return Err("--tau needs the tree's size: --tree-nodes N and --gamma D".into());
            }
        };
        if u64::from(depth) > nodes || tau > f64::from(depth) + 1.0 {
            return Err(format!(
                "a tree of --gamma {depth} levels has at least {depth} nodes (--tree-nodes \
                 {nodes}) and yields at most depth + 1 = {} tokens a round (--tau {tau})",
                depth + 1
            ));
        }
        let tree = TreeShape::sized(depth.into(), nodes).map_err(|e| e.to_string())?;
        Ok(Some((tree, tau)))
    }
}

/// `--alpha A`: the acceptance rate α.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
pub struct Alpha {
    /// Acceptance rate α, in (0, 1].
    #[arg(long, value_name = "A", default_value_t = Scenario::LECTURE.alpha,
          allow_hyphen_values = true,
          value_parser = real("an acceptance rate α in (0, 1]", |a| a > 0.0 && a <= 1.0))]
    pub alpha: f64,
}
