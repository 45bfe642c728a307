//! The third floor estimate of the paper's Table 11: the floor under peak
//! load. The paper took it during the FOMC statement, when each
//! instrument's packet rate rose several-fold within a second, from the
//! single-message packets in that window. Here the window is found in the
//! recorded data: cut the run into windows of [`PEAK_WINDOW_NS`] by `t0`,
//! count each instrument's packets per window, and take its busiest one
//! ([`peak_window`]); the estimate is the median latency of the
//! instrument's book messages that were alone in their packet there
//! ([`peak_floor`]).

use super::stats::median;
use crate::tick_to_book::feed::Stream;
use crate::tick_to_book::pipeline::Record;

/// The window the peak is looked for in: 100 ms.
pub const PEAK_WINDOW_NS: u64 = 100_000_000;

/// An instrument's busiest window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeakWindow {
    /// Its first `t0` (ns, the records' clock).
    pub start_ns: u64,
    /// Its length, ns.
    pub len_ns: u64,
    /// The instrument's packets whose `t0` falls in it.
    pub packets: u64,
    /// `packets` over the median window's count (over every whole window
    /// of the run): how far the rate rose.
    pub rise: f64,
}

impl PeakWindow {
    /// Whether `t0` falls in the window.
    pub fn contains(&self, t0: u64) -> bool {
        (self.start_ns..self.start_ns + self.len_ns).contains(&t0)
    }
}

/// The floor under peak load, with the window it was taken in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeakFloor {
    /// The instrument's busiest window.
    pub window: PeakWindow,
    /// Median latency (ns) of its book messages alone in their packet in
    /// that window; NaN if there were none.
    pub floor: f64,
    /// How many such messages there were.
    pub n: usize,
}

/// The busiest `window_ns` window of instrument `security_id`, by packets
/// carrying its messages; windows start at the first of those packets.
/// `None` if it has no packets or `window_ns` is 0. The median the rise
/// is taken against leaves out the last window, which the run's end cuts
/// short, unless it is the only one.
pub fn peak_window(records: &[Record], security_id: i32, window_ns: u64) -> Option<PeakWindow> {
    if window_ns == 0 {
        return None;
    }
    // One (seq, t0) per packet: a packet's messages share both.
    let mut packets: Vec<(u32, u64)> = records
        .iter()
        .filter(|r| r.security_id == security_id)
        .map(|r| (r.seq, r.t0))
        .collect();
    packets.sort_unstable();
    packets.dedup_by_key(|p| p.0);
    let origin = packets.iter().map(|p| p.1).min()?;
    let last = packets.iter().map(|p| p.1).max()?;
    let mut counts = vec![0u64; ((last - origin) / window_ns) as usize + 1];
    for &(_, t0) in &packets {
        counts[((t0 - origin) / window_ns) as usize] += 1;
    }
    let (peak, &most) = counts
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))?;
    let whole = if counts.len() > 1 {
        &counts[..counts.len() - 1]
    } else {
        &counts[..]
    };
    let mut whole: Vec<u64> = whole.to_vec();
    let typical = median(&mut whole);
    Some(PeakWindow {
        start_ns: origin + peak as u64 * window_ns,
        len_ns: window_ns,
        packets: most,
        rise: most as f64 / typical,
    })
}

/// Table 11's third estimate for instrument `security_id`: the median
/// latency of its book messages that were alone in their packet
/// (`span` = 1) inside its [`peak_window`]. `None` if it has no packets.
pub fn peak_floor(records: &[Record], security_id: i32, window_ns: u64) -> Option<PeakFloor> {
    let window = peak_window(records, security_id, window_ns)?;
    let mut alone: Vec<u64> = records
        .iter()
        .filter(|r| {
            r.security_id == security_id
                && r.stream == Stream::Book
                && r.span == 1
                && window.contains(r.t0)
        })
        .map(|r| r.latency_ns)
        .collect();
    Some(PeakFloor {
        window,
        floor: median(&mut alone),
        n: alone.len(),
    })
}
