//! Clustered arrival times for the generator: a Hawkes process
//! ([`Hawkes`]), simulated exactly by Ogata thinning on the suite's
//! [`XorShift`], so deterministic for a seed, optionally with a scheduled
//! [`Release`] that raises its baseline for a while.

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
    release: Option<Release>,
}

/// A scheduled news release (the paper's FOMC statement): from `at_s` for
/// `secs` seconds the process's baseline intensity is `factor` times its
/// usual value; self-excitation then multiplies the extra events as it
/// does the others.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Release {
    /// Start, seconds from the start of the feed.
    pub at_s: f64,
    /// How long it lasts, seconds.
    pub secs: f64,
    /// Baseline multiplier while it lasts (at least 1).
    pub factor: f64,
}

impl Release {
    /// Whether `t` (seconds) falls inside the release.
    pub fn contains(&self, t: f64) -> bool {
        (self.at_s..self.at_s + self.secs).contains(&t)
    }
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
            release: None,
        }
    }

    /// The same process with `release` scheduled.
    pub fn with_release(mut self, release: Release) -> Self {
        self.release = Some(Release {
            factor: release.factor.max(1.0),
            ..release
        });
        self
    }

    /// The baseline intensity at `t`.
    fn baseline(&self, t: f64) -> f64 {
        match self.release {
            Some(r) if r.contains(t) => self.mu * r.factor,
            _ => self.mu,
        }
    }

    /// The most the baseline can be from `t` on.
    fn baseline_bound(&self, t: f64) -> f64 {
        match self.release {
            Some(r) if t < r.at_s + r.secs => self.mu * r.factor,
            _ => self.mu,
        }
    }

    /// The time of the next event, in seconds from the start.
    pub fn next_event(&mut self, rng: &mut XorShift) -> f64 {
        loop {
            // The excitation only decays between events and the baseline
            // never exceeds its bound from here on, so their sum bounds
            // the intensity until the next event: propose, then thin.
            let bound = self.baseline_bound(self.t) + self.excitation;
            let dt = rng.exp(bound);
            self.t += dt;
            self.excitation *= (-self.beta * dt).exp();
            if rng.unit() * bound <= self.baseline(self.t) + self.excitation {
                self.excitation += self.alpha;
                return self.t;
            }
        }
    }
}
