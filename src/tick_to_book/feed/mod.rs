//! The feed: a binary encoding modelled on CME MDP 3.0 / SBE, a
//! market-by-price order book, and A/B arbitration.
//!
//! Nothing here knows about actors or sockets; the generator, the pipeline,
//! the example, the tests and the fuzz target all share it. One file per
//! job:
//!
//! * `wire.rs`: the wire format, its constants and the decoded vocabulary
//!   ([`Entry`], [`Stream`], [`Side`], [`Action`]);
//! * `decode.rs`: the validating decoder, [`Packet::parse`], and
//!   [`peek_seq`];
//! * `encode.rs`: the encoder, [`PacketWriter`];
//! * `order_book.rs`: the market-by-price [`Book`];
//! * `ab_arbitration.rs`: A/B line arbitration, [`Arbiter`];
//! * here: [`exercise`], everything a receiver does with one datagram.
//!
//! Everything is re-exported here, so users name it `feed::Book`,
//! `feed::Packet` and so on.

mod ab_arbitration;
mod decode;
mod encode;
mod order_book;
mod wire;

pub use self::{
    ab_arbitration::{Arbiter, ArbiterStats, ARBITRATION_WINDOW},
    decode::{peek_seq, DecodeError, Message, Messages, Packet},
    encode::PacketWriter,
    order_book::{Book, BookError, Instrument, Ladder, Level},
    wire::{
        Action, BookEntry, Entry, Side, Stream, TradeEntry, BOOK_ENTRY_LEN, DEPTH,
        GROUP_HEADER_LEN, MAX_DATAGRAM, MAX_MESSAGES, MESSAGE_HEADER_LEN, PACKET_HEADER_LEN,
        ROOT_BLOCK_LEN, SCHEMA_ID, SCHEMA_VERSION, TEMPLATE_BOOK, TEMPLATE_TRADE, TRADE_ENTRY_LEN,
    },
};

/// What [`exercise`] found in a datagram that parsed.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Exercised {
    /// Messages in the packet.
    pub messages: usize,
    /// Entries in all its messages.
    pub entries: usize,
    /// Entries the book refused.
    pub refused: usize,
}

/// Parses `bytes`, walks every entry and applies it to `book`: everything a
/// receiver does with a datagram. Shared by the randomized test and the
/// cargo-fuzz target; it must never panic.
pub fn exercise(bytes: &[u8], book: &mut Book) -> Result<Exercised, DecodeError> {
    let packet = Packet::parse(bytes)?;
    let mut out = Exercised::default();
    for msg in packet.messages() {
        out.messages += 1;
        let mut n = 0;
        for e in msg.entries() {
            n += 1;
            if book.apply(&e).is_err() {
                out.refused += 1;
            }
        }
        assert_eq!(n, msg.entry_count(), "a validated group yields every entry");
        out.entries += n;
    }
    assert_eq!(out.messages, packet.message_count());
    Ok(out)
}
