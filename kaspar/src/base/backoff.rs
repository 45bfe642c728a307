//! Bounded waiting for a thread that expects another thread's work soon:
//! spin, then yield, then give up so the caller can sleep.
//!
//! The shape is crossbeam-utils' `Backoff`: the spin phase issues `2^k`
//! spin-loop hints at step `k`, then the yield phase gives the core away
//! once per step, so a thread that shares the waiter's core gets to run.
//! A waiter here *loads* a word another thread writes once per message
//! (crossbeam's budget is tuned for retrying a contended compare-and-swap
//! as well), and the budget was measured with the peers bench (`ask`,
//! `tell` and `ping_pong` against crossbeam-channel between two threads)
//! on the 2-core AMD EPYC VM kaspar is developed on, where a spin hint
//! takes about 22 ns and an uncontended `yield_now` about 0.37 µs:
//!
//! * The spin phase is 63 hints, about 1.4 µs: longer than a request-reply
//!   round trip between two cores (0.3–0.5 µs there), so a waiter whose
//!   peer runs on another core sees the reply while it spins. With 7 hints
//!   (150 ns, the budget before) the waiter was inside a `yield_now` system
//!   call when the reply came, and every hop paid for the rest of it: the
//!   `ask` p50 was 1.6 µs against crossbeam's 0.4 µs, with 63 or 127 hints
//!   0.45–0.5 µs. 63 and 127 measured the same; the shorter one costs a
//!   core that shares its waiter with the peer less.
//! * The yield phase is long: 16 yields, about 6 µs when no other thread
//!   wants the core. A yield costs the waiter a system call but never
//!   holds a core another thread needs (on a busy 2-core machine the
//!   kernel tends to put a woken thread on its waker's core, and then
//!   the two ends of a request-reply share one core), and a reply or
//!   message that comes within it costs no wake-up.
//! * It goes through [`sync`](super::sync) and has a loom budget of its own
//!   (see `SPIN_STEPS`), so the loom models explore a waiter that polls
//!   and then sleeps.
//!
//! The budget is counted in steps, not in time: a step count behaves the
//! same under loom and Miri. A waiter that has heard nothing for the whole
//! budget (about 8 µs) is asleep, so an idle actor costs nothing.

#[cfg(not(loom))]
use crate::base::sync::hint;
use crate::base::sync::thread;

/// Longest run of spin hints between two polls, `2^MAX_SHIFT`, should the
/// spin phase be made longer: a poller must not oversleep.
#[cfg(not(loom))]
const MAX_SHIFT: u32 = 5;
/// Spin steps: 1, 2, 4, 8, 16, then 32 hints; 63 in all.
#[cfg(not(any(loom, miri)))]
const SPIN_STEPS: u32 = 6;
/// Yield steps after the spin phase.
#[cfg(not(any(loom, miri)))]
const YIELD_STEPS: u32 = 16;

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
const SPIN_STEPS: u32 = 3;
#[cfg(all(miri, not(loom)))]
const YIELD_STEPS: u32 = 2;

/// Spin steps of a [`brief`](Backoff::brief) budget: 1, 2, then 4 hints,
/// 7 in all (about 150 ns).
const BRIEF_SPIN_STEPS: u32 = if SPIN_STEPS < 3 { SPIN_STEPS } else { 3 };
/// Yields after a brief spin phase that, with it, take about as long as a
/// full spin phase (7 hints and 3 yields, about 1.3 µs, against 63 hints).
const BRIEF_CATCH_UP_YIELDS: u32 = 3;

/// A waiter's progress through its spin and yield budget.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Backoff {
    step: u32,
    /// Steps of the spin phase, before the yields.
    spin_steps: u32,
}

impl Backoff {
    /// A fresh budget.
    pub(crate) const fn new() -> Self {
        Backoff {
            step: 0,
            spin_steps: SPIN_STEPS,
        }
    }

    /// A fresh budget with a short spin phase (7 hints) and the same
    /// yields: for a waiter whose last wait was not over within a full
    /// spin phase, and whose next one is likely as long. Spinning through
    /// it would only hold a core that a thread with work could use.
    pub(crate) const fn brief() -> Self {
        Backoff {
            step: 0,
            spin_steps: BRIEF_SPIN_STEPS,
        }
    }

    /// Whether a wait that ended now, after the steps taken so far, was
    /// over within about the time of a full spin phase: a waiter that
    /// spins fully would have caught it without a yield.
    pub(crate) fn within_full_spin(&self) -> bool {
        let catch_up = if self.is_brief() {
            BRIEF_CATCH_UP_YIELDS
        } else {
            0
        };
        self.step <= self.spin_steps + catch_up
    }

    /// Waits one step and returns `true`, or returns `false` at once when
    /// the budget is spent (the caller should sleep).
    #[inline]
    pub(crate) fn snooze(&mut self) -> bool {
        if self.step < self.spin_steps {
            // Not under loom (see `SPIN_STEPS`).
            #[cfg(not(loom))]
            for _ in 0..1u32 << self.step.min(MAX_SHIFT) {
                hint::spin_loop();
            }
        } else if self.step < self.spin_steps + YIELD_STEPS {
            thread::yield_now();
        } else {
            return false;
        }
        self.step += 1;
        true
    }

    /// Whether the budget is still in its spin phase: no yield yet.
    #[inline]
    pub(crate) fn is_spinning(&self) -> bool {
        self.step < self.spin_steps
    }

    /// Whether this is a [`brief`](Self::brief) budget (never under loom
    /// or Miri, whose spin phase is short already).
    pub(crate) fn is_brief(&self) -> bool {
        self.spin_steps < SPIN_STEPS
    }

    /// Whether the budget is spent: the next [`snooze`](Self::snooze)
    /// returns `false`.
    #[cfg(test)]
    pub(crate) fn is_spent(&self) -> bool {
        self.step >= self.spin_steps + YIELD_STEPS
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

    #[test]
    fn a_brief_budget_spins_less_and_yields_as_much() {
        let mut b = Backoff::brief();
        let mut spins = 0;
        while b.is_spinning() {
            assert!(b.snooze());
            spins += 1;
        }
        assert_eq!(spins, BRIEF_SPIN_STEPS);
        let mut yields = 0;
        while b.snooze() {
            yields += 1;
        }
        assert_eq!(yields, YIELD_STEPS);
    }

    #[test]
    fn within_full_spin_covers_the_spin_phase_and_a_brief_budgets_catch_up() {
        let mut full = Backoff::new();
        for _ in 0..SPIN_STEPS {
            full.snooze();
            assert!(full.within_full_spin());
        }
        if full.snooze() {
            assert!(!full.within_full_spin(), "a yield came first");
        }
        let mut brief = Backoff::brief();
        let mut within = 0;
        while brief.snooze() && brief.within_full_spin() {
            within += 1;
        }
        let expected = if BRIEF_SPIN_STEPS < SPIN_STEPS {
            BRIEF_SPIN_STEPS + BRIEF_CATCH_UP_YIELDS
        } else {
            SPIN_STEPS
        };
        assert_eq!(within, expected.min(BRIEF_SPIN_STEPS + YIELD_STEPS));
    }
}
