//! The one seeded random generator of the suite: Marsaglia's xorshift64*,
//! seeded through splitmix64. Small, fast, and good enough for workloads
//! and test traffic; not for anything that needs real randomness.
//!
//! The same seed gives the same stream on every machine, so a run that
//! draws only from a seeded [`XorShift`] can be repeated exactly.

/// Marsaglia's xorshift64*: 64 bits of state, never zero.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator for `seed` (any value; zero is remapped).
    pub fn new(seed: u64) -> Self {
        // splitmix64 once, so nearby seeds give unrelated streams
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift(if z == 0 { 0x2545_F491_4F6C_DD1D } else { z })
    }

    /// A second generator, seeded from this one's current state and
    /// `salt`; this one does not advance. The same state and salt give the
    /// same stream.
    pub fn split(&self, salt: u64) -> XorShift {
        XorShift::new(self.0 ^ salt)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `(0, 1]`.
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi` (`lo <= hi`).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() <= p
    }

    /// Exponentially distributed with the given rate (`rate > 0`).
    pub fn exp(&mut self, rate: f64) -> f64 {
        -self.unit().ln() / rate
    }
}
