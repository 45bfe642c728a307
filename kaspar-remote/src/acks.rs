//! Acknowledgements: the receiver of a session tells its sender how much
//! of it has been handled, so that when the link is lost the sender can
//! report every send it never heard about, and hand back the ones it still
//! holds.
//!
//! The protocol, per session (one outbound link of the sender):
//!
//! - The sender's hello says that it reads acks (bit [`READS_ACKS`] of the
//!   hello header's wire id, which a hello does not otherwise use). A node
//!   without acks (an older build) neither sets it nor sends acks: its
//!   receivers then send it none, and its senders' links are never
//!   acknowledged, so everything they send counts as unacknowledged when
//!   the link is lost, which is the truth.
//! - The receiver's count for the session is its next expected sequence
//!   number: every frame numbered below it was handled (delivered into the
//!   local actor, or refused and counted), dropped as a duplicate, or
//!   counted missing in a [`Gap`](crate::Gap) the receiver reports. Frames
//!   of a session are handled in order, by whichever thread holds the
//!   node's inbox, so once that thread is back in the bridge's periodic
//!   work, the count is final for what it has read.
//! - Once per tick (a millisecond), for each session whose count moved
//!   since it last said so, the receiver sends an [`Ack`](Kind::Ack) on its
//!   link back to the sender (the link its replies take): the
//!   acknowledged session's id in the header's correlation field, the
//!   count as the body. An ack that finds the link full is not retried
//!   until the next tick; a later ack says everything an earlier one did.
//! - The sender keeps, per link, the highest count acknowledged (an
//!   atomic, clamped to what it has sent). Acks are not acknowledged: an
//!   ack that is the only news of its session does not move the count its
//!   receiver acknowledges (two nodes that look each other up would
//!   otherwise trade acks forever).
//!
//! When a link is found lost, its sender settles it under the link's lock
//! (no send can slip in after): `sent - acknowledged` frames are reported
//! as unacknowledged, in a [`LinkLoss`] ([`Node::losses`](crate::Node::losses))
//! and in [`NodeStats`](crate::NodeStats); with a [`Retain`] buffer the
//! messages it still holds go to dead letters
//! ([`DeadLetterReason::PeerLost`]), and those it could not hold are
//! counted. So for every lost link, exactly:
//! `sent = acknowledged + dead_lettered + not_retained`.
//!
//! Acks ride frames of their own rather than replies: a reply is encoded on
//! the replying actor's thread, which does not own the session's count
//! (the inbox's holder does), and a reply's header has no room for both a
//! count and the session it counts without growing the 40-byte header.
//! An ask that was answered is settled anyway; what an ack adds is the
//! tells, and those need a frame of their own.

use std::collections::VecDeque;
use std::fmt;

use kaspar::{DeadLetterReason, DeadLetters, Target};
use parking_lot::Mutex;

use crate::error::Refused;
use crate::frame::{Frame, Header, Kind};
use crate::peer::Peer;
use crate::policy::SendPolicy;
use crate::sessions::Sessions;
use crate::shared::{Counters, Shared};
use crate::wire::{decode_exact, Wire};

/// The hello header's wire-id bit by which the sender says it reads acks.
pub(crate) const READS_ACKS: u32 = 1;

/// Losses kept for [`Node::losses`](crate::Node::losses); older ones are
/// dropped (their counts stay in [`NodeStats`](crate::NodeStats)).
const LOSSES_KEPT: usize = 1024;

/// An opt-in buffer, per outbound link, of the last messages (tells and
/// asks) the peer has not acknowledged yet, handed to `dead_letters` when
/// the link is lost ([`NodeConfig::retain`](crate::NodeConfig::retain)).
///
/// It keeps each message's encoded frame, copied from the transport's
/// buffer as it is written: no `Clone` needed of a message, one copy per
/// send, and no allocation once its buffers have grown to the frames
/// sent. Acknowledged messages are released as the next sends find them.
/// Holding `frames` frames costs about `frames` times the largest frame
/// sent, per link.
#[derive(Clone, Debug)]
pub struct Retain {
    pub(crate) frames: usize,
    pub(crate) dead_letters: DeadLetters,
}

