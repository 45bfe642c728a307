//! Randomness for the generator: Marsaglia's xorshift64* ([`XorShift`]),
//! seeded through splitmix64, and a Hawkes process ([`Hawkes`]) for
//! clustered arrival times, simulated exactly by Ogata thinning. Both are
//! deterministic for a seed.

/// Marsaglia's xorshift64*: small, fast, and good enough for a workload.
#[derive(Clone, Debug)]
pub struct XorShift(pub(super) u64);

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

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() <= p
    }

    /// Exponentially distributed with the given rate.
    pub fn exp(&mut self, rate: f64) -> f64 {
        -self.unit().ln() / rate
    }
}

/// A univariate Hawkes process with exponential kernel:
/// `λ(t) = μ + Σ α·exp(-β (t - tᵢ))`, simulated exactly by Ogata thinning.
/// Each event raises the intensity by `α`, which then decays at rate `β`;
/// `α/β` is the branching ratio (mean events one event triggers directly).
#[derive(Clone, Debug)]
pub struct Hawkes {
    mu: f64,
    alpha: f64,
    beta: f64,
    excitation: f64,
    t: f64,
}

impl Hawkes {
    /// A process whose long-run rate is `rate` events/s, with branching
    /// ratio `branching` (in `[0, 1)`) and kernel decay `decay` (1/s).
    pub fn new(rate: f64, branching: f64, decay: f64) -> Self {
        let n = branching.clamp(0.0, 0.99);
        Hawkes {
            mu: rate * (1.0 - n),
            alpha: n * decay,
            beta: decay,
            excitation: 0.0,
            t: 0.0,
        }
    }

    /// The time of the next event, in seconds from the start.
    pub fn next_event(&mut self, rng: &mut XorShift) -> f64 {
        loop {
            // The intensity only decays between events, so its current
            // value bounds it until the next one: propose, then thin.
            let bound = self.mu + self.excitation;
            let dt = rng.exp(bound);
            self.t += dt;
            self.excitation *= (-self.beta * dt).exp();
            if rng.unit() * bound <= self.mu + self.excitation {
                self.excitation += self.alpha;
                return self.t;
            }
        }
    }
}
