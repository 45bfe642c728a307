//! What the pipeline carries: a [`Datagram`] in a pooled buffer ([`Buf`]),
//! with its feed, socket time `t0` and queue length `qlen`, and the
//! [`InFlight`] ticket by which senders count the datagrams waiting in the
//! group's mailbox without any handler reading its depth.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use kaspar::pool::Pooled;

use crate::tick_to_book::feed::MAX_DATAGRAM;
use crate::tick_to_book::generator::FeedId;

/// A datagram buffer from the pool.
pub type Buf = Pooled<[u8; MAX_DATAGRAM]>;

/// `qlen` of a message that crossed no mailbox (the one-thread path).
pub const QLEN_NONE: u32 = u32::MAX;

/// A fresh datagram buffer. Drawn from the calling thread's pool cache.
pub fn new_buf() -> Buf {
    Pooled::new([0u8; MAX_DATAGRAM])
}

/// One datagram in the mailbox's in-flight count, from the sender's
/// `send` until the buffer's handler starts on it (or the send fails).
/// The count is kept by senders and by the message itself; no handler
/// reads the mailbox.
#[derive(Debug)]
pub struct InFlight(Arc<AtomicU32>);

impl InFlight {
    /// Counts one more datagram in flight; returns the ticket and how many
    /// were already waiting.
    pub fn enter(counter: &Arc<AtomicU32>) -> (Self, u32) {
        let waiting = counter.fetch_add(1, Ordering::AcqRel);
        (InFlight(Arc::clone(counter)), waiting)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A datagram as it came up from a socket.
#[derive(Debug)]
pub struct Datagram {
    /// The bytes (the first `len` of them).
    pub buf: Buf,
    /// Bytes received.
    pub len: u16,
    /// Which feed.
    pub feed: FeedId,
    /// When it came up from the socket (`Ctx::now`, ns since the epoch).
    pub t0: u64,
    /// Datagrams already waiting in the mailbox when it was handed over,
    /// or [`QLEN_NONE`].
    pub qlen: u32,
    /// Held while the datagram waits in the mailbox.
    pub ticket: Option<InFlight>,
}

impl Datagram {
    /// The received bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }

    /// A datagram holding a copy of `bytes` (at most [`MAX_DATAGRAM`]):
    /// for tests, and for replaying a capture.
    pub fn copy_of(bytes: &[u8], feed: FeedId, t0: u64) -> Self {
        let mut buf = new_buf();
        let len = bytes.len().min(MAX_DATAGRAM);
        buf[..len].copy_from_slice(&bytes[..len]);
        Datagram {
            buf,
            len: len as u16,
            feed,
            t0,
            qlen: QLEN_NONE,
            ticket: None,
        }
    }
}
