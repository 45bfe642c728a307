//! The exchange's matching engine and packetizer: [`Generator`] draws
//! market events at Hawkes arrival times, decides each one's book and
//! trade entries against its own book (so every entry it emits is valid
//! there), stages them as messages and coalesces what is due into
//! packets. Every packet's entries go to its [`PacketLog`], the source of
//! the reference book.

use std::collections::VecDeque;

use crate::rng::XorShift;
use crate::tick_to_book::feed::{
    Action, Book, BookEntry, Entry, Instrument, Ladder, Level, PacketWriter, Side, Stream,
    TradeEntry, DEPTH,
};

use super::hawkes::{Hawkes, Release};
use super::packet_log::PacketLog;

/// What the generator produces and how fast.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Long-run market events per second.
    pub rate: f64,
    /// Hawkes branching ratio: 0 is Poisson, near 1 is very bursty.
    pub branching: f64,
    /// Hawkes kernel decay rate (1/s): how fast a burst dies out.
    pub decay: f64,
    /// The seed of everything random.
    pub seed: u64,
    /// A scheduled surge of the arrival rate, if any.
    pub release: Option<Release>,
}

impl GenConfig {
    /// The mean number of events in the first `secs` seconds: the
    /// long-run rate, plus what the release adds (its extra baseline,
    /// multiplied by the events each one triggers; the ones it triggers
    /// after `secs` are counted too).
    pub fn expected_events(&self, secs: f64) -> f64 {
        let extra = self.release.map_or(0.0, |r| {
            let inside = (secs.min(r.at_s + r.secs) - r.at_s).max(0.0);
            (r.factor.max(1.0) - 1.0) * inside
        });
        self.rate * (secs + extra)
    }
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            rate: 20_000.0,
            branching: 0.85,
            decay: 8_000.0,
            seed: 0x6b61_7370,
            release: None,
        }
    }
}

/// The instruments: (security id, tick size in 1e-9 units, starting price
/// in ticks, weight of the event mix). ES, NQ, ZN, as in the paper.
pub const INSTRUMENTS: [(i32, i64, i64, u64); 3] = [
    (5602, 250_000_000, 18_000, 5),
    (3141, 250_000_000, 72_000, 3),
    (7921, 15_625_000, 7_000, 2),
];

/// The report's names of [`INSTRUMENTS`], in the same order.
pub const INSTRUMENT_NAMES: [&str; 3] = ["ES", "NQ", "ZN"];

/// The security ids of [`INSTRUMENTS`].
pub fn security_ids() -> Vec<i32> {
    INSTRUMENTS.iter().map(|i| i.0).collect()
}

/// The name of the instrument `security_id`, if it is one of
/// [`INSTRUMENTS`].
pub fn instrument_name(security_id: i32) -> Option<&'static str> {
    INSTRUMENTS
        .iter()
        .position(|i| i.0 == security_id)
        .map(|k| INSTRUMENT_NAMES[k])
}

#[derive(Clone, Copy, Debug)]
struct StagedMsg {
    stream: Stream,
    transact_time: u64,
    start: usize,
    len: usize,
}

/// The exchange's matching engine and packetizer.
#[derive(Debug)]
pub struct Generator {
    pub(super) rng: XorShift,
    hawkes: Hawkes,
    /// The book after every generated entry, staged ones included: what
    /// the next event is decided against.
    book: Book,
    /// Time of the next event not yet generated, ns from the start.
    next_event_ns: u64,
    staged: VecDeque<StagedMsg>,
    staged_entries: Vec<Entry>,
    seq: u32,
    events: u64,
    log: PacketLog,
}

impl Generator {
    /// A generator for `cfg`, reference book empty, next sequence number 1.
    pub fn new(cfg: &GenConfig) -> Self {
        let mut rng = XorShift::new(cfg.seed);
        let mut hawkes = Hawkes::new(cfg.rate, cfg.branching, cfg.decay);
        if let Some(r) = cfg.release {
            hawkes = hawkes.with_release(r);
        }
        let first = hawkes.next_event(&mut rng);
        Generator {
            rng,
            hawkes,
            book: Book::new(&security_ids()),
            next_event_ns: (first * 1e9) as u64,
            staged: VecDeque::new(),
            staged_entries: Vec::new(),
            seq: 1,
            events: 0,
            log: PacketLog::default(),
        }
    }

