//! The `lecture06` exports: JSON, tidy CSV files, SVG figures.

use crate::common;
use crate::run;

use std::path::Path;

use run::{close, data, json, lecture06, stderr, stdout};
use serde_json::Value;

#[test]
fn json_figures_agree_with_the_library() {
    use decode_lab::{BestRound, Scenario, Seed, best_round, cost_coefficient, target_pass_time};
    let doc = json(&[]);
    // Demo 1 at the lecture's scenario, recomputed here with the library alone.
    let s = Scenario::LECTURE;
    let j1 = data(&doc, "demo1");
    close(&j1["t_base_s"], target_pass_time(&s, 1).unwrap());
    close(&j1["c"], cost_coefficient(&s, &Seed).unwrap());
    let forward = j1["forward"].as_array().unwrap();
    assert_eq!(forward.len(), 10);
    for j in forward {
        let n = j["n"].as_u64().unwrap();
        close(&j["time_s"], target_pass_time(&s, n).unwrap());
    }
    let best = j1["best"].as_array().unwrap();
    for (j, alpha) in best.iter().zip([0.6, 0.7, 0.8, 0.9]) {
        close(&j["alpha"], alpha);
        let BestRound::Speculate(p) = best_round(&Scenario { alpha, ..s }, &Seed).unwrap() else {
            panic!("speculation pays at batch 1, α = {alpha}")
        };
        assert_eq!(j["round"]["gamma"], p.gamma);
        close(&j["round"]["speedup"], p.speedup);
        close(&j["round"]["plan"]["verify_ratio"], p.verify_ratio);
    }
    // Demo 2: batch 512 at context 512, and the worked example there.
    let j2 = data(&doc, "demo2");
    let at_512 = Scenario {
        batch: 512,
        ctx: 512,
        ..s
    };
    let cell = &j2["grid"][5]["cells"][0];
    let want = best_round(&at_512, &Seed).unwrap();
    assert_eq!(cell["gamma"], want.gamma());
    close(&cell["speedup"], want.speedup());
    assert!(
        j2["grid"][1]["cells"][2].is_null(),
        "batch 16 at 32K does not fit"
    );
    close(
        &j2["example"]["t_verify_s"],
        target_pass_time(&at_512, 5).unwrap(),
    );
    let d3 = &data(&doc, "demo3")["drafts"];
    assert_eq!(d3.as_array().unwrap().len(), 2);
    assert_eq!(d3[0]["shapes"][8]["nodes"], 340);
    assert!(
        doc["units"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u[0] == "*_s" && u[1] == "seconds")
    );
    let blocks: Vec<&Value> = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["blocks"].as_array().unwrap())
        .collect();
    let count = |kind: &str| blocks.iter().filter(|b| b["kind"] == kind).count();
    assert_eq!(count("table"), 5, "every table of the three demos");
    assert_eq!(count("figure"), 3, "knee, batch, trees");
    // A table cell carries the printed text and the raw values behind it.
    let grid = blocks
        .iter()
        .find(|b| b["kind"] == "table" && b["content"]["id"] == "demo2_grid")
        .unwrap();
    let first = &grid["content"]["rows"][0][1];
    assert_eq!(first["text"], "γ=4, 1.93×（验证 1.00）");
    assert_eq!(first["values"][0], 4);
    close(
        &first["values"][1],
        j2["grid"][0]["cells"][0]["speedup"].as_f64().unwrap(),
    );
}