impl Retain {
    /// Keeps at most `frames` unacknowledged messages per link (at least
    /// one), for `dead_letters` (the local system's:
    /// [`System::dead_letters`](kaspar::System::dead_letters)).
    pub fn new(frames: usize, dead_letters: &DeadLetters) -> Self {
        Retain {
            frames: frames.max(1),
            dead_letters: dead_letters.clone(),
        }
    }

    /// The most messages kept per link.
    pub fn frames(&self) -> usize {
        self.frames
    }
}

/// What a sender reports when an outbound link is lost: how many of the
/// frames it sent were acknowledged by the peer, and what became of the
/// rest. Always `sent = acknowledged + dead_lettered + not_retained`.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct LinkLoss {
    /// The lost peer's endpoint.
    pub peer: String,
    /// The link's session.
    pub session: u64,
    /// Frames published on the link (its hello and messages; replies and
    /// acks too, where the link is also the way back for the peer's asks).
    pub sent: u64,
    /// Frames the peer acknowledged as handled (delivered, refused with a
    /// count, or reported by it as a gap).
    pub acknowledged: u64,
    /// `sent - acknowledged`: frames the peer may or may not have handled.
    pub unacknowledged: u64,
    /// Of those, the messages handed to dead letters from the
    /// [`Retain`] buffer.
    pub dead_lettered: u64,
    /// Of those, the frames not held: no buffer, more unacknowledged
    /// messages than it holds, or control frames (a hello, a reply, an
    /// ack), which are never kept.
    pub not_retained: u64,
}

/// A message a lost peer never acknowledged, as its dead letter carries it
/// (reason [`DeadLetterReason::PeerLost`]): its encoded frame and the
/// peer it went to.
pub struct RetainedSend {
    peer: String,
    session: u64,
    frame: Vec<u8>,
}

impl RetainedSend {
    /// The lost peer's endpoint.
    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// The session it was sent on.
    pub fn session(&self) -> u64 {
        self.session
    }

    fn parsed(&self) -> Option<Frame<'_>> {
        Frame::parse(&self.frame).ok()
    }

    /// Its sequence number within the session.
    pub fn seq(&self) -> u64 {
        self.parsed().map_or(0, |f| f.header.seq)
    }

    /// The message's [`Wire::WIRE_ID`].
    pub fn wire_id(&self) -> u32 {
        self.parsed().map_or(0, |f| f.header.wire_id)
    }

    /// Whether it was an ask (whose asker was told
    /// [`AskError::PeerLost`](kaspar::AskError::PeerLost)) rather than a
    /// tell.
    pub fn is_ask(&self) -> bool {
        self.parsed().is_some_and(|f| f.header.kind == Kind::Ask)
    }

    /// The message, decoded as an `M`: refused
    /// ([`Refused::UnknownMessage`]) if it is another type.
    pub fn decode<M: Wire>(&self) -> Result<M, Refused> {
        let frame = self.parsed().ok_or(Refused::Decode("no frame".into()))?;
        if frame.header.wire_id != M::WIRE_ID {
            return Err(Refused::UnknownMessage(frame.header.wire_id));
        }
        decode_exact(frame.body).map_err(|e| Refused::Decode(e.to_string()))
    }
}

impl fmt::Debug for RetainedSend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetainedSend")
            .field("peer", &self.peer)
            .field("session", &self.session)
            .field("seq", &self.seq())
            .field("wire_id", &self.wire_id())
            .finish()
    }
}

/// What a message's send tells the retain buffer about it.
#[derive(Clone, Copy)]
pub(crate) struct Keep<'a> {
    pub(crate) target: &'a Target,
    pub(crate) class: &'static str,
}

/// One message kept.
pub(crate) struct Kept {
    seq: u64,
    target: Target,
    class: &'static str,
    frame: Vec<u8>,
}

