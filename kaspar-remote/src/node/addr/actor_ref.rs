//! [`ActorRef`]: the address of an actor that may be local or remote.

use std::fmt;

use kaspar::{Addr, Ask, Delivered, Handler, SendError, Target, Terminated};

use super::RemoteAddr;
use crate::actor::{RemoteActor, RemoteHandler};
use crate::wire::Wire;

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
