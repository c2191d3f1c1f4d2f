//! CS349E lecture 91 — 移植示例：量化的草稿在哪里和目标分道扬镳 — as executable Rust: the
//! port of `tools/port_example/draft_agreement.py`, printing its bytes.

pub mod draft_agreement;

/// CS349E 第 91 讲 —— 移植示例：量化的草稿在哪里和目标分道扬镳。
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "lecture91", version)]
pub struct Cli {}

impl lecture_kit::Lecture for Cli {
    const NUMBER: u32 = 91;
    const DEFAULT_ONLY: &'static str = "【此条针对默认配置】";
    fn scripts() -> Vec<lecture_kit::Script> {
        vec![draft_agreement::script()]
    }
}
