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
//! * A waiter remembers, per thread and per kind of wait ([`Wait`]),
//!   whether its last wait was over within a full spin phase, and spins
//!   only briefly (7 hints) when it was not ([`Backoff::habitual`]). A
//!   wait during which one of its yields gave the core to another thread
//!   (the yield took over [`SWITCHED`]) was not: the waiter shares its
//!   core with a thread that has work, perhaps the one it waits for, and
//!   its next spin would only hold that thread off.
//! * That is how the two ends of an `ask` between two threads live when
//!   the OS has put them on one core, as it does on the dev VM now and
//!   then, for milliseconds at a time: every ask costs two switches, and
//!   each wait's spin before its yield on top (5.5 us an ask with full
//!   spins, 2.8 with brief ones, against 0.3 on two cores). Yielding does
//!   not ask to move a thread to the idle core; a wake-up from a sleep
//!   lets the OS place it. So an asker waiting for an actor on a thread
//!   of its own stops at a yield that gave its core away
//!   ([`Backoff::ending_at_switch`]): it sleeps, and the reply's wake-up
//!   lets the OS put it where it finds room.
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

/// A yield that took longer than this gave the core to another thread.
/// On the dev VM a yield takes 0.4 us (p99 0.44) when no other thread
/// wants the core, and 2.1-2.3 us when another thread on that core takes
/// it and yields straight back.
#[cfg(not(loom))]
const SWITCHED: std::time::Duration = std::time::Duration::from_micros(1);

/// A waiter's progress through its spin and yield budget.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Backoff {
    step: u32,
    /// Steps of the spin phase, before the yields.
    spin_steps: u32,
    /// One of this budget's yields gave the core to another thread.
    switched: bool,
    /// That yield ends the budget ([`ending_at_switch`](Self::ending_at_switch)).
    ends_at_switch: bool,
}

/// The kinds of wait whose budgets a thread remembers apart
/// ([`Backoff::habitual`]): a thread that consumes a mailbox whose
/// messages come far apart may ask an actor that answers at once.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    /// A consumer waiting for its mailbox's next message.
    Consumer,
    /// An `ask` waiting for its reply.
    Reply,
}

// Per kind of wait (`Wait as usize`): whether this thread's next one
// spins fully. Not under loom, whose models want the same budget on
// every wait.
#[cfg(not(loom))]
std::thread_local! {
    static SPIN_FULLY: [std::cell::Cell<bool>; 2] =
        const { [std::cell::Cell::new(true), std::cell::Cell::new(true)] };
}

impl Backoff {
    /// A fresh budget.
    pub(crate) const fn new() -> Self {
        Backoff {
            step: 0,
            spin_steps: SPIN_STEPS,
            switched: false,
            ends_at_switch: false,
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
            switched: false,
            ends_at_switch: false,
        }
    }

    /// The budget for this thread's next wait of kind `wait`: a full one
    /// if its last such wait was over within a full spin phase (or it has
    /// had none), else a [`brief`](Self::brief) one. Under loom, always
    /// full.
    pub(crate) fn habitual(wait: Wait) -> Self {
        #[cfg(not(loom))]
        let full = SPIN_FULLY.with(|s| s[wait as usize].get());
        #[cfg(loom)]
        let full = {
            let _ = wait;
            true
        };
        if full {
            Backoff::new()
        } else {
            Backoff::brief()
        }
    }

    /// This budget, spent by a yield that gave the core to another thread
    /// too, if `ends`: the waiter sleeps then, and the wake-up, not a
    /// yield, decides where it runs next (module docs).
    ///
    /// For an asker whose actor runs on a thread of its own, and for no
    /// other wait, as measured in the peers bench on the dev VM (the
    /// build alternating with the one before, `--quick --only kaspar`):
    /// with it, the threaded ask's mean fell behind crossbeam's in 14 runs
    /// of 108 against 25. Two wider uses were measured and not kept. Every
    /// budget so: the threaded ask behind in none of 139 against 26, but
    /// the pooled ask in 10 against none (a worker looking for work took
    /// the asker's core, and the asker's sleep, or a worker's, cost the
    /// reply a wake-up). The asker and every thread's consumer so: the
    /// threaded ask behind in 1 of 63 against 13, but Savina with a thread
    /// per actor, where 100 threads share 2 cores and a consumer's yield
    /// often switches, 10-30% slower in chameneos and the ring.
    pub(crate) fn ending_at_switch(self, ends: bool) -> Self {
        Backoff {
            ends_at_switch: ends,
            ..self
        }
    }

    /// Records for this thread's next wait of kind `wait` how this one
    /// ended: `ready` (what it waited for came, after the steps taken so
    /// far) and [`within_full_spin`](Self::within_full_spin), or not (the
    /// budget ran out first).
    pub(crate) fn remember(&self, wait: Wait, ready: bool) {
        let full = ready && self.within_full_spin();
        #[cfg(not(loom))]
        SPIN_FULLY.with(|s| s[wait as usize].set(full));
        #[cfg(loom)]
        let _ = (wait, full);
    }

    /// Whether a wait that ended now, after the steps taken so far, was
    /// over within about the time of a full spin phase: a waiter that
    /// spins fully would have caught it without a yield. Not if one of
    /// its yields gave the core to another thread: then what it waited
    /// for may have come only because it gave the core away.
    pub(crate) fn within_full_spin(&self) -> bool {
        if self.switched {
            return false;
        }
        let catch_up = if self.is_brief() {
            BRIEF_CATCH_UP_YIELDS
        } else {
            0
        };
        self.step <= self.spin_steps + catch_up
    }

