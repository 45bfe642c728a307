//! The market-data pipeline of the paper's Figure 1, on kaspar.
//!
//! ```text
//!  socket A ─ SocketReader ─┐                  one thread, one #[group]
//!                           ├─ send ─▶ Buffer ─fast_send▶ Arbiter ─▶ Decoder ─▶ BookBuilder ─▶ Signal ─ send ─▶ OrderOut
//!  socket B ─ SocketReader ─┘  (or fast_send: the reader's thread runs the whole group chain)
//! ```
//!
//! * **Capture**: one [`SocketReader`] actor per feed. Its handler drains
//!   the socket until told to stop, on the actor's own thread, and hands
//!   each datagram on: by `send` through the group's mailbox
//!   (`two-stage`) or by `fast_send`, running the chain itself
//!   (`one-thread`). Datagrams live in pooled buffers: no system
//!   allocation per datagram in steady state.
//! * **Decode, book, signal**: the [`MarketData`] group. [`Buffer`] is the
//!   queue's service handler; each stage calls the next by `fast_send`, so
//!   the chain runs inline on whichever thread holds the group.
//! * **Order out**: [`OrderOut`], a standalone actor reached by `send`.
//!
//! The group's handlers read time only through `Ctx::now` and take all
//! their input as [`Datagram`] messages, so the same group can be driven
//! from a capture file under a virtual clock. The [`Buffer`] can journal
//! every datagram in the order the group handled it ([`ArrivalLog`]);
//! `replay.rs` joins that with the capture file and feeds it to a
//! `kaspar::Simulation` of the same group (see the README).

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use kaspar::pool::Pooled;
use kaspar::prelude::*;

use crate::feed::{self, ArbiterStats, Book, Entry, Level, Packet, Stream, MAX_DATAGRAM};
use crate::generator::FeedId;

/// A datagram buffer from the pool.
pub type Buf = Pooled<[u8; MAX_DATAGRAM]>;

/// `qlen` of a message that crossed no mailbox (the one-thread path).
pub const QLEN_NONE: u32 = u32::MAX;

/// A fresh datagram buffer. Drawn from the calling thread's pool cache.
pub fn new_buf() -> Buf {
    Pooled::new([0u8; MAX_DATAGRAM])
}

/// One datagram in the mailbox's in-flight count, from the sender's
/// `send` until the buffer's handler starts on it (or the send fails).
/// The count is kept by senders and by the message itself; no handler
/// reads the mailbox.
#[derive(Debug)]
pub struct InFlight(Arc<AtomicU32>);

