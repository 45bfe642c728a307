//! What a steal costs on this worker, and how often one is worth making.
//!
//! A steal takes tasks from another worker's deque: a compare-and-swap on
//! that deque's cache line, and from then on every message between the
//! actors it moved and those it left behind crosses between two cores.
//! Where a cache line crosses in 50–100 ns, spreading work pays: Savina's
//! chameneos, a broker that a hundred creatures message, runs in about 47
//! ms on two workers against 80 on one. Where it takes 400–600 ns (a
//! virtual machine whose two cores are far apart, which the dev VM is for
//! stretches of minutes; cores on two sockets), the same run takes 150 ms
//! on two workers, and still 80 on one.
//!
//! So each worker keeps a moving average of what its successful steals
//! took. While it is at most [`DEAR_NS`], stealing is as eager as ever.
//! Above it, a worker steals at most once per [`DEAR_EVERY`]: the actors
//! a steal moves stay where they land and keep one worker busy, instead of
//! being handed back and forth with every message. Chameneos then took
//! 63–76 ms on two workers in the far mood, against 149–173 with eager
//! stealing (the book's pool chapter has the runs). The steals it still
//! makes keep measuring, so a machine that comes near again is noticed
//! within a few of them.
//!
//! A steal is timed only once a victim's deque was seen non-empty, with
//! two clock reads; a sample is capped at [`CAP_NS`], so one steal that
//! was preempted half-way does not make stealing look dear for long.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The average steal above which stealing is dear: between the dev VM's
/// near mood (60–100 ns per successful steal on average, chameneos on
/// two workers) and its far one (280–300 ns).
pub(super) const DEAR_NS: u32 = 200;

/// While stealing is dear, at most one steal per this long.
pub(super) const DEAR_EVERY: Duration = Duration::from_millis(10);

/// While stealing is dear and work waits on another worker, a searching
/// worker looks again after this long, asleep meanwhile (a timed park, so
/// no other thread pays a wake-up for it).
pub(super) const DEAR_POLL: Duration = Duration::from_micros(250);

/// No sample counts for more than this.
const CAP_NS: u32 = 4 * DEAR_NS;

/// One worker's steal costs: `Cell`s only, read and written by its own thread.
#[derive(Debug, Default)]
pub(super) struct StealCost {
    /// Moving average of a successful steal's duration in ns, weight 1/8
    /// per sample (each capped at `CAP_NS`).
    avg_ns: Cell<u32>,
    /// When this worker last stole while stealing was dear.
    last_dear: Cell<Option<Instant>>,
}

impl StealCost {
    /// Whether steals here cost more than they are likely to save.
    #[inline]
    pub(super) fn is_dear(&self) -> bool {
        self.avg_ns.get() > DEAR_NS
    }

    /// Whether a steal may be tried now: always while stealing is cheap;
    /// while it is dear, once [`DEAR_EVERY`] has passed since the last one.
    pub(super) fn may_steal(&self, now: impl FnOnce() -> Instant) -> bool {
        if !self.is_dear() {
            return true;
        }
        self.last_dear
            .get()
            .is_none_or(|last| now().saturating_duration_since(last) >= DEAR_EVERY)
    }

    /// Records a successful steal that started at `start` and took `took`.
    pub(super) fn record(&self, start: Instant, took: Duration) {
        let sample = u32::try_from(took.as_nanos()).map_or(CAP_NS, |ns| ns.min(CAP_NS));
        let avg = self.avg_ns.get();
        // avg + (sample - avg) / 8, in u32 without overflow (both ≤ CAP_NS).
        self.avg_ns.set((avg * 7 + sample) / 8);
        if self.is_dear() {
            self.last_dear.set(Some(start));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record_ns(cost: &StealCost, at: Instant, ns: u64) {
        cost.record(at, Duration::from_nanos(ns));
    }

    #[test]
    fn cheap_steals_are_always_allowed() {
        let cost = StealCost::default();
        let t = Instant::now();
        for _ in 0..100 {
            record_ns(&cost, t, 80);
        }
        assert!(!cost.is_dear());
        assert!(cost.may_steal(|| t));
    }

    #[test]
    fn dear_steals_are_rationed_and_a_near_machine_is_noticed_again() {
        let cost = StealCost::default();
        let t = Instant::now();
        for _ in 0..20 {
            record_ns(&cost, t, 300);
        }
        assert!(cost.is_dear());
        assert!(!cost.may_steal(|| t), "just stole");
        assert!(!cost.may_steal(|| t + DEAR_EVERY / 2));
        assert!(cost.may_steal(|| t + DEAR_EVERY));
        // Cheap steals bring the average down within a handful.
        let mut n = 0;
        while cost.is_dear() {
            record_ns(&cost, t, 70);
            n += 1;
        }
        assert!(n <= 8, "{n} cheap steals to notice");
        assert!(cost.may_steal(|| t));
    }

    #[test]
    fn one_preempted_steal_does_not_make_stealing_dear() {
        let cost = StealCost::default();
        let t = Instant::now();
        for _ in 0..50 {
            record_ns(&cost, t, 90);
        }
        record_ns(&cost, t, 5_000_000);
        assert!(!cost.is_dear(), "average {}", cost.avg_ns.get());
    }
}
