//! The traits the `#[actor]` macro implements, and the identities the
//! runtime keys cycle detection on.
//!
//! Users never implement these traits by hand: `#[actor]` on the struct
//! implements [`ActorConfig`], `#[actor]` on the impl block implements
//! [`Actor`] and one [`Handler<M>`] per `#[handler(M)]` method.

use crate::actor::ctx::Ctx;
use crate::actor::packed::Packing;
use crate::base::ids::ClassId;
use crate::mailbox::MailboxKind;
use crate::reply::ReplyTo;
use crate::CyclePolicy;

/// How handlers reach the actor's state: `&mut self` ([`Exclusive`]) or
/// `&self` ([`Shared`], for `#[actor(reentrant)]` actors).
///
/// Re-entering an actor whose state is mutably borrowed further up the same
/// stack would alias a `&mut` — undefined behaviour in Rust. So only actors
/// whose handlers take `&self` (and keep their mutable state in `Cell`,
/// `RefCell` or atomics) may ever be re-entered, and only under
/// [`CyclePolicy::Permissive`]. This trait is how the type system tells the
/// two apart.
pub trait AccessMode: sealed::Sealed + 'static {
    /// The reference a handler receives.
    type Ref<'a, A: 'a>;
    /// Whether actors of this mode may be re-entered on one thread.
    const REENTRANT: bool;
    /// Turns the state pointer into the handler's reference.
    ///
    /// # Safety
    ///
    /// `ptr` is valid for `'a`, and for `'a` no other reference to the
    /// pointee exists that this one would alias unsoundly: for `Exclusive`
    /// none at all, for `Shared` no `&mut`.
    #[doc(hidden)]
    unsafe fn from_ptr<'a, A: 'a>(ptr: *mut A) -> Self::Ref<'a, A>;
    /// Weakens the handler's reference to a shared one.
    #[doc(hidden)]
    fn as_shared<'a, A: 'a>(r: Self::Ref<'a, A>) -> &'a A;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Exclusive {}
    impl Sealed for super::Shared {}
}

/// Handlers take `&mut self`; the actor is never re-entered.
#[derive(Debug)]
pub enum Exclusive {}
/// Handlers take `&self`; the actor may be re-entered under
/// [`CyclePolicy::Permissive`] with a different message class.
#[derive(Debug)]
pub enum Shared {}

impl AccessMode for Exclusive {
    type Ref<'a, A: 'a> = &'a mut A;
    const REENTRANT: bool = false;
    #[inline(always)]
    unsafe fn from_ptr<'a, A: 'a>(ptr: *mut A) -> &'a mut A {
        // SAFETY: forwarded from the caller: `ptr` is valid and unaliased
        // for `'a`.
        unsafe { &mut *ptr }
    }
    #[inline(always)]
    fn as_shared<'a, A: 'a>(r: &'a mut A) -> &'a A {
        r
    }
}

impl AccessMode for Shared {
    type Ref<'a, A: 'a> = &'a A;
    const REENTRANT: bool = true;
    #[inline(always)]
    unsafe fn from_ptr<'a, A: 'a>(ptr: *mut A) -> &'a A {
        // SAFETY: forwarded from the caller: `ptr` is valid and no `&mut`
        // to it exists for `'a`.
        unsafe { &*ptr }
    }
    #[inline(always)]
    fn as_shared<'a, A: 'a>(r: &'a A) -> &'a A {
        r
    }
}

/// The reference a handler of `A` receives: `&mut A` or `&A`.
pub type AccessRef<'a, A> = <<A as ActorConfig>::Access as AccessMode>::Ref<'a, A>;

/// The options written in `#[actor(...)]` on the struct.
///
/// Implemented by `#[actor]` on the struct; read by the runtime at spawn.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not declared as an actor",
    label = "add `#[actor]` to the declaration of `{Self}`",
    note = "`#[actor]` goes on the struct (it carries the options) and on the impl block (it collects the handlers)"
)]
pub trait ActorConfig: Sized + 'static {
    /// [`Exclusive`] (default) or [`Shared`] (`#[actor(reentrant)]`).
    type Access: AccessMode;
    /// [`AnyThread`] (default) or [`OwnThread`] (`#[actor(thread_bound)]`).
    /// The bound is where a state that is not `Send` is refused, unless
    /// the actor is thread-bound.
    type Home: Home + Admits<Self>;
    /// The actor's name in errors, metrics and logs.
    const NAME: &'static str;
    /// `#[actor(mailbox = ...)]`, or `None` for the system default.
    const MAILBOX: Option<MailboxKind> = None;
    /// `#[actor(policy = ...)]`, or `None` for the system default.
    const POLICY: Option<CyclePolicy> = None;
    /// Whether the state is reached only on the actor's own thread.
    const THREAD_BOUND: bool = <Self::Home as Home>::BOUND;
}

