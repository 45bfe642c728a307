//! The arrival journal: the [`Buffer`](super::Buffer) records one
//! [`Stamp`] per datagram, in the one order the group handled them, into
//! room reserved and pre-faulted before the run, so journaling costs
//! nothing measurable on the timed path. The bytes are not copied; after
//! the run `replay::join` takes them from the capture file.

use crate::tick_to_book::feed;
use crate::tick_to_book::generator::FeedId;
use crate::tick_to_book::pipeline::Datagram;

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
    /// Datagrams ahead of it in the mailbox, or
    /// [`QLEN_NONE`](super::QLEN_NONE).
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
