//! A queued message as an actor's own mailbox stores it: the handler's
//! tag rides in the reply route's word, so the envelope needs no tag word
//! of its own.
//!
//! The generated message enum (`CounterMsg::Add(Add, ReplyTo<u64>)`) is
//! what handlers, dead letters and flight recorders see. Stored as it is,
//! an actor with two or more handlers pays a word for the enum's tag: a
//! `u64` message is 24 bytes with its route, where a channel of a plain
//! two-variant enum moves 16. A mailbox moves every byte of what it
//! stores from the producer's core to the consumer's, so `#[actor]` gives
//! the actor a second form of the same message, [`Packed`], which its own
//! mailbox stores instead: the messages of all handlers overlaid (a union
//! of the handlers' message types, as large as the largest), and one word
//! holding the route and, in its top seven bits, which handler the
//! message is for. The cell packs on push (a `match` the compiler folds
//! into the envelope's construction), and the loop runs the handler
//! straight from the packed form by its tag ([`Packed::serve`]), which is
//! also the message's class; only dead letters and flight recorders turn
//! it back into the enum ([`Packed::open`]).
//!
//! The handlers are a type list, `Cons<(Msg, Reply), Cons<.., Nil>>`, and
//! a handler's place in it a type-level index (`Z`, `S<Z>`, ..), so the
//! expansion names only types and safe calls: every `unsafe` access to the
//! union is here, and none of it can be reached with a tag that does not
//! match the message (the invariant below). The expansion wraps the
//! `Packed` in a newtype of its own, and declares with [`Packing`] that it
//! owns what the enum owns, so that the runtime moves it between threads
//! as it moves the enum (`stored`).
//!
//! # Invariant
//!
//! A `Packed<E, L>` made by [`Packed::new::<N>`](Packed::new) holds, in
//! its body, the message of handler `N` of `L` (written through that
//! handler's union field) and, in its word, the route of a
//! `ReplyTo<`handler `N`'s reply`>` and the tag `N`. Nothing writes either
//! afterwards; [`Packed::open`], [`Packed::serve`] and `Drop` read them
//! back only as handler `tag`'s, each at most once.
//!
//! Where the word has no spare top bits (targets other than x86-64, whose
//! user-space addresses stop below bit 57), the tag is a byte beside it
//! instead, and the saving is lost but nothing else changes.

use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr;

use crate::actor::ctx::Ctx;
use crate::actor::traits::{AccessRef, Actor, Handler};
use crate::reply::ReplyTo;

mod stored;

pub(crate) use stored::{ActorInbox, Parcel, Plain, Stored};

/// The index of a list's first handler.
#[derive(Debug)]
pub struct Z;

/// The index of the handler after `N`'s.
pub struct S<N>(PhantomData<N>);

/// The empty list of handlers.
#[derive(Debug)]
pub struct Nil;

/// A list of handlers: `H` is `(message, reply)` of the first, `T` the
/// rest. Never built: it only names types.
pub struct Cons<H, T>(PhantomData<fn() -> (H, T)>);

/// Room for the first handler's message or for the rest's.
pub union Either<H, T> {
    head: ManuallyDrop<H>,
    tail: ManuallyDrop<T>,
}

/// A list of handlers, with the union of their messages.
pub trait Handlers: 'static {
    /// The messages of the list's handlers, overlaid.
    type Body;
    /// The list's reply types, as a tuple list: `Send` exactly when each
    /// is.
    type Replies;

    /// Drops the message and the route that handler `tag` of the list
    /// left in `body` and `route`.
    ///
    /// # Safety
    ///
    /// `body` holds handler `tag`'s message, written through its field,
    /// and `route` came from `ReplyTo::into_raw` of a route for its
    /// reply type; neither is used again.
    unsafe fn drop_at(body: Self::Body, route: *mut (), tag: u8);
}

impl Handlers for Nil {
    type Body = ();
    type Replies = ();

