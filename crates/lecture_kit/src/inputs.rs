//! What a demo is computed for: the named inputs of a lecture's setup, which of them differ
//! from the default, and the view of the setup a demo is given.
//!
//! A lecture's setup (the card, the models, the assumptions — whatever its flags change)
//! implements [`Inputs`]: it names its inputs, says whether two setups agree on one, and
//! copies one from another setup. Every demo declares the inputs it reads
//! ([`crate::Demo::reads`]); the kit then
//!
//! - gives the demo a **view** of the setup in which every input it did not declare is the
//!   default's ([`Inputs::view`]), so an undeclared input cannot move its figures — and the
//!   kit checks that the view really differs from the default in declared inputs only;
//! - prints the original script's sentences as written when none of the declared inputs
//!   changed, and otherwise the demo's computed sentences, with the script's sentences (as
//!   the default setup makes them) marked by the lecture's own words
//!   ([`Inputs::default_only`]; see [`crate::Out::observations`]);
//! - knows which flags the user changed that the demo does not read
//!   ([`Inputs::unread_flags`]; the runner, which has the command line, names the flags
//!   typed, also one typed at its default value).

use std::fmt::Debug;

/// A lecture's setup as named inputs (see the [module docs](self)). `Default` is the
/// original script's setup: what the lecture computes with no flag.
///
/// ```
/// use lecture_kit::Inputs;
///
/// #[derive(Debug, Clone, Default, PartialEq)]
/// struct Setup { batch: u64, alpha: f64 }
///
/// #[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// enum Input { Batch, Alpha }
///
/// impl Inputs for Setup {
///     type Input = Input;
///     const INPUTS: &'static [Input] = &[Input::Batch, Input::Alpha];
///     fn flags(input: Input) -> &'static [&'static str] {
///         match input { Input::Batch => &["--batch"], Input::Alpha => &["--alpha"] }
///     }
///     fn same(&self, other: &Self, input: Input) -> bool {
///         match input { Input::Batch => self.batch == other.batch, Input::Alpha => self.alpha == other.alpha }
///     }
///     fn take(&mut self, input: Input, from: &Self) {
///         match input { Input::Batch => self.batch = from.batch, Input::Alpha => self.alpha = from.alpha }
///     }
///     fn default_only(sentence: &str) -> String {
///         format!("【默认配置】{sentence}")
///     }
/// }
///
/// let s = Setup { batch: 8, alpha: 0.7 };
/// assert_eq!(s.changed(), [Input::Batch, Input::Alpha]);
/// let view = s.view(&[Input::Alpha]); // a demo that reads only α sees the default batch
/// assert_eq!(view, Setup { batch: 0, alpha: 0.7 });
/// assert_eq!(s.unread_flags(&[Input::Alpha]), ["--batch"]);
/// ```
pub trait Inputs: Clone + Default + 'static {
    /// The names of the inputs (usually a fieldless enum).
    type Input: Copy + Eq + Debug + 'static;
    /// Every input.
    const INPUTS: &'static [Self::Input];
    /// The units of the raw numbers in the JSON export's sections, by field-name pattern
    /// (`("*_s", "seconds")`); copied into [`crate::Report::units`].
    const UNITS: &'static [(&'static str, &'static str)] = &[];

    /// The command-line flags that set `input` (`["--hw"]`), for the note on flags a demo
    /// does not read.
    fn flags(input: Self::Input) -> &'static [&'static str];

    /// Whether `self` and `other` agree on `input`.
    fn same(&self, other: &Self, input: Self::Input) -> bool;

    /// Sets `input` to its value in `from`.
    fn take(&mut self, input: Self::Input, from: &Self);

    /// A sentence of the original script, marked as holding for the default setup only
    /// (lecture wording, e.g. `"【此条针对默认配置：一块 H100…】" + sentence`).
    fn default_only(sentence: &str) -> String;

    /// Whether the view a demo reading `reads` is given ([`Inputs::view`]) can exist; a
    /// usage error (one line saying what is wrong) when it cannot. Checked for every chosen
    /// demo before any runs. A combination of inputs matters only to a demo that reads
    /// them: a target that the default draft cannot draft for stops a demo that reads the
    /// draft, not one that never uses it. `Ok` unless the lecture says otherwise.
    fn check(&self, reads: &[Self::Input]) -> Result<(), String> {
        let _ = reads;
        Ok(())
    }

    /// The setup as data for the JSON export (`serde_json::to_value(self.data())`); `null`
    /// unless the lecture says otherwise.
    fn export(&self) -> Result<serde_json::Value, serde_json::Error> {
        Ok(serde_json::Value::Null)
    }

    /// The inputs in which this setup differs from the default, in [`Inputs::INPUTS`] order.
    fn changed(&self) -> Vec<Self::Input> {
        let default = Self::default();
        Self::INPUTS
            .iter()
            .copied()
            .filter(|&i| !self.same(&default, i))
            .collect()
    }

    /// This setup with every input not in `reads` set to the default's: what a demo that
    /// reads only `reads` is given.
    fn view(&self, reads: &[Self::Input]) -> Self {
        let default = Self::default();
        let mut view = self.clone();
        for &input in Self::INPUTS.iter().filter(|i| !reads.contains(i)) {
            view.take(input, &default);
        }
        view
    }

    /// The flags of the inputs that differ from the default but are not in `reads`: what
    /// the user changed that a demo reading `reads` ignores.
    fn unread_flags(&self, reads: &[Self::Input]) -> Vec<&'static str> {
        self.changed()
            .into_iter()
            .filter(|i| !reads.contains(i))
            .flat_map(|i| Self::flags(i).iter().copied())
            .collect()
    }
}

/// The input of a setup that has none (`()`): no value of it exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoInput {}

/// A lecture whose demos read nothing from the command line.
impl Inputs for () {
    type Input = NoInput;
    const INPUTS: &'static [NoInput] = &[];
    fn flags(input: NoInput) -> &'static [&'static str] {
        match input {}
    }
    fn same(&self, _: &Self, input: NoInput) -> bool {
        match input {}
    }
    fn take(&mut self, input: NoInput, _: &Self) {
        match input {}
    }
    fn default_only(sentence: &str) -> String {
        sentence.to_string()
    }
}
