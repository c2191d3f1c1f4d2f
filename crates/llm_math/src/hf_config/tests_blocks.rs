//! What [`ModelConfig::from_hf_config`] reads beyond the Llama block, and what it refuses:
//! each shipped model's `config.json` with a field taken away or changed.

use serde_json::{Value, json};

use crate::catalog::{model_file, model_files};
use crate::{Error, ModelConfig, Sliding, Tokenizer};

/// The shipped `config` of the model named `name`, as JSON to change.
fn shipped(name: &str) -> Value {
    let mut files = model_files().map(|text| model_file(text).unwrap());
    files.find(|f| f.name == name).unwrap().config
}

fn read(doc: &Value) -> Result<ModelConfig, Error> {
    ModelConfig::from_hf_config(&doc.to_string(), "probe", Tokenizer::Declared("probe"))
}

fn without(name: &str, field: &str) -> Value {
    let mut doc = shipped(name);
    doc.as_object_mut().unwrap().remove(field);
    doc
}

fn with(name: &str, field: &str, value: Value) -> Value {
    let mut doc = shipped(name);
    doc[field] = value;
    doc
}

#[test]
fn a_missing_field_a_model_needs_is_named() {
    for (name, field) in [
        ("DeepSeek-V3", "qk_rope_head_dim"),
        ("DeepSeek-V3", "v_head_dim"),
        ("DeepSeek-V3", "moe_intermediate_size"),
        // Three dense layers need the dense MLP's width.
        ("DeepSeek-V3", "intermediate_size"),
        ("DeepSeek-V2-Lite", "num_experts_per_tok"),
        ("Gemma-2-9B", "sliding_window"),
        ("gpt-oss-20B", "sliding_window"),
        ("Qwen2-57B-A14B", "moe_intermediate_size"),
    ] {
        let e = read(&without(name, field)).unwrap_err().to_string();
        assert!(e.contains(field), "{name} without {field}: {e}");
    }
}

#[test]
fn what_is_not_priced_is_refused_by_name() {
    for (name, field, value) in [
        ("DeepSeek-V3", "moe_layer_freq", json!(2)),
        ("DeepSeek-V3", "attention_bias", json!(true)),
        ("Qwen3-235B-A22B", "mlp_only_layers", json!([0, 1])),
        (
            "gpt-oss-20B",
            "layer_types",
            json!(vec!["linear_attention"; 24]),
        ),
        (
            "gpt-oss-20B",
            "layer_types",
            json!(vec!["full_attention"; 23]),
        ),
        ("Gemma-2-9B", "head_dim", json!(256.5)),
        ("Phi-4", "tie_word_embeddings", json!("no")),
    ] {
        let e = read(&with(name, field, value.clone()))
            .unwrap_err()
            .to_string();
        assert!(e.contains(field), "{name} with {field} = {value}: {e}");
    }
}

#[test]
fn deepseek_reads_latent_attention_shared_experts_and_dense_layers() {
    let v3 = read(&shipped("DeepSeek-V3")).unwrap();
    let m = v3.arch.mla.unwrap();
    assert_eq!(
        (m.q_lora_rank, m.kv_lora_rank, v3.n_kv_heads),
        (1536, 512, 1)
    );
    assert_eq!(v3.head_dim, 128 + 64, "the query/key width");
    let x = v3.moe.unwrap();
    assert_eq!(
        (x.routed, x.top_k, x.shared_d_ff, x.dense_layers),
        (256, 8, 2048, 3)
    );
    assert!(x.router_bias && !x.shared_gate && !x.expert_bias);
    assert_eq!(
        (v3.d_ff, v3.dense_layers(), v3.sparse_layers()),
        (18432, 3, 58)
    );
    let lite = read(&shipped("DeepSeek-V2-Lite")).unwrap();
    assert_eq!(
        lite.arch.mla.unwrap().q_lora_rank,
        0,
        "q_lora_rank null: a full query"
    );
    let x = lite.moe.unwrap();
    assert_eq!(
        (x.shared_d_ff, x.dense_layers, x.router_bias),
        (2 * 1408, 1, false)
    );
}

#[test]
fn gemma2_and_gpt_oss_slide_on_half_their_layers_and_keep_their_context() {
    let g = read(&shipped("Gemma-2-27B")).unwrap();
    let sliding = Some(Sliding {
        window: 4096,
        layers: 23,
    });
    assert_eq!((g.arch.sliding, g.max_context), (sliding, 8192));
    assert!(
        g.tied_embeddings && g.arch.sandwich_norms,
        "gemma2's defaults"
    );
    let oss = read(&shipped("gpt-oss-120B")).unwrap();
    let sliding = Some(Sliding {
        window: 128,
        layers: 18,
    });
    assert_eq!((oss.arch.sliding, oss.max_context), (sliding, 131_072));
    assert!(oss.qkv_bias && oss.arch.o_bias && oss.arch.attention_sinks);
    let x = oss.moe.unwrap();
    assert!(x.router_bias && x.expert_bias && x.d_ff == 2880);
    // Every layer full: no window at all.
    let full = with(
        "gpt-oss-20B",
        "layer_types",
        json!(vec!["full_attention"; 24]),
    );
    let m = read(&full).unwrap();
    assert_eq!((m.arch.sliding, m.max_context), (None, 131_072));
    // Without layer_types a window on every layer caps the context, as before (Phi-3-mini).
    let phi = read(&shipped("Phi-3-mini-4k")).unwrap();
    assert_eq!((phi.arch.sliding, phi.max_context), (None, 2047));
}

#[test]
fn qwen2_moe_and_internlm2_read_their_own_names() {
    let q = read(&shipped("Qwen2-57B-A14B")).unwrap();
    let x = q.moe.unwrap();
    assert_eq!(
        (x.routed, x.top_k, x.d_ff, x.shared_d_ff),
        (64, 8, 2560, 20480)
    );
    assert!(x.shared_gate && q.qkv_bias && !q.arch.o_bias && q.d_ff == 0);
    let intern = read(&shipped("InternLM2.5-7B")).unwrap();
    assert!(!intern.qkv_bias && !intern.arch.o_bias);
    let biased = read(&with("InternLM2.5-7B", "bias", json!(true))).unwrap();
    assert!(biased.qkv_bias && biased.arch.o_bias, "wqkv and wo");
    assert_eq!(
        biased.n_params() - intern.n_params(),
        32 * (4096 + 2 * 1024 + 4096)
    );
}

#[test]
fn internlm_reads_bias_as_internlm2_does() {
    let m = read(&shipped("InternLM-20B")).unwrap();
    assert!(!m.qkv_bias && !m.arch.o_bias && !m.tied_embeddings);
    assert_eq!((m.n_kv_heads, m.head_dim, m.max_context), (40, 128, 4096));
    // `bias: true` puts biases on q, k, v and o, as on InternLM2.
    let biased = read(&with("InternLM-20B", "bias", json!(true))).unwrap();
    assert!(biased.qkv_bias && biased.arch.o_bias, "q_proj … o_proj");
    assert_eq!(biased.n_params() - m.n_params(), 60 * 4 * 5120);
}