/// A link's retain buffer, behind the link's send lock.
///
/// Invariants: `ring` holds committed messages in sequence order, at most
/// `cap`; `staged` is the last message written into the transport, whose
/// send may not have succeeded: it is committed once a later sequence
/// number shows that it did (a failed send leaves the number unused).
pub(crate) struct Retained {
    cap: usize,
    ring: VecDeque<Kept>,
    staged: Option<Kept>,
    spare: Vec<Vec<u8>>,
}

impl Retained {
    pub(crate) fn new(cap: usize) -> Self {
        Retained {
            cap,
            ring: VecDeque::with_capacity(cap),
            staged: None,
            spare: Vec::new(),
        }
    }

    /// Keeps a copy of `frame`, numbered `seq`, about to be published;
    /// releases what `acked` covers and, when full, the oldest.
    pub(crate) fn stage(&mut self, seq: u64, acked: u64, keep: Keep<'_>, frame: &[u8]) {
        if let Some(prev) = self.staged.take() {
            if prev.seq < seq {
                self.commit(prev);
            } else {
                self.spare.push(prev.frame);
            }
        }
        while self.ring.front().is_some_and(|k| k.seq < acked) {
            if let Some(k) = self.ring.pop_front() {
                self.spare.push(k.frame);
            }
        }
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(frame);
        self.staged = Some(Kept {
            seq,
            target: keep.target.clone(),
            class: keep.class,
            frame: buf,
        });
    }

    fn commit(&mut self, kept: Kept) {
        if self.ring.len() >= self.cap {
            if let Some(old) = self.ring.pop_front() {
                self.spare.push(old.frame);
            }
        }
        self.ring.push_back(kept);
    }

    /// The messages numbered from `acked` up to `sent`, oldest first;
    /// empties the buffer.
    pub(crate) fn settle(&mut self, sent: u64, acked: u64) -> Vec<Kept> {
        if let Some(last) = self.staged.take() {
            if last.seq < sent {
                self.commit(last);
            }
        }
        self.spare = Vec::new();
        std::mem::take(&mut self.ring)
            .into_iter()
            .filter(|k| k.seq >= acked && k.seq < sent)
            .collect()
    }
}

/// A link's account when it is lost: frames sent, frames acknowledged,
/// and the messages still held.
pub(crate) struct Settled {
    pub(crate) sent: u64,
    pub(crate) acked: u64,
    pub(crate) kept: Vec<Kept>,
}

/// The losses a node reported, and their totals.
#[derive(Default)]
pub(crate) struct Losses {
    log: Mutex<LossLog>,
}

#[derive(Default)]
struct LossLog {
    kept: VecDeque<LinkLoss>,
    unacknowledged: u64,
    dead_lettered: u64,
    not_retained: u64,
}

impl Losses {
    /// Totals over every loss: unacknowledged, dead-lettered, not retained.
    pub(crate) fn totals(&self) -> (u64, u64, u64) {
        let log = self.log.lock();
        (log.unacknowledged, log.dead_lettered, log.not_retained)
    }

    fn record(&self, loss: LinkLoss) {
        let mut log = self.log.lock();
        log.unacknowledged = log.unacknowledged.saturating_add(loss.unacknowledged);
        log.dead_lettered = log.dead_lettered.saturating_add(loss.dead_lettered);
        log.not_retained = log.not_retained.saturating_add(loss.not_retained);
        if log.kept.len() == LOSSES_KEPT {
            log.kept.pop_front();
        }
        log.kept.push_back(loss);
    }

    pub(crate) fn list(&self) -> Vec<LinkLoss> {
        self.log.lock().kept.iter().cloned().collect()
    }
}

impl Shared {
    /// The receiver's side, from the bridge's periodic work: an ack on the
    /// link back of every session whose sender reads acks and that has
    /// handled frames since it last said so.
    pub(crate) fn acknowledge(&self, sessions: &mut Sessions) {
        for (&id, s) in sessions.iter_mut() {
            let (Some(said), Some(back)) = (s.acked, s.reply.as_ref()) else {
                continue;
            };
            if s.expected <= said || back.is_lost() {
                continue;
            }
            let count = s.expected;
            if back
                .send(Kind::Ack, 0, 0, id, &count, SendPolicy::Fail)
                .is_ok()
            {
                s.acked = Some(count);
            }
        }
    }

