//! CS349E lecture 90 — 移植示例：推理服务的排队模拟 — as executable Rust. One module per script.

pub mod serving_sim;

use lecture_flags::ModelArgs;
use lecture_kit::{Block, CommonArgs, Error, Lecture, Script};

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
    type Setup = ModelArgs;
    const SCRIPTS: &'static [Script<ModelArgs>] = &[Script {
        name: "01_serving_sim",
        title: "decode 一步的账，与请求排队的延迟",
        registry: serving_sim::DEMOS,
        default_demos: &[1, 2],
    }];
    fn common(&self) -> &CommonArgs {
        &self.common
    }
    fn setup(&self) -> Result<ModelArgs, Error> {
        Ok(self.models)
    }
    fn catalog() -> Vec<Block> {
        lecture_flags::catalog()
    }
}
