//! What the three processes share: the messages that cross between them
//! (`Wire`), the actors that handle them (`#[actor(remote)]`), and the
//! clock that times each hop.

use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use kaspar::prelude::*;
use kaspar::Terminated;
use kaspar_remote::{RemoteAddr, Schema, Wire};
use serde::{Deserialize, Serialize};

/// Nanoseconds of `CLOCK_MONOTONIC`.
///
/// Both ends of a hop read this clock, so a timestamp taken in one process
/// can be subtracted from one taken in another: on Linux `CLOCK_MONOTONIC`
/// is one clock for the whole host, never stepped by NTP (only slewed).
/// std's `Instant` reads the same clock but keeps its value opaque, so it
/// cannot travel in a message; wall time (`SystemTime`) can, but it may
/// step backwards or forwards in the middle of a run.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec that outlives the call,
    // and CLOCK_MONOTONIC is a clock every supported unix provides.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_MONOTONIC) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A latency histogram in nanoseconds, 1 ns to 10 s, 3 significant digits.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 10_000_000_000, 3).expect("valid histogram bounds")
}

/// Book → strategy: the best bid and offer after a book change.
#[derive(Serialize, Deserialize, Wire, Clone, Debug)]
#[wire(id = 1)]
pub struct TopOfBook {
    pub seq: u64,
    pub bid: i64,
    pub ask: i64,
    pub bid_qty: u32,
    pub ask_qty: u32,
    /// [`mono_ns`] when the book sent it.
    pub sent_ns: u64,
}

/// Book → strategy: the feed is over; the reply is the strategy's tally.
#[derive(Serialize, Deserialize, Wire, Clone, Debug)]
#[wire(id = 2)]
pub struct EndOfFeed;

/// A strategy's answer to [`EndOfFeed`]. A remote handler's reply, so
/// `Schema` too: the actor's schema hash covers it, and `Percentiles`
/// inside it.
#[derive(Serialize, Deserialize, Schema, Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Updates received.
    pub received: u64,
    /// Orders the gateway's process accepted into its buffer.
    pub orders: u64,
    /// Orders that could not be sent (the gateway's buffer stayed full).
    pub unsent: u64,
    /// The book → strategy hop, as this strategy saw it.
    pub hop: Percentiles,
}

/// Percentiles of one hop, in nanoseconds.
#[derive(Serialize, Deserialize, Schema, Clone, Copy, Debug, Default)]
pub struct Percentiles {
    pub count: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

impl Percentiles {
    pub fn of(h: &Histogram<u64>) -> Self {
        Percentiles {
            count: h.len(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }

    /// One table row, in microseconds.
    pub fn row(&self, hop: &str) -> String {
        let us = |ns: u64| ns as f64 / 1000.0;
        format!(
            "{hop:<26} {:>7} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.1}",
            self.count,
            us(self.p50),
            us(self.p90),
            us(self.p99),
            us(self.p999),
            us(self.max)
        )
    }
}

/// Strategy → book.
#[derive(Serialize, Deserialize, Wire, Clone, Debug)]
#[wire(id = 10)]
pub struct Order {
    /// 0 for strategy-a, 1 for strategy-b.
    pub strategy: u8,
    pub id: u64,
    pub buy: bool,
    pub px: i64,
    pub qty: u32,
    /// [`mono_ns`] when the strategy sent it.
    pub sent_ns: u64,
}

/// The gateway's verdict on one order: its output, compared between the
/// live run and the replay.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Decision {
    pub strategy: u8,
    pub id: u64,
    pub accepted: bool,
    /// The strategy's position after the order.
    pub position: i64,
}

/// Where the gateway writes its decisions.
pub type Decisions = Arc<Mutex<Vec<Decision>>>;

/// The order gateway in the book process: a position limit per strategy.
/// Its decisions depend on every order and on their order, so a replay
/// that reorders or loses one shows.
#[actor]
pub struct Gateway {
    positions: [i64; 2],
    limit: i64,
    decisions: Decisions,
    /// The strategy → book hop, measured in the live run only (a replay
    /// has no second process to compare clocks with).
    hop: Option<Arc<Mutex<Histogram<u64>>>>,
}

impl Gateway {
    pub fn new(decisions: Decisions, hop: Option<Arc<Mutex<Histogram<u64>>>>) -> Self {
        Gateway {
            positions: [0; 2],
            limit: 50,
            decisions,
            hop,
        }
    }
}

#[actor(remote)]
impl Gateway {
    #[handler(Order)]
    fn on_order(&mut self, o: Order, _ctx: &mut Ctx<Self>) {
        if let Some(hop) = &self.hop {
            let took = mono_ns().saturating_sub(o.sent_ns);
            hop.lock().unwrap().saturating_record(took);
        }
        let slot = usize::from(o.strategy.min(1));
        let signed = if o.buy { 1 } else { -1 } * i64::from(o.qty);
        let after = self.positions[slot] + signed;
        let accepted = after.abs() <= self.limit;
        if accepted {
            self.positions[slot] = after;
        }
        self.decisions.lock().unwrap().push(Decision {
            strategy: o.strategy,
            id: o.id,
            accepted,
            position: self.positions[slot],
        });
    }
}

/// The book process's group: what the journal records and the replay
/// rebuilds.
#[group]
pub struct Desk {
    pub gateway: Addr<Gateway>,
}

/// A strategy: leans on the book's size imbalance, one lot at a time.
#[actor]
pub struct Strategy {
    id: u8,
    /// The imbalance, in percent of the size at the top, that triggers an
    /// order.
    threshold: i64,
    gateway: RemoteAddr<Gateway>,
    hop: Histogram<u64>,
    tally: Tally,
}

impl Strategy {
    pub fn new(id: u8, threshold: i64, gateway: RemoteAddr<Gateway>) -> Self {
        Strategy {
            id,
            threshold,
            gateway,
            hop: histogram(),
            tally: Tally::default(),
        }
    }
}

#[actor(remote)]
impl Strategy {
    #[handler(TopOfBook)]
    fn on_top(&mut self, t: TopOfBook, _ctx: &mut Ctx<Self>) {
        self.hop
            .saturating_record(mono_ns().saturating_sub(t.sent_ns));
        self.tally.received += 1;
        let (b, a) = (i64::from(t.bid_qty), i64::from(t.ask_qty));
        let imbalance = 100 * (b - a) / (b + a).max(1);
        if imbalance.abs() < self.threshold {
            return;
        }
        let order = Order {
            strategy: self.id,
            id: t.seq,
            buy: imbalance > 0,
            px: if imbalance > 0 { t.ask } else { t.bid },
            qty: 1 + (t.seq % 3) as u32,
            sent_ns: mono_ns(),
        };
        match self.gateway.send(order) {
            Ok(()) => self.tally.orders += 1,
            Err(_) => self.tally.unsent += 1,
        }
    }

    #[handler(EndOfFeed)]
    fn on_end(&mut self, _e: EndOfFeed, _ctx: &mut Ctx<Self>) -> Tally {
        Tally {
            hop: Percentiles::of(&self.hop),
            ..self.tally
        }
    }
}

/// The book process's watcher: hears when a strategy's process is lost.
#[actor]
pub struct Lookout {
    pub lost: Arc<Mutex<Vec<Terminated>>>,
}

#[actor]
impl Lookout {
    #[handler(Terminated)]
    fn on_terminated(&mut self, t: Terminated, _ctx: &mut Ctx<Self>) {
        let name = t.target.instance.as_deref().unwrap_or(t.target.name);
        println!("watcher: {name} ended, reason {:?}", t.reason);
        self.lost.lock().unwrap().push(t);
    }
}
