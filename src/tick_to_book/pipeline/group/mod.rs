//! The decode-and-book group, [`MarketData`]: the middle section of
//! Figure 1, one `#[group]` on one thread. Each member is in its own file,
//! with the messages it handles:
//!
//! * `buffer.rs`: [`Buffer`], the queue's service handler and the arrival
//!   journal's writer;
//! * `arbiter.rs`: [`Arbiter`], A/B arbitration;
//! * `decoder.rs`: [`Decoder`], SBE decode;
//! * `book_builder.rs`: [`BookBuilder`], the books and the latency
//!   [`Record`]s;
//! * `signal.rs`: [`Signal`], the toy signal.
//!
//! Here: the group itself, how it is started, wired, ended and queried,
//! and [`GroupResults`]. The live group and the simulated one start from
//! the same [`MarketData::members`] and are wired by the same
//! [`MarketData::wire`].

mod arbiter;
mod book_builder;
mod buffer;
mod decoder;
mod signal;

pub use arbiter::{Arbiter, EndOfFeed, ToDecoder};
pub use book_builder::{BookBuilder, Record, TakeResults, ToSignal, TopOfBook};
pub use buffer::{Buffer, StartJournal, TakeArrivals, ToArbiter};
pub use decoder::{Apply, Decoder, Publish, ToBook};
pub use signal::{Signal, ToOrderOut};

use kaspar::prelude::*;

use crate::tick_to_book::feed::{ArbiterStats, Book};
use crate::tick_to_book::pipeline::{ArrivalLog, Counters, OrderOut};

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
