//! The [`Decoder`]: validates each packet whole ([`Packet::parse`]), then
//! hands its messages' entries to the book one by one ([`Apply`]) and
//! publishes each message ([`Publish`]). A malformed datagram is counted
//! and nothing of it is applied.

use kaspar::prelude::*;

use super::BookBuilder;
use crate::tick_to_book::feed::{Entry, Packet, Stream};
use crate::tick_to_book::pipeline::{Counters, Datagram};

/// Connects the decoder to the book.
pub struct ToBook(pub Addr<BookBuilder>);

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
    /// Its packet's sequence number.
    pub seq: u32,
    /// Its position in the packet.
    pub idx: u8,
    /// Messages in its packet.
    pub span: u8,
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
        let span = packet.message_count().min(u8::MAX as usize) as u8;
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
                seq: packet.seq,
                idx: idx.min(u8::MAX as usize) as u8,
                span,
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
