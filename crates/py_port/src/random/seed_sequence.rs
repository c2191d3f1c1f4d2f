//! NumPy's `SeedSequence`: hashes a seed of any size into a pool of four 32-bit words, from
//! which bit generators draw their initial state (O'Neill's `seed_seq` design, as NumPy's
//! `numpy/random/bit_generator.pyx` implements it).

/// The words of NumPy's `DEFAULT_POOL_SIZE` entropy pool.
const POOL_SIZE: usize = 4;
const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
/// Half the bits of a `u32` (NumPy's `XSHIFT`).
const XSHIFT: u32 = 16;

/// NumPy's `numpy.random.SeedSequence(entropy)` without a spawn key: the mixed entropy pool.
///
/// ```
/// use py_port::random::SeedSequence;
/// // NumPy: np.random.SeedSequence(42).generate_state(4, np.uint64)[0] == 0x9f1e2e6dcd540ab7
/// assert_eq!(SeedSequence::new(42).generate_state_u64(4)[0], 0x9f1e_2e6d_cd54_0ab7);
/// ```
///
/// Differences: no `spawn_key`, `spawn()` or `pool_size` other than 4, and no seeding from OS
/// entropy (`SeedSequence()` with no argument): a port always passes its seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSequence {
    pool: [u32; POOL_SIZE],
}

/// NumPy's `hashmix`: `hash_const` is advanced in place.
fn hashmix(value: u32, hash_const: &mut u32) -> u32 {
    let mut value = value ^ *hash_const;
    *hash_const = hash_const.wrapping_mul(MULT_A);
    value = value.wrapping_mul(*hash_const);
    value ^ (value >> XSHIFT)
}

/// NumPy's `mix`.
fn mix(x: u32, y: u32) -> u32 {
    let result = MIX_MULT_L
        .wrapping_mul(x)
        .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
    result ^ (result >> XSHIFT)
}

impl SeedSequence {
    /// `SeedSequence(entropy)` for a non-negative integer seed. NumPy splits the integer into
    /// 32-bit words, lowest first (`0` is one word `[0]`), so `2**32 + 5` is `[5, 1]`. `u128`
    /// covers every seed below 2^128; for larger Python integers use [`SeedSequence::from_words`].
    pub fn new(entropy: u128) -> Self {
        let mut words = Vec::with_capacity(4);
        let mut n = entropy;
        if n == 0 {
            words.push(0);
        }
        while n > 0 {
            words.push((n & 0xFFFF_FFFF) as u32);
            n >>= 32;
        }
        Self::from_words(&words)
    }

    /// `SeedSequence(np.array(words, dtype=np.uint32))`: entropy given as 32-bit words, lowest
    /// first. Any length works (an empty slice too, as in NumPy); words past the fourth are mixed
    /// into every pool word.
    pub fn from_words(entropy: &[u32]) -> Self {
        let mut pool = [0u32; POOL_SIZE];
        let mut hash_const = INIT_A;
        // Add in the entropy up to the pool size.
        for (i, slot) in pool.iter_mut().enumerate() {
            *slot = hashmix(entropy.get(i).copied().unwrap_or(0), &mut hash_const);
        }
        // Mix all bits together so late bits can affect earlier bits.
        for i_src in 0..POOL_SIZE {
            for i_dst in 0..POOL_SIZE {
                if i_src != i_dst {
                    let h = hashmix(pool[i_src], &mut hash_const);
                    pool[i_dst] = mix(pool[i_dst], h);
                }
            }
        }
        // Add any remaining entropy, mixing each new word with each pool word.
        for &word in entropy.iter().skip(POOL_SIZE) {
            for slot in pool.iter_mut() {
                *slot = mix(*slot, hashmix(word, &mut hash_const));
            }
        }
        SeedSequence { pool }
    }

    /// The mixed entropy pool (NumPy's `SeedSequence.pool`).
    pub fn pool(&self) -> [u32; 4] {
        self.pool
    }

    /// `generate_state(n_words, np.uint32)`: `n_words` words drawn by cycling over the pool.
    pub fn generate_state_u32(&self, n_words: usize) -> Vec<u32> {
        let mut hash_const = INIT_B;
        (0..n_words)
            .map(|i| {
                let mut value = self.pool[i % POOL_SIZE] ^ hash_const;
                hash_const = hash_const.wrapping_mul(MULT_B);
                value = value.wrapping_mul(hash_const);
                value ^ (value >> XSHIFT)
            })
            .collect()
    }

    /// `generate_state(n_words, np.uint64)`: twice as many 32-bit words, paired little-endian
    /// (the first of each pair is the low half), as NumPy does on every platform.
    pub fn generate_state_u64(&self, n_words: usize) -> Vec<u64> {
        self.generate_state_u32(2 * n_words)
            .chunks_exact(2)
            .map(|pair| u64::from(pair[0]) | (u64::from(pair[1]) << 32))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values printed by NumPy 2.4.6 (`np.random.SeedSequence(...)`).

    #[test]
    fn a_seed_wider_than_the_pool_is_mixed_into_every_pool_word() {
        // NumPy's own example: 1234567890123456789012345678901234567890 (above u128) is
        // five 32-bit words.
        let words = [
            3_460_238_034,
            2_898_026_390,
            3_235_640_248,
            2_697_535_605,
            3,
        ];
        let seed = SeedSequence::from_words(&words);
        assert_eq!(
            seed.pool(),
            [554_562_028, 800_287_935, 3_220_741_508, 4_022_693_035]
        );
        assert_eq!(
            seed.generate_state_u32(4),
            [763_159_093, 2_500_287_353, 3_566_873_211, 1_602_825_003]
        );
        assert_eq!(
            seed.generate_state_u64(2),
            [0x9507_5b79_2d7c_e235, 0x5f89_2b2b_d49a_2a7b]
        );
    }

    #[test]
    fn empty_entropy_hashes_zeros_into_the_pool() {
        let pool = SeedSequence::from_words(&[]).pool();
        assert_eq!(
            pool,
            [4_265_667_335, 1_328_953_910, 1_320_288_413, 3_365_567_143]
        );
    }

    #[test]
    fn an_integer_seed_is_its_32_bit_words_lowest_first() {
        assert_eq!(
            SeedSequence::new((1 << 32) + 5),
            SeedSequence::from_words(&[5, 1])
        );
        assert_eq!(SeedSequence::new(0), SeedSequence::from_words(&[0]));
        // Missing words hash as zeros, so seed 0 and no entropy share a pool (NumPy 2.4.6:
        // SeedSequence(0).pool == SeedSequence([]).pool).
        assert_eq!(SeedSequence::new(0), SeedSequence::from_words(&[]));
    }
}
