//! `join_the_pool` in a process of its own (one test: rayon's global pool is built once).

use rayon::prelude::*;

#[test]
fn the_calling_thread_becomes_thread_0_of_the_global_pool_and_a_second_call_does_nothing() {
    assert_eq!(
        rayon::current_thread_index(),
        None,
        "a test thread starts outside"
    );
    lecture_kit::join_the_pool();
    assert_eq!(rayon::current_thread_index(), Some(0));
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    assert_eq!(rayon::current_num_threads(), threads);
    lecture_kit::join_the_pool();
    assert_eq!(rayon::current_thread_index(), Some(0));
    // Parallel loops still run.
    let sum: u64 = (1..=1000u64).into_par_iter().sum();
    assert_eq!(sum, 500_500);
}
