//! The feed: a binary encoding modelled on CME MDP 3.0 / SBE, a
//! market-by-price order book, and A/B arbitration.
//!
//! Nothing here knows about actors or sockets; the generator, the pipeline,
//! the tests and the fuzz target all share it.
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
//! [`Packet::parse`] validates a whole datagram before anything reads it,
//! so a malformed datagram is rejected as a unit and never half-applied.

use std::fmt;

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

    fn template(self) -> u16 {
        match self {
            Stream::Book => TEMPLATE_BOOK,
            Stream::Trade => TEMPLATE_TRADE,
        }
    }
}

/// Why a datagram was rejected. Every variant names the byte offset in the
/// datagram where decoding stopped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DecodeError {
    /// The datagram ends inside a header, block or group.
    Truncated {
        /// Offset of the structure that did not fit.
        at: usize,
    },
    /// A packet header with no message after it.
    Empty,
    /// A message size smaller than its own header.
    BadMessageSize {
        /// Offset of the message.
        at: usize,
    },
    /// A schema id other than [`SCHEMA_ID`].
    BadSchema {
        /// Offset of the message.
        at: usize,
        /// The schema id found.
        schema: u16,
    },
    /// A template id this decoder does not know.
    BadTemplate {
        /// Offset of the message.
        at: usize,
        /// The template id found.
        template: u16,
    },
    /// A root or entry block length smaller than the known layout.
    BadBlockLength {
        /// Offset of the block length field.
        at: usize,
        /// The block length found.
        len: u16,
    },
    /// A group whose entries run past the end of their message.
    GroupOverrun {
        /// Offset of the group header.
        at: usize,
        /// The entry count found.
        count: u8,
    },
    /// A side, action or level byte outside its range.
    BadField {
        /// Offset of the entry.
        at: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { at } => write!(f, "truncated at byte {at}"),
            DecodeError::Empty => f.write_str("packet without messages"),
            DecodeError::BadMessageSize { at } => write!(f, "bad message size at byte {at}"),
            DecodeError::BadSchema { at, schema } => {
                write!(f, "schema {schema} at byte {at}, expected {SCHEMA_ID}")
            }
            DecodeError::BadTemplate { at, template } => {
                write!(f, "unknown template {template} at byte {at}")
            }
            DecodeError::BadBlockLength { at, len } => {
                write!(f, "block length {len} too small at byte {at}")
            }
            DecodeError::GroupOverrun { at, count } => {
                write!(f, "group of {count} at byte {at} runs past its message")
            }
            DecodeError::BadField { at } => write!(f, "bad enum field in entry at byte {at}"),
        }
    }
}

impl std::error::Error for DecodeError {}

#[inline]
fn u16_at(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(s) => u16::from_le_bytes([s[0], s[1]]),
        None => 0,
    }
}

#[inline]
fn u32_at(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

#[inline]
fn u64_at(b: &[u8], at: usize) -> u64 {
    match b.get(at..at + 8) {
        Some(s) => u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]),
        None => 0,
    }
}

/// The sequence number of a datagram, read without validating the rest:
/// what arbitration needs. `None` if the datagram is shorter than a packet
/// header.
#[inline]
pub fn peek_seq(datagram: &[u8]) -> Option<u32> {
    (datagram.len() >= PACKET_HEADER_LEN).then(|| u32_at(datagram, 0))
}

/// A validated datagram: every message in it is well formed.
#[derive(Clone, Copy, Debug)]
pub struct Packet<'a> {
    /// Packet sequence number (per channel, starts at 1).
    pub seq: u32,
    /// When the exchange sent it, nanoseconds since the Unix epoch.
    pub sending_time: u64,
    bytes: &'a [u8],
    messages: usize,
}

impl<'a> Packet<'a> {
    /// Validates the whole datagram. Never panics, whatever the bytes.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        if bytes.len() < PACKET_HEADER_LEN {
            return Err(DecodeError::Truncated { at: 0 });
        }
        let mut at = PACKET_HEADER_LEN;
        let mut messages = 0;
        while at < bytes.len() {
            at += check_message(bytes, at)?;
            messages += 1;
        }
        if messages == 0 {
            return Err(DecodeError::Empty);
        }
        Ok(Packet {
            seq: u32_at(bytes, 0),
            sending_time: u64_at(bytes, 4),
            bytes,
            messages,
        })
    }

    /// How many messages the packet holds (at least one).
    pub fn message_count(&self) -> usize {
        self.messages
    }

    /// The messages, in wire order.
    pub fn messages(&self) -> Messages<'a> {
        Messages {
            bytes: self.bytes,
            at: PACKET_HEADER_LEN,
        }
    }
}