impl InFlight {
    /// Counts one more datagram in flight; returns the ticket and how many
    /// were already waiting.
    pub fn enter(counter: &Arc<AtomicU32>) -> (Self, u32) {
        let waiting = counter.fetch_add(1, Ordering::AcqRel);
        (InFlight(Arc::clone(counter)), waiting)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A datagram as it came up from a socket.
#[derive(Debug)]
pub struct Datagram {
    /// The bytes (the first `len` of them).
    pub buf: Buf,
    /// Bytes received.
    pub len: u16,
    /// Which feed.
    pub feed: FeedId,
    /// When it came up from the socket (`Ctx::now`, ns since the epoch).
    pub t0: u64,
    /// Datagrams already waiting in the mailbox when it was handed over,
    /// or [`QLEN_NONE`].
    pub qlen: u32,
    /// Held while the datagram waits in the mailbox.
    pub ticket: Option<InFlight>,
}

impl Datagram {
    /// The received bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }

    /// A datagram holding a copy of `bytes` (at most [`MAX_DATAGRAM`]):
    /// for tests, and for replaying a capture.
    pub fn copy_of(bytes: &[u8], feed: FeedId, t0: u64) -> Self {
        let mut buf = new_buf();
        let len = bytes.len().min(MAX_DATAGRAM);
        buf[..len].copy_from_slice(&bytes[..len]);
        Datagram {
            buf,
            len: len as u16,
            feed,
            t0,
            qlen: QLEN_NONE,
            ticket: None,
        }
    }
}

/// One published book update, as measured.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    /// When its datagram came up from the socket (ns since the epoch).
    pub t0: u64,
    /// `t1 - t0`: socket to book published.
    pub latency_ns: u64,
    /// Book or trade.
    pub stream: Stream,
    /// Position of the message in its packet (0 = first).
    pub idx: u8,
    /// Datagrams waiting ahead of its datagram, or [`QLEN_NONE`].
    pub qlen: u32,
}

// ---- wiring and queries --------------------------------------------------

/// Connects the buffer to the arbiter.
pub struct ToArbiter(pub Addr<Arbiter>);
/// Connects the arbiter to the decoder.
pub struct ToDecoder(pub Addr<Decoder>);
/// Connects the decoder to the book.
pub struct ToBook(pub Addr<BookBuilder>);
/// Connects the book to the signal.
pub struct ToSignal(pub Addr<Signal>);
/// Connects the signal to order out.
pub struct ToOrderOut(pub Addr<OrderOut>);
/// Asks a member for its counters.
pub struct Counters;
/// Turns on the buffer's arrival journal, with room reserved for this many
/// datagrams (so that recording does not reallocate on the timed path).
pub struct StartJournal {
    /// Datagrams to reserve room for.
    pub datagrams: usize,
}
/// Takes the arrival journal out of the buffer (empty if it was off).
pub struct TakeArrivals;
/// Takes the book and the records out of the book builder.
pub struct TakeResults;
/// Tells the arbiter the feed has ended: declare the holes, pass on what it
/// holds.
pub struct EndOfFeed;

// ---- the arrival journal --------------------------------------------------

/// What the buffer journals for one datagram, in the order the group
/// handled it: which feed, its socket time `t0`, its `qlen`, its packet
/// sequence number and its length. Not the bytes: copying them on the
/// timed path costs a cache miss or more per datagram; they are the
/// exchange's packet of that sequence number, joined back in from the
/// capture file after the run (`replay::join`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Which feed it came in on.
    pub feed: FeedId,
    /// When it came up from the socket (ns since the epoch).
    pub t0: u64,
    /// Datagrams ahead of it in the mailbox, or [`QLEN_NONE`].
    pub qlen: u32,
    /// Its packet sequence number; `None` for a datagram too short to
    /// carry one (its bytes are then kept whole, see [`ArrivalLog`]).
    pub seq: Option<u32>,
    /// Bytes received.
    pub len: u16,
}

/// The group's input as the buffer journaled it: one [`Stamp`] per
/// datagram, in the one order the group handled them (its single queue,
/// or its lock on the `fast_send` path, gave them that order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArrivalLog {
    /// One per datagram, in handling order.
    pub stamps: Vec<Stamp>,
    /// The bytes of the datagrams without a sequence number, by their
    /// position in `stamps` (a runt is never an exchange packet).
    pub unsequenced: Vec<(usize, Vec<u8>)>,
}

impl ArrivalLog {
    /// An empty log with room for `datagrams` stamps, every page of it
    /// touched now so that recording takes no page fault later.
    pub fn with_capacity(datagrams: usize) -> Self {
        let blank = Stamp {
            feed: FeedId::A,
            t0: 0,
            qlen: 0,
            seq: None,
            len: 0,
        };
        let mut stamps = vec![blank; datagrams];
        stamps.clear();
        ArrivalLog {
            stamps,
            unsequenced: Vec::new(),
        }
    }

    /// Journals `d`.
    #[inline]
    pub fn record(&mut self, d: &Datagram) {
        let seq = feed::peek_seq(d.bytes());
        if seq.is_none() {
            self.unsequenced
                .push((self.stamps.len(), d.bytes().to_vec()));
        }
        self.stamps.push(Stamp {
            feed: d.feed,
            t0: d.t0,
            qlen: d.qlen,
            seq,
            len: d.len,
        });
    }
}

// ---- the group -----------------------------------------------------------

