//! What each demo reads (its `Inputs`): a flag a demo does not read cannot move what it
//! prints and is named after it; one it reads moves its figures; the script's sentences
//! print as written exactly when the demo computes on the default setup.

use crate::common;

use common::{blocks, inputs, observations, report};
use decode_lab::{Draft, Scenario, Seed, TreeShape, tree_accept_lengths, tree_speedup};
use lecture_kit::Block;
use lecture06::DEFAULT_ONLY;
use lecture06::spec_decode_on_hardware::demo3::toy_model;
use lecture06::spec_decode_on_hardware::{demo1, demo3, script};

/// One command line per group of flags, and a demo that reads it (so that it is not refused
/// as changing nothing).
const FLAGS: [(&[&str], u8); 10] = [
    (&["--hw", "H200"], 3),
    (&["--target", "Llama-3.2-3B"], 3),
    (&["--draft", "Llama-3.2-3B"], 1),
    (&["--alpha", "0.7"], 2),
    (&["--eff-bandwidth", "0.7"], 3),
    (&["--overhead-draft", "1ms"], 1),
    (&["--gamma", "3"], 1),
    (&["--tau", "2.5", "--tree-nodes", "6", "--gamma", "3"], 1),
    (&["--batch", "8,64"], 1),
    (&["--ctx", "8192"], 1),
];

/// What demo `n` computes, wording aside: its blocks but the observations, and its figures.
fn computed(args: &[&str], n: u8) -> (Vec<Block>, serde_json::Value) {
    let section = report(args)
        .sections
        .into_iter()
        .find(|s| s.id == format!("demo{n}"));
    let section = section.unwrap();
    let blocks = section
        .blocks
        .into_iter()
        .filter(|b| !matches!(b, Block::Observations(_)));
    (blocks.collect(), section.data)
}

#[test]
fn a_flag_a_demo_does_not_read_leaves_it_byte_identical_and_one_it_reads_moves_its_figures() {
    // Demos 4, 6 and 7 read nothing too, but take seconds (and 6 and 7 measure); demo 5
    // stands for them.
    for demo in script()
        .demos
        .iter()
        .filter(|d| ![4, 6, 7].contains(&d.number()))
    {
        let n = demo.number();
        let this = n.to_string();
        let default = blocks(&[], n);
        for (flags, reader) in FLAGS {
            let other = reader.to_string();
            let args = [&["--demo", &this, "--demo", &other][..], flags].concat();
            let section = report(&args)
                .sections
                .into_iter()
                .find(|s| s.id == format!("demo{n}"));
            let section = section.unwrap();
            if demo.flags().iter().any(|f| f == flags[0]) {
                // It reads the flag: the flag moves its figures, not only its wording.
                let moved = computed(&args, n);
                let default = computed(&["--demo", &this], n);
                assert!(moved != default, "demo {n} reads {flags:?}");
                assert!(
                    section.unread_flags.is_empty(),
                    "{:?}",
                    section.unread_flags
                );
            } else {
                assert!(
                    section.blocks == default,
                    "demo {n} ignores {flags:?}, yet they move it"
                );
                assert!(
                    section.unread_flags.iter().any(|f| f == flags[0]),
                    "{:?}",
                    section.unread_flags
                );
            }
        }
    }
}

#[test]
fn demo1_runs_at_the_first_of_each_list_given() {
    let at = |args: &[&str]| {
        let s = inputs::<demo1::Inputs>(args).setup().scenario;
        (s.batch, s.ctx)
    };
    assert_eq!(at(&[]), demo1::POINT);
    assert_eq!(at(&["--batch", "8,64"]), (8, 1024));
    assert_eq!(at(&["--ctx", "32768"]), (1, 32768));
    // The script's grid typed out: demo 1 still runs at the first value given.
    assert_eq!(at(&["--ctx", "512,4096,32768"]), (1, 512));
}

#[test]
fn the_scripts_sentences_are_as_written_exactly_where_a_demo_computes_the_default_setup() {
    let marked = |args: &[&str], n: u8| {
        let items = observations(args, n);
        items.iter().any(|o| o.starts_with(DEFAULT_ONLY))
    };
    // Spelled another way, the default setup: a profile that changes nothing, a list whose
    // first values are demo 1's point (demo 2 reads the whole list: another grid).
    for args in [&["--calibration", "seed"][..], &["--hw", "h100-sxm5"]] {
        assert!(
            !marked(args, 1) && !marked(args, 2) && !marked(args, 3),
            "{args:?}"
        );
    }
    assert!(!marked(&["--demo", "2", "--batch", "1,8"], 1));
    assert!(marked(&["--demo", "1", "--batch", "1,8"], 2));
    // --gamma beside --tau is the tree's depth: demo 2 still runs the best γ.
    let tree = [
        "--demo",
        "1",
        "--tau",
        "2.5",
        "--tree-nodes",
        "6",
        "--gamma",
        "3",
    ];
    assert!(!marked(&tree, 2) && marked(&tree, 1));
    assert!(marked(&["--gamma", "3"], 2));
    // What the marked sentence quotes is the default setup's c, not the what-if's.
    let c = observations(&["--hw", "H200"], 1);
    assert!(
        c.iter()
            .any(|o| o.starts_with(DEFAULT_ONLY) && o.contains("c ≈ 0.19")),
        "{c:?}"
    );
}

#[test]
fn demo3_on_four_h100s_in_fp8_prints_speedups_and_names_the_four_cards() {
    let args = [
        "--hw",
        "H100",
        "--tp",
        "4",
        "--target",
        "Llama-3.3-70B",
        "--weights",
        "fp8",
    ];
    let args = [&args[..], &["--kv", "fp8"]].concat();
    let d = common::demo3(&args);
    let s = common::inputs::<demo3::Inputs>(&args)
        .roofline
        .scenario(None);
    // Computed here from the library alone, on the same cards: chain γ=1 of the weak draft.
    let ranks = &toy_model::shared(toy_model::ToyModel::Random)
        .unwrap()
        .ranks[0]
        .ranks;
    let acc = tree_accept_lengths(ranks, &TreeShape::chain(1).unwrap()).unwrap();
    let tree = TreeShape::chain(1).unwrap();
    let tau = acc.tau();
    assert_eq!(acc.nodes, 1);
    for (i, batch) in demo3::BATCHES.into_iter().enumerate() {
        let at = Scenario {
            draft: Draft::FixedCost(0.05),
            batch,
            ctx: 1024,
            ..s
        };
        let want = tree_speedup(&at, &Seed, &tree, tau).unwrap();
        assert_eq!(
            d.drafts[0].shapes[0].speedup[i],
            Some(want),
            "batch {batch}"
        );
    }
    assert!(
        d.drafts.iter().all(|f| f
            .shapes
            .iter()
            .all(|x| x.speedup.iter().all(Option::is_some))),
        "every shape fits at batch 1 and 32 on 320 GB"
    );
    let text = common::text_of(common::blocks(&args, 3));
    assert!(!text.contains("放不下"), "{text}");
    assert!(
        text.contains("本配置（4 块 H100、目标 Llama-3.3-70B）"),
        "{text}"
    );
    assert!(text.contains("4 块 H100 加速 批 1"), "{text}");
    let marker = lecture06::DEFAULT_ONLY;
    assert!(!text.replace(marker, "").contains("一块"), "{text}");
}