    unsafe fn drop_at(_body: (), _route: *mut (), _tag: u8) {
        // Tags index the list (the invariant): a `Packed` never holds one
        // past its end.
        unreachable!("kaspar: a packed message's tag is past its handlers")
    }
}

impl<M: 'static, R: 'static, T: Handlers> Handlers for Cons<(M, R), T> {
    type Body = Either<M, T::Body>;
    type Replies = (PhantomData<R>, T::Replies);

    unsafe fn drop_at(body: Self::Body, route: *mut (), tag: u8) {
        if tag == 0 {
            // SAFETY: handler 0's message is in `head` and the route is for
            // `R` (the caller's contract); both are taken once, here.
            unsafe {
                drop(ManuallyDrop::into_inner(body.head));
                drop(ReplyTo::<R>::from_raw(route));
            }
        } else {
            // SAFETY: a later handler's message is in `tail`, at `tag - 1`
            // of the rest; the route is that handler's.
            unsafe { T::drop_at(ManuallyDrop::into_inner(body.tail), route, tag - 1) }
        }
    }
}

/// Handler `N` of a list: its message and reply types, its tag, and its
/// field of the list's union.
pub trait At<N>: Handlers {
    /// The handler's message.
    type Msg;
    /// The handler's reply.
    type Reply;
    /// Its place in the list.
    const TAG: u8;

    /// A body holding `msg`, written through this handler's field.
    fn put(msg: Self::Msg) -> Self::Body;

    /// The message [`put`](Self::put) wrote.
    ///
    /// # Safety
    ///
    /// `body` was made by this handler's `put`.
    unsafe fn take(body: Self::Body) -> Self::Msg;
}

impl<M: 'static, R: 'static, T: Handlers> At<Z> for Cons<(M, R), T> {
    type Msg = M;
    type Reply = R;
    const TAG: u8 = 0;

    #[inline(always)]
    fn put(msg: M) -> Self::Body {
        Either {
            head: ManuallyDrop::new(msg),
        }
    }

    #[inline(always)]
    unsafe fn take(body: Self::Body) -> M {
        // SAFETY: `put` wrote `head` (the caller's contract).
        ManuallyDrop::into_inner(unsafe { body.head })
    }
}

impl<M: 'static, R: 'static, T: At<N>, N> At<S<N>> for Cons<(M, R), T> {
    type Msg = T::Msg;
    type Reply = T::Reply;
    const TAG: u8 = {
        assert!(
            T::TAG < MAX_TAG,
            "kaspar: more handlers than a packed tag holds"
        );
        T::TAG + 1
    };

    #[inline(always)]
    fn put(msg: T::Msg) -> Self::Body {
        Either {
            tail: ManuallyDrop::new(T::put(msg)),
        }
    }

    #[inline(always)]
    unsafe fn take(body: Self::Body) -> T::Msg {
        // SAFETY: `put` wrote `tail` with the rest's handler `N` (the
        // caller's contract).
        unsafe { T::take(ManuallyDrop::into_inner(body.tail)) }
    }
}

/// A list of handlers that `A` has, each answering with the list's reply:
/// what lets a packed message run its handler without rebuilding the enum.
pub trait Serves<A: Actor>: Handlers {
    /// Runs handler `tag`'s handler on the message and routes its reply.
    ///
    /// # Safety
    ///
    /// As for [`Handlers::drop_at`]: `body` holds handler `tag`'s message
    /// and `route` a route for its reply, neither used again.
    unsafe fn serve(
        body: Self::Body,
        route: *mut (),
        tag: u8,
        this: AccessRef<'_, A>,
        ctx: &mut Ctx<'_, A>,
    );
}

impl<A: Actor> Serves<A> for Nil {
    unsafe fn serve(_: (), _: *mut (), _: u8, _: AccessRef<'_, A>, _: &mut Ctx<'_, A>) {
        unreachable!("kaspar: a packed message's tag is past its handlers")
    }
}