/// The queue: the group's entry point. Every datagram, whichever way it
/// arrives, goes down the chain from here by `fast_send`.
#[actor]
#[derive(Default)]
pub struct Buffer {
    arbiter: Option<Addr<Arbiter>>,
    received: u64,
    chain_errors: u64,
    journal: Option<ArrivalLog>,
}

#[actor]
impl Buffer {
    #[handler(ToArbiter)]
    fn wire(&mut self, msg: ToArbiter, _ctx: &mut Ctx<Self>) {
        self.arbiter = Some(msg.0);
    }

    #[handler(Datagram)]
    fn datagram(&mut self, mut msg: Datagram, _ctx: &mut Ctx<Self>) {
        self.received += 1;
        // It has left the mailbox.
        drop(msg.ticket.take());
        if let Some(j) = &mut self.journal {
            j.record(&msg);
        }
        let arbiter = self
            .arbiter
            .as_ref()
            .expect("wired before the first datagram");
        if arbiter.fast_send(msg).is_err() {
            self.chain_errors += 1;
        }
    }

    /// (datagrams received, chain errors).
    #[handler(Counters)]
    fn counters(&mut self, _msg: Counters, _ctx: &mut Ctx<Self>) -> (u64, u64) {
        (self.received, self.chain_errors)
    }

    #[handler(StartJournal)]
    fn start_journal(&mut self, msg: StartJournal, _ctx: &mut Ctx<Self>) {
        self.journal = Some(ArrivalLog::with_capacity(msg.datagrams));
    }

    #[handler(TakeArrivals)]
    fn take_arrivals(&mut self, _msg: TakeArrivals, _ctx: &mut Ctx<Self>) -> ArrivalLog {
        self.journal.take().unwrap_or_default()
    }
}

/// A/B arbitration: the first copy of each sequence number goes on, in
/// sequence order.
#[actor]
#[derive(Default)]
pub struct Arbiter {
    arb: feed::Arbiter<Datagram>,
    decoder: Option<Addr<Decoder>>,
    runts: u64,
}

#[actor]
impl Arbiter {
    #[handler(ToDecoder)]
    fn wire(&mut self, msg: ToDecoder, _ctx: &mut Ctx<Self>) {
        self.decoder = Some(msg.0);
    }

    #[handler(Datagram)]
    fn datagram(&mut self, msg: Datagram, _ctx: &mut Ctx<Self>) {
        let Some(seq) = feed::peek_seq(msg.bytes()) else {
            self.runts += 1;
            return;
        };
        let decoder = self.decoder.as_ref().expect("wired");
        self.arb.offer(seq, msg, |d| {
            let _ = decoder.fast_send(d);
        });
    }

    #[handler(EndOfFeed)]
    fn end(&mut self, _msg: EndOfFeed, _ctx: &mut Ctx<Self>) {
        let decoder = self.decoder.as_ref().expect("wired");
        self.arb.flush(|d| {
            let _ = decoder.fast_send(d);
        });
    }

    /// (stats, lost ranges, next expected sequence number, datagrams too
    /// short to carry a sequence number).
    #[handler(Counters)]
    fn counters(
        &mut self,
        _msg: Counters,
        _ctx: &mut Ctx<Self>,
    ) -> (ArbiterStats, Vec<(u32, u32)>, u32, u64) {
        (
            self.arb.stats(),
            self.arb.gap_ranges().to_vec(),
            self.arb.next_expected(),
            self.runts,
        )
    }
}

/// Applies one decoded entry to the book.
pub struct Apply(pub Entry);

/// A message's entries are all applied: publish it.
pub struct Publish {
    /// Which stream the message belongs to.
    pub stream: Stream,
    /// Its instrument.
    pub security_id: i32,
    /// Its datagram's socket time.
    pub t0: u64,
    /// Its position in the packet.
    pub idx: u8,
    /// Its datagram's queue length.
    pub qlen: u32,
}

/// SBE decode: validates the packet, then hands each message's entries to
/// the book and publishes it.
#[actor]
#[derive(Default)]
pub struct Decoder {
    book: Option<Addr<BookBuilder>>,
    packets: u64,
    messages: u64,
    errors: u64,
}

