//! What `--list` shows of the registries `--hw`, `--target` and `--draft` accept.

use hw_specs::catalog::all_accelerators;
use lecture_kit::{Block, Cell, Column, Datum, Table};
use llm_math::catalog::all_models;

use crate::chrome;

/// The accelerators and the models, each table under its line: what a lecture whose
/// command line has [`crate::Card`] or [`crate::Target`] returns from `Lecture::catalog`.
pub fn catalog() -> Vec<Block> {
    let h = chrome::ACCELERATOR_HEADERS;
    let mut hw = Table::new(
        "accelerators",
        chrome::ACCELERATORS,
        vec![
            Column::text(h[0]),
            Column::number(h[1], "TFLOP/s"),
            Column::number(h[2], "TB/s"),
            Column::number(h[3], "GB"),
            Column::text(h[4]),
        ],
    );
    for a in all_accelerators() {
        let tflops = a.peak_flops_bf16 / 1e12;
        let tbs = a.hbm_bandwidth / 1e12;
        let gb = a.memory_bytes / 1e9;
        hw = hw.row(vec![
            Cell::text(a.name),
            Cell::number(format!("{tflops:.1}"), tflops),
            Cell::number(format!("{tbs:.3}"), tbs),
            Cell::number(format!("{gb}"), gb),
            Cell::text(a.aliases.join(", ")),
        ]);
    }
    let (h, heads) = (chrome::MODEL_HEADERS, chrome::HEADS_FIELDS);
    let mut models = Table::new(
        "models",
        chrome::MODELS,
        vec![
            Column::text(h[0]),
            Column::number(h[1], "B params"),
            Column::number(h[2], ""),
            Column::number(h[3], ""),
            Column::with_fields(h[4], &[(heads[0], ""), (heads[1], "")]),
            Column::number(h[5], "KiB/token"),
        ],
    );
    for m in all_models() {
        let billions = m.n_params() as f64 / 1e9;
        let kib = m.kv_bytes_per_token() / 1024;
        models = models.row(vec![
            Cell::text(m.name),
            Cell::number(format!("{billions:.2}"), billions),
            Cell::int(m.n_layers as i64),
            Cell::int(m.d_model as i64),
            Cell::values(
                format!("{}/{}", m.n_heads, m.n_kv_heads),
                vec![
                    Datum::Int(m.n_heads as i64),
                    Datum::Int(m.n_kv_heads as i64),
                ],
            ),
            Cell::int(kib as i64),
        ]);
    }
    vec![
        Block::Text(chrome::ACCELERATORS_LINE.into()),
        Block::Table(hw),
        Block::Text(chrome::MODELS_LINE.into()),
        Block::Table(models),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_card_and_model_of_the_registries_is_listed_with_its_figures() {
        let blocks = catalog();
        let tables: Vec<&Table> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(tables[0].rows.len(), all_accelerators().count());
        assert_eq!(tables[1].rows.len(), all_models().count());
        assert!(all_models().count() >= 33, "built in and shipped as data");
        // The H100's row, by hand from its spec sheet: 989 TFLOP/s bf16, 3.35 TB/s, 80 GB.
        assert_eq!(tables[0].texts()[0][..4], ["H100", "989.0", "3.350", "80"]);
        // Llama-3.1-8B: 32 layers, d_model 4096, 32/8 heads, 8 KV heads × 128 × 2 × 2 B × 32
        // layers = 128 KiB per token.
        let llama = tables[1]
            .texts()
            .into_iter()
            .find(|r| r[0] == "Llama-3.1-8B");
        assert_eq!(
            llama.unwrap()[2..],
            ["32", "4096", "32/8", "128"].map(String::from)
        );
        for t in tables {
            t.check().unwrap();
        }
    }
}
