//! Rows of published measurements by hand, for the judgement tests.
#![allow(dead_code)] // each test binary uses some of it

/// A row of publisher `publisher`, series `series`, at `batch`: a plain step, or with
/// `gamma` a speedup of a chain of that depth.
pub fn row(id: &str, publisher: &str, series: &str, batch: u64, gamma: Option<u64>) -> String {
    row_on(id, publisher, series, batch, gamma, "H100")
}

/// [`row`] on the card `hw`.
pub fn row_on(
    id: &str,
    publisher: &str,
    series: &str,
    batch: u64,
    gamma: Option<u64>,
    hw: &str,
) -> String {
    let quantity = match gamma {
        None => r#""quantity": "step_time", "published": {"itl_ms": 10}"#.to_string(),
        Some(g) => format!(
            r#""quantity": "speedup", "draft": "eagle1_head", "acceptance_length": 2.0,
               "gamma": {g}, "tree_nodes": {g}, "published": {{"as_published": {{"text": "x", "value": 2}}}}"#
        ),
    };
    format!(
        r#"{{"id": "{id}", "publisher": "{publisher}", "source": "s", "url": "u", "setup": "t",
           "engine": "vllm", "series": "{series}", "hw": "{hw}", "target": "Llama-3.1-8B",
           "tp": 1, "weights": "bf16", "kv": "bf16", "batch": {batch}, "ctx": 512,
           {quantity}, "role": "held_out"}}"#
    )
}