/// Where an actor's state may be reached: [`AnyThread`] or [`OwnThread`].
pub trait Home: sealed::Sealed + 'static {
    /// Whether entries from other threads are refused.
    #[doc(hidden)]
    const BOUND: bool;
}

/// The default: any thread may run the actor's handlers (under its lock),
/// so the state moves between threads and must be `Send`.
#[derive(Debug)]
pub enum AnyThread {}

/// `#[actor(thread_bound)]`: the state lives on the actor's own thread
/// (its run loop's, or its group's) and is reached only there, so it need
/// not be `Send`.
///
/// Why that is sound: such a state is built there
/// ([`System::spawn_with`](crate::System::spawn_with),
/// [`System::spawn_group_with`](crate::System::spawn_group_with)), every
/// queued message is handled there, and a synchronous delivery
/// (`fast_send` and its family) enters the state only after checking that
/// it runs on that thread, refusing with
/// [`FastSendError::ThreadBound`](crate::FastSendError::ThreadBound)
/// otherwise. When the actor stops, the state is dropped there too. What
/// crosses threads is only what always does: messages and replies, which
/// are `Send`.
#[derive(Debug)]
pub enum OwnThread {}

impl sealed::Sealed for AnyThread {}
impl sealed::Sealed for OwnThread {}
impl Home for AnyThread {
    const BOUND: bool = false;
}
impl Home for OwnThread {
    const BOUND: bool = true;
}

/// `H` allows a state of type `A`: [`AnyThread`] only a `Send` one.
#[doc(hidden)]
pub trait Admits<A> {}

#[rustfmt::skip] // rustc quotes a failing bound's line: the reason stays on it
impl<A> Admits<A> for AnyThread where
    A: Send, // an actor's state moves between threads: every field must be `Send`, or declare `#[actor(thread_bound)]` and spawn it with `System::spawn_with`
{
}
impl<A> Admits<A> for OwnThread {}

/// Implemented by `#[actor]` on the impl block; the other impls the macro
/// generates assume it, so that an impl block whose struct lacks `#[actor]`
/// is reported for the missing `#[actor]` alone, and a generic actor's
/// parameter that is not `'static` is one error instead of one per impl.
/// (Whether the state must be `Send` is `ActorConfig::Home`'s bound.)
#[doc(hidden)]
#[rustfmt::skip] // rustc quotes a failing bound's line: the reason stays on it
pub trait ActorState:
    'static // an actor's state lives on until the actor stops, so it borrows nothing
{
}

/// An actor: state plus a compile-time dispatch over its handlers.
///
/// Implemented by `#[actor]` on the impl block.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no `#[actor]` impl block",
    label = "`{Self}` is not an actor yet",
    note = "`#[actor]` goes on the struct (it carries the options) and on the impl block whose methods carry `#[handler(Msg)]` (it collects the handlers)"
)]
pub trait Actor: ActorConfig {
    /// The generated message enum: one variant per handler, each carrying
    /// the message and where its reply goes. Mailboxes store it inline
    /// (an actor's own mailbox as [`Packed`](Actor::Packed)).
    type Msg: Send + 'static;

    /// The message as the actor's own mailbox stores it: for an actor
    /// with two or more handlers, a newtype of
    /// [`Packed`](crate::__private::Packed), the enum without its tag word
    /// (the tag rides in the reply route's); otherwise the enum itself.
    #[doc(hidden)]
    type Packed: Packing<Self::Msg>;

    /// The message in its stored form.
    #[doc(hidden)]
    fn pack(msg: Self::Msg) -> Self::Packed;

    /// The message [`pack`](Actor::pack) stored.
    #[doc(hidden)]
    fn unpack(packed: Self::Packed) -> Self::Msg;

    /// [`class_of`](Actor::class_of) a stored message (a packed one's
    /// tag), without unpacking it.
    #[doc(hidden)]
    fn class_of_packed(packed: &Self::Packed) -> ClassId;

    /// [`dispatch`](Actor::dispatch) of a stored message, without
    /// rebuilding the enum first.
    #[doc(hidden)]
    fn dispatch_packed(this: AccessRef<'_, Self>, packed: Self::Packed, ctx: &mut Ctx<'_, Self>);

    /// Handler names by [`ClassId`] index, for error messages.
    const CLASSES: &'static [&'static str];

    /// The class of a queued message.
    fn class_of(msg: &Self::Msg) -> ClassId;

    /// Runs the handler a queued message is for and routes its reply.
    fn dispatch(this: AccessRef<'_, Self>, msg: Self::Msg, ctx: &mut Ctx<'_, Self>);

    /// Whether the impl block has a `#[started]` hook.
    #[doc(hidden)]
    const HAS_STARTED: bool = false;

    /// Runs once on the actor's thread before its first message
    /// (`#[started]` in the impl block).
    fn started(_this: AccessRef<'_, Self>, _ctx: &mut Ctx<'_, Self>) {}

    /// Runs once after the last message, during stop or shutdown
    /// (`#[stopped]` in the impl block).
    fn stopped(_this: AccessRef<'_, Self>, _ctx: &mut Ctx<'_, Self>) {}
}

