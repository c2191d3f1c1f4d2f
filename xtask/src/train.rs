//! `cargo xtask train corpus|prompts|target|draft|distilled|layerskip|medusa|eagle|measure [--steps N]`: trains one of train_lab's recipes
//! on the corpus and writes its safetensors file under `crates/train_lab/`, with how it was
//! trained, how long it took and its held-out bits per byte in the file's metadata.
//!
//! `measure` prints acceptance on the shipped models (see `measure.rs`). `prompts` writes
//! `data/prompts.bin`, the held-out prompts lecture 6 measures acceptance on
//! (`train_lab::accept::prompts`). `corpus` only
//! gets the corpus (fetching the pinned crates through Cargo when its cache
//! lacks one) and prints its sizes and the unigram and bigram baselines.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use train_lab::agree::{Agreement, Reader, agreement};
use train_lab::corpus::{self, Corpus, SOURCES};
use train_lab::medusa::{self, Heads};
use train_lab::recipe::{self, AGREE_WINDOWS, Recipe, TEST_WINDOWS};
use train_lab::train::{Teacher, bits_per_byte, train_from};
use train_lab::weights::Weights;

/// Runs the task.
pub fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let what = args.first().map(String::as_str).ok_or(
        "train what? corpus, prompts, target, draft, distilled, layerskip, medusa, eagle or measure",
    )?;
    let steps = match args.get(1..) {
        Some([flag, n]) if flag == "--steps" => {
            Some(n.parse::<usize>().map_err(|e| format!("--steps: {e}"))?)
        }
        Some([]) | None => None,
        Some(other) => {
            return Err(format!(
                "unexpected {other:?}; usage: train NAME [--steps N]"
            ));
        }
    };
    let corpus = get_corpus()?;
    let (uni, bi) = corpus::baselines(&corpus.train, &corpus.held_out);
    crate::println_out(&format!(
        "corpus: {} files, {} training bytes, {} held-out bytes; held-out bits per byte: \
         unigram {uni:.3}, bigram {bi:.3}",
        corpus.files,
        corpus.train.len(),
        corpus.held_out.len()
    ));
    match what {
        "corpus" => return Ok(()),
        "measure" => return crate::measure::run(&corpus.held_out),
        "prompts" => return write_prompts(root, &corpus.held_out),
        "medusa" => return train_medusa(root, &corpus, steps),
        "eagle" => return crate::train_eagle::run(root, &corpus, steps),
        _ => {}
    }
    let found = recipe::all()
        .into_iter()
        .find(|r| r.name == what)
        .ok_or(format!(
            "no recipe {what:?}; corpus, prompts, target, draft, distilled, layerskip, medusa, eagle or measure"
        ))?;
    let r = crate::with_steps(found, steps);
    let out = root.join("crates/train_lab").join(r.file);
    let shipped = steps.is_none();
    let path = match shipped {
        true => out,
        false => root
            .join("target")
            .join(format!("{}-{}-steps.safetensors", r.name, r.schedule.steps)),
    };
    train_and_save(&r, &corpus, (uni, bi), &path)
}

