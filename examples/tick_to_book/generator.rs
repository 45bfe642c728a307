//! The synthetic exchange: clustered event arrivals from a self-exciting
//! Hawkes process, turned into book and trade messages against a reference
//! book, coalesced into packets, sent as redundant feeds A and B over UDP
//! on loopback, and optionally written to a capture file.
//!
//! Deterministic for a seed: the same seed gives the same events, in the
//! same order, with the same payloads. Only the packet boundaries depend on
//! when the sender gets to run (live), or on the caller's clock (offline).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::feed::{
    Action, Book, BookEntry, Entry, Level, PacketWriter, Side, Stream, TradeEntry, DEPTH,
};

/// Marsaglia's xorshift64*: small, fast, and good enough for a workload.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator for `seed` (any value; zero is remapped).
    pub fn new(seed: u64) -> Self {
        // splitmix64 once, so nearby seeds give unrelated streams
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift(if z == 0 { 0x2545_F491_4F6C_DD1D } else { z })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `(0, 1]`.
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() <= p
    }

    /// Exponentially distributed with the given rate.
    pub fn exp(&mut self, rate: f64) -> f64 {
        -self.unit().ln() / rate
    }
}

/// A univariate Hawkes process with exponential kernel:
/// `λ(t) = μ + Σ α·exp(-β (t - tᵢ))`, simulated exactly by Ogata thinning.
/// Each event raises the intensity by `α`, which then decays at rate `β`;
/// `α/β` is the branching ratio (mean events one event triggers directly).
#[derive(Clone, Debug)]
pub struct Hawkes {
    mu: f64,
    alpha: f64,
    beta: f64,
    excitation: f64,
    t: f64,
}

impl Hawkes {
    /// A process whose long-run rate is `rate` events/s, with branching
    /// ratio `branching` (in `[0, 1)`) and kernel decay `decay` (1/s).
    pub fn new(rate: f64, branching: f64, decay: f64) -> Self {
        let n = branching.clamp(0.0, 0.99);
        Hawkes {
            mu: rate * (1.0 - n),
            alpha: n * decay,
            beta: decay,
            excitation: 0.0,
            t: 0.0,
        }
    }

    /// The time of the next event, in seconds from the start.
    pub fn next_event(&mut self, rng: &mut XorShift) -> f64 {
        loop {
            // The intensity only decays between events, so its current
            // value bounds it until the next one: propose, then thin.
            let bound = self.mu + self.excitation;
            let dt = rng.exp(bound);
            self.t += dt;
            self.excitation *= (-self.beta * dt).exp();
            if rng.unit() * bound <= self.mu + self.excitation {
                self.excitation += self.alpha;
                return self.t;
            }
        }
    }
}

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
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            rate: 20_000.0,
            branching: 0.85,
            decay: 8_000.0,
            seed: 0x6b61_7370,
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

/// The security ids of [`INSTRUMENTS`].
pub fn security_ids() -> Vec<i32> {
    INSTRUMENTS.iter().map(|i| i.0).collect()
}

#[derive(Clone, Copy, Debug)]
struct StagedMsg {
    stream: Stream,
    transact_time: u64,
    start: usize,
    len: usize,
}

/// Every packet's entries, kept so a reference book can be rebuilt without
/// the packets a receiver lost.
#[derive(Clone, Debug, Default)]
pub struct PacketLog {
    entries: Vec<Entry>,
    /// `starts[k]`: index of packet `k + 1`'s first entry.
    starts: Vec<usize>,
    /// `messages[k]`: messages in packet `k + 1`.
    messages: Vec<u8>,
}

impl PacketLog {
    /// Packets logged.
    pub fn packets(&self) -> usize {
        self.starts.len()
    }

    /// Messages in packet `seq` (0 if there is no such packet).
    pub fn messages_in(&self, seq: u32) -> usize {
        (seq as usize)
            .checked_sub(1)
            .and_then(|k| self.messages.get(k))
            .map_or(0, |&n| n as usize)
    }

