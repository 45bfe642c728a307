//! Handler service times: one histogram per message class, written by
//! whoever holds the actor's lock, read by any thread without a lock.
//!
//! # The buckets
//!
//! Log-linear, in the manner of Gil Tene's HdrHistogram, with
//! [`PRECISION`] bits: every value below 2^`PRECISION` ns has a bucket of
//! its own; above that, each power-of-two range `[2^e, 2^(e+1))` is cut into
//! 2^`PRECISION` equal buckets. A bucket is therefore never wider than
//! 1/128 (under 0.8 %) of the smallest value it holds: two significant
//! decimal digits, from 1 ns up. Durations from 2^[`TOP_EXP`] ns (about
//! 69 s) up share the top bucket; the exact maximum is kept beside the
//! buckets, so a value that large still shows as `max`.
//!
//! # Invariants
//!
//! * Only the holder of the actor's lock records (every handler runs under
//!   it). A record is plain loads and stores of atomics, no
//!   read-modify-write: there is one writer at a time, and the lock's
//!   release and acquire order one holder's stores before the next
//!   holder's loads (the same argument as `stats::LockedCounters`).
//! * A reader loads every counter `Relaxed` while handlers may be running.
//!   Its snapshot may miss records made during the read; its count and its
//!   percentiles come from the same loaded buckets, so they agree with each
//!   other, and every percentile is clamped to the reported maximum, so
//!   `p50 <= p90 <= p99 <= p999 <= max` holds in every snapshot.
//! * The sum is loaded apart from the buckets, so during recording it may
//!   hold records the loaded buckets do not (or miss some they hold). The
//!   mean is therefore clamped to what the loaded buckets allow: between
//!   the sum of their lower bounds and the sum of their upper bounds (the
//!   highest one's capped at the reported maximum), over their count. So
//!   `mean * count` is a sum the snapshot's own buckets could hold, and
//!   the smallest value they hold `<= mean <= max` in every snapshot. A
//!   snapshot taken while nothing records is exact: its sum lies within
//!   those bounds, and the clamp leaves the mean as it is.
//! * The buckets are allocated when the actor is spawned; a record never
//!   allocates.

use std::fmt;
use std::time::Duration;

use crate::base::ids::ClassId;
use crate::base::sync::{AtomicU64, Ordering::Relaxed};

/// Bits of linear resolution inside each power of two.
const PRECISION: u32 = 7;
/// Buckets per power of two (and the count of exact buckets at the bottom).
const SUB: u64 = 1 << PRECISION;
/// Values from `2^TOP_EXP` ns up land in the top bucket.
const TOP_EXP: u32 = 36;
/// Exact buckets for `[0, 2^(PRECISION+1))`, then `SUB` per power of two
/// up to `2^TOP_EXP`.
const BUCKETS: usize = ((TOP_EXP - PRECISION + 1) as u64 * SUB) as usize;

/// The bucket holding `nanos`.
#[inline(always)]
fn bucket_of(nanos: u64) -> usize {
    let v = nanos.min((1 << TOP_EXP) - 1);
    // How far `v` must be shifted right to keep its top PRECISION+1 bits:
    // zero below 2^(PRECISION+1), where every value is its own bucket.
    let shift = (63 - (v | 1).leading_zeros()).saturating_sub(PRECISION);
    ((u64::from(shift) << PRECISION) + (v >> shift)) as usize
}

/// The smallest and the largest value bucket `index` holds.
fn bounds_of(index: usize) -> (u64, u64) {
    let i = index as u64;
    if i < 2 * SUB {
        return (i, i);
    }
    let shift = i / SUB - 1;
    let mantissa = i - shift * SUB;
    (mantissa << shift, ((mantissa + 1) << shift) - 1)
}

/// One message class's service times.
struct Histogram {
    buckets: Box<[AtomicU64]>,
    /// Sum of all recorded nanoseconds (wrapping; it would take 584 years
    /// of handler time to wrap).
    sum: AtomicU64,
    /// The largest value recorded, exact (not bucketed).
    max: AtomicU64,
}

impl Histogram {
    fn new() -> Self {
        Histogram {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0),
            max: AtomicU64::new(0),
        }
    }

    /// Caller holds the actor's lock (module invariants).
    #[inline]
    fn record(&self, nanos: u64) {
        let bucket = &self.buckets[bucket_of(nanos)];
        bucket.store(bucket.load(Relaxed).wrapping_add(1), Relaxed);
        self.sum
            .store(self.sum.load(Relaxed).wrapping_add(nanos), Relaxed);
        if nanos > self.max.load(Relaxed) {
            self.max.store(nanos, Relaxed);
        }
    }

    fn snapshot(&self, class: &'static str) -> ClassLatency {
        let counts: Vec<u64> = self.buckets.iter().map(|b| b.load(Relaxed)).collect();
        let sum = self.sum.load(Relaxed);
        let max = self.max.load(Relaxed);
        summarize(class, &counts, sum, max)
    }
}

