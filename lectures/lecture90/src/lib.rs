//! CS349E lecture 90 — 移植示例：推理服务的排队模拟 — as executable Rust. One module per script.

pub mod serving_sim;

use lecture_flags::ModelArgs;
use lecture_kit::{Block, CommonArgs, Lecture, Script};

/// CS349E 第 90 讲 —— 移植示例：推理服务的排队模拟。
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "lecture90", version)]
pub struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    models: ModelArgs,
}

impl Lecture for Cli {
    const NUMBER: u32 = 90;
    const SCRIPTS: &'static [Script<Self>] = &[Script {
        name: "01_serving_sim",
        title: "decode 一步的账，与请求排队的延迟",
        demos: &[1, 2],
        default_demos: &[1, 2],
        report: |cli, chosen| lecture_kit::demos(&cli.models, serving_sim::DEMOS, chosen),
    }];
    fn common(&self) -> &CommonArgs {
        &self.common
    }
    fn catalog() -> Vec<Block> {
        lecture_flags::catalog()
    }
}
