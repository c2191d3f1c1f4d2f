//! The words `--list` prints around the registries: the course's shared page words for its
//! card and model flags (a lecture's own sentences live in the lecture).

/// The accelerators table: its caption, the line before it, its headers.
pub const ACCELERATORS: &str = "加速卡（--hw）";
/// The line printed before the accelerators table.
pub const ACCELERATORS_LINE: &str = "\n加速卡（--hw）：";
/// The accelerators table's headers: name, bf16 TFLOP/s, bandwidth, memory, aliases.
pub const ACCELERATOR_HEADERS: [&str; 5] = ["名称", "bf16 TFLOP/s", "带宽 TB/s", "显存 GB", "别名"];
/// The models table's caption.
pub const MODELS: &str = "模型（--target、--draft）";
/// The line printed before the models table.
pub const MODELS_LINE: &str = "\n模型（--target、--draft）：";
/// The models table's headers: name, parameters, layers, d_model, heads/KV heads, KV per token.
pub const MODEL_HEADERS: [&str; 6] = [
    "名称",
    "参数（B）",
    "层数",
    "d_model",
    "头/KV 头",
    "KV KiB/token",
];
/// The fields of the heads column.
pub const HEADS_FIELDS: [&str; 2] = ["头", "KV 头"];

/// How a table names its γ: "固定 γ" when `--gamma` fixes it, else "最优 γ".
pub fn gamma_name(fixed: bool) -> &'static str {
    if fixed { "固定 γ" } else { "最优 γ" }
}
