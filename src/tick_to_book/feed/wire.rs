//! The wire format: a binary encoding modelled on CME MDP 3.0 / SBE, its
//! constants, and the values it carries once decoded (entries, streams).
//!
//! # Wire format (all integers little-endian)
//!
//! ```text
//! packet   := packet header, message+              (at most 1500 bytes)
//! header   := seq u32, sending_time u64            (12 bytes)
//! message  := message size u16 (counts itself), SBE header,
//!             root block, group header, entry*
//! SBE hdr  := block length u16, template id u16, schema id u16, version u16
//! root     := transact_time u64, match_event_indicator u8   (block length >= 9)
//! group    := entry block length u16, count u8
//! book     := price i64, size i32, security id i32, level u8, side u8, action u8 (>= 19)
//! trade    := price i64, size i32, security id i32, aggressor side u8           (>= 17)
//! ```
//!
//! As in SBE, a block length larger than the one this decoder knows is an
//! extension and its extra bytes are skipped; a smaller one is an error.
//! [`Packet::parse`](super::Packet::parse) validates a whole datagram
//! before anything reads it, so a malformed datagram is rejected as a unit
//! and never half-applied. The encoder ([`PacketWriter`](super::PacketWriter))
//! writes exactly the block lengths below.

/// The schema every message must carry.
pub const SCHEMA_ID: u16 = 1;
/// The schema version the encoder writes.
pub const SCHEMA_VERSION: u16 = 9;
/// Template of an incremental book update (MDIncrementalRefreshBook).
pub const TEMPLATE_BOOK: u16 = 46;
/// Template of a trade summary (MDIncrementalRefreshTradeSummary).
pub const TEMPLATE_TRADE: u16 = 48;
/// Bytes of the packet header: sequence number and sending time.
pub const PACKET_HEADER_LEN: usize = 12;
/// Bytes of the message size field plus the SBE message header.
pub const MESSAGE_HEADER_LEN: usize = 10;
/// The root block this decoder knows: transact time and match-event flags.
pub const ROOT_BLOCK_LEN: u16 = 9;
/// Bytes of a repeating group header: entry block length and count.
pub const GROUP_HEADER_LEN: usize = 3;
/// The book entry this decoder knows.
pub const BOOK_ENTRY_LEN: u16 = 19;
/// The trade entry this decoder knows.
pub const TRADE_ENTRY_LEN: u16 = 17;
/// The largest datagram the feed sends.
pub const MAX_DATAGRAM: usize = 1500;
/// The most messages the feed coalesces into one packet.
pub const MAX_MESSAGES: usize = 45;
/// Price levels kept per side (CME's MBP depth for futures).
pub const DEPTH: usize = 10;

/// Which side of the book (for trades: the aggressor's side).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Side {
    /// Buy side.
    Bid,
    /// Sell side.
    Ask,
}

/// What a book entry does at its level.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Action {
    /// Insert a level, shifting the deeper ones down.
    New,
    /// Replace the level's price and size.
    Change,
    /// Remove the level, shifting the deeper ones up.
    Delete,
}

/// One entry of a book-update message's repeating group.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct BookEntry {
    /// Price in units of 1e-9.
    pub price: i64,
    /// Quantity at the level.
    pub size: i32,
    /// The instrument.
    pub security_id: i32,
    /// Price level, 1 = best.
    pub level: u8,
    /// Bid or ask.
    pub side: Side,
    /// New, change or delete.
    pub action: Action,
}

/// One entry of a trade message's repeating group.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct TradeEntry {
    /// Price in units of 1e-9.
    pub price: i64,
    /// Quantity traded.
    pub size: i32,
    /// The instrument.
    pub security_id: i32,
    /// The side that crossed the spread.
    pub aggressor: Side,
}

/// A decoded group entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Entry {
    /// A book update.
    Book(BookEntry),
    /// A trade.
    Trade(TradeEntry),
}

impl Entry {
    /// The instrument the entry is about.
    pub fn security_id(&self) -> i32 {
        match self {
            Entry::Book(e) => e.security_id,
            Entry::Trade(e) => e.security_id,
        }
    }
}

/// The two latency streams of the report, one per template.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Stream {
    /// Book-update messages.
    Book,
    /// Trade messages.
    Trade,
}

impl Stream {
    /// Both streams, in report order.
    pub const ALL: [Stream; 2] = [Stream::Book, Stream::Trade];

    /// `book` or `trade`.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Book => "book",
            Stream::Trade => "trade",
        }
    }

    pub(super) fn template(self) -> u16 {
        match self {
            Stream::Book => TEMPLATE_BOOK,
            Stream::Trade => TEMPLATE_TRADE,
        }
    }
}