impl<A, M: 'static, R: 'static, T: Serves<A>> Serves<A> for Cons<(M, R), T>
where
    A: Handler<M, Reply = R>,
{
    #[inline(always)]
    unsafe fn serve(
        body: Self::Body,
        route: *mut (),
        tag: u8,
        this: AccessRef<'_, A>,
        ctx: &mut Ctx<'_, A>,
    ) {
        if tag == 0 {
            // SAFETY: handler 0's message is in `head` and the route is for
            // `R` (the caller's contract); both are taken once, here. The
            // route is made before the handler runs, so that an unwinding
            // handler drops it (its asker hears `Panicked`).
            let (msg, reply) = unsafe {
                (
                    ManuallyDrop::into_inner(body.head),
                    ReplyTo::<R>::from_raw(route),
                )
            };
            reply.deliver(A::handle(this, msg, ctx));
        } else {
            // SAFETY: a later handler's message is in `tail`, at `tag - 1`
            // of the rest; the route is that handler's.
            unsafe {
                T::serve(
                    ManuallyDrop::into_inner(body.tail),
                    route,
                    tag - 1,
                    this,
                    ctx,
                )
            }
        }
    }
}

/// A form of the message enum `E` that a mailbox may store instead of
/// `E`: the enum itself, or the packed newtype `#[actor]` declares beside
/// it. The runtime moves a stored message between threads whenever `E`
/// may cross them (`Stored`), whatever the stored type says, so that a
/// message that is not `Send` is one error, at the enum, and not a second
/// one at its packed form.
///
/// # Safety
///
/// A value of the implementing type owns exactly what some value of `E`
/// owns (the same messages and reply routes), and nothing else.
pub unsafe trait Packing<E>: 'static {}

// SAFETY: an `E` owns what an `E` owns.
unsafe impl<E: 'static> Packing<E> for E {}

/// The most tags a word's top byte holds here; `#[actor]` packs far fewer
/// (see the macro's limit).
const MAX_TAG: u8 = 127;

/// A queued message of the actor whose message enum is `E` and whose
/// handlers are `L` (module docs).
pub struct Packed<E, L: Handlers> {
    body: L::Body,
    word: Word,
    /// Names the enum it stands for; owns none.
    _enum: PhantomData<fn() -> E>,
}

// SAFETY: a `Packed` owns one message of one of `L`'s handlers (in the
// body, `Send` when every handler's message is) and one route for that
// handler's reply, behind the raw word: a `ReplyTo<R>` is `Send` for
// `R: Send`, and `L::Replies` is `Send` when every handler's reply is.
unsafe impl<E, L: Handlers> Send for Packed<E, L>
where
    L::Body: Send,
    L::Replies: Send,
{
}

impl<E, L: Handlers> Packed<E, L> {
    /// Handler `N`'s message and reply route, packed.
    #[inline(always)]
    pub fn new<N>(msg: <L as At<N>>::Msg, reply: ReplyTo<<L as At<N>>::Reply>) -> Self
    where
        L: At<N>,
    {
        Packed {
            body: <L as At<N>>::put(msg),
            word: Word::new(reply.into_raw(), <L as At<N>>::TAG),
            _enum: PhantomData,
        }
    }

    /// Which handler the message is for: its index in `L`.
    #[inline(always)]
    pub fn tag(&self) -> u8 {
        self.word.tag()
    }

