//! Bounded waiting for a thread that expects another thread's work soon:
//! spin, then yield, then give up so the caller can sleep.
//!
//! The shape is crossbeam-utils' `Backoff`: step `k` of the spin phase
//! issues `2^k` spin-loop hints (so the poll rate falls as the wait grows
//! and a spinner does not hammer the cache line it watches), and the yield
//! phase gives the core away once per step, so a producer that shares the
//! waiter's core gets to run. Unlike crossbeam's, this one goes through
//! [`sync`](super::sync) and has a loom budget of its own (see
//! `SPIN_STEPS`), so the loom models explore a waiter that polls and then
//! sleeps, and its budget is ours to tune.
//!
//! The budget is counted in steps, not in time: a step count behaves the
//! same under loom and Miri, and a slow machine spends longer per hint
//! anyway. Measured on the 2-core shared Xeon VM kaspar is developed on
//! (a spin hint about 22 ns, an uncontended `yield_now` about 0.5 µs), the
//! spin phase lasts about 3 µs and the whole budget about 20 µs when no
//! other thread wants the core.

#[cfg(not(loom))]
use crate::base::sync::hint;
use crate::base::sync::thread;

/// Spin steps: step `k` issues `2^k` hints, 127 in all.
#[cfg(not(any(loom, miri)))]
const SPIN_STEPS: u32 = 7;
/// Yield steps after the spin phase.
#[cfg(not(any(loom, miri)))]
const YIELD_STEPS: u32 = 32;

// Under loom a poll must not wait at all: loom reads a yield (and a spin
// hint, which it models as one) as "let the other threads run", so a
// waiting poll would let every producer finish first and hide the very
// interleavings that matter, where the consumer gives up polling and
// sleeps before the message comes. Two polls that do not wait keep both
// outcomes of the polling phase in the model; each poll's atomic load is
// where loom may switch threads. Miri runs a hint thousands of times
// slower, so its budget is small too.
#[cfg(loom)]
const SPIN_STEPS: u32 = 2;
#[cfg(loom)]
const YIELD_STEPS: u32 = 0;
#[cfg(all(miri, not(loom)))]
const SPIN_STEPS: u32 = 2;
#[cfg(all(miri, not(loom)))]
const YIELD_STEPS: u32 = 2;

/// A waiter's progress through its spin and yield budget.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Backoff {
    step: u32,
}

impl Backoff {
    /// A fresh budget.
    pub(crate) const fn new() -> Self {
        Backoff { step: 0 }
    }

    /// Waits one step and returns `true`, or returns `false` at once when
    /// the budget is spent (the caller should sleep).
    #[inline]
    pub(crate) fn snooze(&mut self) -> bool {
        if self.step < SPIN_STEPS {
            // Not under loom (see `SPIN_STEPS`).
            #[cfg(not(loom))]
            for _ in 0..1u32 << self.step {
                hint::spin_loop();
            }
        } else if self.step < SPIN_STEPS + YIELD_STEPS {
            thread::yield_now();
        } else {
            return false;
        }
        self.step += 1;
        true
    }

    /// Whether the budget is spent: the next [`snooze`](Self::snooze)
    /// returns `false`.
    #[cfg(test)]
    pub(crate) fn is_spent(&self) -> bool {
        self.step >= SPIN_STEPS + YIELD_STEPS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_spins_then_yields_then_runs_out_and_stays_out() {
        let mut b = Backoff::new();
        let mut steps = 0;
        while b.snooze() {
            steps += 1;
        }
        assert_eq!(steps, SPIN_STEPS + YIELD_STEPS);
        assert!(b.is_spent());
        assert!(!b.snooze(), "a spent budget stays spent");
        assert!(!Backoff::new().is_spent());
    }
}
