//! Reads an SVG figure back as a reader's tools would see it: texts with their position,
//! anchor and font, rectangles, markers, polylines.

use lecture_kit::Figure;
use lecture_kit::render::svg;

#[derive(Debug)]
pub struct Text {
    pub x: f64,
    pub y: f64,
    pub anchor: String,
    pub family: String,
    pub size: f64,
    pub text: String,
}

#[derive(Debug, Clone, Copy)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn contains(&self, (x, y): (f64, f64)) -> bool {
        x >= self.x && x <= self.x + self.w && y >= self.y && y <= self.y + self.h
    }
}

#[derive(Debug, Default)]
pub struct Svg {
    pub texts: Vec<Text>,
    /// `(rect, fill, stroke, opacity)`.
    pub rects: Vec<(Rect, String, String, f64)>,
    /// `(cx, cy, fill)`.
    pub circles: Vec<(f64, f64, String)>,
    /// `(stroke, points)` of every polyline (lines and dashes).
    pub polylines: Vec<(String, Vec<(f64, f64)>)>,
    /// `(cx, cy, title)` of the hover layer's circles (`<g class="values">`): the value
    /// under the pointer, invisible, kept apart from the markers.
    pub values: Vec<(f64, f64, String)>,
}

impl Svg {
    pub fn parse(svg: &str) -> Svg {
        let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let num = |n: &roxmltree::Node, a: &str| -> f64 {
            n.attribute(a)
                .unwrap_or_else(|| panic!("{a} missing on {n:?}"))
                .parse()
                .unwrap()
        };
        let attr = |n: &roxmltree::Node, a: &str| n.attribute(a).unwrap_or("").to_string();
        let mut out = Svg::default();
        let in_values = |n: &roxmltree::Node| {
            n.ancestors()
                .any(|a| a.has_tag_name("g") && a.attribute("class") == Some("values"))
        };
        for n in doc.descendants().filter(|n| n.is_element()) {
            if in_values(&n) {
                if n.has_tag_name("circle") {
                    let title = n.children().find(|t| t.has_tag_name("title"));
                    let title = title.and_then(|t| t.text()).unwrap_or("").to_string();
                    out.values.push((num(&n, "cx"), num(&n, "cy"), title));
                }
                continue;
            }
            match n.tag_name().name() {
                "text" => out.texts.push(Text {
                    x: num(&n, "x"),
                    y: num(&n, "y"),
                    anchor: attr(&n, "text-anchor"),
                    family: attr(&n, "font-family"),
                    size: num(&n, "font-size"),
                    text: n.text().unwrap_or("").trim().to_string(),
                }),
                "rect" => out.rects.push((
                    Rect {
                        x: num(&n, "x"),
                        y: num(&n, "y"),
                        w: num(&n, "width"),
                        h: num(&n, "height"),
                    },
                    attr(&n, "fill"),
                    attr(&n, "stroke"),
                    n.attribute("opacity").map_or(1.0, |o| o.parse().unwrap()),
                )),
                "circle" => out
                    .circles
                    .push((num(&n, "cx"), num(&n, "cy"), attr(&n, "fill"))),
                "polyline" => out.polylines.push((
                    attr(&n, "stroke"),
                    attr(&n, "points")
                        .split_whitespace()
                        .map(|p| {
                            let (x, y) = p.split_once(',').expect("x,y");
                            (x.parse().unwrap(), y.parse().unwrap())
                        })
                        .collect(),
                )),
                _ => {}
            }
        }
        out
    }

    pub fn of(figure: &Figure) -> Svg {
        Svg::parse(&svg::to_string(figure).unwrap())
    }

    pub fn has(&self, text: &str) -> bool {
        self.texts.iter().any(|t| t.text == text)
    }

    pub fn count(&self, text: &str) -> usize {
        self.texts.iter().filter(|t| t.text == text).count()
    }

    /// The legend frames (grey-stroked, unfilled rectangles).
    pub fn legends(&self) -> Vec<Rect> {
        self.rects
            .iter()
            .filter(|(_, fill, stroke, _)| fill == "none" && stroke == "#BEBEBE")
            .map(|r| r.0)
            .collect()
    }

    /// Tick labels: texts that read as a number ("1", "1.5×", "10K").
    pub fn ticks(&self) -> Vec<(&Text, f64)> {
        self.texts
            .iter()
            .filter_map(|t| tick_value(&t.text).map(|v| (t, v)))
            .collect()
    }
}

/// The value of a tick label as people write it: "1K" = 1000, "1.5×" = 1.5.
pub fn tick_value(text: &str) -> Option<f64> {
    let t = text.strip_suffix('×').unwrap_or(text);
    let (t, scale) = match (t.strip_suffix('K'), t.strip_suffix('M')) {
        (Some(k), _) => (k, 1e3),
        (_, Some(m)) => (m, 1e6),
        _ => (t, 1.0),
    };
    t.parse::<f64>().ok().map(|v| v * scale)
}

/// A generous estimate of a text's width: one em per Chinese character, 0.6 em otherwise.
pub fn width(t: &Text) -> f64 {
    t.text
        .chars()
        .map(|c| if (c as u32) >= 0x2E80 { 1.0 } else { 0.6 })
        .sum::<f64>()
        * t.size
}
