//! AVX2 + FMA copies of the hot loops where the CPU has them (the pattern of
//! `transformer_lab`'s own `cpu` module: compile the loop twice, pick at run time).
//!
//! The copies run the same operations in the same order; the AVX2 copy only lets the
//! compiler use 8-float registers and fused multiply-adds where the code asks for them
//! (`mul_add`). This module holds the crate's only `unsafe`.

/// Whether this CPU runs the AVX2 + FMA copies.
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// Defines a function that runs `$body` (an `#[inline(always)]` function with the same
/// arguments) compiled for AVX2 + FMA when the CPU has them, and as built otherwise.
macro_rules! with_avx2 {
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

pub(crate) use with_avx2;
