//! Addresses of actors in other processes: [`RemoteAddr`], which offers
//! the asynchronous deliveries only, and [`ActorRef`], local or remote.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use kaspar::{Addr, Ask, Delivered, Handler, SendError, Target, Terminated};

use crate::error::PolicyError;
use crate::frame::Kind;
use crate::peer::{Peer, SendFail};
use crate::pending::{Complete, Outcome};
use crate::policy::SendPolicy;
use crate::shared::{Counters, Shared};
use crate::wire::{RemoteActor, RemoteHandler, Wire};

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
/// passes.
pub struct RemoteAddr<A> {
    shared: Arc<Shared>,
    peer: Arc<Peer>,
    slot: u32,
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
            target: self.target.clone(),
            policy: self.policy,
            _actor: PhantomData,
        }
    }
}

impl<A> fmt::Debug for RemoteAddr<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RemoteAddr({:?} at {})", self.target, self.peer.endpoint)
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

    /// The endpoint of the node that exports the actor.
    pub fn endpoint(&self) -> &str {
        &self.peer.endpoint
    }

    /// Whether the link to the actor's process is lost (for good: a new
    /// [`lookup`](crate::Node::lookup) opens a new one).
    pub fn is_lost(&self) -> bool {
        self.peer.is_lost()
    }

    /// What a send does when the receiver's buffer is full.
    pub fn policy(&self) -> SendPolicy {
        self.policy
    }

    /// This address with another [`SendPolicy`]; refuses
    /// [`SendPolicy::DropOldest`] where the transport cannot do it.
    pub fn with_policy(&self, policy: SendPolicy) -> Result<Self, PolicyError> {
        if policy == SendPolicy::DropOldest && !self.peer.can_drop_oldest() {
            return Err(PolicyError::DropOldestUnsupported);
        }
        Ok(RemoteAddr {
            policy,
            ..self.clone()
        })
    }

    fn frame<M: Wire>(&self, kind: Kind, id: u64, msg: M) -> Result<(), SendError<M>> {
        match self
            .peer
            .send(kind, self.slot, M::WIRE_ID, id, &msg, self.policy)
        {
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
        self.frame(Kind::Tell, 0, msg)
    }

    /// Sends `msg` and returns a handle to its reply, as
    /// [`Addr::ask`]. Besides the local errors, the handle resolves to
    /// [`AskError::PeerLost`](kaspar::AskError::PeerLost) when the link is lost before the reply comes,
    /// or when the node's reply timeout passes; to
    /// [`AskError::Panicked`](kaspar::AskError::Panicked) when the remote handler panicked, and to
    /// [`AskError::Dropped`](kaspar::AskError::Dropped) when the remote node refused the message.
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
        self.frame(Kind::Ask, id, msg)
    }

    /// Registers `complete` for the reply, then sends `msg` as an ask.
    fn expect_reply<M: Wire>(&self, msg: M, complete: Complete) -> Result<(), SendError<M>> {
        let pending = &self.shared.pending;
        let id = pending.next_id();
        pending.insert(id, self.peer.id, self.shared.config.reply_timeout, complete);
        self.frame(Kind::Ask, id, msg)
            .inspect_err(|_| pending.cancel(id))
    }

    /// Sends `watcher` a [`Terminated`] message, reason
    /// [`ExitReason::PeerLost`](kaspar::ExitReason::PeerLost), when the
    /// link to the actor's process is lost (within the transport's
    /// liveness timeout); at once if it is lost already.
    pub fn watch<W: Handler<Terminated>>(&self, watcher: &Addr<W>) {
        let watcher = watcher.clone();
        let target = self.target.clone();
        self.shared.watch(
            &self.peer,
            Box::new(move || {
                let t = kaspar::__private::terminated(target, kaspar::ExitReason::PeerLost);
                let _ = watcher.send(t);
            }),
        );
    }
}

