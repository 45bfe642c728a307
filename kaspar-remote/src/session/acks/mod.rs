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
//!   since it last said so, the receiver sends an [`Ack`](crate::frame::Kind::Ack) on its
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

use kaspar::DeadLetterReason;
use parking_lot::Mutex;

mod retain;

pub(crate) use retain::{Keep, Kept, Retained};
pub use retain::{Retain, RetainedSend};

/// The hello header's wire-id bit by which the sender says it reads acks.
pub(crate) const READS_ACKS: u32 = 1;

/// Losses kept for [`Node::losses`](crate::Node::losses); older ones are
/// dropped (their counts stay in [`NodeStats`](crate::NodeStats)).
const LOSSES_KEPT: usize = 1024;

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

    /// Records the loss of the link to `peer` (its endpoint) in `session`,
    /// as `settled` accounts for it: counts what it sent that was never
    /// acknowledged, and hands what it still holds to the dead letters of
    /// `retain` (the node's buffer setting, if any).
    pub(crate) fn account(
        &self,
        peer: &str,
        session: u64,
        settled: Settled,
        retain: Option<&Retain>,
    ) {
        let Settled { sent, acked, kept } = settled;
        let unacknowledged = sent - acked;
        let dead_lettered = kept.len() as u64;
        if let Some(retain) = retain {
            for k in kept {
                let (target, class, letter) = k.into_letter(peer, session);
                kaspar::__private::post_dead_letter(
                    &retain.dead_letters,
                    target,
                    class,
                    DeadLetterReason::PeerLost,
                    Box::new(letter),
                );
            }
        }
        self.record(LinkLoss {
            peer: peer.to_owned(),
            session,
            sent,
            acknowledged: acked,
            unacknowledged,
            dead_lettered,
            not_retained: unacknowledged - dead_lettered,
        });
    }
}
