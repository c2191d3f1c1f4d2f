//! The `lecture06` command line: which demos, on which hardware, with which models, in
//! which form.
//!
//! Exit codes: 0 on success (also when the reader of the output leaves early, as in
//! `lecture06 | head -3`); 2 for bad flags or an unwritable `--plot` folder, with a
//! one-line error that lists the valid choices; 1 for anything else.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hw_specs::{ACCELERATORS, Accelerator};
use llm_math::{MODELS, ModelConfig};

use crate::spec_decode_on_hardware::Setup;
use crate::{Error, Format, Options, run_with};

/// CS349E 第 6 讲 · 05_spec_decode_on_hardware —— 投机解码在硬件上：c、批大小、上下文与树形验证。
///
/// With no flag, prints the lecture exactly as the original script does (one H100,
/// Llama-3.1-8B + Llama-3.2-1B, α = 0.8).
#[derive(Debug, Parser)]
#[command(name = "lecture06", version)]
pub struct Cli {
    /// Print only this demo (1, 2, 3 or 4); repeat for several. Default: 1, 2 and 3, in order.
    /// Demo 4 (opt-in; ~5 s with --release, ~10 s in the dev profile) runs speculative
    /// decoding for real on the toy model: 实测。
    #[arg(long = "demo", value_name = "N", value_parser = clap::value_parser!(u8).range(1..=4))]
    pub demos: Vec<u8>,
    /// Accelerator (see --list), e.g. H200, A100, MI300X.
    #[arg(long, value_name = "NAME", default_value = "H100", value_parser = parse_hw)]
    pub hw: Accelerator,
    /// Target model (see --list), e.g. Llama-3.1-70B.
    #[arg(long, value_name = "NAME", default_value = "Llama-3.1-8B", value_parser = parse_model)]
    pub target: ModelConfig,
    /// Draft model (see --list), e.g. Llama-3.2-3B.
    #[arg(long, value_name = "NAME", default_value = "Llama-3.2-1B", value_parser = parse_model)]
    pub draft: ModelConfig,
    /// Acceptance rate α for demo 2, in (0, 1].
    #[arg(long, value_name = "A", default_value = "0.8", value_parser = parse_alpha)]
    pub alpha: f64,
    /// Output form: the lecture text, or only its tables (markdown, csv), or all figures (json).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write SVG figures of the chosen demos into DIR (knee.svg, batch.svg, trees.svg).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// List the accelerators and models the flags accept, and exit.
    #[arg(long)]
    pub list: bool,
}

fn parse_hw(name: &str) -> Result<Accelerator, String> {
    hw_specs::accelerator(name)
        .copied()
        .map_err(|e| e.to_string())
}

fn parse_model(name: &str) -> Result<ModelConfig, String> {
    llm_math::model(name).copied().map_err(|e| e.to_string())
}

fn parse_alpha(text: &str) -> Result<f64, String> {
    let a: f64 = text
        .parse()
        .map_err(|_| format!("α must be a number in (0, 1], got {text:?}"))?;
    if a > 0.0 && a <= 1.0 {
        Ok(a)
    } else {
        Err(format!("α must be in (0, 1], got {a}"))
    }
}

impl Cli {
    /// The options these flags ask for.
    pub fn options(&self) -> Options {
        let mut demos = if self.demos.is_empty() {
            vec![1, 2, 3]
        } else {
            self.demos.clone()
        };
        demos.sort_unstable();
        demos.dedup();
        Options {
            demos,
            setup: Setup {
                hw: self.hw,
                target: self.target,
                draft: self.draft,
                alpha: self.alpha,
            },
            format: self.format,
            plot_dir: self.plot.clone(),
        }
    }
}

/// Runs the command line `args` (program name first), printing to `out` and errors to
/// `err`; returns the process exit code.
pub fn main_with(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    ExitCode::from(exit_code(args, out, err))
}

/// [`main_with`] with the exit code as a number (0, 1 or 2), for tests.
pub fn exit_code(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version
            let _ = write!(out, "{}", e.render());
            return 0;
        }
        Err(e) => {
            let _ = writeln!(err, "lecture06: {}", one_line(&e.render().to_string()));
            return 2;
        }
    };
    let mut out = BufWriter::new(out);
    let result = if cli.list {
        list(&mut out).map_err(Error::from)
    } else {
        run_with(&mut out, &cli.options())
    };
    let result = result.and_then(|()| out.flush().map_err(Error::from));
    match result {
        Ok(()) => 0,
        Err(e) if e.is_broken_pipe() => 0,
        Err(e @ Error::Plot(_)) => {
            let _ = writeln!(err, "lecture06: {e}");
            2
        }
        Err(e) => {
            let _ = writeln!(err, "lecture06: {e}");
            1
        }
    }
}

/// Folds clap's multi-line message into one line: no "error:" prefix, no usage, no tip.
fn one_line(rendered: &str) -> String {
    rendered
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints the registries `--hw`, `--target` and `--draft` accept.
fn list(out: &mut dyn Write) -> io::Result<()> {
    let hw_rows: Vec<Vec<String>> = ACCELERATORS
        .iter()
        .map(|a| {
            vec![
                a.name.to_string(),
                format!("{:.1}", a.peak_flops_bf16 / 1e12),
                format!("{:.3}", a.hbm_bandwidth / 1e12),
                format!("{}", a.memory_bytes / 1e9),
                a.aliases.join(", "),
            ]
        })
        .collect();
    writeln!(out, "加速卡（--hw）：")?;
    console::print_table(
        out,
        &["名称", "bf16 TFLOP/s", "带宽 TB/s", "显存 GB", "别名"],
        &hw_rows,
    )?;
    let model_rows: Vec<Vec<String>> = MODELS
        .iter()
        .map(|m| {
            vec![
                m.name.to_string(),
                format!("{:.2}", m.n_params() as f64 / 1e9),
                m.n_layers.to_string(),
                m.d_model.to_string(),
                format!("{}/{}", m.n_heads, m.n_kv_heads),
                format!("{}", m.kv_bytes_per_token() / 1024),
            ]
        })
        .collect();
    writeln!(out, "\n模型（--target、--draft）：")?;
    console::print_table(
        out,
        &[
            "名称",
            "参数（B）",
            "层数",
            "d_model",
            "头/KV 头",
            "KV KiB/token",
        ],
        &model_rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_messages_fold_into_one_line() {
        let msg = "error: invalid value 'xml' for '--format <FORMAT>'\n  [possible values: text, markdown, csv, json]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(msg),
            "invalid value 'xml' for '--format <FORMAT>' [possible values: text, markdown, csv, json]"
        );
    }

    #[test]
    fn alpha_must_be_in_the_half_open_unit_interval() {
        assert_eq!(parse_alpha("0.7"), Ok(0.7));
        assert_eq!(parse_alpha("1"), Ok(1.0));
        assert!(parse_alpha("0").unwrap_err().contains("(0, 1]"));
        assert!(
            parse_alpha("1.5").is_err() && parse_alpha("NaN").is_err() && parse_alpha("x").is_err()
        );
    }

    #[test]
    fn no_flags_mean_the_default_lecture() {
        let cli = Cli::try_parse_from(["lecture06"]).unwrap();
        assert_eq!(cli.options(), Options::default());
        let cli = Cli::try_parse_from(["lecture06", "--demo", "3", "--demo", "1", "--demo", "3"])
            .unwrap();
        assert_eq!(cli.options().demos, vec![1, 3]);
    }
}