    /// The reference book: every packet built so far, applied in order.
    /// Built from the generator's own entries, never from encoded bytes.
    pub fn reference(&self) -> Book {
        self.log.replay(|_| false)
    }

    /// Whether every generated message has been sent (none is staged for
    /// the next packet).
    pub fn drained(&self) -> bool {
        self.staged.is_empty()
    }

    /// The book after every generated message, sent or staged.
    pub fn generated_book(&self) -> &Book {
        &self.book
    }

    /// Market events generated so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The packets built so far.
    pub fn log(&self) -> &PacketLog {
        &self.log
    }

    /// When the next message becomes available, ns from the start.
    pub fn next_due_ns(&self) -> u64 {
        self.staged
            .front()
            .map_or(self.next_event_ns, |m| m.transact_time)
    }

    /// Builds the next packet from every message available at `now_ns`
    /// (ns from the start), up to the packet limits. Returns `false`, with
    /// `out` untouched, if nothing is available yet. The reference book has
    /// then seen every message up to and including this packet's.
    pub fn next_packet(&mut self, now_ns: u64, sending_time: u64, out: &mut PacketWriter) -> bool {
        if self.next_due_ns() > now_ns {
            return false;
        }
        out.begin(self.seq, sending_time);
        self.log.starts.push(self.log.entries.len());
        loop {
            if self.staged.is_empty() {
                if self.next_event_ns > now_ns {
                    break;
                }
                let t = self.next_event_ns;
                self.generate_event(t);
                self.next_event_ns = (self.hawkes.next_event(&mut self.rng) * 1e9) as u64;
            }
            let Some(&m) = self.staged.front() else {
                continue;
            };
            let entries = &self.staged_entries[m.start..m.start + m.len];
            if !out.push(m.stream, m.transact_time, entries) {
                break;
            }
            self.log.entries.extend_from_slice(entries);
            // Every message holds one instrument's entries, at least one.
            self.log.streams.push((entries[0].security_id(), m.stream));
            self.staged.pop_front();
            if self.staged.is_empty() {
                self.staged_entries.clear();
            }
        }
        self.log.messages.push(out.message_count() as u8);
        self.seq += 1;
        true
    }

    /// One market event at `t` ns: a quote change, or a trade with the book
    /// updates it causes, decided against the book as every message before
    /// it leaves it.
    fn generate_event(&mut self, t: u64) {
        self.events += 1;
        let total: u64 = INSTRUMENTS.iter().map(|i| i.3).sum();
        let mut pick = self.rng.below(total);
        let mut which = 0;
        for (k, i) in INSTRUMENTS.iter().enumerate() {
            if pick < i.3 {
                which = k;
                break;
            }
            pick -= i.3;
        }
        let (id, tick, start_px, _) = INSTRUMENTS[which];
        let inst = *self.book.instrument(id).expect("known instrument");
        let base = self.staged_entries.len();
        let trade =
            inst.bids.levels().len() >= 2 && inst.asks.levels().len() >= 2 && self.rng.chance(0.25);
        if trade {
            self.trade(&inst, id, t);
        } else {
            let e = self.quote(&inst, id, tick, start_px);
            self.staged_entries.push(Entry::Book(e));
            self.staged.push_back(StagedMsg {
                stream: Stream::Book,
                transact_time: t,
                start: base,
                len: 1,
            });
        }
        for e in &self.staged_entries[base..] {
            let _ = self.book.apply(e);
        }
    }

