//! The seam between kaspar-remote and a transport engine.
//!
//! A transport moves opaque frames (byte slices, at most
//! [`LinkTx::max_frame_len`] long) between processes. It knows nothing of
//! actors, messages or correlation ids: those live in the frame, which the
//! layer above writes and reads.
//!
//! The shape is the one both engines share:
//!
//! - a process listens on an *endpoint* (a name such as `"kaspar/desk"`)
//!   and takes frames from it with a [`LinkRx`]: many senders, one
//!   receiver, frames from one sender in the order it sent them;
//! - a process that wants to reach an endpoint connects a [`LinkTx`] to it;
//! - a request-reply conversation is two such links, one each way: the
//!   first frame a client sends names its own endpoint, and the server
//!   connects back to it.
//!
//! Sending writes straight into the engine's buffer (iceoryx2's loaned
//! sample, Aeron's claimed term space) on the caller's thread: no copy of
//! the encoded frame, no extra thread or queue on the send side.
//!
//! Neither side ever blocks inside a transport call: a full buffer is
//! [`LinkError::Full`] at once, a missing or dead peer is
//! [`LinkError::PeerLost`] (or [`PeerState::Lost`]) within the engine's
//! liveness timeout. Waiting, where a policy asks for it, is done above;
//! the policies themselves ([`SendPolicy`](crate::SendPolicy),
//! [`IdleStrategy`](crate::IdleStrategy)) live here, beside the seam they
//! are about. The bottom layer beside `wire`: it uses no other module of
//! the crate.

use std::fmt;

pub(crate) mod policy;
use std::time::Duration;

/// A transport engine: opens inboxes and connections to them.
///
/// Implemented by the iceoryx2 and Aeron back ends (and by an in-process
/// loopback used in tests). One value is shared by every link of a process.
pub trait Transport: Send + Sync + 'static {
    /// The sending half of a connection.
    type Tx: LinkTx;
    /// An inbox.
    type Rx: LinkRx;

    /// Opens the inbox named `endpoint` in this process. Fails with
    /// [`LinkError::Transport`] if the engine refuses (for example the name
    /// is taken by a live process).
    fn listen(&self, endpoint: &str) -> Result<Self::Rx, LinkError>;

    /// Connects to the inbox named `endpoint`, which may be in another
    /// process. Returns [`LinkError::PeerLost`] if no live process listens
    /// on it after `timeout`; never waits longer.
    fn connect(&self, endpoint: &str, timeout: Duration) -> Result<Self::Tx, LinkError>;

    /// Publishes a small record under `name` (an exported actor: the
    /// endpoint that serves it and its schema hash) for [`Transport::discover`]
    /// in other processes. The record lives as long as the returned guard.
    fn announce(&self, name: &str, record: &[u8]) -> Result<Announcement, LinkError>;

    /// Finds the record another process announced under `name`, if any
    /// live process announces it now.
    fn discover(&self, name: &str) -> Result<Option<Vec<u8>>, LinkError>;

    /// How long a silent or dead peer takes to be reported as
    /// [`PeerState::Lost`]: the engine's liveness timeout.
    fn liveness_timeout(&self) -> Duration;
}

/// Keeps an [`Transport::announce`]d record alive; dropping it withdraws it.
pub struct Announcement {
    _keep: Box<dyn Send + Sync>,
}

impl Announcement {
    /// Wraps whatever the engine must keep alive for the record to stay
    /// visible.
    pub fn new(keep: impl Send + Sync + 'static) -> Self {
        Announcement {
            _keep: Box::new(keep),
        }
    }
}

impl fmt::Debug for Announcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Announcement")
    }
}

/// The sending half of a connection to one endpoint.
///
/// Not `Sync`: a shared sender puts it behind a lock, so that one frame is
/// written at a time.
pub trait LinkTx: Send + 'static {
    /// Writes one frame of exactly `len` bytes into the engine's buffer,
    /// letting `fill` write its bytes (the slice is `len` long), then
    /// publishes it. `fill` is called at most once, and not at all when
    /// the frame cannot be sent.
    ///
    /// - [`LinkError::Full`]: no room now (the receiver is behind); nothing
    ///   was sent, the caller may retry.
    /// - [`LinkError::PeerLost`]: the receiver is gone; nothing was sent.
    /// - [`LinkError::TooLarge`]: `len` exceeds [`LinkTx::max_frame_len`].
    fn send_frame(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> Result<(), LinkError>;

    /// The longest frame this link carries.
    fn max_frame_len(&self) -> usize;

    /// Whether the receiving process is alive, as far as the engine knows.
    fn peer(&self) -> PeerState;

    /// Whether [`send_frame_dropping_oldest`](Self::send_frame_dropping_oldest)
    /// works on this link. `false` unless the engine overrides both.
    fn can_drop_oldest(&self) -> bool {
        false
    }

    /// As [`send_frame`](Self::send_frame), except when the receiver's
    /// buffer is full: then the oldest frame *this link* put there, that
    /// the receiver has not taken yet, is discarded to make room, and the
    /// new frame is sent in its place. Returns how many frames were
    /// discarded. Frames other senders put there are never touched; if
    /// none of this link's frames is there to discard, the result is
    /// [`LinkError::Full`] as for `send_frame`.
    ///
    /// An engine that cannot take back a frame it accepted (Aeron's log
    /// buffer) keeps this default, which refuses and sends nothing.
    fn send_frame_dropping_oldest(
        &mut self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<usize, LinkError> {
        let _ = (len, fill);
        Err(LinkError::Transport(
            "this engine cannot discard a frame it accepted (no drop-oldest)".into(),
        ))
    }
}

/// An inbox: frames from every process connected to one endpoint.
pub trait LinkRx: Send + 'static {
    /// Hands at most `limit` frames that have arrived to `on_frame`, in
    /// arrival order (per sender: the order it sent them), and returns how
    /// many. Never blocks: returns `Ok(0)` when nothing is there.
    fn poll(&mut self, limit: usize, on_frame: &mut dyn FnMut(&[u8])) -> Result<usize, LinkError>;
}

/// What the engine knows about the other end of a link.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PeerState {
    /// Connected and alive within the liveness timeout.
    Alive,
    /// Not yet connected (a subscriber or image has not appeared yet).
    Connecting,
    /// Gone: the process died or left, or was silent past the liveness
    /// timeout. A link never comes back from this state; reconnecting opens
    /// a new link (and a new session).
    Lost,
}

/// A transport call that did not succeed.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum LinkError {
    /// The receiver's buffer is full; nothing was sent.
    Full,
    /// The peer is gone or never appeared; nothing was sent.
    PeerLost,
    /// The frame is longer than the link carries.
    TooLarge {
        /// The frame's length.
        len: usize,
        /// The most the link carries.
        max: usize,
    },
    /// The engine failed; its own words.
    Transport(String),
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Full => f.write_str("the receiver's buffer is full"),
            LinkError::PeerLost => f.write_str("the peer is gone"),
            LinkError::TooLarge { len, max } => {
                write!(
                    f,
                    "a frame of {len} bytes is longer than the link carries ({max})"
                )
            }
            LinkError::Transport(why) => write!(f, "transport: {why}"),
        }
    }
}

impl std::error::Error for LinkError {}