    /// Messages in all packets.
    pub fn total_messages(&self) -> u64 {
        self.messages.iter().map(|&n| n as u64).sum()
    }

    /// How many packets carried `n` messages, for `n` in `0..=MAX_MESSAGES`.
    pub fn size_histogram(&self) -> Vec<u64> {
        let mut h = vec![0; crate::feed::MAX_MESSAGES + 1];
        for &n in &self.messages {
            h[n as usize] += 1;
        }
        h
    }

    /// The book a receiver builds from every packet except those `skip`
    /// returns true for.
    pub fn replay(&self, skip: impl Fn(u32) -> bool) -> Book {
        let mut book = Book::new(&security_ids());
        for k in 0..self.starts.len() {
            if skip(k as u32 + 1) {
                continue;
            }
            let end = self
                .starts
                .get(k + 1)
                .copied()
                .unwrap_or(self.entries.len());
            for e in &self.entries[self.starts[k]..end] {
                let _ = book.apply(e);
            }
        }
        book
    }
}

/// The exchange's matching engine and packetizer.
#[derive(Debug)]
pub struct Generator {
    rng: XorShift,
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

    fn trade(&mut self, inst: &crate::feed::Instrument, id: i32, t: u64) {
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
    fn quote(
        &mut self,
        inst: &crate::feed::Instrument,
        id: i32,
        tick: i64,
        start_px: i64,
    ) -> BookEntry {
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
        own: &crate::feed::Ladder,
        other: &crate::feed::Ladder,
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

/// Which feed a datagram came in on.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum FeedId {
    /// Channel A.
    A,
    /// Channel B (the redundant copy).
    B,
}

/// The capture file: an 8-byte magic, then one record per packet:
/// `u32` LE payload length, `u64` LE send time (ns since the Unix epoch),
/// the packet bytes.
pub const CAPTURE_MAGIC: &[u8; 8] = b"KSPCAP01";

/// Writes a capture file.
#[derive(Debug)]
pub struct CaptureWriter {
    out: BufWriter<File>,
}

impl CaptureWriter {
    /// Creates (truncates) `path` and writes the magic.
    pub fn create(path: &Path) -> io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        out.write_all(CAPTURE_MAGIC)?;
        Ok(CaptureWriter { out })
    }

    /// Appends one packet.
    pub fn record(&mut self, sent_ns: u64, packet: &[u8]) -> io::Result<()> {
        self.out.write_all(&(packet.len() as u32).to_le_bytes())?;
        self.out.write_all(&sent_ns.to_le_bytes())?;
        self.out.write_all(packet)
    }

    /// Flushes the file.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Reads every record of a capture file: `(send time ns, packet bytes)`.
pub fn read_capture(path: &Path) -> io::Result<Vec<(u64, Vec<u8>)>> {
    let mut bytes = Vec::new();
    File::open(path)?.read_to_end(&mut bytes)?;
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    if bytes.get(..8) != Some(&CAPTURE_MAGIC[..]) {
        return Err(bad("not a kaspar capture file"));
    }
    let mut at = 8;
    let mut out = Vec::new();
    while at < bytes.len() {
        let head = bytes
            .get(at..at + 12)
            .ok_or_else(|| bad("truncated record"))?;
        let len = u32::from_le_bytes(head[..4].try_into().expect("4 bytes")) as usize;
        let t = u64::from_le_bytes(head[4..].try_into().expect("8 bytes"));
        let body = bytes
            .get(at + 12..at + 12 + len)
            .ok_or_else(|| bad("truncated record"))?;
        out.push((t, body.to_vec()));
        at += 12 + len;
    }
    Ok(out)
}

/// Progress counters the sender updates while it runs.
#[derive(Debug, Default)]
pub struct SendProgress {
    /// Packets sent (each on both feeds).
    pub packets: AtomicU64,
    /// Messages in them.
    pub messages: AtomicU64,
}

/// How the live sender runs.
#[derive(Debug)]
pub struct SendPlan<'a> {
    /// How long to generate for.
    pub duration: Duration,
    /// Feed A's and feed B's receiving sockets.
    pub targets: [SocketAddr; 2],
    /// Probability that feed B swaps a packet with the one before it.
    pub b_reorder: f64,
    /// Stop early when set.
    pub stop: &'a AtomicBool,
    /// Updated as packets go out.
    pub progress: &'a SendProgress,
    /// Where to record the packet stream, if anywhere.
    pub capture: Option<&'a Path>,
}

/// What the sender did.
#[derive(Clone, Copy, Debug, Default)]
pub struct SendReport {
    /// Packets generated (each sent once on A and once on B).
    pub packets: u64,
    /// Datagrams the socket refused to send (counted as sent and lost).
    pub send_errors: u64,
    /// Wall time spent.
    pub elapsed: Duration,
}

/// Runs the exchange in real time: sleeps until the next event is due,
/// then coalesces every message available at that moment into one packet
/// and sends it on A, then on B one packet later (and now and then swapped
/// with its neighbour). The sleep's own granularity is part of the
/// coalescing, as an exchange's send cycle is.
pub fn run_sender(gen: &mut Generator, plan: &SendPlan<'_>) -> io::Result<SendReport> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    let mut capture = match plan.capture {
        Some(p) => Some(CaptureWriter::create(p)?),
        None => None,
    };
    let epoch = Instant::now();
    let wall0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    let mut writer = PacketWriter::default();
    let mut held: Vec<u8> = Vec::with_capacity(crate::feed::MAX_DATAGRAM);
    let mut has_held = false;
    let mut rng = XorShift::new(gen.rng.0 ^ 0xB);
    let mut report = SendReport::default();
    let end = plan.duration.as_nanos() as u64;
    let send = |bytes: &[u8], to: SocketAddr, report: &mut SendReport| {
        if socket.send_to(bytes, to).is_err() {
            report.send_errors += 1;
        }
    };
    loop {
        let now = epoch.elapsed().as_nanos() as u64;
        if now >= end || plan.stop.load(Ordering::Relaxed) {
            break;
        }
        let due = gen.next_due_ns();
        if due > now {
            let wait = Duration::from_nanos((due - now).min(end - now));
            std::thread::sleep(wait);
            continue;
        }
        let sent_ns = wall0 + epoch.elapsed().as_nanos() as u64;
        if !gen.next_packet(now, sent_ns, &mut writer) {
            continue;
        }
        let bytes = writer.bytes();
        send(bytes, plan.targets[0], &mut report);
        if has_held && rng.chance(plan.b_reorder) {
            send(bytes, plan.targets[1], &mut report);
            send(&held, plan.targets[1], &mut report);
            has_held = false;
        } else {
            if has_held {
                send(&held, plan.targets[1], &mut report);
            }
            held.clear();
            held.extend_from_slice(bytes);
            has_held = true;
        }
        if let Some(c) = capture.as_mut() {
            c.record(sent_ns, bytes)?;
        }
        report.packets += 1;
        plan.progress.packets.fetch_add(1, Ordering::Relaxed);
        plan.progress
            .messages
            .fetch_add(writer.message_count() as u64, Ordering::Relaxed);
    }
    if has_held {
        send(&held, plan.targets[1], &mut report);
    }
    if let Some(c) = capture {
        c.finish()?;
    }
    report.elapsed = epoch.elapsed();
    Ok(report)
}

/// Offline packetization for tests and captures: the sender's clock
/// advances by `cadence_ns` per send cycle, so bursts coalesce exactly as
/// they would behind a sender that wakes every `cadence_ns`.
pub fn offline_packets(gen: &mut Generator, packets: usize, cadence_ns: u64) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(packets);
    let mut writer = PacketWriter::default();
    let mut now = 0;
    while out.len() < packets {
        now = now.max(gen.next_due_ns()) + cadence_ns;
        while out.len() < packets && gen.next_packet(now, now, &mut writer) {
            out.push(writer.bytes().to_vec());
        }
    }
    out
}
