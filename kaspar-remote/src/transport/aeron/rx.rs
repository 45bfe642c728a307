//! Receiving: one subscription per inbox, frames read in place.
//!
//! A frame that fit one claim arrives as one fragment and is handed to the
//! caller straight from the term buffer. A longer frame arrives as a run of
//! fragments of one session (BEGIN ... END, never interleaved with other
//! fragments of that session); they are joined in a buffer kept per
//! session and reused. A fragment run whose BEGIN this subscription never
//! saw (it joined mid-message) is skipped whole.

use std::sync::Arc;

use rusteron_client::{AeronHeader, AeronSubscription};

use super::driver::engine;
use super::Shared;
use crate::link::{LinkError, LinkRx};

/// Aeron data header flags (`aeron_udp_protocol.h`): first and last fragment
/// of a message; both set on a message that fit one fragment.
const BEGIN: u8 = 0x80;
const END: u8 = 0x40;
const WHOLE: u8 = BEGIN | END;

/// Reassembly buffers kept beyond this many sessions are dropped when idle.
const KEEP_SESSIONS: usize = 16;

/// A message being reassembled from its fragments.
struct Partial {
    session: i32,
    /// Saw this run's BEGIN; the buffer holds its fragments so far.
    open: bool,
    bytes: Vec<u8>,
}

/// The subscription and reassembly state shared by links and multicast
/// subscribers.
pub(crate) struct Subscriber {
    subscription: AeronSubscription,
    partial: Vec<Partial>,
    _shared: Arc<Shared>,
}

impl Subscriber {
    pub(crate) fn new(subscription: AeronSubscription, shared: Arc<Shared>) -> Self {
        Subscriber {
            subscription,
            partial: Vec::new(),
            _shared: shared,
        }
    }

    /// Whether at least one sender's image is connected.
    pub(crate) fn is_connected(&self) -> bool {
        self.subscription.is_connected()
    }

    /// How many senders' images are connected now.
    pub(crate) fn senders(&self) -> usize {
        self.subscription
            .image_count()
            .map_or(0, |n| usize::try_from(n).unwrap_or(0))
    }

    pub(crate) fn poll(
        &mut self,
        limit: usize,
        on_frame: &mut dyn FnMut(&[u8]),
    ) -> Result<usize, LinkError> {
        if limit == 0 {
            return Ok(0);
        }
        let mut frames = 0;
        let partial = &mut self.partial;
        self.subscription
            .poll_fn(
                |fragment: &[u8], header: AeronHeader| {
                    let flags = header
                        .get_values()
                        .map_or(WHOLE, |values| values.frame().flags());
                    if flags & WHOLE == WHOLE {
                        on_frame(fragment);
                        frames += 1;
                    } else if let Some(bytes) = reassemble(partial, &header, flags, fragment) {
                        on_frame(bytes);
                        frames += 1;
                    }
                },
                limit,
            )
            .map_err(|e| engine("subscription poll", e))?;
        if self.partial.len() > KEEP_SESSIONS {
            self.partial.retain(|p| p.open);
        }
        Ok(frames)
    }
}

/// Adds one fragment of a long frame; returns the whole frame at its END.
fn reassemble<'a>(
    partial: &'a mut Vec<Partial>,
    header: &AeronHeader,
    flags: u8,
    fragment: &[u8],
) -> Option<&'a [u8]> {
    let session = header.session_id().unwrap_or(0);
    let index = match partial.iter().position(|p| p.session == session) {
        Some(index) => index,
        None => {
            partial.push(Partial {
                session,
                open: false,
                bytes: Vec::new(),
            });
            partial.len() - 1
        }
    };
    let slot = &mut partial[index];
    if flags & BEGIN != 0 {
        slot.bytes.clear();
        slot.open = true;
    } else if !slot.open {
        return None;
    }
    slot.bytes.extend_from_slice(fragment);
    if flags & END != 0 {
        slot.open = false;
        return Some(&slot.bytes);
    }
    None
}

/// An Aeron inbox: a subscription to the endpoint's channel and stream.
///
/// Frames from one sender (one session) arrive in the order sent; frames
/// from different senders interleave. Aeron fans out: a second process
/// subscribed to the same endpoint would get every frame too, so an
/// endpoint should have one listener (see
/// [`AeronTransport::listen`](super::AeronTransport)).
pub struct AeronLinkRx {
    pub(crate) inner: Subscriber,
    pub(crate) _claim: super::ListenClaim,
}

impl AeronLinkRx {
    /// How many senders are connected now (one per [`AeronLinkTx`](super::AeronLinkTx)).
    pub fn senders(&self) -> usize {
        self.inner.senders()
    }
}

impl LinkRx for AeronLinkRx {
    fn poll(&mut self, limit: usize, on_frame: &mut dyn FnMut(&[u8])) -> Result<usize, LinkError> {
        self.inner.poll(limit, on_frame)
    }
}

impl std::fmt::Debug for AeronLinkRx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AeronLinkRx")
            .field("connected", &self.inner.is_connected())
            .finish()
    }
}
