//! The sending half: one iceoryx2 publisher on the inbox's service.

use std::sync::Arc;

use ::iceoryx2::port::publisher::Publisher;
use ::iceoryx2::port::LoanError;
use ::iceoryx2::service::port_factory::publish_subscribe::PortFactory;

use super::liveness::PeerWatch;
use super::Ipc;
use crate::link::{LinkError, LinkTx, PeerState};

/// A connection to one iceoryx2 inbox: frames go straight into loaned
/// shared-memory samples.
///
/// The publisher's sample pool is sized to the inbox's depth (plus the two
/// slots drop-oldest needs), so a receiver that is `inbox_depth` frames
/// behind makes the *loan* fail: [`LinkError::Full`] comes back before
/// `fill` runs, and nothing ever blocks.
pub struct Iceoryx2Tx {
    // Declared before `service`: the port goes before the service handle.
    publisher: Publisher<Ipc, [u8], ()>,
    _service: PortFactory<Ipc, [u8], ()>,
    peer: Arc<PeerWatch>,
    max_frame_len: usize,
    /// The inbox overflows (drop-oldest) rather than failing.
    overflows: bool,
}

// SAFETY: the one part of an `ipc` publisher that is not thread-safe is
// the `Rc` around its port state, which iceoryx2 clones into every sample
// it loans (iceoryx2 =0.9.3, pinned: the `SingleThreaded` sync policy; the
// node and service states the port shares are `Arc`s, and the port factory
// is `Send + Sync`). `send_frame` loans, fills and publishes or drops its
// sample before it returns, unwinding included, so whenever an
// `Iceoryx2Tx` can move to another thread that `Rc` has one owner, inside
// this value, and the move takes every handle to the state along. Not
// being `Sync`, the link is never used from two threads at once.
unsafe impl Send for Iceoryx2Tx {}

impl std::fmt::Debug for Iceoryx2Tx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iceoryx2Tx")
            .field("max_frame_len", &self.max_frame_len)
            .field("peer", &self.peer())
            .field("overflows", &self.overflows)
            .finish()
    }
}

impl Iceoryx2Tx {
    pub(super) fn new(
        publisher: Publisher<Ipc, [u8], ()>,
        service: PortFactory<Ipc, [u8], ()>,
        peer: Arc<PeerWatch>,
        max_frame_len: usize,
        overflows: bool,
    ) -> Self {
        Iceoryx2Tx {
            publisher,
            _service: service,
            peer,
            max_frame_len,
            overflows,
        }
    }
}

impl LinkTx for Iceoryx2Tx {
    /// Loans a sample of `len` bytes, zeroes it (so that bytes `fill`
    /// skips never leak an older frame to the peer), lets `fill` write it
    /// and publishes it: one write of the frame, no copy.
    ///
    /// `fill` does not run when the peer is known lost or the inbox is
    /// full. In one race it does run for nothing: the receiver drops its
    /// inbox between the loan and the publish; the frame then goes nowhere
    /// and the result is [`LinkError::PeerLost`].
    fn send_frame(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> Result<(), LinkError> {
        if len > self.max_frame_len {
            return Err(LinkError::TooLarge {
                len,
                max: self.max_frame_len,
            });
        }
        if self.peer.is_lost() {
            return Err(LinkError::PeerLost);
        }
        let sample = match self.publisher.loan_slice_uninit(len) {
            Ok(sample) => sample,
            // Every slot is in the inbox (or held by a reader that died
            // and has not been noticed yet).
            Err(LoanError::OutOfMemory | LoanError::ExceedsMaxLoans) => {
                return Err(if self.peer.is_lost() {
                    LinkError::PeerLost
                } else {
                    LinkError::Full
                });
            }
            Err(e) => return Err(LinkError::Transport(format!("iceoryx2 loan: {e:?}"))),
        };
        let mut sample = sample.write_from_fn(|_| 0u8);
        fill(sample.payload_mut());
        match sample.send() {
            Ok(0) => {
                // No subscriber took it: the inbox was dropped.
                self.peer.mark_lost();
                Err(LinkError::PeerLost)
            }
            Ok(_) => Ok(()),
            Err(e) => Err(LinkError::Transport(format!("iceoryx2 send: {e:?}"))),
        }
    }

    fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    /// Whether the inbox was created with [`Overflow::DropOldest`]
    /// (iceoryx2's safe overflow: a full queue replaces this sender's
    /// oldest sample). The choice is the inbox's, made when it was
    /// created; it cannot change per send.
    ///
    /// [`Overflow::DropOldest`]: super::Overflow::DropOldest
    fn can_drop_oldest(&self) -> bool {
        self.overflows
    }

    /// On an inbox that overflows, [`send_frame`](LinkTx::send_frame)
    /// itself: iceoryx2 replaces this sender's oldest unread sample when
    /// the queue is full. iceoryx2 does not say whether a publish displaced
    /// one, so the count returned is always 0; the receiver sees displaced
    /// frames as a gap in the sender's sequence. On an inbox that fails
    /// when full, refused as the seam's default is.
    fn send_frame_dropping_oldest(
        &mut self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<usize, LinkError> {
        if !self.overflows {
            return Err(LinkError::Transport(
                "this iceoryx2 inbox fails when full: it was not created with Overflow::DropOldest"
                    .into(),
            ));
        }
        self.send_frame(len, fill).map(|()| 0)
    }

    fn peer(&self) -> PeerState {
        if self.peer.is_lost() {
            PeerState::Lost
        } else {
            PeerState::Alive
        }
    }
}
