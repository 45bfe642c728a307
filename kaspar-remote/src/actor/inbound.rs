//! Inbound delivery: a decoded message into a local actor, by `send` or
//! `fast_send`, with an ask's reply encoded back to the asker; and the
//! journal's form of an inbound message, [`RemoteInput`].

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaspar::__private::{send_with_reply, OwnedSink, ReplyTo};
use kaspar::{ActorConfig, Addr, AskError, FastSendError, Handler, SendError};
use serde::{Deserialize, Serialize};

use crate::actor::{RemoteActor, RemoteHandler};
use crate::link::policy::{Idle, SendPolicy};
use crate::session::counters::Counters;
use crate::session::peer::Peer;
use crate::wire::frame::Kind;
use crate::wire::Refused;
use crate::wire::{decode_exact, Wire};

/// One inbound message for an exported actor, as the bridge hands it to
/// the generated [`RemoteActor::deliver`].
#[doc(hidden)]
pub struct Inbound<'a> {
    pub(crate) wire_id: u32,
    pub(crate) body: &'a [u8],
    /// Where an ask's reply goes; `None` for a tell (and in a replay).
    pub(crate) reply: Option<ReplyRoute<'a>>,
    /// Deliver by `fast_send` (on the bridge thread) instead of `send`;
    /// ignored for a thread-bound actor, which is always sent to.
    pub(crate) fast: bool,
    /// How long to wait for room in a full mailbox.
    pub(crate) wait: Duration,
    /// The node's count of bodies refused for bytes left after their
    /// message; `None` where no node counts (a replay).
    pub(crate) trailing: Option<&'a AtomicU64>,
}

impl fmt::Debug for Inbound<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbound")
            .field("wire_id", &self.wire_id)
            .field("body_len", &self.body.len())
            .field("ask", &self.reply.is_some())
            .field("fast", &self.fast)
            .finish()
    }
}

impl Inbound<'_> {
    /// The message's wire id, which the generated code matches.
    pub fn wire_id(&self) -> u32 {
        self.wire_id
    }
}

/// The way back to the process that asked. The bridge lends it the link
/// (no reference count touched for a reply sent at once, as from a
/// `fast_send` export); a route kept past the frame, as a queued
/// message's, owns its link ([`owned`](Self::owned)).
#[derive(Clone)]
pub(crate) struct ReplyRoute<'a> {
    pub(crate) peer: Cow<'a, Arc<Peer>>,
    pub(crate) correlation: u64,
    pub(crate) policy: SendPolicy,
}

impl ReplyRoute<'_> {
    /// The route, owning its link.
    pub(crate) fn owned(self) -> ReplyRoute<'static> {
        ReplyRoute {
            peer: Cow::Owned(self.peer.into_owned()),
            correlation: self.correlation,
            policy: self.policy,
        }
    }

    fn reply<R: Serialize>(&self, reply: &R) {
        let sent = self
            .peer
            .send(Kind::Reply, 0, 0, self.correlation, reply, self.policy);
        if sent == Err(crate::session::peer::SendFail::Unsendable) {
            self.refuse(&Refused::Dropped);
        }
        // Full or lost: the asker's deadline or its own loss detection
        // fails the ask; at most once, never retried from here.
    }

    pub(crate) fn refuse(&self, why: &Refused) {
        let _ = self
            .peer
            .send(Kind::Error, 0, 0, self.correlation, why, self.policy);
    }
}

/// An ask's reply route inside kaspar: encodes the reply back to the
/// asker, or, dropped without one (the handler panicked, the actor stopped
/// first), tells the asker so. It lives in the kaspar route's own
/// allocation (`ReplyTo::to_owned_sink`): one per queued remote ask.
struct WireReplySink {
    /// `None` once the reply or the refusal has gone.
    route: Option<ReplyRoute<'static>>,
}

impl<R: Serialize + Send + 'static> OwnedSink<R> for WireReplySink {
    fn deliver(mut self, reply: R) {
        if let Some(route) = self.route.take() {
            route.reply(&reply);
        }
    }

    fn unanswered(mut self, why: AskError) {
        if let Some(route) = self.route.take() {
            route.refuse(&match why {
                AskError::Panicked(_) => Refused::Panicked,
                _ => Refused::Dropped,
            });
        }
    }
}

/// A backstop: a sink dropped without either call still tells the asker.
impl Drop for WireReplySink {
    fn drop(&mut self) {
        if let Some(route) = self.route.take() {
            let why = if std::thread::panicking() {
                Refused::Panicked
            } else {
                Refused::Dropped
            };
            route.refuse(&why);
        }
    }
}

fn refuse(route: Option<ReplyRoute<'_>>, why: Refused) -> Result<(), Refused> {
    if let Some(route) = route {
        route.refuse(&why);
    }
    Err(why)
}

fn fast_refused<M>(e: FastSendError<M>) -> Refused {
    if e.is_panicked() {
        Refused::Panicked
    } else if e.is_closed() || e.is_not_started() {
        Refused::Closed
    } else {
        Refused::Dropped
    }
}

/// Retries `push` while the mailbox is full, for at most `wait`.
fn with_room<T>(
    wait: Duration,
    mut value: T,
    mut push: impl FnMut(T) -> Result<(), SendError<T>>,
) -> Result<(), (Refused, T)> {
    let until = Instant::now() + wait;
    let mut idle = Idle::new();
    loop {
        match push(value) {
            Ok(()) => return Ok(()),
            Err(SendError::Full { msg: v, .. }) if Instant::now() < until => {
                value = v;
                idle.wait(Some(until));
            }
            Err(SendError::Closed { msg: v, .. }) => return Err((Refused::Closed, v)),
            Err(e) => return Err((Refused::Full, e.into_inner())),
        }
    }
}

