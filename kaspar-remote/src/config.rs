//! A node's settings, how an export receives its messages, and what a node
//! reports: [`NodeConfig`], [`Export`], [`NodeStats`], [`Gap`].

use std::fmt;
use std::time::Duration;

use crate::inbound::RemoteInput;
use crate::policy::{IdleStrategy, SendPolicy};

/// A node's settings.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// How long a lookup waits for the exporting node to answer its
    /// hello, and a connect for the peer to appear.
    pub connect_timeout: Duration,
    /// How long a remote ask waits for its reply before it fails with
    /// [`AskError::PeerLost`](kaspar::AskError::PeerLost): the bound on any wait for another process.
    pub reply_timeout: Duration,
    /// The send policy of the remote addresses [`Node::lookup`](crate::Node::lookup) returns,
    /// and of replies.
    pub policy: SendPolicy,
    /// How long the bridge waits for room when an exported actor's mailbox
    /// is full, before it refuses the message ([`Refused::Full`](crate::Refused::Full)). While
    /// it waits, frames stay in the node's inbox, so the senders feel the
    /// back-pressure.
    pub inbound_wait: Duration,
    /// The most frames the bridge takes from the inbox per poll.
    pub poll_batch: usize,
    /// How the bridge thread waits while the inbox is empty: the trade
    /// between an idle node's CPU and the latency of a frame that finds
    /// it idle. [`IdleStrategy::Spin`] for a node on a core of its own
    /// (the round-trip bench uses it).
    pub idle: IdleStrategy,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            connect_timeout: Duration::from_secs(2),
            reply_timeout: Duration::from_secs(30),
            policy: SendPolicy::Fail,
            inbound_wait: Duration::from_millis(10),
            poll_batch: 256,
            idle: IdleStrategy::DEFAULT,
        }
    }
}

/// How an exported actor receives its inbound messages.
pub struct Export {
    pub(crate) fast: bool,
    pub(crate) feed: Option<Box<dyn Fn(RemoteInput) -> bool + Send + Sync>>,
}

impl Export {
    /// Delivery by `send` (the default): queued for the actor's thread.
    pub fn new() -> Self {
        Export {
            fast: false,
            feed: None,
        }
    }

    /// Delivery by `fast_send` on the bridge thread: the handler runs there
    /// under the actor's lock and an ask's reply is encoded straight back.
    /// For an actor whose handlers are short; a long one holds up every
    /// other inbound message of the node.
    ///
    /// A thread-bound actor (`#[actor(thread_bound)]`) runs its handlers
    /// on its own thread only: its export delivers by `send` whatever this
    /// says, so its tells and asks queue in its mailbox rather than being
    /// refused.
    pub fn fast_send(mut self) -> Self {
        self.fast = true;
        self
    }

    /// Hands every inbound message to `feed` instead, as a
    /// [`RemoteInput`]: to journal a group's remote input, `feed` is the
    /// group's `Journaled::feed` and its route calls
    /// [`deliver_input`](crate::deliver_input). `feed` returns whether the
    /// message was delivered (when it was not, an asker is told
    /// [`Refused::Full`](crate::Refused::Full)). Delivery is then up to
    /// `feed`'s route, so [`fast_send`](Self::fast_send) does not apply.
    pub fn fed_by(mut self, feed: impl Fn(RemoteInput) -> bool + Send + Sync + 'static) -> Self {
        self.feed = Some(Box::new(feed));
        self
    }
}

impl Default for Export {
    fn default() -> Self {
        Export::new()
    }
}

impl fmt::Debug for Export {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Export")
            .field("fast_send", &self.fast)
            .field("fed", &self.feed.is_some())
            .finish()
    }
}

/// Frames a session lost, as the receiving node saw them.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Gap {
    /// The sending node's endpoint, when known (a reconnect names it).
    pub peer: Option<String>,
    /// The session that lost them.
    pub session: u64,
    /// How many frames never arrived.
    pub missed: u64,
    /// Whether the loss was found when the sender reconnected (frames lost
    /// with the old link), rather than by a jump in the sequence numbers
    /// of a live session (drop-oldest, say).
    pub reconnected: bool,
}

/// A node's counters.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
#[non_exhaustive]
pub struct NodeStats {
    /// Frames taken from the inbox.
    pub frames_in: u64,
    /// Frames that were not frames (bad header, a sequence number of
    /// `u64::MAX`, which no sender reaches, a body that does not decode as
    /// a control message or has bytes left after it).
    pub rejected: u64,
    /// Inbound messages not delivered (unknown export or message, a body
    /// that does not decode or has bytes left after the message, full or
    /// stopped actor, an ask on a session with no link back: one that
    /// never said hello, or whose hello is still waiting for that link),
    /// and hellos whose sender could not be connected back to.
    pub refused: u64,
    /// Frames dropped as duplicates (at-most-once).
    pub duplicates: u64,
    /// Frames known lost: the sum of the [`Gap`]s (saturating at
    /// `u64::MAX`: a forged sequence number can claim any gap).
    pub missed: u64,
    /// Outbound messages that could not be framed (see
    /// [`RemoteAddr::send`](crate::RemoteAddr::send)).
    pub unsendable: u64,
    /// Links found lost.
    pub peers_lost: u64,
    /// Hellos dropped unanswered because the link back to their sender
    /// could not even be queued. A node opens such a link off its
    /// receiving thread, so that a hello naming an endpoint nobody
    /// listens on cannot hold that thread for the connect timeout: at
    /// most 4 at once and 16 queued, one per endpoint, none for a second
    /// after one to the endpoint failed, and at most 64 hellos waiting
    /// for theirs. A hello past those bounds is dropped; its sender's
    /// lookup times out, and may be retried.
    pub hellos_dropped: u64,
    /// Panics caught on the thread polling the node's inbox while it
    /// handled a frame (an [`Export::fed_by`] feed that panicked, say) or
    /// did its periodic work: the frame was dropped, and the thread read
    /// on.
    pub panics: u64,
    /// Frames refused because their body had bytes left after the value
    /// it carries (a valid message followed by garbage), counted also in
    /// `rejected` (a control body) or `refused` (a message). A message for
    /// an export fed through [`Export::fed_by`] is decoded later, by its
    /// route's [`deliver_input`](crate::deliver_input), which refuses it
    /// without counting it here.
    pub trailing: u64,
    /// Remote asks waiting for their reply.
    pub pending: usize,
}
