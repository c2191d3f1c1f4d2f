//! Wider vector instructions where the CPU has them, with the same results.
//!
//! A build for x86-64 targets the 2003 baseline (SSE2: four floats per instruction). Nearly
//! every x86 CPU in use also has AVX2 (eight floats) and FMA. The hot loops are compiled
//! twice, once for each, and the AVX2 copy runs when the CPU reports both features
//! (checked once, then cached by the standard library).
//!
//! Elementwise loops and sequential sums compute exactly the same operations in the same
//! order either way (Rust never fuses `a * b + c` on its own), so those copies give
//! bit-identical results; only [`crate::gemm`] asks for fused multiply-adds explicitly.

/// Whether this CPU runs the AVX2 + FMA copies (checked once, then cached by the standard
/// library). Other crates' kernels dispatch on it too, through [`with_avx2!`](crate::cpu::with_avx2).
#[cfg(target_arch = "x86_64")]
pub fn has_avx2_fma() -> bool {
    #[cfg(test)]
    if BASELINE_ONLY.get() {
        return false;
    }
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// Whether this CPU runs the AVX-512 copy of the packed product ([`crate::gemm`]): AVX-512F
/// besides AVX2 and FMA (checked once, then cached by the standard library).
#[cfg(target_arch = "x86_64")]
pub fn has_avx512() -> bool {
    #[cfg(test)]
    if AVX2_ONLY.get() {
        return false;
    }
    has_avx2_fma() && std::arch::is_x86_feature_detected!("avx512f")
}

#[cfg(all(test, target_arch = "x86_64"))]
thread_local! {
    /// Set on a thread to make it behave as a CPU with AVX2 and FMA but no AVX-512 (see
    /// [`avx2_pool`]).
    static AVX2_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Set on a thread to make it behave as a CPU without AVX2 or FMA: the baseline copies
    /// run and models do not pack their weights (see [`baseline_pool`]).
    static BASELINE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A rayon pool whose threads all take the AVX2 path, as on a CPU without AVX-512: run
/// code under `pool.install(…)` to test that path on any machine with AVX2.
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn avx2_pool() -> rayon::ThreadPool {
    pool_acting_as(&AVX2_ONLY)
}

/// A rayon pool whose threads all take the x86-64 baseline path, as on a CPU without
/// AVX2 or FMA: run code under `pool.install(…)` to test that path on any machine.
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn baseline_pool() -> rayon::ThreadPool {
    pool_acting_as(&BASELINE_ONLY)
}

/// Two threads with `flag` set on each. Other threads, and so tests running meanwhile,
/// are not affected.
#[cfg(all(test, target_arch = "x86_64"))]
fn pool_acting_as(
    flag: &'static std::thread::LocalKey<std::cell::Cell<bool>>,
) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(move |_| flag.set(true))
        .build()
        .expect("a thread pool of two threads")
}

/// Defines a function that runs `$body` (an `#[inline(always)]` function with the same
/// arguments) compiled for AVX2 + FMA when the CPU has them, and as built otherwise: the
/// workspace's runtime dispatch (its `unsafe` is the call of the AVX2 copy after the
/// check; the packed product alone adds an AVX-512 copy, `gemm/avx512.rs`). Used as
/// `transformer_lab::cpu::with_avx2! { pub fn name(a: T) -> R => body }`.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_avx2 {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $body:ident) => {
        $(#[$m])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                /// # Safety
                /// The CPU must support AVX2 and FMA.
                #[allow(unsafe_code)]
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                    $body($($arg),*)
                }
                if $crate::cpu::has_avx2_fma() {
                    // SAFETY: `avx2` needs nothing but a CPU with AVX2 and FMA, which was
                    // checked on the line above.
                    #[allow(unsafe_code)]
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}

pub use crate::__with_avx2 as with_avx2;

/// Asks the CPU to bring the cache line holding `x` into its level-2 cache, without
/// waiting for it: a hint, so it never faults and never changes a result. The packed
/// product ([`crate::gemm`]) issues it for the next weight panel while it computes on the
/// current one, so that a product of several row blocks reads memory while it computes
/// (the hardware prefetcher follows only misses, and later blocks hit in L2). host_lab's
/// INT4 kernel issues it too, for the whole next panel from its first row block, at one
/// row as well. A no-op where no prefetch instruction is wired (anything but x86-64).
#[inline(always)]
pub fn prefetch_l2<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T1, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, part of every x86-64 CPU; a prefetch reads
        // nothing into the program and cannot fault, and `x` is a valid reference anyway.
        #[allow(unsafe_code)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T1>(std::ptr::from_ref(x).cast::<i8>());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
