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

/// While stealing is dear, a worker still steals from another whose
/// activation count has not moved for this long, with work waiting in its
/// deque: that worker is inside one long activation (a slow handler, a
/// full budget of them), and what waits behind it would otherwise wait
/// for it, up to [`DEAR_EVERY`]. Two looks of a searching worker in the
/// rationed mode are [`DEAR_POLL`] apart, so a stalled worker's tasks wait
/// 500–750 µs at most, not 10 ms; a chameneos broker's activations take
/// microseconds, so a busy worker is never mistaken for a stalled one.
pub(super) const STALL: Duration = Duration::from_micros(500);

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

/// What one worker last saw of the others' activation counts, and since
/// when: `Cell`s only, read and written by its own thread.
#[derive(Debug, Default)]
pub(super) struct StallWatch {
    /// Per worker of the pool: its count when this worker first saw it
    /// unchanged, and when that was.
    seen: Box<[Cell<Seen>]>,
}

/// A worker's activation count as last seen, and since when (`None`: never
/// looked at).
type Seen = (u32, Option<Instant>);

impl StallWatch {
    /// A watch over a pool of `workers` workers.
    pub(super) fn new(workers: usize) -> Self {
        StallWatch {
            seen: (0..workers).map(|_| Cell::new((0, None))).collect(),
        }
    }

    /// Whether worker `victim`, whose activation count reads `count` at
    /// `now`, has shown that same count for at least [`STALL`]. A count
    /// that moved (or one seen for the first time) starts the clock again.
    pub(super) fn stalled(&self, victim: usize, count: u32, now: Instant) -> bool {
        let Some(memo) = self.seen.get(victim) else {
            return false;
        };
        match memo.get() {
            (seen, Some(since)) if seen == count => now.saturating_duration_since(since) >= STALL,
            _ => {
                memo.set((count, Some(now)));
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_unchanged_for_the_stall_time_is_a_stall_and_a_moving_one_never_is() {
        let watch = StallWatch::new(2);
        let t = Instant::now();
        assert!(!watch.stalled(1, 7, t), "first look starts the clock");
        assert!(!watch.stalled(1, 7, t + STALL / 2));
        assert!(watch.stalled(1, 7, t + STALL));
        assert!(
            !watch.stalled(1, 8, t + STALL * 2),
            "it moved: the clock restarts"
        );
        assert!(!watch.stalled(1, 8, t + STALL * 2 + STALL / 2));
        assert!(watch.stalled(1, 8, t + STALL * 3));
        assert!(
            !watch.stalled(0, 8, t + STALL * 3),
            "each worker has its own clock"
        );
        assert!(!watch.stalled(5, 8, t + STALL * 9), "no such worker");
    }

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
