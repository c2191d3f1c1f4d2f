//! The course's shared page words, in the course's language: with `lecture_kit`'s chrome,
//! the only Chinese a library of this workspace holds (a lecture's own sentences live in
//! the lecture).

/// The heading of the numbered observations that close a demo.
pub const OBSERVATIONS: &str = "观察";
/// The same heading as the terminal prints it, before its list.
pub const OBSERVATIONS_LINE: &str = "观察：";
