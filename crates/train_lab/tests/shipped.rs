//! The shipped models reach the held-out loss and the agreement their files state: the
//! first held-out windows measured again here against the figures `cargo xtask train`
//! wrote, the baselines recomputed from the corpus, and the stated held-out figure below
//! the bigram's.

use std::path::Path;

use train_lab::agree::{Reader, agreement};
use train_lab::checkpoint::{Checkpoint, load};
use train_lab::corpus::{self, Corpus};
use train_lab::recipe::{self, AGREE_WINDOWS, Recipe};
use train_lab::train::bits_per_byte;

fn shipped(r: &Recipe) -> Checkpoint {
    load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(r.file)).unwrap()
}

fn stated(c: &Checkpoint, key: &str) -> f64 {
    c.meta[key]
        .parse()
        .unwrap_or_else(|_| panic!("{key} is not a number"))
}

fn corpus() -> Corpus {
    corpus::load(&corpus::cargo_home().unwrap()).unwrap()
}

/// Measures `r`'s shipped file again: its loss on the test windows, the baselines, and
/// the agreement of each of its early exits with its last block.
fn reaches_what_it_states(r: &Recipe, data: &Corpus) -> Checkpoint {
    let c = shipped(r);
    assert_eq!(c.cfg, r.cfg);
    let (uni, bi) = corpus::baselines(&data.train, &data.held_out);
    assert!((stated(&c, "unigram_bits_per_byte") - uni).abs() < 1e-4);
    assert!((stated(&c, "bigram_bits_per_byte") - bi).abs() < 1e-4);
    let windows: usize = c.meta["held_out_test_windows"].parse().unwrap();
    let seq = c.cfg.max_seq;
    let test = &data.held_out[..windows * (seq + 1)];
    let got = bits_per_byte(&c.weights, &c.cfg, test, seq).unwrap();
    let want = stated(&c, "held_out_test_bits_per_byte");
    assert!(
        (got - want).abs() < 1e-3,
        "{}: measured {got}, stated {want}",
        r.name
    );
    let held_out = stated(&c, "held_out_bits_per_byte");
    assert!(
        held_out < bi - 0.5,
        "{held_out} bits per byte against the bigram's {bi}"
    );
    c
}

fn agrees_as_stated(
    name: &str,
    c: &Checkpoint,
    target: Reader<'_>,
    draft: Reader<'_>,
    data: &Corpus,
) {
    let a = agreement(
        target,
        draft,
        &data.held_out,
        target.cfg.max_seq,
        AGREE_WINDOWS,
    )
    .unwrap();
    let greedy = stated(c, &format!("agree_{name}_greedy"));
    let sampled = stated(c, &format!("agree_{name}_sampled"));
    assert!(
        (a.greedy - greedy).abs() < 1e-3,
        "{name}: greedy {} vs {greedy}",
        a.greedy
    );
    assert!(
        (a.sampled - sampled).abs() < 1e-3,
        "{name}: sampled {} vs {sampled}",
        a.sampled
    );
}

#[test]
fn the_shipped_target_reaches_its_stated_held_out_loss() {
    let data = corpus();
    let c = reaches_what_it_states(&recipe::target(), &data);
    let me = Reader::full(&c.weights, &c.cfg);
    agrees_as_stated("exit1", &c, me, Reader { exit: 1, ..me }, &data);
}

#[test]
fn the_shipped_draft_reaches_its_stated_loss_and_agreement_with_the_target() {
    let data = corpus();
    let d = reaches_what_it_states(&recipe::draft(), &data);
    let t = shipped(&recipe::target());
    let target = Reader::full(&t.weights, &t.cfg);
    agrees_as_stated(
        "target",
        &d,
        target,
        Reader::full(&d.weights, &d.cfg),
        &data,
    );
}

#[test]
fn the_distilled_draft_reaches_its_stated_loss_and_agreement_with_the_target() {
    let data = corpus();
    let d = reaches_what_it_states(&recipe::distilled(), &data);
    let t = shipped(&recipe::target());
    let target = Reader::full(&t.weights, &t.cfg);
    agrees_as_stated(
        "target",
        &d,
        target,
        Reader::full(&d.weights, &d.cfg),
        &data,
    );
}

#[test]
fn the_layerskip_target_reaches_its_stated_loss_and_its_exits_their_agreement() {
    let data = corpus();
    let c = reaches_what_it_states(&recipe::layerskip(), &data);
    let me = Reader::full(&c.weights, &c.cfg);
    for k in 1..c.cfg.n_layers {
        agrees_as_stated(&format!("exit{k}"), &c, me, Reader { exit: k, ..me }, &data);
    }
}

