//! The measurements of the paper's §10, computed from a run's
//! [`Record`]s: what the `tick_to_book` example reports and
//! `tests/tick_to_book.rs` checks.
//!
//! The paper reports six streams, a book and a trade stream for each of
//! three instruments (ES, NQ, ZN); a [`StreamId`] names one. Per stream:
//!
//! * `stats.rs`: [`analyse`] gives [`StreamStats`]: the distribution
//!   (Tables 8 and 12), the floor + slope × idx fit over the per-idx
//!   medians at qlen = 0 (Table 9), the direct floor at qlen = 0, idx = 0
//!   (Table 10), the medians by qlen (Figure 4); [`ConfigReport`] is one
//!   configuration's six streams;
//! * `peak.rs`: the third floor estimate of Table 11: the median over the
//!   single-message packets in the instrument's busiest window
//!   ([`peak_floor`]).
//!
//! Here: the streams, and the tally that accounts for every message of
//! each ([`tally`]).

mod peak;
mod stats;

pub use peak::{peak_floor, peak_window, PeakFloor, PeakWindow, PEAK_WINDOW_NS};
pub use stats::{analyse, fit, ConfigReport, StreamStats, MIN_BUCKET, QLEN_ROWS};

use crate::tick_to_book::feed::Stream;
use crate::tick_to_book::generator::{instrument_name, INSTRUMENTS};
use crate::tick_to_book::pipeline::Record;

/// One of the report's streams: one instrument's book updates or trades.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct StreamId {
    /// The instrument.
    pub security_id: i32,
    /// Book or trade.
    pub stream: Stream,
}

impl StreamId {
    /// `ES book`, `ZN trade` and so on (the security id for an
    /// instrument the generator does not know).
    pub fn name(self) -> String {
        match instrument_name(self.security_id) {
            Some(n) => format!("{n} {}", self.stream.name()),
            None => format!("{} {}", self.security_id, self.stream.name()),
        }
    }

    /// `es_book`, `zn_trade`: the JSON case part.
    pub fn key(self) -> String {
        self.name().to_lowercase().replace(' ', "_")
    }

    /// Whether `r` belongs to this stream.
    pub fn holds(self, r: &Record) -> bool {
        r.security_id == self.security_id && r.stream == self.stream
    }
}

/// The six streams, in report order: each instrument of
/// [`INSTRUMENTS`], book then trade.
pub fn streams() -> Vec<StreamId> {
    INSTRUMENTS
        .iter()
        .flat_map(|i| {
            Stream::ALL.iter().map(|&stream| StreamId {
                security_id: i.0,
                stream,
            })
        })
        .collect()
}

/// Messages per stream: the counts in [`streams`] order, and the number
/// of messages of no known stream.
pub fn tally(messages: impl IntoIterator<Item = (i32, Stream)>) -> (Vec<u64>, u64) {
    let ids = streams();
    let mut counts = vec![0; ids.len()];
    let mut other = 0;
    for (security_id, stream) in messages {
        match ids
            .iter()
            .position(|s| s.security_id == security_id && s.stream == stream)
        {
            Some(k) => counts[k] += 1,
            None => other += 1,
        }
    }
    (counts, other)
}

/// [`tally`] of the published messages.
pub fn tally_records(records: &[Record]) -> (Vec<u64>, u64) {
    tally(records.iter().map(|r| (r.security_id, r.stream)))
}