#[actor]
impl Decoder {
    #[handler(ToBook)]
    fn wire(&mut self, msg: ToBook, _ctx: &mut Ctx<Self>) {
        self.book = Some(msg.0);
    }

    #[handler(Datagram)]
    fn datagram(&mut self, msg: Datagram, _ctx: &mut Ctx<Self>) {
        let packet = match Packet::parse(msg.bytes()) {
            Ok(p) => p,
            Err(_) => {
                // Counted and skipped as a whole: nothing of it is applied.
                self.errors += 1;
                return;
            }
        };
        self.packets += 1;
        let book = self.book.as_ref().expect("wired");
        for (idx, m) in packet.messages().enumerate() {
            let mut security_id = 0;
            for e in m.entries() {
                security_id = e.security_id();
                let _ = book.fast_send(Apply(e));
            }
            let _ = book.fast_send(Publish {
                stream: m.stream,
                security_id,
                t0: msg.t0,
                idx: idx.min(u8::MAX as usize) as u8,
                qlen: msg.qlen,
            });
            self.messages += 1;
        }
    }

    /// (packets decoded, messages published, malformed datagrams).
    #[handler(Counters)]
    fn counters(&mut self, _msg: Counters, _ctx: &mut Ctx<Self>) -> (u64, u64, u64) {
        (self.packets, self.messages, self.errors)
    }
}

/// The order books, and the latency record of every published update.
#[actor]
pub struct BookBuilder {
    book: Book,
    records: Vec<Record>,
    signal: Option<Addr<Signal>>,
    refused: u64,
}

impl BookBuilder {
    /// Empty books for `security_ids`, room for `records` records before
    /// the record buffer grows.
    pub fn new(security_ids: &[i32], records: usize) -> Self {
        BookBuilder {
            book: Book::new(security_ids),
            records: Vec::with_capacity(records),
            signal: None,
            refused: 0,
        }
    }
}

/// What the book publishes to the signal.
pub struct TopOfBook {
    /// Which stream moved it.
    pub stream: Stream,
    /// The instrument.
    pub security_id: i32,
    /// Best bid.
    pub bid: Option<Level>,
    /// Best ask.
    pub ask: Option<Level>,
    /// Last trade.
    pub last_trade: Option<Level>,
}

#[actor]
impl BookBuilder {
    #[handler(ToSignal)]
    fn wire(&mut self, msg: ToSignal, _ctx: &mut Ctx<Self>) {
        self.signal = Some(msg.0);
    }

    #[handler(Apply)]
    fn apply(&mut self, msg: Apply, _ctx: &mut Ctx<Self>) {
        if self.book.apply(&msg.0).is_err() {
            self.refused += 1;
        }
    }

    #[handler(Publish)]
    fn publish(&mut self, msg: Publish, ctx: &mut Ctx<Self>) {
        let t1 = ctx.now().as_nanos();
        self.records.push(Record {
            t0: msg.t0,
            latency_ns: t1.saturating_sub(msg.t0),
            stream: msg.stream,
            idx: msg.idx,
            qlen: msg.qlen,
        });
        let (Some(signal), Some(inst)) = (&self.signal, self.book.instrument(msg.security_id))
        else {
            return;
        };
        let _ = signal.fast_send(TopOfBook {
            stream: msg.stream,
            security_id: msg.security_id,
            bid: inst.bids.best(),
            ask: inst.asks.best(),
            last_trade: inst.last_trade,
        });
    }

    /// (the book, every record so far, entries refused).
    #[handler(TakeResults)]
    fn take(&mut self, _msg: TakeResults, _ctx: &mut Ctx<Self>) -> (Book, Vec<Record>, u64) {
        (
            self.book.clone(),
            std::mem::take(&mut self.records),
            self.refused,
        )
    }
}

/// An order for the order-management actor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Order {
    /// The instrument.
    pub security_id: i32,
    /// Buy or sell.
    pub side: feed::Side,
    /// Limit price.
    pub price: i64,
    /// Quantity.
    pub size: i32,
}

