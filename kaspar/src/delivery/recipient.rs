//! `Recipient<M, R>`: a type-erased address of any actor that handles `M`
//! with reply `R` (actix's `Recipient`, kameo's and ractor's equivalents).
//!
//! A feed that fans quotes out to several strategy types holds a
//! `Vec<Recipient<Quote>>` instead of one `Addr<A>` field per type. Every
//! delivery operation of [`Addr`] is offered, synchronous ones included,
//! and each goes through one indirect call to the typed, monomorphized
//! `Addr<A>` operation behind one vtable. That call is not inlined, and
//! its result comes back through memory: `benches/callgrind.sh` counts
//! 73 instructions for a `fast_send` through a recipient against 36 for
//! the same call, with a reply, through `Addr<A>`. Nothing is allocated per call; making a recipient
//! allocates once.

use std::fmt;
use std::sync::Arc;

use crate::actor::addr::Addr;
use crate::actor::traits::{Actor, Handler};
use crate::base::ids::ActorId;
use crate::error::{Delivered, FastSendError, SendError, Target};
use crate::guard::chain::CyclePolicy;
use crate::reply::{Ask, ReplyTo};

/// Any actor that handles `M` and answers with `R` (`()` by default, for
/// fire-and-forget fan-out).
///
/// `Clone + Send + Sync`; a clone is one reference-count increment. Made
/// by [`Addr::recipient`] or `Recipient::from(addr)`; works for group
/// members like any address.
///
/// ```
/// use kaspar::prelude::*;
/// use kaspar::Recipient;
///
/// #[derive(Clone)]
/// pub struct Quote(pub i64);
///
/// #[actor]
/// pub struct Momentum { last: i64 }
/// #[actor]
/// impl Momentum {
///     #[handler(Quote)]
///     fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) { self.last = q.0; }
/// }
///
/// #[actor]
/// pub struct MeanRevert { n: u64 }
/// #[actor]
/// impl MeanRevert {
///     #[handler(Quote)]
///     fn quote(&mut self, _q: Quote, _ctx: &mut Ctx<Self>) { self.n += 1; }
/// }
///
/// let system = System::new();
/// let strategies: Vec<Recipient<Quote>> = vec![
///     system.spawn(Momentum { last: 0 }).start().recipient(),
///     system.spawn(MeanRevert { n: 0 }).start().into(),
/// ];
/// for s in &strategies {
///     s.fast_send(Quote(101)).unwrap(); // runs each handler here, now
/// }
/// system.shutdown();
/// ```
pub struct Recipient<M, R: Send + 'static = ()> {
    to: Arc<dyn Deliver<M, R>>,
}

/// The typed operations behind a recipient's one vtable.
trait Deliver<M, R: Send + 'static>: Send + Sync {
    fn target(&self) -> Target;
    fn send(&self, msg: M) -> Result<(), SendError<M>>;
    fn ask(&self, msg: M) -> Result<Ask<R>, SendError<M>>;
    fn request(&self, msg: M, reply_to: ReplyTo<R>) -> Result<(), SendError<M>>;
    // One entry per operation, so a call is the vtable load and the typed
    // operation, with nothing to decide in between.
    fn fast_send(&self, msg: M) -> Result<R, FastSendError<M>>;
    fn fast_send_spin(&self, msg: M) -> Result<R, FastSendError<M>>;
    fn fast_send_x(&self, msg: M) -> Result<R, FastSendError<M>>;
    fn fast_send_adaptive(&self, msg: M) -> Result<R, FastSendError<M>>;
    fn fast_send_with_policy(&self, policy: CyclePolicy, msg: M) -> Result<R, FastSendError<M>>;
    fn fast_send_void(&self, msg: M) -> Result<Delivered, SendError<M>>;
}

