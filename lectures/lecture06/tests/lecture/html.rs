//! `--format html`: the lecture as one self-contained page (the handout), read back as
//! XML and compared with the other exports of the same run.

use crate::run;

use run::{lecture06, stderr, stdout};

fn page(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--format", "html"]);
    let o = lecture06(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

fn parse(html: &str) -> roxmltree::Document<'_> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(html, options).expect("the page is well-formed")
}

/// The text of an element and everything in it, as one trimmed string.
fn text_of(n: roxmltree::Node) -> String {
    n.descendants()
        .filter(|d| d.is_text())
        .filter_map(|d| d.text())
        .collect::<String>()
        .trim()
        .to_string()
}

#[test]
fn the_page_holds_every_header_table_observation_and_figure_of_the_lecture() {
    let html = page(&[]);
    let doc = parse(&html);
    let count = |tag: &str| doc.descendants().filter(|n| n.has_tag_name(tag)).count();
    assert_eq!(count("section"), 3, "demos 1–3");
    assert_eq!(count("h2"), 3);
    assert_eq!(count("table"), 5, "the tables the Markdown export has");
    assert_eq!(
        count("ol") - 1,
        3,
        "one list of observations per demo (plus contents)"
    );
    let charts: Vec<_> = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("figure") && n.attribute("id").is_some_and(|i| i.starts_with("fig-"))
        })
        .collect();
    let ids: Vec<&str> = charts.iter().map(|n| n.attribute("id").unwrap()).collect();
    assert_eq!(ids, ["fig-knee", "fig-batch", "fig-trees"]);

    // The tables carry the cells the Markdown export prints (another renderer of the
    // same report), row by row.
    let md = stdout(&lecture06(&["--format", "markdown"]));
    let md_rows: Vec<Vec<String>> = md
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|-"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    let html_rows: Vec<Vec<String>> = doc
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .map(|tr| {
            tr.children()
                .filter(|c| c.is_element())
                .map(text_of)
                .collect()
        })
        .collect();
    assert_eq!(html_rows, md_rows);
    assert!(
        html_rows
            .iter()
            .flatten()
            .any(|c| c == "γ=4, 1.93×（验证 1.00）")
    );

    // The text's observations, word for word (the terminal wraps them; the page does not).
    let text = stdout(&lecture06(&[]));
    let flat: String = text.split_whitespace().collect();
    for li in doc.descendants().filter(|n| {
        n.has_tag_name("li")
            && n.parent()
                .is_some_and(|p| p.attribute("class") == Some("observations"))
    }) {
        let words: String = text_of(li).split_whitespace().collect();
        assert!(
            flat.contains(&words),
            "observation not in the text output: {words}"
        );
    }
}

#[test]
fn inline_figures_are_the_svg_files_that_plot_writes() {
    let dir = std::env::temp_dir().join(format!("lecture06-html-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = lecture06(&["--format", "html", "--plot", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = stdout(&o);
    for id in ["knee", "batch"] {
        let file = std::fs::read_to_string(dir.join(format!("{id}.svg"))).unwrap();
        let body = file.strip_prefix("<svg ").unwrap();
        assert!(html.contains(body), "{id}.svg is not inline in the page");
    }
    // trees.svg puts its speedup panels side by side for a slide; the page's column
    // stacks them: the same values under the pointer, one panel wide.
    let file = std::fs::read_to_string(dir.join("trees.svg")).unwrap();
    assert!(file.starts_with("<svg width=\"1920\""), "{}", &file[..40]);
    let at = html.find("id=\"fig-trees\"").expect("trees in the page");
    let values = |svg: &str| -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap();
        let titles = doc.descendants().filter(|n| n.has_tag_name("title"));
        titles.filter_map(|t| t.text().map(String::from)).collect()
    };
    let own = values(&file);
    let page_svg = &html[at..];
    let page_svg = &page_svg[page_svg.find("<svg").unwrap()..];
    let page_svg = &page_svg[..page_svg.find("</svg>").unwrap() + "</svg>".len()];
    assert!(
        page_svg.contains("width=\"960\""),
        "the page's trees are one panel wide"
    );
    assert!(own.len() > 20);
    assert_eq!(values(page_svg), own, "the same values under the pointer");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_page_loads_nothing_from_elsewhere() {
    for args in [&[][..], &["--target", "Llama-3.1-70B"]] {
        let html = page(args);
        let doc = parse(&html);
        for n in doc.descendants().filter(|n| n.is_element()) {
            let tag = n.tag_name().name();
            assert!(
                ![
                    "script", "link", "img", "iframe", "object", "embed", "image", "use"
                ]
                .contains(&tag),
                "{args:?}: <{tag}> may load something"
            );
            for a in n.attributes() {
                assert!(a.name() != "src", "{args:?}: src on <{tag}>");
                if a.name() == "href" {
                    assert!(a.value().starts_with('#'), "{args:?}: href {:?}", a.value());
                }
            }
        }
        let style = doc
            .descendants()
            .find(|n| n.has_tag_name("style"))
            .and_then(|n| n.text())
            .unwrap();
        for fetch in ["url(", "@import", "@font-face"] {
            assert!(
                !style.contains(fetch),
                "{args:?}: the CSS fetches with {fetch}"
            );
        }
    }
}

#[test]
fn a_target_that_does_not_fit_makes_a_page_that_says_so() {
    let html = page(&["--target", "Llama-3.1-70B"]);
    let doc = parse(&html);
    let charts: Vec<_> = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("figure") && n.attribute("class").is_some_and(|c| c.starts_with("chart"))
        })
        .collect();
    assert_eq!(charts.len(), 3);
    for chart in charts {
        assert!(
            text_of(chart).contains("放不下"),
            "{:?} does not say 放不下",
            chart.attribute("id")
        );
    }
}

#[test]
fn out_writes_the_page_to_a_file_and_two_runs_write_the_same_bytes() {
    let path = std::env::temp_dir().join(format!("lecture06-{}.html", std::process::id()));
    let o = lecture06(&["--format", "HTML", "--out", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.starts_with("<!DOCTYPE html>\n"));
    assert_eq!(written, page(&[]), "a second process prints the same page");
    std::fs::remove_file(&path).unwrap();
}