/// A toy signal: after a large trade, join the side that traded at the
/// touch. Its only job here is to sit at the end of the chain and to reach
/// the order-out thread by `send`.
#[actor]
#[derive(Default)]
pub struct Signal {
    order_out: Option<Addr<OrderOut>>,
    updates: u64,
    orders: u64,
}

#[actor]
impl Signal {
    #[handler(ToOrderOut)]
    fn wire(&mut self, msg: ToOrderOut, _ctx: &mut Ctx<Self>) {
        self.order_out = Some(msg.0);
    }

    #[handler(TopOfBook)]
    fn top(&mut self, msg: TopOfBook, _ctx: &mut Ctx<Self>) {
        self.updates += 1;
        if msg.stream != Stream::Trade {
            return;
        }
        let (Some(trade), Some(bid), Some(ask), Some(out)) =
            (msg.last_trade, msg.bid, msg.ask, &self.order_out)
        else {
            return;
        };
        if trade.size >= 190 {
            let side = if trade.price >= ask.price {
                feed::Side::Bid
            } else {
                feed::Side::Ask
            };
            let price = if side == feed::Side::Bid {
                bid.price
            } else {
                ask.price
            };
            // Asynchronous by design: the write must not stall the group.
            if out
                .send(Order {
                    security_id: msg.security_id,
                    side,
                    price,
                    size: 1,
                })
                .is_ok()
            {
                self.orders += 1;
            }
        }
    }

    /// (updates seen, orders sent).
    #[handler(Counters)]
    fn counters(&mut self, _msg: Counters, _ctx: &mut Ctx<Self>) -> (u64, u64) {
        (self.updates, self.orders)
    }
}

/// The decode-and-book group: the middle section of Figure 1, one thread.
#[group]
pub struct MarketData {
    /// The queue's service handler.
    pub buffer: Addr<Buffer>,
    /// A/B arbitration.
    pub arbiter: Addr<Arbiter>,
    /// SBE decode.
    pub decoder: Addr<Decoder>,
    /// The books and the latency records.
    pub book: Addr<BookBuilder>,
    /// The signal.
    pub signal: Addr<Signal>,
}

/// What the group saw, collected after a run.
#[derive(Debug)]
pub struct GroupResults {
    /// The books at the end.
    pub book: Book,
    /// One record per published message.
    pub records: Vec<Record>,
    /// Datagrams the buffer received.
    pub received: u64,
    /// Datagrams the chain refused (a runtime error, expected 0).
    pub chain_errors: u64,
    /// Arbitration counters.
    pub arbiter: ArbiterStats,
    /// Sequence numbers declared lost, half-open ranges.
    pub gap_ranges: Vec<(u32, u32)>,
    /// The next sequence number the arbiter expects.
    pub next_expected: u32,
    /// Datagrams shorter than a packet header.
    pub runts: u64,
    /// Packets decoded.
    pub packets: u64,
    /// Messages published.
    pub messages: u64,
    /// Malformed datagrams skipped.
    pub decode_errors: u64,
    /// Entries the book refused.
    pub book_refused: u64,
    /// Top-of-book updates the signal saw.
    pub signal_updates: u64,
    /// Orders the signal sent.
    pub orders: u64,
}

impl MarketData {
    /// Starts the group with `mailbox` as its one queue, and wires the
    /// chain (and the signal to `order_out`, if given).
    pub fn launch(
        system: &System,
        mailbox: MailboxKind,
        security_ids: &[i32],
        records: usize,
        order_out: Option<&Addr<OrderOut>>,
    ) -> MarketData {
        let g = system
            .spawn_group::<MarketData>(Self::members(security_ids, records))
            .mailbox(mailbox)
            .start();
        g.wire(order_out);
        g
    }

    /// The members' initial states: empty books for `security_ids`, room
    /// for `records` records. The live group and the simulated one start
    /// from these.
    pub fn members(
        security_ids: &[i32],
        records: usize,
    ) -> <MarketData as kaspar::GroupSpec>::Members {
        (
            Buffer::default(),
            Arbiter::default(),
            Decoder::default(),
            BookBuilder::new(security_ids, records),
            Signal::default(),
        )
    }

