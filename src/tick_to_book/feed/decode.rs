//! The validating decoder. [`Packet::parse`] checks a whole datagram
//! (headers, sizes, schema, templates, block lengths, that every group
//! fits inside its message, the enum bytes) before anything reads from it,
//! and never panics, whatever the bytes. A datagram that parses is then
//! read without further checks by [`Messages`] and [`Message::entries`];
//! one that does not is rejected whole, with the [`DecodeError`] and byte
//! offset where decoding stopped.

use std::fmt;

use super::wire::{
    Action, BookEntry, Entry, Side, Stream, TradeEntry, BOOK_ENTRY_LEN, DEPTH, GROUP_HEADER_LEN,
    MESSAGE_HEADER_LEN, PACKET_HEADER_LEN, ROOT_BLOCK_LEN, SCHEMA_ID, TEMPLATE_BOOK,
    TEMPLATE_TRADE, TRADE_ENTRY_LEN,
};

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
