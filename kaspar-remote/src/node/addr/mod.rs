//! Addresses of actors in other processes: [`RemoteAddr`], which offers
//! the asynchronous deliveries only, and [`ActorRef`], local or remote
//! (in `actor_ref`); a remote address has no `fast_send` (`no_fast_send`).

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use kaspar::{Addr, Ask, Handler, SendError, Target, Terminated};

use crate::actor::{RemoteActor, RemoteHandler};
use crate::link::policy::SendPolicy;
use crate::node::error::{LookupError, PolicyError};
use crate::node::reconnect::route::{Hop, Route, RouteWatcher};
use crate::node::reconnect::Reconnect;
use crate::node::shared::Shared;
use crate::session::acks::Keep;
use crate::session::counters::Counters;
use crate::session::peer::{Peer, SendFail};
use crate::session::pending::{Complete, Outcome};
use crate::wire::frame::Kind;
use crate::wire::Wire;

mod actor_ref;
pub(crate) mod no_fast_send;

pub use actor_ref::ActorRef;

/// The address of an actor of type `A` in another process, from
/// [`Node::lookup`](crate::Node::lookup).
///
/// It offers [`send`](Self::send), [`ask`](Self::ask) and
/// [`request`](Self::request), with the local [`Addr`]'s signatures, and
/// nothing synchronous: a handler in another address space cannot run on
/// this thread, so `fast_send` does not compile here (use
/// [`ActorRef::fast_send_or_send`] to name the fallback). The handlers are
/// the ones a local `send` reaches, unchanged.
///
/// Delivery is at most once: a message is encoded on the calling thread
/// straight into the transport's buffer, and a message whose send returned
/// `Ok` can still be lost with its link (the receiver then reports the
/// gap). Nothing waits forever: a full buffer waits at most what the
/// address's [`SendPolicy`] allows, and an `ask` fails with
/// [`AskError::PeerLost`](kaspar::AskError::PeerLost) when the link is lost or the node's reply timeout
/// passes. A lost link stays lost, unless the address was given a
/// [`Reconnect`] policy ([`with_reconnect`](Self::with_reconnect)).
pub struct RemoteAddr<A> {
    shared: Arc<Shared>,
    /// The link of the lookup, and the export's slot there: the one sends
    /// use unless `route` is set.
    peer: Arc<Peer>,
    slot: u32,
    /// With a reconnect policy: the links this address and its clones
    /// use, the current one first in line.
    route: Option<Arc<Route>>,
    target: Target,
    policy: SendPolicy,
    _actor: PhantomData<fn() -> A>,
}

impl<A> Clone for RemoteAddr<A> {
    fn clone(&self) -> Self {
        RemoteAddr {
            shared: self.shared.clone(),
            peer: self.peer.clone(),
            slot: self.slot,
            route: self.route.clone(),
            target: self.target.clone(),
            policy: self.policy,
            _actor: PhantomData,
        }
    }
}

impl<A> fmt::Debug for RemoteAddr<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RemoteAddr({:?} at {})",
            self.target,
            self.link().0.endpoint
        )
    }
}

impl<A> RemoteAddr<A> {
    /// The link sends take now, and the export's slot there: this
    /// address's own, or, with a reconnect policy, the route's current
    /// one (three acquire loads; no lock).
    #[inline]
    fn link(&self) -> (&Arc<Peer>, u32) {
        match &self.route {
            None => (&self.peer, self.slot),
            Some(route) => {
                let hop = route.current();
                (&hop.peer, hop.slot)
            }
        }
    }
}

impl<A: RemoteActor> RemoteAddr<A> {
    pub(crate) fn new(
        shared: Arc<Shared>,
        peer: Arc<Peer>,
        slot: u32,
        export: &str,
        policy: SendPolicy,
    ) -> Self {
        RemoteAddr {
            shared,
            peer,
            slot,
            route: None,
            target: kaspar::__private::remote_target(A::NAME, export.into()),
            policy,
            _actor: PhantomData,
        }
    }

