//! α per chain position from ranks, against counts done by hand.

use train_lab::accept::{chain_alphas, tau};

#[test]
fn alpha_per_position_is_the_share_of_rounds_that_get_past_it() {
    // One sequence, ranks 0 0 1 0. A chain of 2 from each start accepts 2, 1, 0, 1
    // (the last start has one position left): α₁ = 3 of 4 starts, α₂ = 1 of those 3.
    let r = vec![vec![0, 0, 1, 0]];
    let a = chain_alphas(&r, 2).unwrap();
    assert_eq!(a, vec![3.0 / 4.0, 1.0 / 3.0]);
    // τ = 1 + mean accepted = 1 + 4 / 4; a tree of top 2 then top 1 accepts 2, 1, 2, 1.
    assert_eq!(tau(&r, &[1, 1]).unwrap(), (2.0, 2));
    assert_eq!(tau(&r, &[2, 1]).unwrap(), (2.5, 4));
}