/// Checks the message at `at`; returns its size.
fn check_message(b: &[u8], at: usize) -> Result<usize, DecodeError> {
    if b.len() - at < MESSAGE_HEADER_LEN {
        return Err(DecodeError::Truncated { at });
    }
    let size = u16_at(b, at) as usize;
    let block_len = u16_at(b, at + 2);
    let template = u16_at(b, at + 4);
    let schema = u16_at(b, at + 6);
    if size < MESSAGE_HEADER_LEN {
        return Err(DecodeError::BadMessageSize { at });
    }
    if size > b.len() - at {
        return Err(DecodeError::Truncated { at });
    }
    if schema != SCHEMA_ID {
        return Err(DecodeError::BadSchema { at, schema });
    }
    let entry_min = match template {
        TEMPLATE_BOOK => BOOK_ENTRY_LEN,
        TEMPLATE_TRADE => TRADE_ENTRY_LEN,
        template => return Err(DecodeError::BadTemplate { at, template }),
    };
    if block_len < ROOT_BLOCK_LEN {
        return Err(DecodeError::BadBlockLength {
            at: at + 2,
            len: block_len,
        });
    }
    let group = at + MESSAGE_HEADER_LEN + block_len as usize;
    let end = at + size;
    if group + GROUP_HEADER_LEN > end {
        return Err(DecodeError::Truncated { at: group });
    }
    let entry_len = u16_at(b, group);
    let count = b[group + 2];
    if entry_len < entry_min {
        return Err(DecodeError::BadBlockLength {
            at: group,
            len: entry_len,
        });
    }
    let first = group + GROUP_HEADER_LEN;
    if first + entry_len as usize * count as usize > end {
        return Err(DecodeError::GroupOverrun { at: group, count });
    }
    for i in 0..count as usize {
        let e = first + i * entry_len as usize;
        let ok = if template == TEMPLATE_BOOK {
            (1..=DEPTH as u8).contains(&b[e + 16]) && b[e + 17] <= 1 && b[e + 18] <= 2
        } else {
            b[e + 16] <= 1
        };
        if !ok {
            return Err(DecodeError::BadField { at: e });
        }
    }
    Ok(size)
}

/// Iterator over a validated packet's messages.
#[derive(Clone, Debug)]
pub struct Messages<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Messages<'a> {
    type Item = Message<'a>;

    fn next(&mut self) -> Option<Message<'a>> {
        let b = self.bytes;
        let at = self.at;
        if at + MESSAGE_HEADER_LEN > b.len() {
            return None;
        }
        let size = (u16_at(b, at) as usize).max(MESSAGE_HEADER_LEN);
        let block_len = u16_at(b, at + 2) as usize;
        let stream = if u16_at(b, at + 4) == TEMPLATE_TRADE {
            Stream::Trade
        } else {
            Stream::Book
        };
        let root = at + MESSAGE_HEADER_LEN;
        let group = root + block_len;
        self.at = at + size;
        Some(Message {
            stream,
            transact_time: u64_at(b, root),
            entry_len: u16_at(b, group) as usize,
            count: b.get(group + 2).copied().unwrap_or(0),
            entries: b.get(group + GROUP_HEADER_LEN..).unwrap_or(&[]),
        })
    }
}

/// One message of a validated packet.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    /// Book update or trade.
    pub stream: Stream,
    /// When the matching engine processed the event.
    pub transact_time: u64,
    entry_len: usize,
    count: u8,
    entries: &'a [u8],
}

impl Message<'_> {
    /// Number of group entries.
    pub fn entry_count(&self) -> usize {
        self.count as usize
    }

    /// The group entries, in wire order.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        (0..self.count as usize).filter_map(move |i| {
            let e = self.entries.get(i * self.entry_len..)?;
            let (price, size, security_id) = (
                u64_at(e, 0) as i64,
                u32_at(e, 8) as i32,
                u32_at(e, 12) as i32,
            );
            let side = |v: u8| if v == 0 { Side::Bid } else { Side::Ask };
            Some(match self.stream {
                Stream::Book => Entry::Book(BookEntry {
                    price,
                    size,
                    security_id,
                    level: *e.get(16)?,
                    side: side(*e.get(17)?),
                    action: match e.get(18)? {
                        0 => Action::New,
                        1 => Action::Change,
                        _ => Action::Delete,
                    },
                }),
                Stream::Trade => Entry::Trade(TradeEntry {
                    price,
                    size,
                    security_id,
                    aggressor: side(*e.get(16)?),
                }),
            })
        })
    }
}

