//! The [`BookBuilder`]: applies entries to the order books and, when a
//! message is published, takes `t1` (the group's only clock read) for its
//! latency [`Record`] and passes the top of book to the signal. Nothing
//! but the record depends on the clock.

use kaspar::prelude::*;

use super::{Apply, Publish, Signal};
use crate::tick_to_book::feed::{Book, Level, Stream};

/// One published book update, as measured.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    /// When its datagram came up from the socket (ns since the epoch).
    pub t0: u64,
    /// `t1 - t0`: socket to book published.
    pub latency_ns: u64,
    /// Book or trade.
    pub stream: Stream,
    /// The message's instrument: with `stream`, which of the report's
    /// streams it belongs to.
    pub security_id: i32,
    /// Its packet's sequence number.
    pub seq: u32,
    /// Position of the message in its packet (0 = first).
    pub idx: u8,
    /// Messages in its packet (1: the message was alone).
    pub span: u8,
    /// Datagrams waiting ahead of its datagram, or
    /// [`QLEN_NONE`](crate::tick_to_book::pipeline::QLEN_NONE).
    pub qlen: u32,
}

/// Connects the book to the signal.
pub struct ToSignal(pub Addr<Signal>);

/// Takes the book and the records out of the book builder.
pub struct TakeResults;

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
            security_id: msg.security_id,
            seq: msg.seq,
            idx: msg.idx,
            span: msg.span,
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
