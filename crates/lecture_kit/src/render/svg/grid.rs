//! Where the panels of a figure go: stacked, or in rows side by side
//! ([`Figure::rows`](crate::Figure::rows)), each in a cell of the figure.

use super::layout::{TITLE_HEIGHT, WIDTH, panel_heights};
use crate::figure::Figure;

/// Where the panels of a figure go ([`grid`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// The whole figure's width and height, pixels.
    pub size: (u32, u32),
    /// Each panel's area in the figure: its left and top edges, its width and height.
    pub cells: Vec<((i32, i32), (u32, u32))>,
}

/// Where each panel of `figure` goes: its rows ([`Figure::rows`]; one panel a row when
/// there are none) under the title, each row as tall as its tallest panel
/// ([`panel_heights`]), the figure [`WIDTH`] times the widest row's panels wide.
///
/// Errors: rows that do not hold the figure's panels exactly, or a row of none.
pub fn grid(figure: &Figure) -> Result<Grid, String> {
    let heights = panel_heights(figure);
    let n = heights.len();
    let rows = match figure.rows.is_empty() {
        true => vec![1; n],
        false => figure.rows.clone(),
    };
    if rows.iter().sum::<usize>() != n || rows.contains(&0) {
        return Err(format!(
            "figure {:?}: rows {rows:?} do not hold its {n} panels",
            figure.id
        ));
    }
    let columns = rows.iter().copied().max().unwrap_or(1);
    let width = WIDTH * columns as u32;
    let mut cells = Vec::new();
    let mut top = TITLE_HEIGHT;
    let mut first = 0;
    for k in rows {
        let tall = heights[first..first + k].iter().copied().max().unwrap_or(0);
        let wide = width / k as u32;
        for j in 0..k {
            cells.push(((j as i32 * wide as i32, top as i32), (wide, tall)));
        }
        first += k;
        top += tall;
    }
    Ok(Grid {
        size: (width, top),
        cells,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Panel, Series};

    fn chart_panel() -> Panel {
        let mut p = Panel::new("", Axis::linear("x"), Axis::linear("y"));
        p.series.push(Series::line("s", vec![(1.0, 2.0)]));
        p
    }

    #[test]
    fn panels_go_in_rows_whose_cells_are_sized_by_hand() {
        let empty = Panel::new("", Axis::linear("x"), Axis::linear("y"));
        let three = Figure::new("", vec![chart_panel(), empty, chart_panel()]);
        // Stacked by default: the title, then each panel full width below the last.
        let stacked = grid(&three).unwrap();
        assert_eq!(stacked.size, (960, 44 + 400 + 200 + 400));
        let tops: Vec<i32> = stacked.cells.iter().map(|c| c.0.1).collect();
        assert_eq!(tops, [44, 444, 644]);
        // In rows of 1 and 2: the figure two panels wide, the top panel across it, the
        // row below as tall as its taller panel, by hand.
        let rows = three.clone().rows(&[1, 2]);
        let g = grid(&rows).unwrap();
        assert_eq!(g.size, (1920, 44 + 400 + 400));
        assert_eq!(
            g.cells,
            [
                ((0, 44), (1920, 400)),
                ((0, 444), (960, 400)),
                ((960, 444), (960, 400))
            ]
        );
        // Rows that do not hold the panels exactly are refused, never drawn half.
        for bad in [&[1, 1][..], &[2, 2], &[3, 0], &[0, 3]] {
            assert!(grid(&three.clone().rows(bad)).is_err(), "{bad:?}");
        }
    }
}
