//! What a demo uses, in one import: `use lecture_kit::prelude::*;` brings the demo's
//! signature (`Out`, `Error`, `Demo`, `Script`, the `Inputs` trait and `NoInputs`), its
//! sentences (`always`, `seed`, `what_if`), its tables (`columns!`, `row!` and the typed values `int`,
//! `fixed`, `time`, `ratio`, `speedup`, `percent`, `label`, `missing`) and its figures
//! (`Figure`, `Panel`, `Axis`, `Series`). A lecture's starter script (`cargo xtask
//! new-lecture`, `new-script`) imports it.
//!
//! ```
//! use lecture_kit::prelude::*;
//!
//! fn demo1(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
//!     out.header("演示 1");
//!     out.table(["批", "一步"], [row![1, time(6.65e-3)]]);
//!     out.observations([always("批 1 一步 6.65 ms。")]);
//!     Ok(())
//! }
//! let script = Script::new("01_x", "x", vec![Demo::new(1, demo1)]);
//! assert_eq!(script.numbers(), [1]);
//! ```

pub use crate::inputs::{Inputs, NoInputs};
pub use crate::value::{fixed, int, label, missing, percent, ratio, speedup, time};
pub use crate::{Axis, Demo, Error, Figure, Out, Panel, Script, Series, always, seed, what_if};
pub use crate::{columns, row};
