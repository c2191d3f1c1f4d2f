//! One sequence of a forward pass ([`Seq`]): what the model hands the pass
//! (`model.rs`) and the pass runs (`forward.rs`).

use ndarray::{ArrayView1, ArrayView2, ArrayViewMut3};

use crate::tree_mask::Mask;

/// One sequence of a forward pass: its new tokens, where they go and what they see.
pub(crate) struct Seq<'a> {
    /// The new tokens `[n]`.
    pub(crate) tokens: ArrayView1<'a, u32>,
    /// The vectors the pass starts from instead of the tokens' embeddings, `[n, d_model]`
    /// (a draft head fed features, EAGLE's); `None`: the embeddings.
    pub(crate) inputs: Option<ArrayView2<'a, f32>>,
    /// The cache slot of the first new token (0 without a cache).
    pub(crate) pos0: usize,
    /// The RoPE position of each new token `[n]`.
    pub(crate) positions: &'a [usize],
    /// Which slots each new token attends to.
    pub(crate) mask: Mask<'a>,
    /// Per layer, its keys *transposed* `[heads, head_dim, capacity]` and values `[heads, capacity,
    /// head_dim]`; empty without a cache (teacher forcing).
    pub(crate) kv: Vec<(ArrayViewMut3<'a, f32>, ArrayViewMut3<'a, f32>)>,
}
