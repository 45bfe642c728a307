//! Production/simulation duality (paper §11) for the tick-to-book group.
//!
//! The live run journals, in the group's [`Buffer`](super::pipeline::Buffer),
//! a [`Stamp`] for every datagram in the order the group handled it. After
//! the run, [`join`] puts each stamp together with the exchange's packet of
//! its sequence number from the capture file: the result, [`Arrivals`], is
//! the group's exact input sequence (feed, `t0`, `qlen`, bytes), which is
//! written to an arrivals file, read back, and replayed into a
//! `kaspar::Simulation` of the same `MarketData` group, unchanged, on
//! virtual time, with a recording [`OrderOut`] outside it. The orders (the
//! signal's output), the books, the per-message records (less their
//! latencies) and every counter must equal the live run's.
//!
//! Arrivals file: the magic `KSPARR01`, then one record per datagram:
//! feed `u8` (0 = A, 1 = B), `t0` `u64` LE (ns since the Unix epoch),
//! `qlen` `u32` LE, payload length `u16` LE, the payload.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;
use std::sync::Arc;

use kaspar::{Simulation, Time};

use crate::tick_to_book::feed::{self, MAX_DATAGRAM};
use crate::tick_to_book::generator::FeedId;
use crate::tick_to_book::pipeline::{
    ArrivalLog, Datagram, EndOfFeed, GroupResults, MarketData, Order, OrderLog, OrderOut, Record,
    Stamp,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Index {
    feed: FeedId,
    t0: u64,
    qlen: u32,
    start: usize,
    len: u16,
}

/// The group's input sequence, whole: every datagram the buffer handled,
/// in the order it handled them, with what each carried.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Arrivals {
    index: Vec<Index>,
    bytes: Vec<u8>,
}

/// One datagram of [`Arrivals`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival<'a> {
    /// Which feed it came in on.
    pub feed: FeedId,
    /// When it came up from the socket (ns since the epoch).
    pub t0: u64,
    /// Datagrams ahead of it in the mailbox, or `QLEN_NONE`.
    pub qlen: u32,
    /// What it carried.
    pub bytes: &'a [u8],
}

impl Arrivals {
    /// Appends one datagram.
    pub fn push(&mut self, a: Arrival<'_>) {
        let len = a.bytes.len().min(MAX_DATAGRAM);
        self.index.push(Index {
            feed: a.feed,
            t0: a.t0,
            qlen: a.qlen,
            start: self.bytes.len(),
            len: len as u16,
        });
        self.bytes.extend_from_slice(&a.bytes[..len]);
    }

    /// Datagrams.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Payload bytes in all.
    pub fn payload_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The datagrams, in the order the group handled them.
    pub fn iter(&self) -> impl Iterator<Item = Arrival<'_>> + '_ {
        self.index.iter().map(|i| Arrival {
            feed: i.feed,
            t0: i.t0,
            qlen: i.qlen,
            bytes: &self.bytes[i.start..i.start + i.len as usize],
        })
    }
}

/// Joins the buffer's journal with the exchange's packets (`(send time,
/// bytes)`, as `generator::read_capture` returns them): each stamp gets the
/// bytes of the packet with its sequence number. `Err` if a stamp names a
/// packet the capture lacks or has another length: the join would not be
/// the group's input.
pub fn join(log: &ArrivalLog, packets: &[(u64, Vec<u8>)]) -> Result<Arrivals, String> {
    let by_seq: HashMap<u32, &[u8]> = packets
        .iter()
        .filter_map(|(_, b)| feed::peek_seq(b).map(|s| (s, b.as_slice())))
        .collect();
    let unsequenced: HashMap<usize, &[u8]> = log
        .unsequenced
        .iter()
        .map(|(k, b)| (*k, b.as_slice()))
        .collect();
    let mut out = Arrivals {
        index: Vec::with_capacity(log.stamps.len()),
        bytes: Vec::new(),
    };
    for (k, s) in log.stamps.iter().enumerate() {
        let Stamp {
            feed,
            t0,
            qlen,
            seq,
            len,
        } = *s;
        let bytes = match seq {
            Some(seq) => by_seq
                .get(&seq)
                .copied()
                .ok_or_else(|| format!("datagram {k}: no packet {seq} in the capture"))?,
            None => unsequenced
                .get(&k)
                .copied()
                .ok_or_else(|| format!("datagram {k}: its bytes were not journaled"))?,
        };
        if bytes.len() != len as usize {
            return Err(format!(
                "datagram {k}: {len} bytes received, the capture's packet has {}",
                bytes.len()
            ));
        }
        out.push(Arrival {
            feed,
            t0,
            qlen,
            bytes,
        });
    }
    Ok(out)
}

/// The arrivals file's magic.
pub const ARRIVALS_MAGIC: &[u8; 8] = b"KSPARR01";

/// Writes `arrivals` to `path` (created or truncated).
pub fn write_arrivals(path: &Path, arrivals: &Arrivals) -> io::Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    out.write_all(ARRIVALS_MAGIC)?;
    for a in arrivals.iter() {
        out.write_all(&[match a.feed {
            FeedId::A => 0,
            FeedId::B => 1,
        }])?;
        out.write_all(&a.t0.to_le_bytes())?;
        out.write_all(&a.qlen.to_le_bytes())?;
        out.write_all(&(a.bytes.len() as u16).to_le_bytes())?;
        out.write_all(a.bytes)?;
    }
    out.flush()
}