/// One class's snapshot from what a reader loaded: the bucket `counts`,
/// the `sum` and the `max`, each loaded on its own while records may have
/// gone on (module invariants). Count, percentiles and mean all answer to
/// the loaded buckets.
fn summarize(class: &'static str, counts: &[u64], sum: u64, max: u64) -> ClassLatency {
    let count: u64 = counts.iter().sum();
    // A record stores its bucket before `max`, but a `Relaxed` reader
    // may see them in either order: never report a maximum below what
    // the buckets show.
    let top = counts.iter().rposition(|&c| c != 0);
    let max = max.max(top.map_or(0, |i| bounds_of(i).0));
    let at = |q: f64| Duration::from_nanos(value_at(counts, count, q).min(max));
    ClassLatency {
        class,
        count,
        mean: Duration::from_nanos(mean_of(counts, count, top, sum, max)),
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        p999: at(0.999),
        max: Duration::from_nanos(max),
    }
}

/// The mean of the `count` values bucketed as `counts` (the highest
/// non-empty bucket `top`, the largest value `max`), from the loaded `sum`,
/// clamped to what those buckets can hold: `sum` was loaded apart from
/// them and may count more records, or fewer (module invariants). Each
/// value lies between its bucket's bounds (the highest bucket's values at
/// most `max`), so the true sum of the counted values lies between the
/// sums of the bounds; and a mean between them lies between the smallest
/// bucket's lower bound and `max`. Zero when nothing was counted.
fn mean_of(counts: &[u64], count: u64, top: Option<usize>, sum: u64, max: u64) -> u64 {
    let Some(top) = top else {
        return 0;
    };
    let (mut low, mut high) = (0u128, 0u128);
    for (index, &c) in counts.iter().enumerate().filter(|(_, &c)| c != 0) {
        let (l, h) = bounds_of(index);
        let h = if index == top { max } else { h };
        low += u128::from(c) * u128::from(l);
        high += u128::from(c) * u128::from(h);
    }
    let n = u128::from(count);
    // `floor` is monotonic: an exact `sum` within [low, high] keeps its own
    // mean, to the nanosecond.
    let mean = u128::from(sum / count).clamp(low / n, high / n);
    u64::try_from(mean).unwrap_or(u64::MAX)
}

/// The value at quantile `q` of `count` values bucketed as `counts`: the
/// largest value of the bucket holding the value of rank `ceil(q * count)`
/// (so it is never below the true value, and at most one bucket width
/// above it). Zero when nothing was recorded.
fn value_at(counts: &[u64], count: u64, q: f64) -> u64 {
    let rank = ((q * count as f64).ceil() as u64).clamp(1, count.max(1));
    let mut seen = 0;
    for (index, &c) in counts.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return bounds_of(index).1;
        }
    }
    0
}

/// An actor's histograms, one per message class (indexed by
/// [`ClassId::index`]), allocated when the actor is spawned.
pub(crate) struct Latencies {
    classes: Box<[Histogram]>,
}

impl fmt::Debug for Latencies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Latencies({} classes)", self.classes.len())
    }
}

impl Latencies {
    pub(crate) fn new(classes: usize) -> Self {
        Latencies {
            classes: (0..classes).map(|_| Histogram::new()).collect(),
        }
    }

    /// Records one handler run of `class` that took `elapsed`. Caller holds
    /// the actor's lock. A lifecycle hook has no class and is not recorded.
    #[inline]
    pub(crate) fn record(&self, class: ClassId, elapsed: Duration) {
        if let Some(h) = self.classes.get(usize::from(class.index())) {
            h.record(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
        }
    }

    /// A snapshot, with `names[i]` naming class `i`.
    pub(crate) fn snapshot(&self, names: &'static [&'static str]) -> LatencyStats {
        LatencyStats {
            classes: self
                .classes
                .iter()
                .zip(names)
                .map(|(h, &name)| h.snapshot(name))
                .collect(),
        }
    }
}

/// Handler service times of one actor, one entry per message class, from
/// [`Addr::latency`](crate::Addr::latency).
///
/// A service time runs from the moment the handler is entered (the lock is
/// held, the message admitted) to the moment it returns: the time spent
/// waiting for the lock or in a queue is not in it, whatever is called from
/// the handler (a nested `fast_send`) is. For a queued message it also
/// covers handing the reply to its route (an [`Ask`](crate::Ask) or a
/// `request`'s reply mailbox); a synchronous reply is returned after the
/// clock stops. The clock is the monotonic wall clock, also in a
/// [`Simulation`](crate::Simulation).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LatencyStats {
    /// One entry per handler, in the order of the `#[actor]` impl block.
    pub classes: Vec<ClassLatency>,
}

