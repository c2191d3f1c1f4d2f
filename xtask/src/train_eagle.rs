//! `cargo xtask train eagle [--steps N]`: trains EAGLE's draft head on the shipped target
//! (`train_lab::eagle`, recipe `train_lab::recipe::eagle`) and writes it to
//! `crates/train_lab/data/eagle.safetensors` (or, with `--steps`, under `target/`), with
//! its held-out agreement with the target and with the text in the file's metadata.

use std::path::Path;
use std::time::Instant;

use train_lab::corpus::Corpus;
use train_lab::eagle::{self, Eagle};
use train_lab::recipe::{self, TEST_WINDOWS};

/// Runs the task.
pub fn run(root: &Path, c: &Corpus, steps: Option<usize>) -> Result<(), String> {
    let e = |e: train_lab::Error| e.to_string();
    let r = crate::with_steps(recipe::eagle(), steps);
    let file = root.join("crates/train_lab").join(recipe::target().file);
    let target = train_lab::checkpoint::load(&file).map_err(e)?;
    let mut head: Eagle<f32> = Eagle::new(&target.cfg, r.init_seed).map_err(e)?;
    let threads = rayon::current_num_threads();
    let start = Instant::now();
    eagle::train(
        &target.weights,
        &target.cfg,
        &mut head,
        &c.train,
        &r.schedule,
        &r.opt,
        &mut crate::progress(r.schedule.steps, start, ""),
    )
    .map_err(e)?;
    let secs = start.elapsed().as_secs_f64();
    let tokens = r.schedule.steps * r.schedule.batch * r.schedule.seq;
    let t = r.schedule.seq;
    let all = eagle::agreement(&target.weights, &target.cfg, &head, &c.held_out, t).map_err(e)?;
    let test_bytes = &c.held_out[..TEST_WINDOWS * (t + 2)];
    let test = eagle::agreement(&target.weights, &target.cfg, &head, test_bytes, t).map_err(e)?;
    let command = match steps {
        None => "cargo xtask train eagle".to_string(),
        Some(s) => format!("cargo xtask train eagle --steps {s}"),
    };
    let mut sized = head.clone();
    let params: usize = train_lab::weights::Tensors::tensors_mut(&mut sized)
        .iter()
        .map(|(_, x)| x.len())
        .sum();
    let meta: Vec<(String, String)> = [
        ("recipe", r.name.to_string()),
        ("about", r.about.to_string()),
        ("command", command),
        ("params", params.to_string()),
        ("init_seed", r.init_seed.to_string()),
        ("schedule", format!("{:?}", r.schedule)),
        ("adamw", format!("{:?}", r.opt)),
        ("agree_target_top1", format!("{:.4}", all.with_target)),
        ("agree_text_top1", format!("{:.4}", all.with_text)),
        ("held_out_test_windows", TEST_WINDOWS.to_string()),
        ("test_agree_target_top1", format!("{:.4}", test.with_target)),
        ("test_agree_text_top1", format!("{:.4}", test.with_text)),
        ("train_seconds", format!("{secs:.0}")),
        ("train_tokens", tokens.to_string()),
        ("train_threads", threads.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let path = match steps {
        None => root.join("crates/train_lab").join(r.file),
        Some(s) => root
            .join("target")
            .join(format!("eagle-{s}-steps.safetensors")),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    train_lab::checkpoint::save_eagle(&path, &head, &target.cfg, &meta).map_err(e)?;
    crate::println_out(&format!(
        "eagle: {params} parameters, {} steps, {tokens} tokens in {secs:.0} s on {threads} \
         threads ({:.0} tokens/s); held-out first guess: the target's own {:.3}, the text's \
         {:.3} (first {TEST_WINDOWS} windows {:.4} / {:.4}); wrote {}",
        r.schedule.steps,
        tokens as f64 / secs,
        all.with_target,
        all.with_text,
        test.with_target,
        test.with_text,
        path.display()
    ));
    Ok(())
}
