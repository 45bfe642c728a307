//! An outbound link: this node's connection to one endpoint, shared by
//! every remote address that reaches an actor there, with its session and
//! sequence numbers.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use parking_lot::Mutex;
use serde::Serialize;

use crate::link::policy::{Idle, SendPolicy};
use crate::link::{LinkError, LinkTx, PeerState};
use crate::session::acks::{Keep, Retained, Settled};
use crate::session::auth::{FrameKey, TAG_LEN};
use crate::wire::frame::{self, Header, Kind, HEADER_LEN};

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
    /// Frames the peer has acknowledged as handled (see
    /// [`acks`](crate::session::acks)): a count, never above `sent`, that only
    /// grows; read without the lock.
    acked: AtomicU64,
    /// A hello went out on it: it is a lookup's link, whose receiver
    /// acknowledges what it handles (a link that is only the way back
    /// for another node's asks is never acknowledged).
    said_hello: AtomicBool,
    lost: AtomicBool,
    watchers: Mutex<Vec<Watcher>>,
    can_drop_oldest: bool,
    /// The key of this session's frame tags, once a handshake with
    /// tagged frames set it ([`Auth::sign_frames`](crate::Auth::sign_frames)).
    sign: OnceLock<FrameKey>,
}

struct Tx {
    link: Box<dyn LinkTx>,
    seq: u64,
    /// The messages not acknowledged yet, when the node retains them.
    retain: Option<Retained>,
}

impl Peer {
    /// A link of session `session` to `endpoint`; `retain`: how many
    /// unacknowledged messages it keeps, if any.
    pub(crate) fn new(
        id: u64,
        endpoint: String,
        session: u64,
        link: Box<dyn LinkTx>,
        retain: Option<usize>,
    ) -> Self {
        Peer {
            id,
            endpoint,
            session,
            can_drop_oldest: link.can_drop_oldest(),
            tx: Mutex::new(Tx {
                link,
                seq: 0,
                retain: retain.map(Retained::new),
            }),
            sent: AtomicU64::new(0),
            acked: AtomicU64::new(0),
            said_hello: AtomicBool::new(false),
            lost: AtomicBool::new(false),
            watchers: Mutex::new(Vec::new()),
            sign: OnceLock::new(),
        }
    }

    /// Tags every frame sent from now on (but hellos and challenges,
    /// which carry MACs of their own) with `key`; the first key set stays.
    pub(crate) fn sign_with(&self, key: FrameKey) {
        let _ = self.sign.set(key);
    }

    pub(crate) fn can_drop_oldest(&self) -> bool {
        self.can_drop_oldest
    }

    /// Frames published on this session so far.
    pub(crate) fn sent(&self) -> u64 {
        self.sent.load(Ordering::Acquire)
    }

    /// Frames published that the peer has not acknowledged as handled.
    pub(crate) fn unacknowledged(&self) -> u64 {
        let acked = self.acked.load(Ordering::Acquire);
        self.sent().saturating_sub(acked)
    }

    /// The peer says it has handled `count` frames: a count past what was
    /// sent (a forged or confused ack) claims only what was sent, one
    /// below what is known already changes nothing, and once the link is
    /// lost nothing changes (its loss was reported with the count then).
    pub(crate) fn acknowledge(&self, count: u64) {
        if !self.is_lost() {
            self.acked
                .fetch_max(count.min(self.sent()), Ordering::AcqRel);
        }
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
        self.send_kept(kind, target, wire_id, correlation, body, policy, None)
    }