impl LatencyStats {
    /// The entry of the handler for the message type named `class` (as
    /// written in `#[handler(...)]`, without a module path).
    pub fn class(&self, class: &str) -> Option<&ClassLatency> {
        self.classes.iter().find(|c| c.class == class)
    }
}

/// Service times of one message class. Percentiles are exact below 256 ns
/// and within 1/128 of the true value above (never below it); `max` is
/// exact. All are zero while `count` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClassLatency {
    /// The message type, as written in `#[handler(...)]`.
    pub class: &'static str,
    /// Handler runs recorded.
    pub count: u64,
    /// The average service time of the `count` runs. Exact when nothing
    /// was recorded during the snapshot; taken while handlers run, it is
    /// kept to what those `count` runs could average (never above `max`,
    /// never below the shortest of them, to the bucket).
    pub mean: Duration,
    /// The median.
    pub p50: Duration,
    /// The 90th percentile.
    pub p90: Duration,
    /// The 99th percentile.
    pub p99: Duration,
    /// The 99.9th percentile.
    pub p999: Duration,
    /// The longest run.
    pub max: Duration,
}

/// A table, one row per class: count, mean, p50, p90, p99, p99.9 and max.
impl fmt::Display for LatencyStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<16} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "class", "count", "mean", "p50", "p90", "p99", "p99.9", "max"
        )?;
        for c in &self.classes {
            writeln!(
                f,
                "{:<16} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
                c.class,
                c.count,
                Nanos(c.mean),
                Nanos(c.p50),
                Nanos(c.p90),
                Nanos(c.p99),
                Nanos(c.p999),
                Nanos(c.max)
            )?;
        }
        Ok(())
    }
}

