//! Clustered arrival times for the generator: a Hawkes process
//! ([`Hawkes`]), simulated exactly by Ogata thinning on the suite's
//! [`XorShift`], so deterministic for a seed.

use crate::rng::XorShift;

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