#[test]
fn the_shipped_prompts_are_the_held_out_prompts_and_the_compiled_in_models_the_files() {
    let data = corpus();
    let want = train_lab::accept::prompts(&data.held_out).unwrap();
    assert_eq!(train_lab::shipped::prompts().unwrap(), want);
    let files = [
        recipe::target(),
        recipe::draft(),
        recipe::distilled(),
        recipe::layerskip(),
    ];
    let compiled = [
        train_lab::shipped::TARGET,
        train_lab::shipped::DRAFT,
        train_lab::shipped::DISTILLED,
        train_lab::shipped::LAYERSKIP,
    ];
    for (r, bytes) in files.iter().zip(compiled) {
        let on_disk = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(r.file)).unwrap();
        assert!(on_disk == bytes, "{} differs from its file", r.name);
    }
    let medusa = recipe::medusa().file;
    let on_disk = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(medusa)).unwrap();
    assert!(
        on_disk == train_lab::shipped::MEDUSA,
        "the Medusa heads differ from their file"
    );
}

#[test]
fn the_shipped_medusa_heads_reach_their_stated_held_out_loss() {
    // Each head measured again on the first held-out windows against what `cargo xtask
    // train medusa` wrote; then what any such heads should show: every head predicts its
    // byte better than the byte frequencies alone (the unigram), and the farther a head
    // guesses, the worse it does.
    let data = corpus();
    let c = train_lab::shipped::medusa().unwrap();
    let t = shipped(&recipe::target());
    let k = c.heads.heads.len();
    assert_eq!(k, recipe::MEDUSA_HEADS);
    let windows: usize = c.meta["held_out_test_windows"].parse().unwrap();
    let seq = t.cfg.max_seq;
    let test = &data.held_out[..windows * (seq + 1 + k)];
    let got = train_lab::medusa::held_out(&t.weights, &t.cfg, &c.heads, test, seq).unwrap();
    let (uni, _) = corpus::baselines(&data.train, &data.held_out);
    let stated_of = |key: String| -> f64 { c.meta[&key].parse().unwrap() };
    let mut last = (0.0, 1.0);
    for (i, g) in got.iter().enumerate() {
        let head = i + 1;
        let want = stated_of(format!("head{head}_test_bits_per_byte"));
        assert!(
            (g.bits - want).abs() < 1e-3,
            "head {head}: {} vs {want}",
            g.bits
        );
        let bits = stated_of(format!("head{head}_bits_per_byte"));
        let top1 = stated_of(format!("head{head}_top1"));
        assert!(
            bits < uni - 0.5,
            "head {head}: {bits} bits against the unigram's {uni}"
        );
        assert!(
            bits > last.0 && top1 < last.1,
            "head {head}: {bits}, {top1} after {last:?}"
        );
        last = (bits, top1);
    }
}

#[test]
fn the_shipped_eagle_head_agrees_with_its_target_as_stated() {
    // Measured again on the first held-out windows against what `cargo xtask train eagle`
    // wrote; then what such a head should show: reading the next token as well, its first
    // guess is the text's byte more often than Medusa's first head guesses the same byte,
    // and the target's own guess more often still (the target is not always right).
    let data = corpus();
    let c = train_lab::shipped::eagle().unwrap();
    let t = shipped(&recipe::target());
    assert_eq!(c.cfg, t.cfg);
    let on_disk = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(recipe::eagle().file));
    assert!(
        on_disk.unwrap() == train_lab::shipped::EAGLE,
        "the EAGLE head differs from its file"
    );
    let windows: usize = c.meta["held_out_test_windows"].parse().unwrap();
    let seq = recipe::eagle().schedule.seq;
    let test = &data.held_out[..windows * (seq + 2)];
    let got = train_lab::eagle::agreement(&t.weights, &t.cfg, &c.eagle, test, seq).unwrap();
    let stated = |key: &str| -> f64 { c.meta[key].parse().unwrap() };
    assert!(
        (got.with_target - stated("test_agree_target_top1")).abs() < 1e-3,
        "{got:?}"
    );
    assert!(
        (got.with_text - stated("test_agree_text_top1")).abs() < 1e-3,
        "{got:?}"
    );
    let medusa = train_lab::shipped::medusa().unwrap();
    let head1: f64 = medusa.meta["head1_top1"].parse().unwrap();
    let (with_target, with_text) = (stated("agree_target_top1"), stated("agree_text_top1"));
    assert!(
        with_text > head1,
        "EAGLE {with_text} against Medusa's first head {head1}"
    );
    assert!(with_target > with_text, "{with_target} against {with_text}");
}
