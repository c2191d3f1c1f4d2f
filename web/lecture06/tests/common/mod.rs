//! What the page's test binaries share.

use lecture06::spec_decode_on_hardware::demo3::SHAPES;
use lecture06::spec_decode_on_hardware::demo4::MeasuredShape;

/// Figures no decoding gives (a round count of 90 000 + the shape's index), so that the
/// page's table shows they were printed, not measured again.
pub fn marked(k: usize) -> Vec<MeasuredShape> {
    SHAPES
        .iter()
        .enumerate()
        .map(|(i, levels)| MeasuredShape {
            label: lecture06::spec_decode_on_hardware::demo3::shape_label(levels),
            branching: levels.to_vec(),
            rounds: 90_000 + 100 * k + i,
            target_forwards: 1,
            draft_forwards: 1,
            tau_measured: 1.0,
            tau_ranks: 1.0,
            identical_to_target: true,
        })
        .collect()
}