    /// [`send`](Self::send) for a message (a tell or an ask), which the
    /// link's retain buffer, if it has one, keeps until it is
    /// acknowledged.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send_kept<B: Serialize + ?Sized>(
        &self,
        kind: Kind,
        target: u32,
        wire_id: u32,
        correlation: u64,
        body: &B,
        policy: SendPolicy,
        keep: Option<Keep<'_>>,
    ) -> Result<(), SendFail> {
        if self.is_lost() {
            return Err(SendFail::Lost);
        }
        let body_len = frame::body_len(body).map_err(|_| SendFail::Unsendable)?;
        let sign = match kind {
            Kind::Hello | Kind::Challenge => None,
            _ => self.sign.get(),
        };
        let len = HEADER_LEN + body_len as usize + sign.map_or(0, |_| TAG_LEN);
        // A message sent from inside a handler carries its trace context.
        #[cfg(feature = "tracing")]
        let trace = frame::trace_for(kind);
        #[cfg(feature = "tracing")]
        let len = len + frame::trace_len(trace);
        #[cfg(feature = "tracing")]
        let write = |buf: &mut [u8], header: &Header, body: &B| {
            frame::write_traced(buf, header, trace, body)
        };
        #[cfg(not(feature = "tracing"))]
        let write = frame::write::<B>;
        let mut guard = self.tx.lock();
        // Looked at again under the lock: a link whose loss is being
        // settled (`settle`) publishes nothing more.
        if self.is_lost() {
            return Err(SendFail::Lost);
        }
        let tx = &mut *guard;
        let header = Header {
            kind,
            target,
            wire_id,
            body_len,
            correlation,
            session: self.session,
            seq: tx.seq,
        };
        let retain = match keep {
            Some(keep) => tx.retain.as_mut().map(|r| (r, keep)),
            None => None,
        };
        let acked = &self.acked;
        let mut retain = retain;
        let mut fill = |buf: &mut [u8]| {
            let frame = match sign {
                None => {
                    write(buf, &header, body);
                    &*buf
                }
                Some(key) => {
                    let (frame, tag) = buf.split_at_mut(buf.len() - TAG_LEN);
                    write(frame, &header, body);
                    key.sign(frame, tag);
                    &*frame
                }
            };
            if let Some((r, keep)) = retain.as_mut() {
                r.stage(header.seq, acked.load(Ordering::Acquire), *keep, frame);
            }
        };
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
                    match kind {
                        // An ack that is the only news since the last ack
                        // received needs none (its receiver agrees:
                        // `Shared::on_ack`).
                        Kind::Ack => {
                            let before = tx.seq - 1;
                            let _ = self.acked.compare_exchange(
                                before,
                                tx.seq,
                                Ordering::AcqRel,
                                Ordering::Acquire,
                            );
                        }
                        Kind::Hello => self.said_hello.store(true, Ordering::Release),
                        _ => {}
                    }
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

    /// Whether a hello went out on this link (see `said_hello`).
    pub(crate) fn said_hello(&self) -> bool {
        self.said_hello.load(Ordering::Acquire)
    }

    /// A lost link's account, settled under its lock (after the loss was
    /// marked: no send publishes after it): frames sent, frames
    /// acknowledged, and the unacknowledged messages it still holds.
    pub(crate) fn settle(&self) -> Settled {
        let mut tx = self.tx.lock();
        let sent = tx.seq;
        let acked = self.acked.load(Ordering::Acquire).min(sent);
        let kept = match tx.retain.as_mut() {
            Some(r) => r.settle(sent, acked),
            None => Vec::new(),
        };
        Settled { sent, acked, kept }
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

    /// Lets go of a lost link's engine handle (its buffers; on iceoryx2,
    /// a sender slot of the peer's inbox) while this value lives on where
    /// it is still held: a reconnected address keeps the links it has
    /// replaced ([`reconnect`](crate::node::reconnect)). Nothing is sent on a
    /// lost link anyway. Does nothing to a link that is not lost.
    pub(crate) fn release(&self) {
        if self.is_lost() {
            self.tx.lock().link = Box::new(Released);
        }
    }
}

/// What a released link holds instead of its engine's: nothing.
struct Released;

impl LinkTx for Released {
    fn send_frame(&mut self, _: usize, _: &mut dyn FnMut(&mut [u8])) -> Result<(), LinkError> {
        Err(LinkError::PeerLost)
    }

    fn max_frame_len(&self) -> usize {
        0
    }

    fn peer(&self) -> PeerState {
        PeerState::Lost
    }
}
