//! One stream's records summarised as [`StreamStats`] (percentiles from an
//! HDR histogram, the floor + slope × idx fit over the per-idx medians at
//! qlen = 0, the direct floor, the floor under peak load, medians by
//! qlen), and [`ConfigReport`], one configuration's six streams, ready to
//! report.

use hdrhistogram::Histogram;

use super::{peak_floor, streams, PeakFloor, StreamId, PEAK_WINDOW_NS};
use crate::tick_to_book::feed::Stream;
use crate::tick_to_book::pipeline::{Record, QLEN_NONE};

/// Fewest samples an idx or qlen bucket needs to count.
pub const MIN_BUCKET: usize = 20;
/// Queue lengths shown one by one; longer ones are pooled.
pub const QLEN_ROWS: u32 = 8;

/// One stream of one configuration, summarised. Table 11's three floor
/// estimates are [`floor`](Self::floor) (fitted), [`floor_direct`](Self::floor_direct)
/// and [`peak`](Self::peak).
#[derive(Clone, Debug, Default)]
pub struct StreamStats {
    /// Which stream.
    pub id: Option<StreamId>,
    /// Messages measured.
    pub n: u64,
    /// Percentiles, ns.
    pub p50: u64,
    /// 90th percentile, ns.
    pub p90: u64,
    /// 99th percentile, ns.
    pub p99: u64,
    /// 99.9th percentile, ns.
    pub p999: u64,
    /// Largest, ns.
    pub max: u64,
    /// Fitted intercept of median ≈ floor + slope × idx at qlen = 0, ns.
    pub floor: f64,
    /// Fitted per-message cost, ns per position.
    pub slope: f64,
    /// Median at qlen = 0 and idx = 0, and its sample size.
    pub floor_direct: (f64, usize),
    /// The floor under peak load: single-message packets in the
    /// instrument's busiest window (book streams only; `None` for trade
    /// streams and for a stream with no messages).
    pub peak: Option<PeakFloor>,
    /// Messages whose datagram found the queue empty (two-stage only).
    pub empty_queue: Option<f64>,
    /// (idx, samples, median ns) at qlen = 0, buckets with enough samples.
    pub by_idx: Vec<(u32, usize, f64)>,
    /// (qlen, samples, median ns, median ns at idx = 0); the last row
    /// pools every qlen ≥ [`QLEN_ROWS`].
    pub by_qlen: Vec<(u32, usize, f64, f64)>,
    /// Share of messages with another message ahead in their packet.
    pub not_alone: f64,
    /// Every latency, sorted (for the CDF).
    pub sorted: Vec<u64>,
}

/// The median of `v` (for an even count, the upper of the middle two);
/// reorders `v`. NaN for none.
pub(super) fn median(v: &mut [u64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable(mid);
    *m as f64
}

/// Least squares fit of `y = a + b x`; `(NaN, NaN)` with under two points.
pub fn fit(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    if points.len() < 2 {
        return points
            .first()
            .map_or((f64::NAN, f64::NAN), |p| (p.1, f64::NAN));
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    if sxx == 0.0 {
        return (my, f64::NAN);
    }
    let b = sxy / sxx;
    (my - b * mx, b)
}

/// Summarises `stream`'s records (of a run's `records`, every stream's:
/// the peak window is found from all of the instrument's packets).
pub fn analyse(records: &[Record], stream: StreamId) -> StreamStats {
    let mut hist = Histogram::<u64>::new_with_bounds(1, 600_000_000_000, 3).expect("bounds");
    let mut sorted = Vec::new();
    let mut at_idx: Vec<Vec<u64>> = Vec::new();
    let mut at_qlen: Vec<Vec<u64>> = vec![Vec::new(); QLEN_ROWS as usize + 1];
    let mut at_qlen0: Vec<Vec<u64>> = vec![Vec::new(); QLEN_ROWS as usize + 1];
    let (mut queued, mut empty, mut not_alone) = (0u64, 0u64, 0u64);
    for r in records.iter().filter(|r| stream.holds(r)) {
        hist.saturating_record(r.latency_ns.max(1));
        sorted.push(r.latency_ns);
        if r.idx > 0 {
            not_alone += 1;
        }
        if r.qlen != QLEN_NONE {
            queued += 1;
            let row = r.qlen.min(QLEN_ROWS) as usize;
            at_qlen[row].push(r.latency_ns);
            if r.idx == 0 {
                at_qlen0[row].push(r.latency_ns);
            }
            if r.qlen != 0 {
                continue;
            }
            empty += 1;
        }
        let i = r.idx as usize;
        if at_idx.len() <= i {
            at_idx.resize(i + 1, Vec::new());
        }
        at_idx[i].push(r.latency_ns);
    }
    sorted.sort_unstable();
    let n = sorted.len() as u64;
    let mut s = StreamStats {
        id: Some(stream),
        n,
        sorted,
        ..StreamStats::default()
    };
    if n == 0 {
        s.floor = f64::NAN;
        s.slope = f64::NAN;
        s.floor_direct = (f64::NAN, 0);
        return s;
    }
    if stream.stream == Stream::Book {
        s.peak = peak_floor(records, stream.security_id, PEAK_WINDOW_NS);
    }
    s.p50 = hist.value_at_quantile(0.5);
    s.p90 = hist.value_at_quantile(0.9);
    s.p99 = hist.value_at_quantile(0.99);
    s.p999 = hist.value_at_quantile(0.999);
    s.max = hist.max();
    s.not_alone = not_alone as f64 / n as f64;
    s.floor_direct = match at_idx.first_mut() {
        Some(v) => (median(v), v.len()),
        None => (f64::NAN, 0),
    };
    for (i, v) in at_idx.iter_mut().enumerate() {
        if v.len() >= MIN_BUCKET {
            s.by_idx.push((i as u32, v.len(), median(v)));
        }
    }
    let points: Vec<(f64, f64)> = s.by_idx.iter().map(|p| (p.0 as f64, p.2)).collect();
    (s.floor, s.slope) = fit(&points);
    if queued > 0 {
        s.empty_queue = Some(empty as f64 / queued as f64);
        for (q, (all, first)) in at_qlen.iter_mut().zip(at_qlen0.iter_mut()).enumerate() {
            if !all.is_empty() {
                s.by_qlen
                    .push((q as u32, all.len(), median(all), median(first)));
            }
        }
    }
    s
}

/// One configuration's run, ready to report.
#[derive(Debug)]
pub struct ConfigReport {
    /// `one_thread` or `two_stage`.
    pub case: &'static str,
    /// `one-thread` or `two-stage (BQueue)`.
    pub label: String,
    /// The earliest `t0` of the run (ns), from which report times count.
    pub start_ns: u64,
    /// Per stream, in [`streams`] order.
    pub streams: Vec<StreamStats>,
}

impl ConfigReport {
    /// Analyses every stream of one configuration's `records`.
    pub fn new(case: &'static str, label: String, records: &[Record]) -> Self {
        ConfigReport {
            case,
            label,
            start_ns: records.iter().map(|r| r.t0).min().unwrap_or(0),
            streams: streams()
                .into_iter()
                .map(|id| analyse(records, id))
                .collect(),
        }
    }

    /// The stream `id`'s summary.
    pub fn stream(&self, id: StreamId) -> Option<&StreamStats> {
        self.streams.iter().find(|s| s.id == Some(id))
    }
}