/// The address of an actor that may be in this process or in another:
/// `send`, `ask` and `request` work either way (for messages that are
/// [`Wire`], since either way is possible), and
/// [`fast_send_or_send`](Self::fast_send_or_send) names the fallback.
pub enum ActorRef<A: kaspar::Actor> {
    /// In this process.
    Local(Addr<A>),
    /// In another.
    Remote(RemoteAddr<A>),
}

impl<A: kaspar::Actor> Clone for ActorRef<A> {
    fn clone(&self) -> Self {
        match self {
            ActorRef::Local(a) => ActorRef::Local(a.clone()),
            ActorRef::Remote(r) => ActorRef::Remote(r.clone()),
        }
    }
}

impl<A: kaspar::Actor> fmt::Debug for ActorRef<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ActorRef::Local(a) => write!(f, "Local({a:?})"),
            ActorRef::Remote(r) => write!(f, "Remote({r:?})"),
        }
    }
}

impl<A: kaspar::Actor> From<Addr<A>> for ActorRef<A> {
    fn from(a: Addr<A>) -> Self {
        ActorRef::Local(a)
    }
}

impl<A: kaspar::Actor> From<RemoteAddr<A>> for ActorRef<A> {
    fn from(r: RemoteAddr<A>) -> Self {
        ActorRef::Remote(r)
    }
}

impl<A: RemoteActor> ActorRef<A> {
    /// Whether the actor is in this process.
    pub fn is_local(&self) -> bool {
        matches!(self, ActorRef::Local(_))
    }

    /// The actor's identity ([`Addr::target`] or [`RemoteAddr::target`]).
    pub fn target(&self) -> Target {
        match self {
            ActorRef::Local(a) => a.target(),
            ActorRef::Remote(r) => r.target(),
        }
    }

    /// [`Addr::send`] or [`RemoteAddr::send`].
    pub fn send<M: Wire>(&self, msg: M) -> Result<(), SendError<M>>
    where
        A: RemoteHandler<M>,
    {
        match self {
            ActorRef::Local(a) => a.send(msg),
            ActorRef::Remote(r) => r.send(msg),
        }
    }

    /// [`Addr::ask`] or [`RemoteAddr::ask`].
    pub fn ask<M: Wire>(&self, msg: M) -> Result<Ask<<A as Handler<M>>::Reply>, SendError<M>>
    where
        A: RemoteHandler<M>,
    {
        match self {
            ActorRef::Local(a) => a.ask(msg),
            ActorRef::Remote(r) => r.ask(msg),
        }
    }

    /// [`Addr::request`] or [`RemoteAddr::request`].
    pub fn request<M: Wire, S>(&self, msg: M, reply_to: &Addr<S>) -> Result<(), SendError<M>>
    where
        A: RemoteHandler<M>,
        S: Handler<<A as Handler<M>>::Reply>,
    {
        match self {
            ActorRef::Local(a) => a.request(msg, reply_to),
            ActorRef::Remote(r) => r.request(msg, reply_to),
        }
    }

    /// Runs the handler inline when the actor is local and its lock is
    /// free ([`Addr::fast_send_void`]: queued instead when it is busy or
    /// entering would be a cycle), and falls back to [`send`](Self::send)
    /// when it is remote ([`Delivered::Queued`]). The reply is dropped
    /// either way.
    pub fn fast_send_or_send<M: Wire>(&self, msg: M) -> Result<Delivered, SendError<M>>
    where
        A: RemoteHandler<M>,
    {
        match self {
            ActorRef::Local(a) => a.fast_send_void(msg),
            ActorRef::Remote(r) => r.send(msg).map(|()| Delivered::Queued),
        }
    }

    /// [`Addr::watch`] or [`RemoteAddr::watch`]: `watcher` hears when the
    /// actor stops, or, when it is remote, when the link to it is lost.
    pub fn watch<W: Handler<Terminated>>(&self, watcher: &Addr<W>) {
        match self {
            ActorRef::Local(a) => a.watch(watcher),
            ActorRef::Remote(r) => r.watch(watcher),
        }
    }
}