/// Reads an arrivals file back.
pub fn read_arrivals(path: &Path) -> io::Result<Arrivals> {
    let mut bytes = Vec::new();
    File::open(path)?.read_to_end(&mut bytes)?;
    let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    if bytes.get(..8) != Some(&ARRIVALS_MAGIC[..]) {
        return Err(bad("not a tick_to_book arrivals file".into()));
    }
    let mut at = 8;
    let mut out = Arrivals::default();
    while at < bytes.len() {
        let head = bytes
            .get(at..at + 15)
            .ok_or_else(|| bad(format!("truncated record at byte {at}")))?;
        let feed = match head[0] {
            0 => FeedId::A,
            1 => FeedId::B,
            f => return Err(bad(format!("bad feed id {f} at byte {at}"))),
        };
        let t0 = u64::from_le_bytes(head[1..9].try_into().expect("8 bytes"));
        let qlen = u32::from_le_bytes(head[9..13].try_into().expect("4 bytes"));
        let len = u16::from_le_bytes(head[13..15].try_into().expect("2 bytes")) as usize;
        let payload = bytes
            .get(at + 15..at + 15 + len)
            .ok_or_else(|| bad(format!("truncated record at byte {at}")))?;
        out.push(Arrival {
            feed,
            t0,
            qlen,
            bytes: payload,
        });
        at += 15 + len;
    }
    Ok(out)
}

/// What a simulated run produced.
#[derive(Debug)]
pub struct Replayed {
    /// The orders the signal sent, as the recording order-out got them.
    pub orders: Vec<Order>,
    /// The group's books, records and counters.
    pub results: GroupResults,
    /// Datagrams the simulated group refused (expected 0).
    pub refused: u64,
    /// Messages the simulation sent to dead letters (expected 0).
    pub dead_letters: u64,
}

/// Replays `arrivals` into a simulated `MarketData` group built from the
/// same initial state as the live one: each datagram is delivered to the
/// buffer at its `t0` on the virtual clock (which never moves back), the
/// feed is ended as the live run ended it, and the signal's orders go to a
/// recording [`OrderOut`] that runs on the simulating thread.
pub fn replay(arrivals: &Arrivals, security_ids: &[i32]) -> Replayed {
    let start = arrivals.iter().next().map_or(0, |a| a.t0);
    let mut sim = Simulation::<MarketData>::starting_at(
        Time::from_nanos(start),
        MarketData::members(security_ids, arrivals.len() * 2 + 16),
    );
    let log = OrderLog::default();
    let out = sim.spawn(OrderOut::recording(Arc::clone(&log)));
    sim.group().wire(Some(&out));
    let buffer = sim.group().buffer.clone();
    let mut refused = 0;
    for a in arrivals.iter() {
        let mut d = Datagram::copy_of(a.bytes, a.feed, a.t0);
        d.qlen = a.qlen;
        if sim.deliver(Time::from_nanos(a.t0), &buffer, d).is_err() {
            refused += 1;
        }
    }
    let arbiter = sim.group().arbiter.clone();
    let now = sim.now();
    if sim.deliver(now, &arbiter, EndOfFeed).is_err() {
        refused += 1;
    }
    let results = sim.group().results();
    let dead_letters = sim.dead_letters().total();
    sim.finish();
    let orders = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
    Replayed {
        orders,
        results,
        refused,
        dead_letters,
    }
}

/// Compares a simulated run with the live one: the orders, the books,
/// every record (all but its latency, which is the one field the clock
/// writes) and every counter. `Err` names the first difference.
pub fn compare(live_orders: &[Order], live: &GroupResults, sim: &Replayed) -> Result<(), String> {
    if let Some(k) = (0..live_orders.len().max(sim.orders.len()))
        .find(|&k| live_orders.get(k) != sim.orders.get(k))
    {
        return Err(format!(
            "signal {k}: live {:?}, simulated {:?} ({} live, {} simulated)",
            live_orders.get(k),
            sim.orders.get(k),
            live_orders.len(),
            sim.orders.len()
        ));
    }
    let s = &sim.results;
    if live.book != s.book {
        return Err("the books differ".into());
    }
    let key = |r: &Record| (r.t0, r.stream, r.security_id, r.seq, r.idx, r.span, r.qlen);
    if let Some(k) = (0..live.records.len().max(s.records.len()))
        .find(|&k| live.records.get(k).map(key) != s.records.get(k).map(key))
    {
        return Err(format!(
            "record {k}: live {:?}, simulated {:?}",
            live.records.get(k),
            s.records.get(k)
        ));
    }
    let counters = |g: &GroupResults| {
        (
            (g.received, g.chain_errors, g.runts, g.next_expected),
            (g.packets, g.messages, g.decode_errors, g.book_refused),
            (g.signal_updates, g.orders, g.arbiter, g.gap_ranges.clone()),
        )
    };
    if counters(live) != counters(s) {
        return Err(format!(
            "counters: live {:?}, simulated {:?}",
            counters(live),
            counters(s)
        ));
    }
    if sim.refused != 0 || sim.dead_letters != 0 {
        return Err(format!(
            "the simulation refused {} datagrams and dead-lettered {} messages",
            sim.refused, sim.dead_letters
        ));
    }
    Ok(())
}