    fn trade(&mut self, inst: &Instrument, id: i32, t: u64) {
        let aggressor = if self.rng.chance(0.5) {
            Side::Bid
        } else {
            Side::Ask
        };
        let ladder = match aggressor {
            Side::Bid => inst.asks,
            Side::Ask => inst.bids,
        };
        let passive = match aggressor {
            Side::Bid => Side::Ask,
            Side::Ask => Side::Bid,
        };
        let levels = ladder.levels();
        // Usually one level; sometimes a sweep through a few.
        let sweep = if self.rng.chance(0.06) {
            self.rng.range(2, 4) as usize
        } else {
            1
        }
        .min(levels.len() - 1);
        let trade_start = self.staged_entries.len();
        let mut book_entries = Vec::with_capacity(sweep);
        for (k, lvl) in levels.iter().take(sweep).enumerate() {
            let last = k + 1 == sweep;
            let size = if last {
                self.rng.range(1, lvl.size.max(1) as i64) as i32
            } else {
                lvl.size
            };
            self.staged_entries.push(Entry::Trade(TradeEntry {
                price: lvl.price,
                size,
                security_id: id,
                aggressor,
            }));
            let (action, left) = if size >= lvl.size {
                (Action::Delete, 0)
            } else {
                (Action::Change, lvl.size - size)
            };
            book_entries.push(Entry::Book(BookEntry {
                price: lvl.price,
                size: left,
                security_id: id,
                level: 1,
                side: passive,
                action,
            }));
        }
        let n = self.staged_entries.len() - trade_start;
        self.staged.push_back(StagedMsg {
            stream: Stream::Trade,
            transact_time: t,
            start: trade_start,
            len: n,
        });
        let book_start = self.staged_entries.len();
        self.staged_entries.extend_from_slice(&book_entries);
        self.staged.push_back(StagedMsg {
            stream: Stream::Book,
            transact_time: t,
            start: book_start,
            len: book_entries.len(),
        });
    }

    /// A single valid book entry: insert, resize or remove a level.
    fn quote(&mut self, inst: &Instrument, id: i32, tick: i64, start_px: i64) -> BookEntry {
        let side = if self.rng.chance(0.5) {
            Side::Bid
        } else {
            Side::Ask
        };
        let (own, other) = match side {
            Side::Bid => (inst.bids, inst.asks),
            Side::Ask => (inst.asks, inst.bids),
        };
        let n = own.levels().len();
        let size = self.rng.range(1, 200) as i32;
        let roll = self.rng.unit();
        let want_new = n < 3 || (n < DEPTH && roll < 0.35) || (n == DEPTH && roll < 0.15);
        if want_new {
            let level = self.rng.range(1, (n as i64 + 1).min(DEPTH as i64)) as usize;
            if let Some(px) = self.new_price(side, &own, &other, level, start_px, tick) {
                return BookEntry {
                    price: px * tick,
                    size,
                    security_id: id,
                    level: level as u8,
                    side,
                    action: Action::New,
                };
            }
        }
        if n >= 1 {
            let level = self.rng.range(1, n as i64) as usize;
            let lvl = own.levels()[level - 1];
            let delete = n > 2 && self.rng.chance(0.35);
            return BookEntry {
                price: lvl.price,
                size: if delete { 0 } else { size },
                security_id: id,
                level: level as u8,
                side,
                action: if delete {
                    Action::Delete
                } else {
                    Action::Change
                },
            };
        }
        // An empty side with no room for a first level cannot happen (an
        // empty side always has room), but stay total.
        BookEntry {
            price: start_px * tick,
            size,
            security_id: id,
            level: 1,
            side,
            action: Action::New,
        }
    }

    /// A price (in ticks) strictly between the neighbours of `level` on
    /// `side`, inside the spread for level 1; `None` if no tick is free.
    fn new_price(
        &mut self,
        side: Side,
        own: &Ladder,
        other: &Ladder,
        level: usize,
        start_px: i64,
        tick: i64,
    ) -> Option<i64> {
        let px = |l: Level| l.price / tick;
        let levels = own.levels();
        // Exclusive bounds, "better" = towards the other side.
        let better = if level == 1 {
            other.best().map(px).unwrap_or(match side {
                Side::Bid => start_px + 1,
                Side::Ask => start_px - 1,
            })
        } else {
            px(levels[level - 2])
        };
        let worse = match levels.get(level - 1) {
            Some(&l) => px(l),
            None => match side {
                Side::Bid => better - 6,
                Side::Ask => better + 6,
            },
        };
        let (lo, hi) = match side {
            Side::Bid => (worse, better),
            Side::Ask => (better, worse),
        };
        (hi - lo >= 2).then(|| self.rng.range(lo + 1, hi - 1))
    }
}