/// Builds one packet in place. Refuses (returns `false`) a message that
/// would take the packet past [`MAX_DATAGRAM`] bytes or [`MAX_MESSAGES`].
#[derive(Clone, Debug)]
pub struct PacketWriter {
    buf: Vec<u8>,
    messages: usize,
}

impl Default for PacketWriter {
    fn default() -> Self {
        PacketWriter {
            buf: Vec::with_capacity(MAX_DATAGRAM),
            messages: 0,
        }
    }
}

impl PacketWriter {
    /// Starts a new packet, discarding the previous one.
    pub fn begin(&mut self, seq: u32, sending_time: u64) {
        self.buf.clear();
        self.buf.extend_from_slice(&seq.to_le_bytes());
        self.buf.extend_from_slice(&sending_time.to_le_bytes());
        self.messages = 0;
    }

    /// Messages written since `begin`.
    pub fn message_count(&self) -> usize {
        self.messages
    }

    /// The packet so far.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Encoded size of a message of `stream` with `entries` entries.
    pub fn message_len(stream: Stream, entries: usize) -> usize {
        let entry = match stream {
            Stream::Book => BOOK_ENTRY_LEN,
            Stream::Trade => TRADE_ENTRY_LEN,
        } as usize;
        MESSAGE_HEADER_LEN + ROOT_BLOCK_LEN as usize + GROUP_HEADER_LEN + entry * entries
    }

    /// Whether a message of `stream` with `entries` entries still fits.
    pub fn fits(&self, stream: Stream, entries: usize) -> bool {
        self.messages < MAX_MESSAGES
            && self.buf.len() + Self::message_len(stream, entries) <= MAX_DATAGRAM
    }

    /// Appends one message whose entries all belong to `stream` (entries of
    /// the other kind are skipped). Returns `false`, writing nothing, if it
    /// does not fit or has more than 255 entries.
    pub fn push(&mut self, stream: Stream, transact_time: u64, entries: &[Entry]) -> bool {
        let n = entries
            .iter()
            .filter(|e| {
                matches!(
                    (stream, e),
                    (Stream::Book, Entry::Book(_)) | (Stream::Trade, Entry::Trade(_))
                )
            })
            .count();
        if n > u8::MAX as usize || !self.fits(stream, n) {
            return false;
        }
        let b = &mut self.buf;
        b.extend_from_slice(&(Self::message_len(stream, n) as u16).to_le_bytes());
        b.extend_from_slice(&ROOT_BLOCK_LEN.to_le_bytes());
        b.extend_from_slice(&stream.template().to_le_bytes());
        b.extend_from_slice(&SCHEMA_ID.to_le_bytes());
        b.extend_from_slice(&SCHEMA_VERSION.to_le_bytes());
        b.extend_from_slice(&transact_time.to_le_bytes());
        b.push(0x80); // match-event indicator: end of event
        let entry_len = match stream {
            Stream::Book => BOOK_ENTRY_LEN,
            Stream::Trade => TRADE_ENTRY_LEN,
        };
        b.extend_from_slice(&entry_len.to_le_bytes());
        b.push(n as u8);
        let side = |s: Side| if s == Side::Bid { 0u8 } else { 1 };
        for e in entries {
            match (stream, e) {
                (Stream::Book, Entry::Book(e)) => {
                    b.extend_from_slice(&e.price.to_le_bytes());
                    b.extend_from_slice(&e.size.to_le_bytes());
                    b.extend_from_slice(&e.security_id.to_le_bytes());
                    b.push(e.level);
                    b.push(side(e.side));
                    b.push(match e.action {
                        Action::New => 0,
                        Action::Change => 1,
                        Action::Delete => 2,
                    });
                }
                (Stream::Trade, Entry::Trade(e)) => {
                    b.extend_from_slice(&e.price.to_le_bytes());
                    b.extend_from_slice(&e.size.to_le_bytes());
                    b.extend_from_slice(&e.security_id.to_le_bytes());
                    b.push(side(e.aggressor));
                }
                _ => {}
            }
        }
        self.messages += 1;
        true
    }
}

