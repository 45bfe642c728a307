//! Sending: one exclusive publication per link, frames written in place.
//!
//! A frame up to the publication's claim limit (the MTU less Aeron's 32-byte
//! data header: 1376 bytes by default) is written straight into the term
//! buffer: `try_claim` reserves the space, `fill` writes into it, `commit`
//! publishes it. A longer frame (up to an eighth of the term length) is
//! filled into a buffer the link keeps and offered from there, so Aeron can
//! cut it into fragments; the receiver reassembles it.
//!
//! No call blocks. Aeron's answers map onto [`LinkError`]:
//!
//! | Aeron                      | link                                   |
//! |----------------------------|----------------------------------------|
//! | `BACK_PRESSURED`           | `Full` (the receiver is a window behind) |
//! | `ADMIN_ACTION`             | retried at once (a term rotation), a few times, then `Full` |
//! | `NOT_CONNECTED`, `CLOSED`  | `PeerLost`, and the link stays lost    |
//! | `MAX_POSITION_EXCEEDED`    | `Transport`, and the link stays lost   |

use std::cell::Cell;
use std::sync::Arc;

use rusteron_client::{AeronExclusivePublication, AeronOfferError};

use super::driver::engine;
use super::Shared;
use crate::link::{LinkError, LinkTx, PeerState};

/// How often an `ADMIN_ACTION` (the claim crossed a term boundary, or the
/// driver was rotating the log) is retried before the send reports `Full`.
/// One retry lands in the next term; the rest cover a rotation in progress.
const ADMIN_RETRIES: usize = 4;

/// An exclusive publication and what a send needs around it.
pub(crate) struct Publisher {
    publication: AeronExclusivePublication,
    /// Longest frame `try_claim` takes (MTU less the data header).
    max_claim: usize,
    /// Longest frame at all (an eighth of the term length, at most 16 MiB).
    max_frame: usize,
    /// Frames above `max_claim` are filled here, then offered.
    scratch: Vec<u8>,
    /// Once set, the link is lost for good (the trait's contract); only
    /// point-to-point links set it.
    lost: Cell<bool>,
    /// Whether losing every receiver is final (links) or not (multicast
    /// publishers, whose receivers come and go).
    sticky: bool,
    // Keeps the client and the embedded driver alive while the link is.
    _shared: Arc<Shared>,
}

impl Publisher {
    pub(crate) fn new(
        publication: AeronExclusivePublication,
        sticky: bool,
        shared: Arc<Shared>,
    ) -> Result<Self, LinkError> {
        let constants = publication
            .get_constants()
            .map_err(|e| engine("publication constants", e))?;
        Ok(Publisher {
            max_claim: constants.max_payload_length(),
            max_frame: constants.max_message_length(),
            publication,
            scratch: Vec::new(),
            lost: Cell::new(false),
            sticky,
            _shared: shared,
        })
    }

    pub(crate) fn is_connected(&self) -> bool {
        self.publication.is_connected()
    }

    /// Whether the publication is closed for good (its client or the
    /// driver closed it), rather than waiting for a receiver.
    pub(crate) fn is_closed(&self) -> bool {
        self.publication.is_closed()
    }

    pub(crate) fn max_claim(&self) -> usize {
        self.max_claim
    }

    pub(crate) fn send(
        &mut self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), LinkError> {
        if len > self.max_frame {
            return Err(LinkError::TooLarge {
                len,
                max: self.max_frame,
            });
        }
        if self.lost.get() {
            return Err(LinkError::PeerLost);
        }
        if len <= self.max_claim {
            self.claim(len, fill)
        } else {
            self.offer_copy(len, fill)
        }
    }

    fn claim(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> Result<(), LinkError> {
        for _ in 0..ADMIN_RETRIES {
            match self.publication.try_claim_owned(len) {
                Ok(mut claim) => {
                    // A panic in `fill` drops the claim, which aborts it:
                    // the receiver sees padding, never half a frame.
                    fill(claim.data());
                    return claim
                        .commit()
                        .map(drop)
                        .map_err(|e| engine("claim commit", e));
                }
                Err(AeronOfferError::AdminAction) => continue,
                Err(error) => return Err(self.refused(error)),
            }
        }
        Err(LinkError::Full)
    }

    /// A frame longer than one claim: copied once into `scratch`, then
    /// offered in fragments. `fill` runs only when the offer will be taken:
    /// Aeron accepts a message whenever the publication's position is below
    /// its limit (it checks the start, not the end), and the limit only
    /// grows.
    fn offer_copy(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> Result<(), LinkError> {
        if !self.publication.is_connected() {
            return Err(self.refused(AeronOfferError::NotConnected));
        }
        let position = self.publication.position();
        if position < 0 {
            return Err(self.refused(AeronOfferError::Closed));
        }
        if position >= self.publication.position_limit() {
            return Err(LinkError::Full);
        }
        self.scratch.clear();
        self.scratch.resize(len, 0);
        fill(&mut self.scratch);
        for _ in 0..ADMIN_RETRIES {
            match self.publication.offer(&self.scratch) {
                Ok(_) => return Ok(()),
                Err(AeronOfferError::AdminAction) => continue,
                Err(error) => return Err(self.refused(error)),
            }
        }
        Err(LinkError::Full)
    }

    /// Maps a refused claim or offer, marking the link lost where Aeron
    /// says the receiver is gone.
    fn refused(&self, error: AeronOfferError) -> LinkError {
        match error {
            AeronOfferError::BackPressured | AeronOfferError::AdminAction => LinkError::Full,
            AeronOfferError::NotConnected | AeronOfferError::Closed => {
                self.lost.set(self.sticky);
                LinkError::PeerLost
            }
            AeronOfferError::MaxPositionExceeded => {
                self.lost.set(true);
                LinkError::Transport(
                    "aeron publication reached its maximum position; open a new link".to_owned(),
                )
            }
            other => engine("offer", format!("{other:?}")),
        }
    }

    pub(crate) fn peer(&self) -> PeerState {
        if self.lost.get() {
            return PeerState::Lost;
        }
        if self.publication.is_connected() {
            PeerState::Alive
        } else if self.sticky {
            self.lost.set(true);
            PeerState::Lost
        } else {
            PeerState::Connecting
        }
    }

    pub(crate) fn max_frame(&self) -> usize {
        self.max_frame
    }
}

/// The sending half of an Aeron link: an exclusive publication to the
/// endpoint's channel and stream.
///
/// Its session is this link's own: frames from it arrive in the order sent,
/// and a receiver tells senders apart by session. Once the receiver is lost
/// (its process died, or it was silent for the liveness timeout) the link
/// stays [`PeerState::Lost`]; reconnecting opens a new session.
pub struct AeronLinkTx {
    pub(crate) inner: Publisher,
}

impl AeronLinkTx {
    /// The longest frame written in place (longer ones are copied once).
    pub fn max_claim_len(&self) -> usize {
        self.inner.max_claim()
    }
}

impl LinkTx for AeronLinkTx {
    fn send_frame(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> Result<(), LinkError> {
        self.inner.send(len, fill)
    }

    fn max_frame_len(&self) -> usize {
        self.inner.max_frame()
    }

    fn peer(&self) -> PeerState {
        self.inner.peer()
    }
}

impl std::fmt::Debug for AeronLinkTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AeronLinkTx")
            .field("peer", &self.inner.peer())
            .field("max_claim", &self.inner.max_claim)
            .field("max_frame", &self.inner.max_frame)
            .finish()
    }
}