    /// Wires the chain, and the signal to `order_out` if given.
    pub fn wire(&self, order_out: Option<&Addr<OrderOut>>) {
        let wired = "a fresh group accepts its wiring";
        self.buffer
            .fast_send(ToArbiter(self.arbiter.clone()))
            .expect(wired);
        self.arbiter
            .fast_send(ToDecoder(self.decoder.clone()))
            .expect(wired);
        self.decoder
            .fast_send(ToBook(self.book.clone()))
            .expect(wired);
        self.book
            .fast_send(ToSignal(self.signal.clone()))
            .expect(wired);
        if let Some(out) = order_out {
            self.signal.fast_send(ToOrderOut(out.clone())).expect(wired);
        }
    }

    /// Turns on the buffer's arrival journal (call before the first
    /// datagram), with room for `datagrams` datagrams.
    pub fn journal(&self, datagrams: usize) {
        self.buffer
            .fast_send(StartJournal { datagrams })
            .expect("the group is running");
    }

    /// Takes the arrival journal (empty if it was never turned on).
    pub fn take_arrivals(&self) -> ArrivalLog {
        self.buffer
            .fast_send(TakeArrivals)
            .expect("the group is running")
    }

    /// Ends the feed: waits until everything queued before this call has
    /// been handled (a message from this thread queues behind every
    /// datagram already sent: the group's one queue gives one order), then
    /// lets the arbiter pass on what it still holds. With a sharded
    /// mailbox, which orders nothing between senders, first wait until the
    /// other senders' datagrams have been picked up.
    pub fn end_of_feed(&self) {
        if let Ok(ask) = self.buffer.ask(Counters) {
            let _ = ask.wait();
        }
        let _ = self.arbiter.fast_send(EndOfFeed);
    }

    /// Collects the books, the records and every counter.
    pub fn results(&self) -> GroupResults {
        let alive = "the group is running";
        let (received, chain_errors) = self.buffer.fast_send(Counters).expect(alive);
        let (arbiter, gap_ranges, next_expected, runts) =
            self.arbiter.fast_send(Counters).expect(alive);
        let (packets, messages, decode_errors) = self.decoder.fast_send(Counters).expect(alive);
        let (book, records, book_refused) = self.book.fast_send(TakeResults).expect(alive);
        let (signal_updates, orders) = self.signal.fast_send(Counters).expect(alive);
        GroupResults {
            book,
            records,
            received,
            chain_errors,
            arbiter,
            gap_ranges,
            next_expected,
            runts,
            packets,
            messages,
            decode_errors,
            book_refused,
            signal_updates,
            orders,
        }
    }
}

// ---- order out -----------------------------------------------------------

/// Every order an [`OrderOut`] received, in the order it received them.
pub type OrderLog = Arc<Mutex<Vec<Order>>>;

/// Order management: encodes each order and writes it to the exchange
/// session (a loopback UDP socket standing in for iLink's TCP), and/or
/// records it in an [`OrderLog`].
#[actor]
pub struct OrderOut {
    session: Option<(UdpSocket, SocketAddr)>,
    log: Option<OrderLog>,
    sent: u64,
}

impl OrderOut {
    /// Writes orders to `to`.
    pub fn new(to: SocketAddr) -> io::Result<Self> {
        Ok(OrderOut {
            session: Some((UdpSocket::bind("127.0.0.1:0")?, to)),
            log: None,
            sent: 0,
        })
    }

    /// Records orders in `log` and writes them nowhere: the order side of
    /// a simulation.
    pub fn recording(log: OrderLog) -> Self {
        OrderOut {
            session: None,
            log: Some(log),
            sent: 0,
        }
    }

    /// Also records every order in `log`.
    pub fn with_log(mut self, log: OrderLog) -> Self {
        self.log = Some(log);
        self
    }
}

