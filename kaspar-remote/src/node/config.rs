//! A node's settings, how an export receives its messages, and what a node
//! reports: [`NodeConfig`], [`Export`], [`NodeStats`], [`Gap`].

use std::fmt;
use std::time::Duration;

use crate::actor::inbound::RemoteInput;
use crate::link::policy::{IdleStrategy, SendPolicy};
use crate::session::acks::Retain;
use crate::session::auth::Auth;

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
    /// The most inbound sessions (connections to this node) held at once.
    /// A frame that would open one more is dropped unread and counted
    /// ([`NodeStats::sessions_refused`]); a lookup whose hello is refused
    /// so times out. Default 4096: a session per sending process per node
    /// it talks to, so far above a real deployment's peers, and at about
    /// 100 bytes a session, at most half a MiB however many session ids
    /// peers make up.
    pub max_sessions: usize,
    /// How long an inbound session may send nothing before it is evicted
    /// and its memory freed (counted in [`NodeStats::sessions_evicted`]),
    /// checked by the bridge's periodic work: evicted after between this
    /// and twice this without a frame. A session whose sender said hello
    /// and is alive (its link back is live) is kept however long it is
    /// quiet, since evicting it would leave that peer's next asks without
    /// a route for their replies; it is evicted once its sender is lost.
    /// `Duration::MAX` turns eviction off. Default 30 s: well above the
    /// connect timeout a hello may wait for its link back, and short
    /// enough that sessions a forger made up go within a minute.
    pub session_idle: Duration,
    /// The most remote asks (and requests) of this node waiting for their
    /// reply at once. One more is refused at once, its message handed
    /// back ([`SendError::Full`](kaspar::SendError::Full)), and counted
    /// ([`NodeStats::asks_refused`]): a peer that never answers holds no
    /// more than this many until the reply timeout. Default 65,536: at
    /// about 150 bytes an ask, under 10 MiB; far more asks in flight than
    /// a transport's buffers hold, so a healthy peer never meets it.
    /// Lookups are not counted: each waits for its answer on its own
    /// thread.
    pub max_pending: usize,
    /// Peer authentication; `None` (the default) accepts every peer, as
    /// nodes before it did. With `Some`, nothing of a peer's is handled
    /// until it has proved it holds the key ([`Auth`]; the handshake is
    /// described in [`auth`](crate::auth)), the node proves the same to
    /// the nodes it looks up, and both ends of a lookup need it. Turn it
    /// on wherever the transport's own access control admits processes
    /// that are not all trusted (the book's remote chapter, "Trust"): for
    /// UDP always, with [`Auth::sign_frames`].
    pub auth: Option<Auth>,
    /// Keeps, per outbound link, the last messages the peer has not
    /// acknowledged yet, for dead letters if the link is lost before it
    /// does ([`Retain`]; see [`LinkLoss`](crate::LinkLoss)). `None` (the
    /// default): nothing is kept, and a loss only counts them.
    pub retain: Option<Retain>,
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
            max_sessions: 4096,
            session_idle: Duration::from_secs(30),
            max_pending: 65_536,
            auth: None,
            retain: None,
        }
    }
}

/// How an exported actor receives its inbound messages.
pub struct Export {
    pub(crate) fast: bool,
    pub(crate) feed: Option<Box<dyn Fn(RemoteInput) -> bool + Send + Sync>>,
    pub(crate) allow: Option<Vec<String>>,
}

impl Export {
    /// Delivery by `send` (the default): queued for the actor's thread.
    pub fn new() -> Self {
        Export {
            fast: false,
            feed: None,
            allow: None,
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

impl Export {
    /// Admits only the peers that authenticated as one of `key_ids`
    /// ([`Auth::new`]'s and [`Auth::peer`]'s ids): another peer's lookup
    /// fails with [`Refused::NotAllowed`](crate::Refused::NotAllowed), and
    /// its tells and asks are refused (an ask with that error), even on a
    /// session that may call another export. Needs
    /// [`NodeConfig::auth`]: exporting with an allow list on a node
    /// without it fails ([`ExportError::NeedsAuth`](crate::ExportError::NeedsAuth)),
    /// since there would be no key id to check.
    pub fn allow<I, S>(mut self, key_ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow = Some(key_ids.into_iter().map(Into::into).collect());
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
            .field("allow", &self.allow)
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
    /// Frames dropped unread because the node requires authentication
    /// ([`NodeConfig::auth`]) and their session may not send them: hellos
    /// without a valid MAC (or replayed), frames of sessions that never
    /// authenticated, challenges and proofs that do not verify, frames
    /// whose tag does not verify. Nothing is sent in answer to any of
    /// them. (A tell or ask past an export's allow list is counted in
    /// `refused` instead: its session is authenticated.)
    pub unauthenticated: u64,
    /// Of `unauthenticated`: hellos with a valid MAC seen before, refused
    /// as replays.
    pub replayed: u64,
    /// Remote asks waiting for their reply.
    pub pending: usize,
    /// Inbound sessions held now (at most
    /// [`NodeConfig::max_sessions`]), as of the last batch of frames or
    /// periodic check.
    pub sessions: usize,
    /// Frames dropped because they would have opened a session past
    /// [`NodeConfig::max_sessions`].
    pub sessions_refused: u64,
    /// Sessions evicted after [`NodeConfig::session_idle`] without a
    /// frame.
    pub sessions_evicted: u64,
    /// Asks (and requests) refused at once because
    /// [`NodeConfig::max_pending`] were waiting for their replies.
    pub asks_refused: u64,
    /// Frames this node sent on links later found lost that their peer
    /// never acknowledged as handled: the sum of the
    /// [`LinkLoss::unacknowledged`](crate::LinkLoss::unacknowledged)
    /// counts ([`Node::losses`](crate::Node::losses)).
    pub unacknowledged: u64,
    /// Of `unacknowledged`, the messages handed to dead letters from a
    /// [`NodeConfig::retain`] buffer.
    pub unacknowledged_dead_lettered: u64,
    /// Of `unacknowledged`, the frames that were not held for dead letters:
    /// `unacknowledged - unacknowledged_dead_lettered`.
    pub unacknowledged_not_retained: u64,
}