    /// Handler `N`'s message and route, if the message is for handler
    /// `N`; panics otherwise, dropping it as the handler's it is for (the
    /// expansion opens each message by its own tag, so it never does).
    /// For turning a stored message back into the enum; the loop runs a
    /// handler with [`serve`](Self::serve) instead.
    #[inline(always)]
    pub fn open<N>(self) -> (<L as At<N>>::Msg, ReplyTo<<L as At<N>>::Reply>)
    where
        L: At<N>,
    {
        if self.tag() != <L as At<N>>::TAG {
            wrong_handler();
        }
        let this = ManuallyDrop::new(self);
        // SAFETY: the tag is `N`'s, so (the invariant) the body holds
        // handler `N`'s message and the word a route for its reply; both
        // are moved out once, and `this` is never dropped.
        unsafe {
            (
                <L as At<N>>::take(ptr::read(&this.body)),
                ReplyTo::from_raw(this.word.route()),
            )
        }
    }
}

impl<E, L: Handlers> Packed<E, L> {
    /// Runs the handler of `A`'s that the message is for, and routes its
    /// reply: the enum's `dispatch`, by the tag.
    #[inline(always)]
    pub fn serve<A: Actor>(self, this: AccessRef<'_, A>, ctx: &mut Ctx<'_, A>)
    where
        L: Serves<A>,
    {
        let packed = ManuallyDrop::new(self);
        let (tag, route) = (packed.word.tag(), packed.word.route());
        // SAFETY: the invariant: the body and the route are handler
        // `tag`'s; both are moved out once, and `packed` is never dropped.
        unsafe { L::serve(ptr::read(&packed.body), route, tag, this, ctx) }
    }
}

impl<E, L: Handlers> Drop for Packed<E, L> {
    fn drop(&mut self) {
        // SAFETY: the invariant: the body and the word are the tag's
        // handler's; `drop` runs once, and nothing reads them after.
        unsafe { L::drop_at(ptr::read(&self.body), self.word.route(), self.word.tag()) }
    }
}

#[cold]
#[inline(never)]
fn wrong_handler() -> ! {
    panic!("kaspar: a packed message opened as another handler's")
}

/// A route's pointer (null for none) and a tag, in one word on x86-64.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Word(*mut ());

/// Where the tag sits: user-space addresses on x86-64 stop below bit 57
/// (below bit 48 unless a program asks for more), so the top seven bits
/// of a pointer are always clear.
#[cfg(target_arch = "x86_64")]
const SHIFT: u32 = usize::BITS - 7;

#[cfg(target_arch = "x86_64")]
impl Word {
    #[inline(always)]
    fn new(route: *mut (), tag: u8) -> Word {
        if route.addr() >> SHIFT != 0 {
            high_address(route.addr());
        }
        Word(route.map_addr(|a| a | usize::from(tag) << SHIFT))
    }

    #[inline(always)]
    fn tag(self) -> u8 {
        (self.0.addr() >> SHIFT) as u8
    }

    #[inline(always)]
    fn route(self) -> *mut () {
        self.0.map_addr(|a| a & (usize::MAX >> 7))
    }
}

#[cfg(target_arch = "x86_64")]
#[cold]
#[inline(never)]
fn high_address(addr: usize) -> ! {
    panic!("kaspar: a reply route at {addr:#x} uses the top bits a packed message keeps its tag in")
}

/// A route's pointer (null for none) and a tag beside it.
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy)]
struct Word(*mut (), u8);

#[cfg(not(target_arch = "x86_64"))]
impl Word {
    #[inline(always)]
    fn new(route: *mut (), tag: u8) -> Word {
        Word(route, tag)
    }

    #[inline(always)]
    fn tag(self) -> u8 {
        self.1
    }

    #[inline(always)]
    fn route(self) -> *mut () {
        self.0
    }
}

/// Names the list's types without their values (a type list has none).
macro_rules! debug_by_name {
    ($($ty:ident<$($p:ident),*>),*) => {$(
        impl<$($p),*> fmt::Debug for $ty<$($p),*> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(stringify!($ty))
            }
        }
    )*};
}

debug_by_name!(S<N>, Cons<H, T>, Either<H, T>);

impl<E, L: Handlers> fmt::Debug for Packed<E, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Packed")
            .field("tag", &self.tag())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
