//! How an actor's inbox stores its messages: its own mailbox holds each
//! one [`Actor::pack`]ed, a group's sink takes it as it is.

use std::marker::PhantomData;

use crate::actor::ctx::Ctx;
use crate::actor::trace::Queued;
use crate::actor::traits::{AccessRef, Actor};
use crate::base::ids::ClassId;
use crate::mailbox::inbox::{Inbox, Stores};

/// An actor's inbox (see the module docs).
pub(crate) type ActorInbox<A> = Inbox<Storage<A>>;

/// How an actor's own mailbox stores its messages: [`Stored`], each with
/// its cause when tracing.
pub(crate) struct Storage<A>(PhantomData<A>);

impl<A: Actor> Stores for Storage<A> {
    type Msg = Queued<A::Msg>;
    type Stored = Queued<Stored<A>>;

    #[inline(always)]
    fn store(msg: Self::Msg) -> Self::Stored {
        crate::actor::trace::map(msg, Stored::new)
    }

    #[inline(always)]
    fn load(stored: Self::Stored) -> Self::Msg {
        crate::actor::trace::map(stored, Stored::load)
    }
}

/// A message as an actor's own mailbox holds it: [`Actor::pack`]ed.
pub(crate) struct Stored<A: Actor>(A::Packed);

// SAFETY: `A::Packed: Packing<A::Msg>` (the `Actor` trait's bound) says a
// stored message owns exactly what a value of the message enum owns, and
// the enum is `Send` (the same trait's bound): moving a stored message to
// another thread moves nothing an enum's move would not.
unsafe impl<A: Actor> Send for Stored<A> {}

impl<A: Actor> Stored<A> {
    /// `msg` as the mailbox stores it.
    #[inline(always)]
    pub(crate) fn new(msg: A::Msg) -> Self {
        Stored(A::pack(msg))
    }

    /// The message [`new`](Self::new) stored.
    #[inline(always)]
    pub(crate) fn load(self) -> A::Msg {
        A::unpack(self.0)
    }
}

/// A queued message as a run loop serves it: what its class is, running
/// its handler, and the message enum, for dead letters. A stored message
/// is served as it is stored (its class is its tag; its handler is found
/// by the tag), a group member's as its enum.
pub(crate) trait Parcel<A: Actor> {
    /// The message's class.
    fn class(&self) -> ClassId;
    /// Runs its handler and routes the reply.
    fn dispatch(self, this: AccessRef<'_, A>, ctx: &mut Ctx<'_, A>);
    /// The message enum.
    fn into_msg(self) -> A::Msg;
}

impl<A: Actor> Parcel<A> for Stored<A> {
    #[inline(always)]
    fn class(&self) -> ClassId {
        A::class_of_packed(&self.0)
    }

    #[inline(always)]
    fn dispatch(self, this: AccessRef<'_, A>, ctx: &mut Ctx<'_, A>) {
        A::dispatch_packed(this, self.0, ctx)
    }

    #[inline(always)]
    fn into_msg(self) -> A::Msg {
        self.load()
    }
}

/// A message as its enum (a group member's, or one a flight recorder
/// read), to serve.
pub(crate) struct Plain<A: Actor>(pub(crate) A::Msg);

impl<A: Actor> Parcel<A> for Plain<A> {
    #[inline(always)]
    fn class(&self) -> ClassId {
        A::class_of(&self.0)
    }

    #[inline(always)]
    fn dispatch(self, this: AccessRef<'_, A>, ctx: &mut Ctx<'_, A>) {
        A::dispatch(this, self.0, ctx)
    }

    #[inline(always)]
    fn into_msg(self) -> A::Msg {
        self.0
    }
}
