//! The sender's retain buffer: the last messages a peer has not
//! acknowledged yet, kept as encoded frames and handed to dead letters
//! when the link is lost (see [`acks`](super)).

use std::collections::VecDeque;
use std::fmt;

use kaspar::{DeadLetters, Target};

use crate::wire::frame::{Frame, Kind};
use crate::wire::{decode_exact, Refused, Wire};

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

/// A message a lost peer never acknowledged, as its dead letter carries it
/// (reason [`DeadLetterReason::PeerLost`](kaspar::DeadLetterReason::PeerLost)):
/// its encoded frame and the peer it went to.
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

impl Kept {
    /// The dead letter a kept message to `peer` (its endpoint) in
    /// `session` becomes once the link is lost: its target, its message's
    /// type name, and the frame as a [`RetainedSend`].
    pub(crate) fn into_letter(
        self,
        peer: &str,
        session: u64,
    ) -> (Target, &'static str, RetainedSend) {
        let letter = RetainedSend {
            peer: peer.to_owned(),
            session,
            frame: self.frame,
        };
        (self.target, self.class, letter)
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