/// Decodes `inbound`'s body as `M` and delivers it to `addr`; an ask's
/// reply (or the reason there is none) goes back to the asker. Called by
/// the generated [`RemoteActor::deliver`] for the handler whose wire id
/// matched.
#[doc(hidden)]
pub fn deliver<A, M>(addr: &Addr<A>, inbound: Inbound<'_>) -> Result<(), Refused>
where
    A: RemoteHandler<M>,
    M: Wire,
{
    let Inbound {
        body,
        reply,
        fast,
        wait,
        trailing,
        ..
    } = inbound;
    // The body is one message, all of it: bytes left after the message
    // make it no message of this sender's.
    let msg: M = match decode_exact(body) {
        Ok(m) => m,
        Err(e) => {
            if let Some(count) = trailing.filter(|_| e.is_trailing()) {
                Counters::bump(count, 1);
            }
            return refuse(reply, Refused::Decode(e.to_string()));
        }
    };
    // A thread-bound actor is entered only on its own thread: from the
    // bridge's, `fast_send` would refuse every message. Its export queues
    // instead, as `Export::new` does.
    let fast = fast && !<A as ActorConfig>::THREAD_BOUND;
    match (reply, fast) {
        (None, true) => addr.fast_send(msg).map(drop).map_err(fast_refused),
        (None, false) => with_room(wait, msg, |m| addr.send(m)).map_err(|(why, _)| why),
        (Some(route), true) => match addr.fast_send(msg) {
            Ok(r) => {
                route.reply(&r);
                Ok(())
            }
            Err(e) => refuse(Some(route), fast_refused(e)),
        },
        (Some(route), false) => {
            let sink = WireReplySink {
                route: Some(route.owned()),
            };
            let to: ReplyTo<<A as Handler<M>>::Reply> = ReplyTo::to_owned_sink(sink);
            match with_room(wait, (msg, to), |(m, to)| send_with_reply(addr, m, to)) {
                Ok(()) => Ok(()),
                Err((why, (_, to))) => {
                    // Say why, not merely that the route was dropped: take
                    // the sink back before it reports the drop itself.
                    let route = to
                        .into_owned_sink::<WireReplySink>()
                        .ok()
                        .and_then(|mut sink| sink.route.take());
                    refuse(route, why)
                }
            }
        }
    }
}

/// An inbound message in the form a group's journal records: the wire id
/// and the encoded body. [`deliver_input`] hands it to an exported actor,
/// in the live process (where an ask's reply still goes back) and in a
/// [`Simulation`](kaspar::Simulation) replaying the journal (where there
/// is no network and the reply is dropped). In outline (the book's
/// remote chapter and `tests/journal.rs` have it whole and compiled):
///
/// ```text
/// // live: the export feeds the journal, which routes into the group
/// fn route(g: &Desks, input: RemoteInput) -> bool {
///     kaspar_remote::deliver_input(&g.book, input)
/// }
/// let journal = Journaled::create(&path, group, clock, route)?;
/// node.export_with("book", &group.book, Export::new().fed_by(move |i| journal.feed(i).unwrap_or(false)))?;
/// // later, without a network:
/// sim.replay(JournalReader::open(&path)?, route)?;
/// ```
#[derive(Serialize, Deserialize)]
pub struct RemoteInput {
    /// The message's wire id.
    pub wire_id: u32,
    /// The message, encoded with postcard.
    pub body: Vec<u8>,
    /// An ask's way back; never journaled.
    #[serde(skip)]
    reply: Option<ReplyRoute<'static>>,
}

impl RemoteInput {
    /// An input for the message `msg` (a test or a tool feeding a
    /// journal by hand); `None` if postcard cannot encode it.
    pub fn of<M: Wire>(msg: &M) -> Option<RemoteInput> {
        Some(RemoteInput::new(M::WIRE_ID, postcard::to_stdvec(msg).ok()?))
    }

    /// An input of the message with wire id `wire_id`, encoded as `body`,
    /// with no reply expected.
    pub fn new(wire_id: u32, body: Vec<u8>) -> RemoteInput {
        RemoteInput {
            wire_id,
            body,
            reply: None,
        }
    }

    pub(crate) fn live(wire_id: u32, body: &[u8], reply: Option<ReplyRoute<'_>>) -> RemoteInput {
        RemoteInput {
            wire_id,
            body: body.to_vec(),
            reply: reply.map(ReplyRoute::owned),
        }
    }

    /// Whether the sender waits for a reply (always `false` once read back
    /// from a journal).
    pub fn is_ask(&self) -> bool {
        self.reply.is_some()
    }
}

impl fmt::Debug for RemoteInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteInput")
            .field("wire_id", &self.wire_id)
            .field("body_len", &self.body.len())
            .field("ask", &self.is_ask())
            .finish()
    }
}

/// Decodes `input` and delivers it to `addr` by `send`, as the node's
/// bridge would; returns whether it was delivered. An ask's reply goes
/// back to the asker in a live process; after a replay there is nobody to
/// take it. Refusals (a full or stopped actor, a body that does not
/// decode) return `false` and, for a live ask, reach the asker.
pub fn deliver_input<A: RemoteActor>(addr: &Addr<A>, input: RemoteInput) -> bool {
    A::deliver(
        addr,
        Inbound {
            wire_id: input.wire_id,
            body: &input.body,
            reply: input.reply,
            fast: false,
            wait: Duration::ZERO,
            trailing: None,
        },
    )
    .is_ok()
}