/// One price level.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct Level {
    /// Price in units of 1e-9.
    pub price: i64,
    /// Quantity.
    pub size: i32,
}

/// One side of an instrument's book: up to [`DEPTH`] levels, best first.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct Ladder {
    levels: [Level; DEPTH],
    len: u8,
}

impl Ladder {
    /// The levels, best first.
    pub fn levels(&self) -> &[Level] {
        &self.levels[..self.len as usize]
    }

    /// The best level, if any.
    pub fn best(&self) -> Option<Level> {
        self.levels().first().copied()
    }

    fn apply(&mut self, level: u8, action: Action, lvl: Level) -> Result<(), BookError> {
        let i = level as usize;
        let len = self.len as usize;
        if i == 0 || i > DEPTH {
            return Err(BookError::BadLevel);
        }
        let i = i - 1;
        match action {
            Action::New => {
                if i > len {
                    return Err(BookError::BadLevel);
                }
                // A level pushed past the depth falls off, as on CME.
                let keep = len.min(DEPTH - 1);
                self.levels.copy_within(i..keep, i + 1);
                self.levels[i] = lvl;
                self.len = (keep + 1) as u8;
            }
            Action::Change => {
                if i >= len {
                    return Err(BookError::BadLevel);
                }
                self.levels[i] = lvl;
            }
            Action::Delete => {
                if i >= len {
                    return Err(BookError::BadLevel);
                }
                self.levels.copy_within(i + 1..len, i);
                self.levels[len - 1] = Level::default();
                self.len -= 1;
            }
        }
        Ok(())
    }
}

/// One instrument's book and trade tape summary.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct Instrument {
    /// The instrument.
    pub security_id: i32,
    /// Bid levels, best (highest) first.
    pub bids: Ladder,
    /// Ask levels, best (lowest) first.
    pub asks: Ladder,
    /// Price and size of the last trade.
    pub last_trade: Option<Level>,
    /// Trades seen.
    pub trades: u64,
    /// Quantity traded.
    pub volume: i64,
}

/// Why an entry was not applied. The book is unchanged.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BookError {
    /// No such instrument in this book.
    UnknownSecurity,
    /// A level outside `1..=DEPTH`, or past the side's current depth.
    BadLevel,
}

/// Market-by-price books for a fixed set of instruments.
#[derive(Clone, PartialEq, Eq, Debug, Hash)]
pub struct Book {
    instruments: Vec<Instrument>,
}

impl Book {
    /// Empty books for `security_ids`.
    pub fn new(security_ids: &[i32]) -> Self {
        Book {
            instruments: security_ids
                .iter()
                .map(|&security_id| Instrument {
                    security_id,
                    ..Instrument::default()
                })
                .collect(),
        }
    }

    /// Every instrument, in construction order.
    pub fn instruments(&self) -> &[Instrument] {
        &self.instruments
    }

    /// The instrument with `security_id`.
    pub fn instrument(&self, security_id: i32) -> Option<&Instrument> {
        self.instruments
            .iter()
            .find(|i| i.security_id == security_id)
    }

    /// Applies one entry. On error the book is unchanged.
    pub fn apply(&mut self, entry: &Entry) -> Result<(), BookError> {
        let id = entry.security_id();
        let inst = self
            .instruments
            .iter_mut()
            .find(|i| i.security_id == id)
            .ok_or(BookError::UnknownSecurity)?;
        match *entry {
            Entry::Book(e) => {
                let ladder = match e.side {
                    Side::Bid => &mut inst.bids,
                    Side::Ask => &mut inst.asks,
                };
                ladder.apply(
                    e.level,
                    e.action,
                    Level {
                        price: e.price,
                        size: e.size,
                    },
                )
            }
            Entry::Trade(t) => {
                inst.last_trade = Some(Level {
                    price: t.price,
                    size: t.size,
                });
                inst.trades += 1;
                inst.volume += t.size as i64;
                Ok(())
            }
        }
    }
}

/// Packets the arbiter holds while it waits for a missing one.
pub const ARBITRATION_WINDOW: u32 = 32;

/// Counters of [`Arbiter`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ArbiterStats {
    /// Packets passed on (each sequence number at most once, in order).
    pub accepted: u64,
    /// Datagrams dropped as already seen.
    pub duplicates: u64,
    /// Packets that arrived ahead of a missing one and waited for it.
    pub held: u64,
    /// Packets declared lost on both feeds (sequence numbers skipped).
    pub gap_packets: u64,
    /// Gaps (runs of skipped sequence numbers).
    pub gaps: u64,
}