    /// Waits one step and returns `true`, or returns `false` at once when
    /// the budget is spent (the caller should sleep); see also
    /// [`ending_at_switch`](Self::ending_at_switch).
    #[inline]
    pub(crate) fn snooze(&mut self) -> bool {
        if self.step < self.spin_steps {
            // Not under loom (see `SPIN_STEPS`).
            #[cfg(not(loom))]
            for _ in 0..1u32 << self.step.min(MAX_SHIFT) {
                hint::spin_loop();
            }
        } else if self.step < self.spin_steps + YIELD_STEPS {
            self.yield_now();
            if self.switched && self.ends_at_switch {
                // Spent, as at the budget's end: the caller looks once
                // more before it sleeps, as it always does.
                self.step = self.spin_steps + YIELD_STEPS;
                return false;
            }
        } else {
            return false;
        }
        self.step += 1;
        true
    }

    /// Gives the core away once, timing the yield until one gave it to
    /// another thread (two clock reads, against a yield's 0.4 us).
    #[inline]
    fn yield_now(&mut self) {
        #[cfg(not(loom))]
        if !self.switched {
            let start = std::time::Instant::now();
            thread::yield_now();
            let took = start.elapsed();
            #[cfg(test)]
            let took = YIELDS_TAKE.with(std::cell::Cell::get).unwrap_or(took);
            self.yielded(took);
            return;
        }
        thread::yield_now();
    }

    /// Notes a yield that took `took`.
    #[cfg(not(loom))]
    fn yielded(&mut self, took: std::time::Duration) {
        self.switched |= took > SWITCHED;
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

// Tests: how long this thread's yields are taken to have been, in place
// of the clock (`None`: the clock), so that a test's budget does not
// depend on whether another test's thread took the core.
#[cfg(all(test, not(loom)))]
std::thread_local! {
    static YIELDS_TAKE: std::cell::Cell<Option<std::time::Duration>> =
        const { std::cell::Cell::new(None) };
}

/// Tests: this thread's yields take `took` from now on, whatever the
/// clock says (`None`: the clock again). Under loom, whose budgets never
/// yield, nothing.
#[cfg(test)]
pub(crate) fn pretend_yields_take(took: Option<std::time::Duration>) {
    #[cfg(not(loom))]
    YIELDS_TAKE.with(|t| t.set(took));
    #[cfg(loom)]
    let _ = took;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
        // The steps alone: no yield gives the core away here.
        pretend_yields_take(Some(Duration::ZERO));
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

    #[test]
    #[cfg(not(loom))]
    fn a_yield_that_gave_the_core_away_is_never_within_a_full_spin() {
        let mut brief = Backoff::brief();
        while brief.is_spinning() {
            brief.snooze();
        }
        assert!(brief.within_full_spin());
        // A yield of 0.4 us: nobody else wanted the core.
        brief.yielded(Duration::from_nanos(400));
        assert!(brief.within_full_spin(), "within the catch-up yields");
        // One of 2 us: another thread ran meanwhile.
        brief.yielded(Duration::from_micros(2));
        assert!(!brief.within_full_spin());
        brief.yielded(Duration::from_nanos(400));
        assert!(!brief.within_full_spin(), "the switch is remembered");
    }

    #[test]
    #[cfg(not(loom))]
    fn a_budget_ending_at_a_switch_ends_at_a_yield_that_gave_the_core_away() {
        let spin_then_yield = |ends: bool| {
            let mut b = Backoff::new().ending_at_switch(ends);
            while b.is_spinning() {
                assert!(b.snooze());
            }
            // The first yield: 2 us, another thread had the core.
            let more = b.snooze();
            (more, b)
        };
        pretend_yields_take(Some(Duration::from_micros(2)));
        let (more, ending) = spin_then_yield(true);
        assert!(!more, "the waiter sleeps now");
        let mut spent = ending;
        assert!(!spent.snooze(), "and the budget stays spent");
        let (more, yielding) = spin_then_yield(false);
        assert!(more, "a plain budget yields on");
        assert!(!yielding.within_full_spin());
        // A yield that nobody took the core in ends nothing.
        pretend_yields_take(Some(Duration::from_nanos(400)));
        let mut b = Backoff::new().ending_at_switch(true);
        let mut steps = 0;
        while b.snooze() {
            steps += 1;
        }
        assert_eq!(steps, SPIN_STEPS + YIELD_STEPS);
    }

    #[test]
    #[cfg(not(loom))]
    #[cfg_attr(miri, ignore = "Miri's budget has no shorter spin phase to switch to")]
    fn each_kind_of_wait_keeps_its_own_habit_per_thread() {
        // A thread of its own: the habit is per thread.
        std::thread::spawn(|| {
            pretend_yields_take(Some(Duration::from_micros(2)));
            assert!(!Backoff::habitual(Wait::Reply).is_brief(), "fresh: full");
            // A reply there after one yield that gave the core away.
            let mut b = Backoff::habitual(Wait::Reply);
            while b.is_spinning() {
                b.snooze();
            }
            b.snooze();
            b.remember(Wait::Reply, true);
            assert!(Backoff::habitual(Wait::Reply).is_brief());
            assert!(
                !Backoff::habitual(Wait::Consumer).is_brief(),
                "the consumer's habit is its own"
            );
            // A reply there before any yield: a full spin again.
            let mut b = Backoff::habitual(Wait::Reply);
            b.snooze();
            b.remember(Wait::Reply, true);
            assert!(!Backoff::habitual(Wait::Reply).is_brief());
            // A budget that ran out: brief, whatever its yields took.
            pretend_yields_take(Some(Duration::ZERO));
            let mut b = Backoff::habitual(Wait::Reply);
            while b.snooze() {}
            b.remember(Wait::Reply, false);
            assert!(Backoff::habitual(Wait::Reply).is_brief());
        })
        .join()
        .unwrap();
    }
}