    /// The actor as errors and [`Terminated`] name it: a local identity of
    /// this remote address, the actor's type name, and the name it is
    /// exported under as the instance name.
    pub fn target(&self) -> Target {
        self.target.clone()
    }

    /// The actor's type name.
    pub fn name(&self) -> &'static str {
        A::NAME
    }

    /// The endpoint of the node that exports the actor (with a reconnect
    /// policy: of the link the address uses now).
    pub fn endpoint(&self) -> &str {
        &self.link().0.endpoint
    }

    /// Whether the link to the actor's process is lost: for good without
    /// a [`Reconnect`] policy (a new [`lookup`](crate::Node::lookup) opens
    /// a new one); with one, until the address is back.
    pub fn is_lost(&self) -> bool {
        self.link().0.is_lost()
    }

    /// This address, reconnecting as `policy` says: when its link is lost,
    /// it looks the actor up again (by the name it was looked up under)
    /// until the actor's process is back, and then sends there. The
    /// returned address and its clones share one link and one reconnect
    /// state; `self` and its other clones keep theirs (without a policy,
    /// a lost link stays lost).
    ///
    /// In the gap, from the report of the loss until the address is back,
    /// [`send`](Self::send) and [`request`](Self::request) return
    /// [`SendError::Closed`] with the message handed back, and
    /// [`ask`](Self::ask) does too, or resolves to
    /// [`AskError::PeerLost`](kaspar::AskError::PeerLost) if it was sent
    /// before the loss was found; [`is_lost`](Self::is_lost) is `true`.
    /// Nothing sent before or during the gap is sent again: what the lost
    /// link did not deliver is reported, by this node
    /// ([`Node::losses`](crate::Node::losses)) and, where the receiving
    /// node is the one that saw the lost session, by it
    /// ([`Node::gaps`](crate::Node::gaps)). Watchers
    /// ([`watch`](Self::watch)) hear of each loss once.
    ///
    /// A send costs three acquire loads more than without a policy (plain
    /// loads on x86-64), and no lock; the lookups run on a thread of the
    /// address's own while it is in a gap, at most one at a time, as
    /// [`Reconnect`] describes, each exactly as [`Node::lookup`](crate::Node::lookup)'s
    /// (schema checked, authenticated where the node requires it).
    pub fn with_reconnect(&self, policy: Reconnect) -> Self {
        let (peer, slot) = self.link();
        let first = Hop {
            peer: peer.clone(),
            slot,
        };
        let export = self.target.instance.clone().unwrap_or_else(|| "".into());
        let route = Route::new(
            self.shared.clone(),
            first,
            export,
            A::NAME,
            A::SCHEMA_HASH,
            policy,
        );
        RemoteAddr {
            route: Some(route),
            ..self.clone()
        }
    }

    /// The address's reconnect policy, if it has one.
    pub fn reconnect(&self) -> Option<Reconnect> {
        self.route.as_ref().map(|r| r.policy())
    }

    /// How many times this address (with its clones) has come back after
    /// a loss; 0 without a reconnect policy.
    pub fn reconnects(&self) -> u64 {
        self.route.as_ref().map_or(0, |r| r.reconnects())
    }

    /// Why the last lookup of a reconnecting address failed, while it is
    /// in a gap (`None` once it is back, and without a policy).
    pub fn reconnect_error(&self) -> Option<LookupError> {
        self.route.as_ref().and_then(|r| r.last_error())
    }

    /// Whether this address's reconnect policy has stopped trying: its
    /// [`give_up_after`](Reconnect::give_up_after) passed in a gap, its
    /// node was closed, no thread could be started to reconnect on, or
    /// the address has used up its 2^32 - 1 links. The link is then lost
    /// for good, as without a policy, and nothing brings the address back.
    /// `false` without a policy.
    pub fn gave_up(&self) -> bool {
        self.route.as_ref().is_some_and(|r| r.gave_up())
    }

    /// Frames sent on this address's link (shared by every address of the
    /// same node there: its hello and the messages of all of them) that
    /// the peer has not acknowledged as handled yet. Acks come once per
    /// millisecond or so while frames arrive, so on a healthy link this
    /// is what was sent in the last few: the frames a loss of the link
    /// now would report ([`LinkLoss`](crate::LinkLoss)). A peer of a build
    /// without acks never acknowledges, and this only grows.
    pub fn unacknowledged(&self) -> u64 {
        self.link().0.unacknowledged()
    }

    /// What a send does when the receiver's buffer is full.
    pub fn policy(&self) -> SendPolicy {
        self.policy
    }

    /// This address with another [`SendPolicy`]; refuses
    /// [`SendPolicy::DropOldest`] where the transport cannot do it.
    pub fn with_policy(&self, policy: SendPolicy) -> Result<Self, PolicyError> {
        if policy == SendPolicy::DropOldest && !self.link().0.can_drop_oldest() {
            return Err(PolicyError::DropOldestUnsupported);
        }
        Ok(RemoteAddr {
            policy,
            ..self.clone()
        })
    }

    /// Sends `msg` as one frame on `link` (from [`link`](Self::link)).
    fn frame<M: Wire>(
        &self,
        (peer, slot): (&Arc<Peer>, u32),
        kind: Kind,
        id: u64,
        msg: M,
    ) -> Result<(), SendError<M>> {
        // With a retain buffer, the link keeps the frame until it is
        // acknowledged, for dead letters if the peer is lost first.
        let keep = Keep {
            target: &self.target,
            class: std::any::type_name::<M>(),
        };
        match peer.send_kept(kind, slot, M::WIRE_ID, id, &msg, self.policy, Some(keep)) {
            Ok(()) => Ok(()),
            Err(SendFail::Full) => Err(SendError::Full {
                target: Some(self.target()),
                msg,
            }),
            Err(SendFail::Lost) => Err(SendError::Closed {
                target: Some(self.target()),
                msg,
            }),
            Err(SendFail::Unsendable) => {
                Counters::bump(&self.shared.counters.unsendable, 1);
                Err(SendError::Closed {
                    target: Some(self.target()),
                    msg,
                })
            }
        }
    }

    /// Sends `msg` to the actor's process, to be queued for the actor there
    /// (or run on that node's bridge thread, if the export is
    /// [`fast_send`](crate::Export::fast_send)).
    ///
    /// - [`SendError::Full`]: the receiver's buffer stayed full under the
    ///   address's [`SendPolicy`]; nothing was sent.
    /// - [`SendError::Closed`]: the link is lost (or the node closed), or
    ///   the message can never cross it: postcard cannot encode it, or its
    ///   frame is longer than the transport carries (counted in
    ///   [`NodeStats::unsendable`](crate::NodeStats::unsendable)).
    ///
    /// The message comes back in both, and the error names the actor as
    /// [`target`](Self::target) does. `Ok` means the frame is in the
    /// transport's buffer; the remote actor may still refuse it (stopped,
    /// full past the remote node's inbound wait), as a local `send` to a
    /// stopped actor is refused, but there is nobody to tell.
    pub fn send<M: Wire>(&self, msg: M) -> Result<(), SendError<M>>
    where
        A: RemoteHandler<M>,
    {
        self.frame(self.link(), Kind::Tell, 0, msg)
    }

    /// Sends `msg` and returns a handle to its reply, as
    /// [`Addr::ask`]. Besides the local errors, the handle resolves to
    /// [`AskError::PeerLost`](kaspar::AskError::PeerLost) when the link is lost before the reply comes,
    /// or when the node's reply timeout passes; to
    /// [`AskError::Panicked`](kaspar::AskError::Panicked) when the remote handler panicked, and to
    /// [`AskError::Dropped`](kaspar::AskError::Dropped) when the remote node refused the message.
    /// It is refused at once, [`SendError::Full`] with the message handed
    /// back, when this node has
    /// [`NodeConfig::max_pending`](crate::NodeConfig::max_pending) asks
    /// waiting already (so is a [`request`](Self::request)).
    pub fn ask<M: Wire>(&self, msg: M) -> Result<Ask<<A as Handler<M>>::Reply>, SendError<M>>
    where
        A: RemoteHandler<M>,
    {
        let (ask, slot) = kaspar::__private::ask_slot::<<A as Handler<M>>::Reply>();
        self.expect_reply(msg, Complete::slot(slot))?;
        Ok(ask)
    }

    /// Sends `msg`; the reply comes back to this process and is sent to
    /// `reply_to` as an ordinary message, as [`Addr::request`]. A reply
    /// that never comes (the link lost, the message refused) is never
    /// delivered, as a local request to a stopped actor is not.
    pub fn request<M: Wire, S>(&self, msg: M, reply_to: &Addr<S>) -> Result<(), SendError<M>>
    where
        A: RemoteHandler<M>,
        S: Handler<<A as Handler<M>>::Reply>,
    {
        let reply_to = reply_to.clone();
        self.expect_reply(
            msg,
            Complete::Call(Box::new(move |outcome: Outcome<'_>| {
                if let Outcome::Reply(body) = outcome {
                    if let Ok(reply) = body.decode::<<A as Handler<M>>::Reply>() {
                        let _ = reply_to.send(reply);
                    }
                }
            })),
        )
    }

    /// Whether this address was looked up through the node that owns
    /// `shared` (whose inbox its replies come to).
    pub(crate) fn is_through(&self, shared: &Arc<Shared>) -> bool {
        Arc::ptr_eq(&self.shared, shared)
    }

    /// Sends `msg` as ask `id`, whose reply the caller catches itself
    /// (`Node::ask_polling`).
    pub(crate) fn send_ask<M: Wire>(&self, id: u64, msg: M) -> Result<(), SendError<M>>
    where
        A: RemoteHandler<M>,
    {
        self.frame(self.link(), Kind::Ask, id, msg)
    }

    /// Registers `complete` for the reply, then sends `msg` as an ask;
    /// refuses it with [`SendError::Full`] when the node has
    /// [`NodeConfig::max_pending`](crate::NodeConfig::max_pending) asks
    /// waiting already.
    fn expect_reply<M: Wire>(&self, msg: M, complete: Complete) -> Result<(), SendError<M>> {
        let pending = &self.shared.pending;
        let id = pending.next_id();
        let timeout = self.shared.config.reply_timeout;
        // One link for both: the ask fails with the link it went on.
        let link = self.link();
        if !pending.try_insert(id, link.0.id, timeout, complete) {
            return Err(SendError::Full {
                target: Some(self.target()),
                msg,
            });
        }
        self.frame(link, Kind::Ask, id, msg)
            .inspect_err(|_| pending.cancel(id))
    }

    /// Sends `watcher` a [`Terminated`] message, reason
    /// [`ExitReason::PeerLost`](kaspar::ExitReason::PeerLost), when the
    /// link to the actor's process is lost (within the transport's
    /// liveness timeout); at once if it is lost already. With a
    /// [`Reconnect`] policy, once for every loss (at once if the address
    /// is in a gap), as long as the watcher runs.
    pub fn watch<W: Handler<Terminated>>(&self, watcher: &Addr<W>) {
        let watcher = watcher.clone();
        let target = self.target.clone();
        if let Some(route) = &self.route {
            let tell: Arc<RouteWatcher> = Arc::new(move || {
                let t = kaspar::__private::terminated(target.clone(), kaspar::ExitReason::PeerLost);
                // A watcher that has stopped is not told again.
                !matches!(watcher.send(t), Err(SendError::Closed { .. }))
            });
            return route.watch(tell);
        }
        self.shared.watch(
            &self.peer,
            Box::new(move || {
                let t = kaspar::__private::terminated(target, kaspar::ExitReason::PeerLost);
                let _ = watcher.send(t);
            }),
        );
    }
}