impl<A, M, R> Deliver<M, R> for Addr<A>
where
    A: Handler<M, Reply = R>,
    M: 'static,
    R: Send + 'static,
{
    fn target(&self) -> Target {
        Addr::target(self)
    }

    #[inline]
    fn send(&self, msg: M) -> Result<(), SendError<M>> {
        Addr::send(self, msg)
    }

    fn request(&self, msg: M, reply_to: ReplyTo<R>) -> Result<(), SendError<M>> {
        Addr::request_into(self, msg, reply_to)
    }

    #[inline]
    fn ask(&self, msg: M) -> Result<Ask<R>, SendError<M>> {
        Addr::ask(self, msg)
    }

    fn fast_send(&self, msg: M) -> Result<R, FastSendError<M>> {
        Addr::fast_send(self, msg)
    }

    fn fast_send_spin(&self, msg: M) -> Result<R, FastSendError<M>> {
        Addr::fast_send_spin(self, msg)
    }

    fn fast_send_x(&self, msg: M) -> Result<R, FastSendError<M>> {
        Addr::fast_send_x(self, msg)
    }

    fn fast_send_adaptive(&self, msg: M) -> Result<R, FastSendError<M>> {
        Addr::fast_send_adaptive(self, msg)
    }

    fn fast_send_with_policy(&self, policy: CyclePolicy, msg: M) -> Result<R, FastSendError<M>> {
        self.with_policy(policy).fast_send(msg)
    }

    #[inline]
    fn fast_send_void(&self, msg: M) -> Result<Delivered, SendError<M>> {
        Addr::fast_send_void(self, msg)
    }
}

impl<M, R: Send + 'static> Clone for Recipient<M, R> {
    fn clone(&self) -> Self {
        Recipient {
            to: Arc::clone(&self.to),
        }
    }
}

impl<M, R: Send + 'static> fmt::Debug for Recipient<M, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Recipient({})", self.to.target())
    }
}

impl<A, M, R> From<Addr<A>> for Recipient<M, R>
where
    A: Handler<M, Reply = R>,
    M: 'static,
    R: Send + 'static,
{
    fn from(addr: Addr<A>) -> Self {
        Recipient { to: Arc::new(addr) }
    }
}

impl<A: Actor> Addr<A> {
    /// This actor as a [`Recipient`] of `M`: a handle that forgets the
    /// actor's type and keeps every delivery operation for `M`.
    pub fn recipient<M>(&self) -> Recipient<M, <A as Handler<M>>::Reply>
    where
        A: Handler<M>,
        M: 'static,
    {
        Recipient::from(self.clone())
    }
}

impl<M, R: Send + 'static> Recipient<M, R> {
    /// The actor's identity.
    pub fn id(&self) -> ActorId {
        self.to.target().id
    }

    /// The actor's identity and name, as errors report it.
    pub fn target(&self) -> Target {
        self.to.target()
    }

    /// [`Addr::send`] through the recipient.
    #[inline]
    pub fn send(&self, msg: M) -> Result<(), SendError<M>> {
        self.to.send(msg)
    }

    /// [`Addr::ask`] through the recipient.
    #[inline]
    pub fn ask(&self, msg: M) -> Result<Ask<R>, SendError<M>> {
        self.to.ask(msg)
    }

    /// [`Addr::request`] through the recipient: the reply arrives in
    /// `reply_to`'s mailbox as an ordinary message. Compiles only if `S`
    /// has a handler for the reply type.
    pub fn request<S: Handler<R>>(&self, msg: M, reply_to: &Addr<S>) -> Result<(), SendError<M>> {
        self.to.request(msg, ReplyTo::shared(&reply_to.cell))
    }

    /// [`Addr::fast_send`] through the recipient.
    #[inline]
    pub fn fast_send(&self, msg: M) -> Result<R, FastSendError<M>> {
        self.to.fast_send(msg)
    }

    /// [`Addr::fast_send_spin`] through the recipient.
    #[inline]
    pub fn fast_send_spin(&self, msg: M) -> Result<R, FastSendError<M>> {
        self.to.fast_send_spin(msg)
    }

    /// [`Addr::fast_send_x`] through the recipient.
    #[inline]
    pub fn fast_send_x(&self, msg: M) -> Result<R, FastSendError<M>> {
        self.to.fast_send_x(msg)
    }

    /// [`Addr::fast_send_adaptive`] through the recipient.
    #[inline]
    pub fn fast_send_adaptive(&self, msg: M) -> Result<R, FastSendError<M>> {
        self.to.fast_send_adaptive(msg)
    }

    /// [`Addr::fast_send_void`] through the recipient.
    #[inline]
    pub fn fast_send_void(&self, msg: M) -> Result<Delivered, SendError<M>> {
        self.to.fast_send_void(msg)
    }

    /// [`Addr::with_policy`] followed by [`fast_send`](Self::fast_send): a
    /// `fast_send` under `policy` for this call.
    ///
    /// # Panics
    ///
    /// As `Addr::with_policy`: on [`CyclePolicy::Permissive`] for an actor
    /// that is not `#[actor(reentrant)]`.
    #[inline]
    pub fn fast_send_with_policy(
        &self,
        policy: CyclePolicy,
        msg: M,
    ) -> Result<R, FastSendError<M>> {
        self.to.fast_send_with_policy(policy, msg)
    }
}
