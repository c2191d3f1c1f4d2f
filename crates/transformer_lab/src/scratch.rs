//! Scratch memory for the forward pass: a thread's activation buffers, reused from call
//! to call, and the helpers that cut one buffer into the pass's matrices.

use std::cell::RefCell;

use ndarray::{ArrayViewMut2, Axis};

/// `m` cut into consecutive row blocks of the given lengths.
pub(crate) fn split_rows<'a>(
    mut m: ArrayViewMut2<'a, f32>,
    lens: &[usize],
) -> Vec<ArrayViewMut2<'a, f32>> {
    let mut parts = Vec::with_capacity(lens.len());
    for &n in lens {
        let (head, tail) = m.split_at(Axis(0), n);
        parts.push(head);
        m = tail;
    }
    parts
}

/// `buf` cut into consecutive slices of the given lengths.
pub(crate) fn split_slice(
    mut buf: &mut [f32],
    lens: impl Iterator<Item = usize>,
) -> Vec<&mut [f32]> {
    lens.map(|n| {
        let (head, tail) = std::mem::take(&mut buf).split_at_mut(n);
        buf = tail;
        head
    })
    .collect()
}

thread_local! {
    /// This thread's activation buffers for [`TransformerLM::forward_chunk`].
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// `buf` as a `[rows, width]` matrix.
pub(crate) fn matrix(buf: &mut [f32], rows: usize, width: usize) -> ArrayViewMut2<'_, f32> {
    ArrayViewMut2::from_shape((rows, width), buf).expect("rows × width floats")
}

/// A thread's scratch memory, taken for one forward pass of a chunk and given back when
/// dropped. A pass that starts on the same thread meanwhile (rayon runs other tasks
/// while it waits) finds the slot empty and allocates its own, so nothing is shared.
pub(crate) struct Scratch(Vec<f32>);

impl Scratch {
    /// At least `len` floats; their values are whatever the last user left.
    pub(crate) fn take(len: usize) -> Self {
        let mut buf = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        if buf.len() < len {
            buf.resize(len, 0.0);
        }
        Scratch(buf)
    }

    /// Consecutive slices of the given lengths.
    pub(crate) fn split<const N: usize>(&mut self, lens: [usize; N]) -> [&mut [f32]; N] {
        let mut rest = &mut self.0[..];
        lens.map(|len| {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            head
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        SCRATCH.with(|s| {
            let mut slot = s.borrow_mut();
            if slot.capacity() < buf.capacity() {
                *slot = buf;
            }
        });
    }
}
