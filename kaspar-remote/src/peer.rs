//! An outbound link: this node's connection to one endpoint, shared by
//! every remote address that reaches an actor there, with its session and
//! sequence numbers.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;
use serde::Serialize;

use crate::frame::{self, Header, Kind, HEADER_LEN};
use crate::link::{LinkError, LinkTx, PeerState};
use crate::policy::{Idle, SendPolicy};

/// Why a frame was not sent. Nothing was sent in every case.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SendFail {
    /// The receiver's buffer stayed full under the policy.
    Full,
    /// The link is lost.
    Lost,
    /// The value cannot be framed (postcard refuses it, or the frame is
    /// longer than the link carries).
    Unsendable,
}

/// Someone to tell when the link is lost.
pub(crate) type Watcher = Box<dyn FnOnce() + Send>;

pub(crate) struct Peer {
    /// This node's name for the link (pending asks refer to it).
    pub(crate) id: u64,
    /// The endpoint it reaches.
    pub(crate) endpoint: String,
    /// Its session: fresh for every connection.
    pub(crate) session: u64,
    tx: Mutex<Tx>,
    /// Frames published so far (the next frame's sequence number); read
    /// without the lock for reports.
    sent: AtomicU64,
    lost: AtomicBool,
    watchers: Mutex<Vec<Watcher>>,
    can_drop_oldest: bool,
}

struct Tx {
    link: Box<dyn LinkTx>,
    seq: u64,
}

impl Peer {
    pub(crate) fn new(id: u64, endpoint: String, session: u64, link: Box<dyn LinkTx>) -> Self {
        Peer {
            id,
            endpoint,
            session,
            can_drop_oldest: link.can_drop_oldest(),
            tx: Mutex::new(Tx { link, seq: 0 }),
            sent: AtomicU64::new(0),
            lost: AtomicBool::new(false),
            watchers: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn can_drop_oldest(&self) -> bool {
        self.can_drop_oldest
    }

    /// Frames published on this session so far.
    pub(crate) fn sent(&self) -> u64 {
        self.sent.load(Ordering::Acquire)
    }

    /// Encodes `body` straight into the transport's buffer as one frame
    /// (header fields other than the body length, session and sequence
    /// number from the arguments), under `policy`.
    pub(crate) fn send<B: Serialize + ?Sized>(
        &self,
        kind: Kind,
        target: u32,
        wire_id: u32,
        correlation: u64,
        body: &B,
        policy: SendPolicy,
    ) -> Result<(), SendFail> {
        if self.is_lost() {
            return Err(SendFail::Lost);
        }
        let body_len = frame::body_len(body).map_err(|_| SendFail::Unsendable)?;
        let len = HEADER_LEN + body_len as usize;
        let mut tx = self.tx.lock();
        let header = Header {
            kind,
            target,
            wire_id,
            body_len,
            correlation,
            session: self.session,
            seq: tx.seq,
        };
        let mut fill = |buf: &mut [u8]| frame::write(buf, &header, body);
        let deadline = match policy {
            SendPolicy::Wait(budget) => Some(Instant::now() + budget),
            _ => None,
        };
        let mut idle = Idle::new();
        loop {
            let sent = match policy {
                SendPolicy::DropOldest => {
                    tx.link.send_frame_dropping_oldest(len, &mut fill).map(drop)
                }
                _ => tx.link.send_frame(len, &mut fill),
            };
            match sent {
                Ok(()) => {
                    tx.seq += 1;
                    self.sent.store(tx.seq, Ordering::Release);
                    return Ok(());
                }
                Err(LinkError::Full) => match deadline {
                    Some(until) if Instant::now() < until => idle.wait(Some(until)),
                    _ => return Err(SendFail::Full),
                },
                Err(LinkError::PeerLost) => {
                    self.lost.store(true, Ordering::Release);
                    return Err(SendFail::Lost);
                }
                Err(LinkError::TooLarge { .. }) => return Err(SendFail::Unsendable),
                // An engine failure is not a lost peer: the link may be
                // fine the next time.
                Err(_) => return Err(SendFail::Full),
            }
        }
    }

    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Asks the engine whether the peer is still there; a link found lost
    /// stays lost.
    pub(crate) fn probe(&self) -> bool {
        if self.is_lost() {
            return false;
        }
        let state = self.tx.lock().link.peer();
        if state == PeerState::Lost {
            self.lost.store(true, Ordering::Release);
            return false;
        }
        true
    }

    /// Marks the link lost (the node is closing it).
    pub(crate) fn mark_lost(&self) {
        self.lost.store(true, Ordering::Release);
    }

    /// Registers `watcher` for the link's loss; hands it back if the link
    /// is lost already (and its watchers were told), so the caller tells it
    /// now.
    pub(crate) fn watch(&self, watcher: Watcher) -> Option<Watcher> {
        let mut w = self.watchers.lock();
        if self.is_lost() && w.is_empty() {
            return Some(watcher);
        }
        w.push(watcher);
        None
    }

    /// The watchers, once: called when the loss is reported.
    pub(crate) fn take_watchers(&self) -> Vec<Watcher> {
        std::mem::take(&mut *self.watchers.lock())
    }
}
