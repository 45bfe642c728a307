//! The encoder: [`PacketWriter`] builds one packet in place, message by
//! message, within the feed's limits ([`MAX_DATAGRAM`] bytes,
//! [`MAX_MESSAGES`] messages). It writes the block lengths this decoder
//! knows, so everything it writes parses.

use super::wire::{
    Action, Entry, Side, Stream, BOOK_ENTRY_LEN, GROUP_HEADER_LEN, MAX_DATAGRAM, MAX_MESSAGES,
    MESSAGE_HEADER_LEN, ROOT_BLOCK_LEN, SCHEMA_ID, SCHEMA_VERSION, TRADE_ENTRY_LEN,
};

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
