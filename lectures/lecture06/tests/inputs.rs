//! The inputs each demo declares (`READS`): a flag a demo does not read cannot move what
//! it prints, one it reads does, and demo 3 computes on the cards the flags ask for.

mod demo_data;

use clap::Parser;
use decode_lab::{Draft, Scenario, TreeShape, tree_accept_lengths, tree_speedup};
use lecture_kit::{Block, Inputs, Lecture as _};
use lecture06::Cli;
use lecture06::spec_decode_on_hardware::{Input, REGISTRY, Setup, demo3, report, toy_model};

/// The setup the command line `args` asks for.
fn setup(args: &[&str]) -> Setup {
    let argv = std::iter::once("lecture06").chain(args.iter().copied());
    Cli::try_parse_from(argv).unwrap().setup().unwrap()
}

/// One command line per input, each changing only that input (and what it changes: the
/// flag's input, as the setup itself reports it).
const FLAGS: [&[&str]; 9] = [
    &["--hw", "H200"],
    &["--target", "Llama-3.2-3B"],
    &["--draft", "Llama-3.2-3B"],
    &["--alpha", "0.7"],
    &["--eff-bandwidth", "0.7"],
    &["--overhead-draft", "1ms"],
    &["--gamma", "3"],
    &["--tau", "2.5", "--tree-nodes", "6", "--gamma", "3"],
    &["--batch", "8,64"],
];

/// What demo `n` prints for `setup`, as blocks.
fn printed(setup: &Setup, n: u8) -> Vec<Block> {
    report(setup, &[n]).unwrap().sections.remove(0).blocks
}

/// What demo `n` computes for `setup`, wording aside: its blocks but the observations, and
/// its exported figures.
fn computed(setup: &Setup, n: u8) -> (Vec<Block>, serde_json::Value) {
    let section = report(setup, &[n]).unwrap().sections.remove(0);
    let blocks = section
        .blocks
        .into_iter()
        .filter(|b| !matches!(b, Block::Observations(_)));
    (blocks.collect(), section.data)
}

#[test]
fn a_flag_a_demo_does_not_read_leaves_it_byte_identical_and_one_it_reads_moves_its_figures() {
    // Demos 4 and 6 read nothing too, but take seconds (and 6 measures); demo 5 stands for them.
    for demo in REGISTRY.iter().filter(|d| d.number != 4 && d.number != 6) {
        let default = printed(&Setup::default(), demo.number);
        for args in FLAGS {
            let s = setup(args);
            let [input] = s.changed()[..] else {
                panic!("{args:?} changes {:?}", s.changed())
            };
            let blocks = printed(&s, demo.number);
            let section = report(&s, &[demo.number]).unwrap().sections.remove(0);
            if demo.reads.contains(&input) {
                // Declared only if it moves the figures, not only the wording.
                let (n, moved) = (demo.number, computed(&s, demo.number));
                assert!(
                    moved != computed(&Setup::default(), n),
                    "demo {n} reads {input:?}"
                );
                assert!(section.unread_flags.is_empty());
            } else {
                let n = demo.number;
                assert!(
                    blocks == default,
                    "demo {n} ignores {input:?}, yet {args:?} moves it"
                );
                assert!(
                    section.unread_flags.contains(&args[0]),
                    "{:?}",
                    section.unread_flags
                );
            }
        }
    }
}

#[test]
fn every_setup_field_belongs_to_an_input() {
    let all = setup(&[
        "--hw",
        "H200",
        "--tp",
        "2",
        "--draft-head",
        "--alpha",
        "0.7",
    ]);
    let all = Setup {
        gamma: Some(4),
        ..all
    };
    assert_eq!(all.view(&[]), Setup::default());
    assert_eq!(all.view(&[Input::Hw]).base.hw, hw_specs::H200);
    assert_eq!(
        all.view(&[Input::Hw]).base.deployment,
        Scenario::LECTURE.deployment
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
    let s = setup(&[&args[..], &["--kv", "fp8"]].concat());
    let d = demo_data::demo3(&s);
    // Computed here from the library alone, on the same cards: chain γ=1 of the weak draft.
    let ranks = &toy_model::shared().unwrap().ranks[0].ranks;
    let acc = tree_accept_lengths(&ranks.concat(), &TreeShape::chain(1).unwrap()).unwrap();
    let (tree, tau) = (TreeShape::chain(1).unwrap(), acc.tau());
    assert_eq!(acc.nodes, 1);
    for (i, batch) in demo3::DEMO3_BATCHES.into_iter().enumerate() {
        let at = Scenario {
            draft: Draft::FixedCost(0.05),
            batch,
            ctx: 1024,
            ..s.base
        };
        let want = tree_speedup(&at, &tree, tau).unwrap();
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
    let mut text = Vec::new();
    lecture_kit::render::text(&mut text, &report(&s, &[3]).unwrap()).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(!text.contains("放不下"), "{text}");
    assert!(
        text.contains("本配置（4 块 H100、目标 Llama-3.3-70B）"),
        "{text}"
    );
    assert!(text.contains("4 块 H100 加速 批 1"), "{text}");
    let marker = lecture06::spec_decode_on_hardware::text::DEFAULT_ONLY;
    assert!(!text.replace(marker, "").contains("一块"), "{text}");
}
