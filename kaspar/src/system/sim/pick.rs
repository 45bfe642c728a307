//! How the simulator chooses the next step among the ready ones.
//!
//! Every ready step belongs to a *chain*: an actor (or group) whose
//! activation is ready, a simulated client whose task was woken, or the
//! timers. The strategies choose a chain, and so a step.
//!
//! * [`Strategy::Random`]: uniform among the ready steps, at every step.
//!   Finds bugs that need many small interleavings.
//! * [`Strategy::Pct`]: probabilistic concurrency testing (Burckhardt,
//!   Kothari, Musuvathi and Nagarakatte, ASPLOS 2010). Each chain gets a
//!   random priority when it first appears, and the ready chain with the
//!   highest priority always runs; at `depth - 1` change points, chosen
//!   uniformly among the first `horizon` steps, the chain that would run
//!   drops below every other. A bug that needs `d` ordering constraints
//!   between chains is found with probability at least
//!   `1 / (n * k^(d-1))` per run (`n` chains, `k` steps), whatever the
//!   program: long, mostly sequential runs with a few well-placed
//!   preemptions, which uniform choice almost never produces. A client
//!   that yields (`yield_now`) drops below every other chain, as at a
//!   change point: a client that retries in a loop after a yield (a full
//!   mailbox, say) would otherwise keep the top priority and never let
//!   the actor it waits for run. The timers do the same after each
//!   firing: one that found its target's mailbox full is retried at the
//!   same virtual time, and must let that actor drain it first.

use std::collections::HashMap;

use super::rng::Rng;

/// How a simulated run chooses the next step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// Uniform random choice among the ready steps.
    #[default]
    Random,
    /// Probabilistic concurrency testing with `depth` (at least 1:
    /// `depth - 1` priority change points among the first `horizon`
    /// steps).
    Pct {
        /// The bug depth aimed at: ordering constraints between chains.
        depth: u32,
        /// The steps the change points are drawn from: a run's length.
        /// 0 fits it to the run: [`explore`](super::explore) and
        /// [`check`](super::check()) measure each seed's length first (a
        /// [`Sim`](super::Sim) made directly takes
        /// [`FALLBACK_HORIZON`](Strategy::FALLBACK_HORIZON)).
        horizon: u64,
    },
}

impl Strategy {
    /// PCT with depth 3, its horizon fitted to each run.
    pub const PCT: Strategy = Strategy::Pct {
        depth: 3,
        horizon: 0,
    };

    /// The horizon of a PCT run whose horizon is 0 outside `explore`.
    pub const FALLBACK_HORIZON: u64 = 1_000;
}

/// Who a ready step belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Chain {
    /// An actor or group, by its simulation-local number.
    Actor(u32),
    /// A simulated client.
    Client(u32),
    /// A [`Source`](super::Source), by the order it was added.
    Source(u32),
    /// The timers (one chain: they fire in due order).
    Timers,
}

/// A strategy's state through one run.
pub(crate) enum Picker {
    Random,
    Pct(Pct),
}

pub(crate) struct Pct {
    priorities: HashMap<Chain, i64>,
    /// Step numbers, ascending, at which the chosen chain is lowered.
    changes: Vec<u64>,
    /// How many change points have passed.
    passed: usize,
    depth: u64,
    /// The lowest priority given to a chain that yielded; each yield goes
    /// below the one before.
    floor: i64,
}

impl Picker {
    pub(crate) fn new(strategy: Strategy, rng: &mut Rng) -> Self {
        match strategy {
            Strategy::Random => Picker::Random,
            Strategy::Pct { depth, horizon } => {
                let depth = u64::from(depth.max(1));
                let horizon = match horizon {
                    0 => Strategy::FALLBACK_HORIZON,
                    h => h,
                };
                let mut changes: Vec<u64> = (1..depth).map(|_| rng.below(horizon)).collect();
                changes.sort_unstable();
                Picker::Pct(Pct {
                    priorities: HashMap::new(),
                    changes,
                    passed: 0,
                    depth,
                    floor: 0,
                })
            }
        }
    }

    /// `chain` yielded (a client's `yield_now`): under PCT it drops below
    /// every other chain, so a client that retries after a yield lets
    /// the others run first instead of spinning at the top.
    pub(crate) fn yielded(&mut self, chain: Chain) {
        if let Picker::Pct(pct) = self {
            pct.floor -= 1;
            pct.priorities.insert(chain, pct.floor);
        }
    }

    /// Which of `ready` (not empty) runs as step `step`.
    pub(crate) fn pick(&mut self, step: u64, ready: &[Chain], rng: &mut Rng) -> usize {
        debug_assert!(!ready.is_empty());
        match self {
            Picker::Random => rng.below(ready.len() as u64) as usize,
            Picker::Pct(pct) => pct.pick(step, ready, rng),
        }
    }
}

impl Pct {
    fn priority(&mut self, chain: Chain, rng: &mut Rng) -> i64 {
        let depth = self.depth as i64;
        // New chains start above every lowered one (those are below
        // `depth`), in random order among themselves.
        *self
            .priorities
            .entry(chain)
            .or_insert_with(|| depth + (rng.next_u64() >> 2) as i64)
    }

    fn highest(&mut self, ready: &[Chain], rng: &mut Rng) -> usize {
        let mut best = 0;
        let mut best_p = 0;
        for (i, &c) in ready.iter().enumerate() {
            let p = self.priority(c, rng);
            if i == 0 || p > best_p {
                best = i;
                best_p = p;
            }
        }
        best
    }

    fn pick(&mut self, step: u64, ready: &[Chain], rng: &mut Rng) -> usize {
        let mut chosen = self.highest(ready, rng);
        while self.passed < self.changes.len() && self.changes[self.passed] <= step {
            self.passed += 1;
            // The j-th change point lowers the chain about to run to
            // `depth - j`: below every chain not yet lowered, and below
            // those lowered before it.
            let lowered = (self.depth - self.passed as u64) as i64;
            self.priorities.insert(ready[chosen], lowered);
            chosen = self.highest(ready, rng);
        }
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p_changes(p: &Picker) -> Vec<u64> {
        match p {
            Picker::Pct(pct) => pct.changes.clone(),
            Picker::Random => Vec::new(),
        }
    }

    #[test]
    fn pct_runs_one_chain_until_a_change_point() {
        let mut rng = Rng::new(3);
        let mut p = Picker::new(
            Strategy::Pct {
                depth: 1,
                horizon: 100,
            },
            &mut rng,
        );
        let ready = [Chain::Actor(0), Chain::Actor(1), Chain::Client(0)];
        let first = p.pick(0, &ready, &mut rng);
        for step in 1..50 {
            assert_eq!(p.pick(step, &ready, &mut rng), first);
        }
    }

    #[test]
    fn pct_lowers_the_running_chain_at_its_change_points() {
        let mut rng = Rng::new(11);
        let mut p = Picker::new(
            Strategy::Pct {
                depth: 2,
                horizon: 10,
            },
            &mut rng,
        );
        let ready = [Chain::Actor(0), Chain::Actor(1)];
        let picks: Vec<usize> = (0..20).map(|s| p.pick(s, &ready, &mut rng)).collect();
        // One change point, within the first ten steps: the chain running
        // there drops below the other for good, so the choice switches at
        // most once, and (unless the change point is step 0) exactly once.
        let switches = picks.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(switches <= 1, "{picks:?}");
        assert!(picks[10..].iter().all(|&i| i == picks[10]), "{picks:?}");
        let lowered_at_zero = p_changes(&p) == [0];
        assert_eq!(switches == 0, lowered_at_zero, "{picks:?}");
    }
}