    /// The sender's side: an ack from a peer, for the link whose session
    /// its correlation names.
    pub(crate) fn on_ack(&self, sessions: &mut Sessions, h: &Header, body: &[u8]) {
        let count = match decode_exact::<u64>(body) {
            Ok(n) => n,
            Err(e) => {
                if e.is_trailing() {
                    Counters::bump(&self.counters.trailing, 1);
                }
                Counters::bump(&self.counters.rejected, 1);
                return;
            }
        };
        // An ack needs no ack: if nothing but it arrived since this node
        // last acknowledged the session, it stays acknowledged.
        if let Some(s) = sessions.get_mut(&h.session) {
            if s.acked == Some(h.seq) {
                s.acked = h.seq.checked_add(1);
            }
        }
        if let Some(link) = self.link_of_session(h.correlation) {
            link.acknowledge(count);
        }
    }

    /// Settles a lost link: counts what it sent that was never
    /// acknowledged, and hands what it still holds to dead letters. Once
    /// per link, before its watchers are told.
    pub(crate) fn account_loss(&self, peer: &Peer) {
        let Settled { sent, acked, kept } = peer.settle();
        // Only a lookup's link is acknowledged; a link that was only the
        // way back for another node's asks carried replies (whose asker is
        // the one lost) and acks.
        if !peer.said_hello() {
            return;
        }
        let unacknowledged = sent - acked;
        let dead_lettered = kept.len() as u64;
        if let Some(retain) = &self.config.retain {
            for k in kept {
                let letter = RetainedSend {
                    peer: peer.endpoint.clone(),
                    session: peer.session,
                    frame: k.frame,
                };
                kaspar::__private::post_dead_letter(
                    &retain.dead_letters,
                    k.target,
                    k.class,
                    DeadLetterReason::PeerLost,
                    Box::new(letter),
                );
            }
        }
        self.losses.record(LinkLoss {
            peer: peer.endpoint.clone(),
            session: peer.session,
            sent,
            acknowledged: acked,
            unacknowledged,
            dead_lettered,
            not_retained: unacknowledged - dead_lettered,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        kaspar::__private::remote_target("T", "t".into())
    }

    fn stage(r: &mut Retained, seq: u64, acked: u64, t: &Target) {
        let keep = Keep {
            target: t,
            class: "M",
        };
        r.stage(seq, acked, keep, &seq.to_le_bytes());
    }

    fn seqs<'a>(kept: impl IntoIterator<Item = &'a Kept>) -> Vec<u64> {
        kept.into_iter().map(|k| k.seq).collect()
    }

    #[test]
    fn settle_returns_exactly_the_unacknowledged_sent_messages() {
        let t = target();
        let mut r = Retained::new(8);
        for seq in 1..6 {
            stage(&mut r, seq, 0, &t);
        }
        // 6 sent (the hello was 0, never kept): 3 acknowledged.
        assert_eq!(seqs(&r.settle(6, 3)), [3, 4, 5]);
    }

    #[test]
    fn a_send_that_failed_is_never_kept() {
        let t = target();
        let mut r = Retained::new(8);
        stage(&mut r, 1, 0, &t);
        // The send of 2 failed: the next one is numbered 2 again.
        stage(&mut r, 2, 0, &t);
        stage(&mut r, 2, 0, &t);
        assert_eq!(seqs(&r.settle(2, 0)), [1], "2 was never published");
    }

    #[test]
    fn a_full_buffer_keeps_the_newest_and_acks_release() {
        let t = target();
        let mut r = Retained::new(3);
        for seq in 0..10 {
            stage(&mut r, seq, 0, &t);
        }
        assert_eq!(seqs(&r.ring), [6, 7, 8], "and 9 staged");
        stage(&mut r, 10, 8, &t);
        assert_eq!(seqs(&r.ring), [8, 9], "below 8 released");
        assert_eq!(seqs(&r.settle(11, 9)), [9, 10]);
        assert!(r.ring.is_empty() && r.staged.is_none());
    }
}
