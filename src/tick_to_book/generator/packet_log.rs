//! The generator's record of what it sent: every packet's entries, by
//! sequence number. The reference book is rebuilt from these, never from
//! the encoded bytes, and can leave out the packets a receiver lost.

use crate::tick_to_book::feed::{Book, Entry, Stream, MAX_MESSAGES};

use super::exchange::security_ids;

/// Every packet's entries, kept so a reference book can be rebuilt without
/// the packets a receiver lost.
#[derive(Clone, Debug, Default)]
pub struct PacketLog {
    pub(super) entries: Vec<Entry>,
    /// `starts[k]`: index of packet `k + 1`'s first entry.
    pub(super) starts: Vec<usize>,
    /// `messages[k]`: messages in packet `k + 1`.
    pub(super) messages: Vec<u8>,
    /// Every message's (security id, stream), in packet order.
    pub(super) streams: Vec<(i32, Stream)>,
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

    /// The (security id, stream) of every message in the packets `skip`
    /// returns false for, in order: what a receiver that lost the others
    /// publishes.
    pub fn message_streams<'a>(
        &'a self,
        skip: impl Fn(u32) -> bool + 'a,
    ) -> impl Iterator<Item = (i32, Stream)> + 'a {
        let mut first = 0;
        self.messages.iter().enumerate().flat_map(move |(k, &n)| {
            let range = first..first + n as usize;
            first = range.end;
            let kept = if skip(k as u32 + 1) { 0..0 } else { range };
            self.streams[kept].iter().copied()
        })
    }

    /// How many packets carried `n` messages, for `n` in `0..=MAX_MESSAGES`.
    pub fn size_histogram(&self) -> Vec<u64> {
        let mut h = vec![0; MAX_MESSAGES + 1];
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
