//! [`Publisher`]: encodes messages straight into the engine's buffer.

use std::fmt;

use crate::link::LinkError;
use crate::topic::TopicTx;
use crate::wire::frame::{self, Header, Kind, HEADER_LEN};
use crate::wire::Wire;

/// Publishes `M` on one topic, from [`Topic::publisher`](super::Topic::publisher).
///
/// Each message is framed (kaspar-remote's header: the publisher's
/// session and a sequence number, so subscribers see losses) and encoded
/// on the calling thread into the engine's buffer; nothing is copied
/// afterwards and no other thread is involved. `Send`, not `Sync`: one
/// thread publishes at a time.
pub struct Publisher<M> {
    tx: Box<dyn TopicTx>,
    session: u64,
    seq: u64,
    _message: std::marker::PhantomData<fn(M)>,
}

impl<M> fmt::Debug for Publisher<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publisher")
            .field("session", &self.session)
            .field("published", &self.seq)
            .finish()
    }
}

impl<M: Wire> Publisher<M> {
    pub(super) fn new(tx: Box<dyn TopicTx>) -> Self {
        Publisher {
            tx,
            session: crate::wire::new_session(),
            seq: 0,
            _message: std::marker::PhantomData,
        }
    }

    /// Publishes `msg` to every current subscriber and returns how many
    /// that is, as far as the engine knows (0: nobody subscribes; Aeron
    /// says 1 for "one or more", see [`TopicTx::publish_frame`]). Never
    /// waits for a slow subscriber: it loses messages instead (on iceoryx2
    /// its oldest unread one).
    ///
    /// The message is borrowed, so one that is not published stays the
    /// caller's; it uses no sequence number (subscribers see no gap).
    /// Errors: [`LinkError::TooLarge`] (its frame is longer than
    /// [`max_frame_len`](Self::max_frame_len)), [`LinkError::Full`] (the
    /// engine has no buffer free now; retry), [`LinkError::Transport`]
    /// (it does not encode, or the engine failed).
    pub fn publish(&mut self, msg: &M) -> Result<usize, LinkError> {
        let body_len =
            frame::body_len(msg).map_err(|e| LinkError::Transport(format!("encode: {e:?}")))?;
        let header = Header {
            kind: Kind::Tell,
            target: 0,
            wire_id: M::WIRE_ID,
            body_len,
            correlation: 0,
            session: self.session,
            seq: self.seq,
        };
        let len = HEADER_LEN + body_len as usize;
        let reached = self
            .tx
            .publish_frame(len, &mut |buf| frame::write(buf, &header, msg))?;
        self.seq += 1;
        Ok(reached)
    }

    /// How many messages this publisher published.
    pub fn published(&self) -> u64 {
        self.seq
    }

    /// How many subscribers the topic has now, as far as the engine knows
    /// (see [`TopicTx::subscribers`]).
    pub fn subscribers(&self) -> usize {
        self.tx.subscribers()
    }

    /// The longest frame (header included) this publisher writes.
    pub fn max_frame_len(&self) -> usize {
        self.tx.max_frame_len()
    }
}
