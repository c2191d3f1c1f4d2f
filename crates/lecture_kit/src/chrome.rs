//! The kit's page words, in the course's language: with `console::chrome`, the only Chinese
//! the kit holds (a lecture's own sentences live in the lecture). Everything the runner and
//! the renderers print around a lecture's content.

/// The heading of the observations on the HTML page.
pub const OBSERVATIONS: &str = console::chrome::OBSERVATIONS;
/// The heading of the HTML page's list of sections.
pub const CONTENTS: &str = "目录";
/// What a measured value prints when measured values are masked.
pub const MASKED: &str = "〔实测〕";
/// What an SVG panel with neither points nor a message of its own says (for
/// `render/svg/place.rs`, which still writes it inline).
pub const NO_DATA: &str = "（没有可画的数据）";
/// The full-width colon that ends a line introducing a table ("…要多久：").
pub const COLON: char = '：';
/// The brackets of a note line ("（括号里是…）"), set apart on the HTML page.
pub const NOTE: (char, char) = ('（', '）');

/// The HTML page's title: "CS349E 第 6 讲 · 05_spec_decode_on_hardware".
pub fn page_title(lecture: u32, script: &str) -> String {
    format!("CS349E 第 {lecture} 讲 · {script}")
}

/// The HTML page's line saying where it comes from.
pub fn generated_by(lecture: u32) -> String {
    format!("由 <code>lecture{lecture:02} --format html</code> 生成：与终端输出同一次计算的讲义。")
}

/// The caption of a demo's `k`-th table when no line introduces it: the header, numbered.
pub fn table_caption(header: &str, k: usize) -> String {
    format!("{header}（表 {k}）")
}

/// `--list`: the line before the scripts table, and its caption.
pub fn scripts_line(lecture: u32) -> String {
    format!("{}：", scripts_caption(lecture))
}

/// `--list`: the scripts table's caption.
pub fn scripts_caption(lecture: u32) -> String {
    format!("第 {lecture} 讲的脚本（--script）")
}

/// `--list`: the scripts table's headers (name, question, demos).
pub const SCRIPTS_HEADERS: [&str; 3] = ["名称", "问题", "演示（--demo）"];

/// The note after a demo that ignores flags the user gave ("--alpha" …): they cannot move
/// its figures.
pub fn unread_note(flags: &[String]) -> String {
    format!(
        "（这个演示不读 {}，改了也不影响这里的数字。）",
        flags.join("、")
    )
}

/// The usage error when `--list` is given with a flag that only matters to demos.
pub fn unread_by_list(flag: &str) -> String {
    format!(
        "--list prints the scripts and registries and runs no demo, so {flag} changes nothing: drop one of them"
    )
}

/// The usage error when no chosen demo reads a flag the user gave.
pub fn unread_by_all(flag: &str) -> String {
    format!(
        "{flag} changes nothing in the chosen demos (none of them reads it): drop it, or add a demo that reads it with --demo"
    )
}