#[test]
fn csv_of_one_table_prints_raw_values_one_per_column() {
    let o = lecture06(&["--demo", "2", "--format", "CSV"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "批大小 [sequences],上下文 512 · γ [tokens],上下文 512 · 加速比 [×],上下文 512 · 验证 [×],\
         上下文 4096 · γ [tokens],上下文 4096 · 加速比 [×],上下文 4096 · 验证 [×],\
         上下文 32768 · γ [tokens],上下文 32768 · 加速比 [×],上下文 32768 · 验证 [×]"
    );
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(first[0..2], ["1", "4"]);
    assert!(first[2].starts_with("1.93"), "{first:?}");
    assert_eq!(text.lines().count(), 1 + 6);
    // batch 512 at 4096 and 32768: 放不下 → empty fields
    assert!(text.lines().last().unwrap().ends_with(",,,,,,"), "{text}");
}

#[test]
fn csv_files_load_back_as_rectangular_tables_of_numbers() {
    let dir = std::env::temp_dir().join(format!("lecture06-csv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = lecture06(&["--format", "csv", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    // One file per table, and the list of them (`lecture_kit::files::MANIFEST`), by which
    // a later run removes its own stale tables and nothing else.
    assert_eq!(
        names,
        [
            lecture_kit::files::MANIFEST,
            "demo1_best_gamma.csv",
            "demo1_forward.csv",
            "demo2_grid.csv",
            "demo3_draft1.csv",
            "demo3_draft2.csv"
        ]
    );
    for name in names.iter().filter(|n| n.ends_with(".csv")) {
        let mut reader = csv::Reader::from_path(dir.join(name)).unwrap();
        let headers = reader.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert!(!rows.is_empty(), "{name}");
        for row in &rows {
            assert_eq!(row.len(), headers.len(), "{name}: rectangular");
        }
        // Every column but the shape labels parses as numbers (empty = 放不下).
        for (c, header) in headers.iter().enumerate() {
            if header == "草稿形状" {
                continue;
            }
            for row in &rows {
                let v = &row[c];
                assert!(
                    v.is_empty() || v.parse::<f64>().is_ok(),
                    "{name}: {header} = {v:?} is not a number"
                );
            }
        }
    }
    let mut grid = csv::Reader::from_path(dir.join("demo2_grid.csv")).unwrap();
    let row: csv::StringRecord = grid.records().next().unwrap().unwrap();
    assert_eq!(row[0].parse::<u64>().unwrap(), 1);
    let speedup: f64 = row[2].parse().unwrap();
    assert!((speedup - 1.93).abs() < 0.005, "{speedup}");
    // Tables and figures into the same folder (spelled two ways): both kept, one list.
    let again = format!("{}/.", dir.display());
    let o = lecture06(&[
        "--format",
        "csv",
        "--out",
        dir.to_str().unwrap(),
        "--plot",
        &again,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut both: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    both.sort();
    let mut want = names.clone();
    want.extend(["batch.svg", "knee.svg", "trees.svg"].map(String::from));
    want.sort();
    assert_eq!(both, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn svg_texts(path: &Path) -> (Vec<String>, usize) {
    let svg = std::fs::read_to_string(path).unwrap();
    let doc =
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect();
    let lines = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline") || n.has_tag_name("path"))
        .count();
    (texts, lines)
}

#[test]
fn plot_writes_three_well_formed_svg_figures_with_series_and_axis_labels() {
    let dir = std::env::temp_dir().join(format!("lecture06-plots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = lecture06(&["--plot", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let expect: [(&str, &[&str]); 3] = [
        (
            "knee.svg",
            &[
                "每个序列送进的 token 数 n（对数坐标）",
                "一次前向的时间（ms，对数坐标）",
                "批 1",
                "批 16",
                "批 64",
                "批 256",
                "1K",
            ],
        ),
        (
            "batch.svg",
            &[
                "批大小（对数坐标）",
                "最优加速比",
                "上下文 512",
                "上下文 4096",
                "上下文 32768",
                "上下文 32768：批 > 14 放不下",
                "1.0×：不投机",
            ],
        ),
        (
            "trees.svg",
            &[
                "草稿形状",
                "τ（token）",
                "加速比",
                "只用前 1 层（弱）",
                "INT4 量化的自己（强）",
                "树 4×4×4×4",
                "链 γ=1",
                "1.0×：不投机",
            ],
        ),
    ];
    for (file, labels) in expect {
        let (texts, lines) = svg_texts(&dir.join(file));
        for label in labels {
            assert!(
                texts.iter().any(|t| t == label),
                "{file} lacks {label:?}: {texts:?}"
            );
        }
        assert!(
            !texts
                .iter()
                .any(|t| t.ends_with(".0") || t.ends_with(".0×")),
            "{file}: tick labels as people write them: {texts:?}"
        );
        assert!(lines >= 3, "{file}: {lines} lines drawn");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every figure block of a `--format json` document, by id.
fn json_figures(doc: &Value) -> Vec<&Value> {
    doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["blocks"].as_array().unwrap())
        .filter(|b| b["kind"] == "figure")
        .map(|b| &b["content"])
        .collect()
}

#[test]
fn json_carries_every_point_of_every_figure() {
    for args in [&[][..], &["--target", "Llama-3.1-70B"][..]] {
        let doc = json(args);
        let got = json_figures(&doc);
        // The figures as the lecture's report holds them, in this process.
        let want = common::figures(args);
        assert_eq!(got.len(), want.len(), "{args:?}");
        for (j, f) in got.iter().zip(&want) {
            assert_eq!(j["id"], f.id.as_str());
            let panels = j["panels"].as_array().unwrap();
            assert_eq!(panels.len(), f.panels.len(), "{}", f.id);
            for (jp, p) in panels.iter().zip(&f.panels) {
                let series = jp["series"].as_array().unwrap();
                assert_eq!(series.len(), p.series.len(), "{}", f.id);
                for (js, s) in series.iter().zip(&p.series) {
                    assert_eq!(js["label"], s.label.as_str());
                    let points = js["points"].as_array().unwrap();
                    assert_eq!(points.len(), s.points.len(), "{}: {}", f.id, s.label);
                    for (jpt, &(x, y)) in points.iter().zip(&s.points) {
                        close(&jpt[0], x);
                        close(&jpt[1], y);
                    }
                }
                assert_eq!(jp["regions"].as_array().unwrap().len(), p.regions.len());
                assert_eq!(jp["hlines"].as_array().unwrap().len(), p.hlines.len());
                assert_eq!(jp["message"].as_str(), p.message.as_deref());
            }
        }
    }
    // By hand: the knee's batch-1 curve starts at n = 1 with demo 1's plain decode step.
    let doc = json(&["--demo", "1"]);
    let knee = json_figures(&doc)[0];
    let first = &knee["panels"][0]["series"][0]["points"][0];
    close(&first[0], 1.0);
    let t_base_ms = 1e3 * data(&doc, "demo1")["t_base_s"].as_f64().unwrap();
    close(&first[1], t_base_ms);
}