/// A/B line arbitration: the first copy of each sequence number wins, and
/// packets go on strictly in sequence order.
///
/// A packet that arrives ahead of a missing one is held (up to
/// [`ARBITRATION_WINDOW`] sequence numbers ahead) while the other feed has
/// the chance to fill the hole, as it normally does within microseconds.
/// The hole is declared a gap only when a packet arrives beyond the window,
/// or on [`flush`](Arbiter::flush); a copy that shows up after that is a
/// duplicate. (A real handler would then recover from a snapshot.) Holding
/// costs no allocation: the window is a fixed array.
#[derive(Debug)]
pub struct Arbiter<T> {
    next: u32,
    window: [Option<(u32, T)>; ARBITRATION_WINDOW as usize],
    held_now: u32,
    stats: ArbiterStats,
    gap_ranges: Vec<(u32, u32)>,
}

impl<T> Default for Arbiter<T> {
    fn default() -> Self {
        Arbiter {
            next: 1,
            window: std::array::from_fn(|_| None),
            held_now: 0,
            stats: ArbiterStats::default(),
            gap_ranges: Vec::new(),
        }
    }
}

impl<T> Arbiter<T> {
    /// Offers the packet `seq` carrying `item`; `pass` receives every
    /// packet that can now go on, in sequence order.
    #[inline]
    pub fn offer(&mut self, seq: u32, item: T, mut pass: impl FnMut(T)) {
        if seq < self.next {
            self.stats.duplicates += 1;
            return;
        }
        if seq == self.next {
            self.stats.accepted += 1;
            self.next += 1;
            pass(item);
            self.release(&mut pass);
            return;
        }
        // Beyond the window: give up on the oldest holes until it fits.
        while seq - self.next >= ARBITRATION_WINDOW {
            self.skip_one(&mut pass);
        }
        if seq == self.next {
            self.stats.accepted += 1;
            self.next += 1;
            pass(item);
        } else {
            let slot = &mut self.window[(seq % ARBITRATION_WINDOW) as usize];
            // Every held seq lies in next+1 .. next+WINDOW, one per slot.
            if slot.is_some() {
                self.stats.duplicates += 1;
                return;
            }
            *slot = Some((seq, item));
            self.held_now += 1;
            self.stats.held += 1;
        }
        self.release(&mut pass);
    }

    /// Declares every hole before a held packet lost and passes the held
    /// packets on: the end of a run, or a timeout.
    pub fn flush(&mut self, mut pass: impl FnMut(T)) {
        while self.held_now > 0 {
            self.skip_one(&mut pass);
            self.release(&mut pass);
        }
    }

    /// Advances past `next`: passes it on if held, else declares it lost.
    fn skip_one(&mut self, pass: &mut impl FnMut(T)) {
        let slot = &mut self.window[(self.next % ARBITRATION_WINDOW) as usize];
        match slot.take() {
            Some((_, item)) => {
                self.held_now -= 1;
                self.stats.accepted += 1;
                pass(item);
            }
            None => {
                self.stats.gap_packets += 1;
                match self.gap_ranges.last_mut() {
                    Some(r) if r.1 == self.next => r.1 += 1,
                    _ => {
                        self.stats.gaps += 1;
                        self.gap_ranges.push((self.next, self.next + 1));
                    }
                }
            }
        }
        self.next += 1;
    }

    fn release(&mut self, pass: &mut impl FnMut(T)) {
        while self.held_now > 0 {
            let slot = &mut self.window[(self.next % ARBITRATION_WINDOW) as usize];
            match slot.take() {
                Some((_, item)) => {
                    self.held_now -= 1;
                    self.stats.accepted += 1;
                    self.next += 1;
                    pass(item);
                }
                None => break,
            }
        }
    }

    /// The next sequence number expected.
    pub fn next_expected(&self) -> u32 {
        self.next
    }

    /// Packets held right now.
    pub fn holding(&self) -> u32 {
        self.held_now
    }

    /// The counters.
    pub fn stats(&self) -> ArbiterStats {
        self.stats
    }

    /// The sequence numbers declared lost, as half-open ranges.
    pub fn gap_ranges(&self) -> &[(u32, u32)] {
        &self.gap_ranges
    }
}

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
