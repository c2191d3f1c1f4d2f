//! Script 01 — 移植示例：推理服务的排队模拟: the demo `cargo xtask new-lecture` writes. Replace it with yours.

use decode_lab::verify_time;
use lecture_flags::{ModelArgs, ModelInput::Hw, ModelInput::Target};
use lecture_kit::{Axis, Demo, Error, Figure, Out, Panel, Series, row, value::ratio, value::time};

/// The script's demos and the inputs each reads (not `--draft`: it cannot move demo 1).
pub const DEMOS: &[Demo<ModelArgs>] = &[Demo::new(1, &[Hw, Target], demo1)];

/// 演示 1：decode 一步的时间与批大小（上下文 1024，每次前向固定开销 1 ms）。
pub fn demo1(out: &mut Out, m: &ModelArgs) -> Result<(), Error> {
    let (target, hw) = (m.target.name, m.hw.name);
    out.header(format!("演示 1：{target} 在一块 {hw} 上 decode 一步"));
    let step = |batch| verify_time(&m.target, &m.hw, batch, 1024, 1, 1e-3);
    let (t1, t256) = (step(1)?, step(256)?);
    let (mut rows, mut points) = (Vec::new(), Vec::new());
    for batch in [1u64, 16, 64, 256] {
        let t = step(batch)?;
        rows.push(row![batch, time(t), time(t / batch as f64)]);
        points.push((batch as f64, 1e3 * t));
    }
    out.table(["批大小", "一步", "每个 token"], rows);
    let (t, r) = (time(t256), ratio(t256 / t1, 1));
    let note = format!("批 256 一步 {t}，是批 1 的 {r} 倍：读权重的时间被整批分摊。");
    out.observations([note.into()]);
    let mut panel = Panel::new("", Axis::log("批大小"), Axis::linear("一步（ms）"));
    panel.series.push(Series::line("一步", points));
    out.figure(Figure::new("decode 一步的时间", vec![panel]));
    Ok(())
}