/// Trains Medusa's heads on the shipped target and writes them (to `data/medusa.safetensors`,
/// or with `--steps`, beside the build under `target/`), with each head's held-out
/// cross-entropy and top-1 accuracy (the target's own beside them) in the metadata.
fn train_medusa(root: &Path, c: &Corpus, steps: Option<usize>) -> Result<(), String> {
    let e = |e: train_lab::Error| e.to_string();
    let r = crate::with_steps(recipe::medusa(), steps);
    let target = shipped_target()?;
    let k = recipe::MEDUSA_HEADS;
    let mut heads = Heads::new(k, &target.weights.lm_head);
    let threads = rayon::current_num_threads();
    let start = Instant::now();
    medusa::train(
        &target.weights,
        &target.cfg,
        &mut heads,
        &c.train,
        &r.schedule,
        &r.opt,
        &mut crate::progress(r.schedule.steps, start, " nats"),
    )
    .map_err(e)?;
    let secs = start.elapsed().as_secs_f64();
    let tokens = r.schedule.steps * r.schedule.batch * r.schedule.seq;
    let seq = target.cfg.max_seq;
    let scores =
        medusa::held_out(&target.weights, &target.cfg, &heads, &c.held_out, seq).map_err(e)?;
    let test_bytes = &c.held_out[..TEST_WINDOWS * (seq + 1 + k)];
    let test =
        medusa::held_out(&target.weights, &target.cfg, &heads, test_bytes, seq).map_err(e)?;
    let command = match steps {
        None => "cargo xtask train medusa".to_string(),
        Some(s) => format!("cargo xtask train medusa --steps {s}"),
    };
    let (d, vocab) = heads.dims();
    let params = k * (d * d + d + d * vocab);
    let mut meta: Vec<(String, String)> = [
        ("recipe", r.name.to_string()),
        ("about", r.about.to_string()),
        ("command", command),
        ("params", params.to_string()),
        ("schedule", format!("{:?}", r.schedule)),
        ("adamw", format!("{:?}", r.opt)),
        ("held_out_test_windows", TEST_WINDOWS.to_string()),
        ("train_seconds", format!("{secs:.0}")),
        ("train_tokens", tokens.to_string()),
        ("train_threads", threads.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (i, (all, first)) in scores.iter().zip(&test).enumerate() {
        let head = i + 1;
        crate::println_out(&format!(
            "head {head} (the byte {} after the next): held-out {:.3} bits per byte, top-1 \
             {:.3} (first {TEST_WINDOWS} windows {:.4} bits)",
            head, all.bits, all.top1, first.bits
        ));
        meta.push((
            format!("head{head}_bits_per_byte"),
            format!("{:.4}", all.bits),
        ));
        meta.push((format!("head{head}_top1"), format!("{:.4}", all.top1)));
        meta.push((
            format!("head{head}_test_bits_per_byte"),
            format!("{:.4}", first.bits),
        ));
    }
    let path = match steps {
        None => root.join("crates/train_lab").join(r.file),
        Some(s) => root
            .join("target")
            .join(format!("medusa-{s}-steps.safetensors")),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    train_lab::checkpoint::save_heads(&path, &heads, &meta).map_err(e)?;
    crate::println_out(&format!(
        "medusa: {params} parameters, {} steps, {tokens} tokens in {secs:.0} s on {threads} \
         threads ({:.0} tokens/s); wrote {}",
        r.schedule.steps,
        tokens as f64 / secs,
        path.display()
    ));
    Ok(())
}

/// Writes `crates/train_lab/data/prompts.bin`: the held-out prompts, row after row.
fn write_prompts(root: &Path, held_out: &[u8]) -> Result<(), String> {
    let prompts = train_lab::accept::prompts(held_out).map_err(|e| e.to_string())?;
    let bytes: Vec<u8> = prompts.iter().map(|&t| t as u8).collect();
    let path = root.join("crates/train_lab/data/prompts.bin");
    std::fs::write(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::println_out(&format!("wrote {} ({} bytes)", path.display(), bytes.len()));
    Ok(())
}

fn train_and_save(
    r: &Recipe,
    c: &Corpus,
    (uni, bi): (f64, f64),
    path: &Path,
) -> Result<(), String> {
    let e = |e: train_lab::Error| e.to_string();
    let mut w: Weights<f32> = Weights::from_params(
        &transformer_lab::init_params(&r.cfg, r.init_seed).map_err(|e| e.to_string())?,
    );
    let threads = rayon::current_num_threads();
    let start = Instant::now();
    let teacher = match r.name {
        "distilled" => Some(shipped_target()?),
        _ => None,
    };
    let teacher = teacher.as_ref().map(|t| Teacher {
        w: &t.weights,
        cfg: &t.cfg,
    });
    train_from(
        &mut w,
        &r.cfg,
        &c.train,
        &r.schedule,
        &r.opt,
        teacher,
        &mut crate::progress(r.schedule.steps, start, " nats"),
    )
    .map_err(e)?;
    let secs = start.elapsed().as_secs_f64();
    let tokens = r.schedule.steps * r.schedule.batch * r.schedule.seq;
    let seq = r.cfg.max_seq;
    let held_out = bits_per_byte(&w, &r.cfg, &c.held_out, seq).map_err(e)?;
    let test_bytes = &c.held_out[..TEST_WINDOWS * (seq + 1)];
    let test_bpb = bits_per_byte(&w, &r.cfg, test_bytes, seq).map_err(e)?;
    let params = r.cfg.n_params().map_err(|e| e.to_string())?;
    let agreements = agreements(r, &w, &c.held_out)?;
    let command = match r.schedule.steps
        == recipe::all()
            .iter()
            .find(|x| x.name == r.name)
            .map_or(0, |x| x.schedule.steps)
    {
        true => format!("cargo xtask train {}", r.name),
        false => format!("cargo xtask train {} --steps {}", r.name, r.schedule.steps),
    };
    let meta: Vec<(String, String)> = [
        ("recipe", r.name.to_string()),
        ("about", r.about.to_string()),
        ("command", command),
        ("params", params.to_string()),
        ("init_seed", r.init_seed.to_string()),
        ("schedule", format!("{:?}", r.schedule)),
        ("adamw", format!("{:?}", r.opt)),
        (
            "corpus",
            SOURCES
                .iter()
                .map(|s| format!("{}-{}", s.name, s.version))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        ("held_out_bits_per_byte", format!("{held_out:.4}")),
        ("held_out_test_windows", TEST_WINDOWS.to_string()),
        ("held_out_test_bits_per_byte", format!("{test_bpb:.4}")),
        ("unigram_bits_per_byte", format!("{uni:.4}")),
        ("bigram_bits_per_byte", format!("{bi:.4}")),
        ("train_seconds", format!("{secs:.0}")),
        ("train_tokens", tokens.to_string()),
        ("train_threads", threads.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .chain(agreements)
    .collect();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    train_lab::checkpoint::save(path, &w, &r.cfg, &meta).map_err(e)?;
    crate::println_out(&format!(
        "{}: {params} parameters, {} steps, {tokens} tokens in {secs:.0} s on {threads} threads \
         ({:.0} tokens/s); held-out {held_out:.3} bits per byte (first {TEST_WINDOWS} windows \
         {test_bpb:.3}; unigram {uni:.3}, bigram {bi:.3}); wrote {}",
        r.name,
        r.schedule.steps,
        tokens as f64 / secs,
        path.display()
    ));
    Ok(())
}

/// The agreements the file states, each as `agree_{draft}_{greedy|sampled}`, on the first
/// [`AGREE_WINDOWS`] held-out windows: the model's early exits after blocks 1..n with its
/// own last block (`exit1`, …), and a separate draft with the shipped target (`target`).
fn agreements(
    r: &Recipe,
    w: &Weights<f32>,
    held_out: &[u8],
) -> Result<Vec<(String, String)>, String> {
    let e = |e: train_lab::Error| e.to_string();
    let seq = r.cfg.max_seq;
    let mut out = Vec::new();
    let mut put = |name: String, a: Agreement| {
        crate::println_out(&format!(
            "agreement of {name} on {} held-out positions: greedy {:.3}, sampled at T = 1 {:.3}",
            a.positions, a.greedy, a.sampled
        ));
        out.push((format!("agree_{name}_greedy"), format!("{:.4}", a.greedy)));
        out.push((format!("agree_{name}_sampled"), format!("{:.4}", a.sampled)));
    };
    let me = Reader::full(w, &r.cfg);
    for k in 1..r.cfg.n_layers {
        let exit = Reader { exit: k, ..me };
        put(
            format!("exit{k}"),
            agreement(me, exit, held_out, seq, AGREE_WINDOWS).map_err(e)?,
        );
    }
    if r.name != "target" && r.name != "layerskip" {
        let target = shipped_target()?;
        let tr = Reader::full(&target.weights, &target.cfg);
        put(
            "target".into(),
            agreement(tr, me, held_out, seq, AGREE_WINDOWS).map_err(e)?,
        );
    }
    Ok(out)
}

/// The shipped target, which a draft's agreement is measured against and a distilled draft
/// learns from.
fn shipped_target() -> Result<train_lab::checkpoint::Checkpoint, String> {
    let path = crate::root()
        .join("crates/train_lab")
        .join(recipe::target().file);
    train_lab::checkpoint::load(&path).map_err(|e| e.to_string())
}

/// The corpus from Cargo's cache, fetching the pinned crates first when one is missing.
fn get_corpus() -> Result<Corpus, String> {
    let home = corpus::cargo_home().ok_or("no CARGO_HOME and no HOME")?;
    if SOURCES
        .iter()
        .any(|s| corpus::cached_archive(&home, s).is_none())
    {
        fetch_pinned()?;
    }
    corpus::load(&home).map_err(|e| e.to_string())
}

/// `cargo fetch` of a throwaway package that depends on exactly the pinned versions:
/// Cargo downloads each `.crate` into its cache and checks it against the registry's
/// checksum ([`corpus::load`] checks it again against the pinned one).
fn fetch_pinned() -> Result<(), String> {
    let dir: PathBuf = std::env::temp_dir().join("cs349e-corpus-fetch");
    std::fs::create_dir_all(dir.join("src")).map_err(|e| e.to_string())?;
    let deps: String = SOURCES
        .iter()
        .map(|s| format!("{} = \"={}\"\n", s.name, s.version))
        .collect();
    let manifest = format!(
        "[package]\nname = \"corpus-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         [workspace]\n[dependencies]\n{deps}"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("src/lib.rs"), "").map_err(|e| e.to_string())?;
    let cargo = std::env::var_os("CARGO").unwrap_or("cargo".into());
    let status = Command::new(cargo)
        .arg("fetch")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .status()
        .map_err(|e| format!("cargo fetch: {e}"))?;
    match status.success() {
        true => Ok(()),
        false => Err(format!(
            "cargo fetch of the corpus's crates failed ({status})"
        )),
    }
}