/// `A` handles messages of type `M` and answers with [`Handler::Reply`].
///
/// One impl serves every delivery operation: `send`, `ask`, `request`, and
/// the whole `fast_send` family call the same `handle`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no handler for `{M}`",
    label = "`{Self}` cannot receive `{M}`",
    note = "add a method with `#[handler({M})]` to the `#[actor]` impl block of `{Self}`"
)]
pub trait Handler<M>: Actor {
    /// What the handler returns; `()` for no reply.
    type Reply: Send + 'static;
    /// The message-class key of this handler.
    const CLASS: ClassId;

    /// Calls the handler method.
    fn handle(this: AccessRef<'_, Self>, msg: M, ctx: &mut Ctx<'_, Self>) -> Self::Reply;

    /// Wraps the message and its reply route into the actor's message enum.
    #[doc(hidden)]
    fn envelope(msg: M, reply: ReplyTo<Self::Reply>) -> Self::Msg;

    /// Unwraps an envelope made by [`envelope`](Handler::envelope), to hand
    /// an undelivered message back.
    #[doc(hidden)]
    fn open(env: Self::Msg) -> (M, ReplyTo<Self::Reply>);
}

/// The message of the second `Handler` impl that `#[actor]` gives an actor
/// with exactly one handler. Facing a single `impl Handler<Ping>`, rustc
/// infers `M = Ping` at `send(msg)` and its siblings, and reports an
/// unhandled message as "expected `Ping`, found `Stray`"; facing two, it
/// takes `M` from the argument and reports "`A` has no handler for
/// `Stray`", as for any other actor. It has no values, so that impl is
/// never called.
#[doc(hidden)]
#[derive(Debug)]
pub enum NoMessage {}

/// The access modes whose handlers may take `&mut self`: [`Exclusive`]
/// alone. Keyed on the mode rather than the actor so that an actor missing
/// `#[actor]` on its struct is reported once, as that, and not also as
/// reentrant.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this actor is `#[actor(reentrant)]`, so its handlers must take `&self`, not `&mut self`",
    label = "`&mut self` handler on a reentrant actor",
    note = "a reentrant actor can be entered again while a handler further up the stack is running; a second `&mut` to its state would be undefined behaviour",
    note = "keep mutable state in `Cell`, `RefCell` or atomics and take `&self`, or drop `reentrant`"
)]
pub trait ExclusiveMode: AccessMode {
    /// The handler's reference, which in this mode is `&mut A`.
    fn as_mut<'a, A: 'a>(r: Self::Ref<'a, A>) -> &'a mut A;
}

impl ExclusiveMode for Exclusive {
    #[inline(always)]
    fn as_mut<'a, A: 'a>(r: &'a mut A) -> &'a mut A {
        r
    }
}

/// The `&mut A` a `&mut self` handler needs. Fails to compile, with the
/// message of [`ExclusiveMode`], on a reentrant actor.
#[doc(hidden)]
#[inline(always)]
pub fn exclusive_ref<A: ActorConfig>(r: AccessRef<'_, A>) -> &mut A
where
    A::Access: ExclusiveMode,
{
    <A::Access as ExclusiveMode>::as_mut(r)
}

/// The `&A` a `&self` handler needs, in either mode.
#[doc(hidden)]
#[inline(always)]
pub fn shared_ref<A: ActorConfig>(r: AccessRef<'_, A>) -> &A {
    <A::Access as AccessMode>::as_shared(r)
}

/// Panics, at the caller's location, if `policy` is `Permissive` and `A`
/// cannot be re-entered: the policy would do nothing, which is a mistake.
#[track_caller]
#[inline]
pub(crate) fn assert_policy_meaningful<A: ActorConfig>(policy: CyclePolicy) {
    if policy == CyclePolicy::Permissive && !<A::Access as AccessMode>::REENTRANT {
        permissive_on_exclusive(A::NAME);
    }
}

#[cold]
#[track_caller]
fn permissive_on_exclusive(actor: &str) -> ! {
    panic!(
        "kaspar: CyclePolicy::Permissive asked for `{actor}`, which is not #[actor(reentrant)]: \
         its handlers take `&mut self`, so it is never re-entered under any policy and the \
         refined policy would do nothing. Declare it #[actor(reentrant)] with `&self` \
         handlers (state in Cell/RefCell/atomics) to allow callbacks into it."
    )
}