#[actor]
impl OrderOut {
    #[handler(Order)]
    fn order(&mut self, msg: Order, _ctx: &mut Ctx<Self>) {
        if let Some(log) = &self.log {
            log.lock().unwrap_or_else(|e| e.into_inner()).push(msg);
        }
        let Some((socket, to)) = &self.session else {
            return;
        };
        let mut wire = [0u8; 17];
        wire[..4].copy_from_slice(&msg.security_id.to_le_bytes());
        wire[4] = (msg.side == feed::Side::Ask) as u8;
        wire[5..13].copy_from_slice(&msg.price.to_le_bytes());
        wire[13..].copy_from_slice(&msg.size.to_le_bytes());
        if socket.send_to(&wire, *to).is_ok() {
            self.sent += 1;
        }
    }

    #[handler(Counters)]
    fn counters(&mut self, _msg: Counters, _ctx: &mut Ctx<Self>) -> u64 {
        self.sent
    }
}

// ---- capture -------------------------------------------------------------

/// How a reader hands datagrams to the group.
#[derive(Debug)]
pub enum Route {
    /// `fast_send`: the reader's thread runs the group chain (one-thread).
    Inline(Addr<Buffer>),
    /// `send` through the group's mailbox (two-stage), counting datagrams
    /// in flight to measure `qlen`.
    Queued {
        /// The group's entry.
        buffer: Addr<Buffer>,
        /// Datagrams sent and not yet picked up.
        in_flight: Arc<AtomicU32>,
    },
}

/// Drain the socket until the stop flag is set and the socket is idle.
pub struct ReadUntilStopped;

/// What a reader did.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReaderStats {
    /// Datagrams read.
    pub datagrams: u64,
    /// Datagrams the hand-off refused (mailbox full or closed).
    pub refused: u64,
    /// Socket errors other than the read timeout.
    pub socket_errors: u64,
}

/// A socket reader: one per feed, on its own thread.
#[actor]
pub struct SocketReader {
    socket: UdpSocket,
    feed: FeedId,
    route: Route,
    stop: Arc<AtomicBool>,
    spare: Option<Buf>,
}

impl SocketReader {
    /// A reader of `socket` (whose read timeout bounds how long a stop
    /// request waits) for `feed`.
    pub fn new(socket: UdpSocket, feed: FeedId, route: Route, stop: Arc<AtomicBool>) -> Self {
        SocketReader {
            socket,
            feed,
            route,
            stop,
            spare: None,
        }
    }
}

#[actor]
impl SocketReader {
    /// Loops on the socket; returns when stopped. The reader's thread does
    /// nothing else, so blocking it here is its job.
    #[handler(ReadUntilStopped)]
    fn read(&mut self, _msg: ReadUntilStopped, ctx: &mut Ctx<Self>) -> ReaderStats {
        let mut stats = ReaderStats::default();
        loop {
            // The next buffer is drawn before the read, off the timed path.
            let mut buf = self.spare.take().unwrap_or_else(new_buf);
            match self.socket.recv(&mut buf[..]) {
                Ok(n) => {
                    let t0 = ctx.now().as_nanos();
                    stats.datagrams += 1;
                    let mut d = Datagram {
                        buf,
                        len: n as u16,
                        feed: self.feed,
                        t0,
                        qlen: QLEN_NONE,
                        ticket: None,
                    };
                    let handed = match &self.route {
                        Route::Inline(buffer) => buffer.fast_send(d).is_ok(),
                        Route::Queued { buffer, in_flight } => {
                            let (ticket, waiting) = InFlight::enter(in_flight);
                            d.qlen = waiting;
                            d.ticket = Some(ticket);
                            buffer.send(d).is_ok()
                        }
                    };
                    if !handed {
                        stats.refused += 1;
                    }
                }
                Err(e) => {
                    self.spare = Some(buf);
                    if !matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) {
                        stats.socket_errors += 1;
                    }
                    if self.stop.load(Ordering::Acquire) {
                        break;
                    }
                }
            }
        }
        stats
    }
}
