//! CS349E lecture 90 — 移植示例：推理服务的排队模拟 — as executable Rust. One module per script.

pub mod serving_sim;

use lecture_kit::{Block, Lecture, Script};

/// CS349E 第 90 讲 —— 移植示例：推理服务的排队模拟。
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "lecture90", version)]
pub struct Cli {}

impl Lecture for Cli {
    const NUMBER: u32 = 90;
    const DEFAULT_ONLY: &'static str = "【此条针对默认配置：一块 H100、Llama-3.1-8B】";
    fn scripts() -> Vec<Script> {
        let title = "decode 一步的账，与请求排队的延迟";
        vec![Script::new("01_serving_sim", title, serving_sim::demos())]
    }
    fn catalog() -> Vec<Block> {
        lecture_flags::catalog()
    }
}
