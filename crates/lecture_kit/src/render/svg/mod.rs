//! Draws a [`Figure`](crate::figure::Figure) as an SVG file with plotters' SVG backend.
//!
//! Text is written as SVG `<text>` in the font-family list [`FONT_FAMILY`], CJK-capable
//! fonts first, so Chinese labels render wherever one of them is installed (see
//! `docs/figures.md` for the packages) and the file itself needs no font. The layout is
//! chosen for a reader:
//!
//! - tick labels as people write them (1, 10, 100, 1K; 1×, 1.5×) — [`tick_label`];
//! - a marker on every point; categories as dots, never joined by lines;
//! - each shaded region ("批 > 14 放不下") is a band in its own row above the data, its
//!   label inside the band, and a dashed line in its colour marks where it starts;
//! - the legend and the labels of reference lines go where they cover the fewest points
//!   and lines;
//! - a panel with nothing to plot shows its message in words instead of empty axes;
//! - panels stacked, or side by side in rows so a figure fits a slide
//!   ([`Figure::rows`](crate::figure::Figure::rows)).
//!
//! Every size is in pixels of a [`WIDTH`]-pixel-wide panel. The renderer is two halves:
//!
//! | file | what it does |
//! |---|---|
//! | `layout.rs` | sizes, axis ranges, where a value lands in pixels, tick labels — pure |
//! | `grid.rs` | where each panel goes in the figure, and the figure's size — pure |
//! | `place.rs` | where the bands, labels, legend and message go — pure |
//! | `draw.rs` | the plotters calls that draw that layout |
//! | `hover.rs` | the value under the pointer: a `<title>` over every point — pure |

mod draw;
mod grid;
mod hover;
mod layout;
mod place;

pub use draw::{COLORS, FONT_FAMILY, color, color_hex, to_string, write};
pub use hover::value_label;
pub use layout::{PANEL_HEIGHT, WIDTH, tick_label};