/// A duration in the unit that keeps it short: `850ns`, `12.3us`, `4.56ms`.
struct Nanos(Duration);

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0.as_nanos();
        let text = match ns {
            0..1_000 => format!("{ns}ns"),
            1_000..1_000_000 => format!("{:.1}us", ns as f64 / 1e3),
            1_000_000..1_000_000_000 => format!("{:.2}ms", ns as f64 / 1e6),
            _ => format!("{:.2}s", ns as f64 / 1e9),
        };
        f.pad(&text)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn small_values_have_a_bucket_each() {
        for v in 0..2 * SUB {
            assert_eq!(bucket_of(v), v as usize);
            assert_eq!(bounds_of(v as usize), (v, v));
        }
    }

    #[test]
    fn every_value_lies_in_its_bucket_and_buckets_are_narrow() {
        let mut values: Vec<u64> = (0..40)
            .flat_map(|e| {
                let p = 1u64 << e;
                [p.saturating_sub(1), p, p + 1, p + p / 3]
            })
            .collect();
        values.extend([999, 1_000, 1_001, 2_000_000, 123_456_789]);
        for v in values.into_iter().filter(|&v| v < 1 << TOP_EXP) {
            let index = bucket_of(v);
            assert!(index < BUCKETS, "{v} -> {index}");
            let (low, high) = bounds_of(index);
            assert!(low <= v && v <= high, "{v} not in [{low}, {high}]");
            let width = high - low + 1;
            assert!(width == 1 || width * SUB <= low, "bucket too wide at {v}");
        }
    }

    #[test]
    fn buckets_tile_the_range_without_gaps() {
        for index in 1..BUCKETS {
            assert_eq!(bounds_of(index - 1).1 + 1, bounds_of(index).0, "{index}");
        }
        assert_eq!(bounds_of(BUCKETS - 1).1, (1 << TOP_EXP) - 1);
    }

    #[test]
    fn values_past_the_top_share_the_top_bucket_and_keep_an_exact_max() {
        assert_eq!(bucket_of(1 << TOP_EXP), BUCKETS - 1);
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        let h = Histogram::new();
        h.record(u64::MAX - 1);
        let s = h.snapshot("Big");
        assert_eq!(s.count, 1);
        assert_eq!(s.max, Duration::from_nanos(u64::MAX - 1));
        assert_eq!(s.p50, Duration::from_nanos((1 << TOP_EXP) - 1));
    }

    #[test]
    fn percentiles_of_known_values() {
        let h = Histogram::new();
        // 1..=1000 ns, once each.
        for v in 1..=1000 {
            h.record(v);
        }
        let s = h.snapshot("Known");
        assert_eq!(s.count, 1000);
        assert_eq!(s.mean, Duration::from_nanos(500)); // 500500 / 1000, truncated
        assert_eq!(s.max, Duration::from_nanos(1000));
        // Reported as the top of the true value's bucket: at most 1/128 above.
        let within = |got: Duration, want: u64| {
            let got = got.as_nanos() as u64;
            assert!(got >= want && got <= want + want / SUB, "{got} for {want}");
        };
        within(s.p50, 500);
        within(s.p90, 900);
        within(s.p99, 990);
        within(s.p999, 999);
    }

    /// The mean of a snapshot whose sum was loaded apart from its buckets
    /// (as a reader does while records go on) stays within what the
    /// buckets hold: a sum with records the buckets missed, and one that
    /// missed records the buckets hold. Before the clamp the first read
    /// 1_000_010 ns against a maximum of 1_000.
    #[test]
    fn a_sum_loaded_apart_from_the_buckets_keeps_the_mean_within_them() {
        let mut counts = vec![0; BUCKETS];
        counts[bucket_of(10)] = 1;
        // The buckets show one record of 10 ns; the sum, loaded after them,
        // has a thousand more of 1000 ns, and so has `max`.
        let s = summarize("Ahead", &counts, 10 + 1_000 * 1_000, 1_000);
        assert_eq!(s.count, 1);
        assert!(s.mean <= s.max, "mean {:?} above max {:?}", s.mean, s.max);
        assert_eq!(s.mean, Duration::from_nanos(1_000));
        // The buckets show a thousand records of 1000 ns; the sum does not
        // have them yet.
        let mut counts = vec![0; BUCKETS];
        counts[bucket_of(1_000)] = 1_000;
        let s = summarize("Behind", &counts, 0, 1_000);
        let low = bounds_of(bucket_of(1_000)).0;
        assert_eq!(s.mean, Duration::from_nanos(low));
    }

    /// One thread records while another takes snapshots: for every
    /// snapshot, the smallest value recorded `<= mean <= max`, and `mean *
    /// count` is the sum of `count` recorded values. Every value is 2^20
    /// ns, the lower bound of its bucket, so the buckets pin the mean to
    /// exactly that. (The mean used to be the sum loaded after the buckets
    /// over their count: a single record landing in between put it above
    /// `max`, and nearly every snapshot taken while recording did.)
    #[test]
    #[cfg_attr(
        miri,
        ignore = "thousands of snapshots of 3840 buckets; no unsafe code to check, and the deterministic test above covers the clamp"
    )]
    fn a_snapshot_taken_while_recording_has_its_mean_between_min_and_max() {
        const V: u64 = 1 << 20;
        assert_eq!(bounds_of(bucket_of(V)).0, V);
        let h = Histogram::new();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // The only writer: as if it held the actor's lock.
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for _ in 0..64 {
                        h.record(V);
                    }
                }
            });
            let mut seen = 0;
            for snapshot in 0..20_000 {
                let s = h.snapshot("Racing");
                if s.count == 0 {
                    continue;
                }
                seen += 1;
                let (mean, max) = (s.mean.as_nanos(), s.max.as_nanos());
                let checked = (|| {
                    if !(u128::from(V) <= mean && mean <= max) {
                        return Err(format!("mean {mean} ns outside [{V}, max {max}] ns"));
                    }
                    let total = mean * u128::from(s.count);
                    if total != u128::from(V) * u128::from(s.count) {
                        return Err(format!(
                            "mean * count = {total} ns, not {} values of {V} ns",
                            s.count
                        ));
                    }
                    Ok(())
                })();
                if let Err(why) = checked {
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    panic!("snapshot {snapshot} of {} records: {why}", s.count);
                }
                if seen == 2_000 {
                    break;
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
    }

    #[test]
    fn an_empty_histogram_reads_zero() {
        let s = Histogram::new().snapshot("None");
        assert_eq!(
            (s.count, s.mean, s.p50, s.p999, s.max),
            (
                0,
                Duration::ZERO,
                Duration::ZERO,
                Duration::ZERO,
                Duration::ZERO
            )
        );
    }

    #[test]
    fn a_class_out_of_range_is_ignored_and_names_follow_the_index() {
        let l = Latencies::new(2);
        l.record(ClassId::new(1), Duration::from_micros(3));
        l.record(ClassId::LIFECYCLE, Duration::from_micros(3));
        let s = l.snapshot(&["A", "B"]);
        assert_eq!(s.class("A").map(|c| c.count), Some(0));
        assert_eq!(s.class("B").map(|c| c.count), Some(1));
        assert_eq!(s.class("B").unwrap().max, Duration::from_micros(3));
    }
}
