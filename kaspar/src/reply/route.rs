//! A reply's route in one word: a tagged pointer.
//!
//! Every queued message carries a route, so its size is part of every
//! mailbox slot's: one word makes a `u64` message's enum 16 bytes for an
//! actor with one handler and 24 with several (a tag word), where a fat
//! pointer made them 24 and 32; an actor's own mailbox stores 16 bytes
//! for both, the handler's tag in the word's top bits while the message
//! is queued (`actor::packed`, which gives the word back untouched
//! through `into_raw` and `from_raw`). The word is one of:
//!
//! - an asker's slot: `Arc::into_raw` of its `Arc<Slot<R>>`, low bit clear;
//!   the route owns that strong count;
//! - a [`Port`]: its address with the low bit set; the route owns one
//!   route reference of it (the port module's P1).
//!
//! Both pointees are aligned to at least two bytes (checked at compile
//! time for every `R`), so the low bit is free. An asker's slot, the
//! common case, is reached without a vtable.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

use super::port::{OwnedSink, Port};
use super::Slot;
use crate::base::sync::Arc;
use crate::error::AskError;

/// The low bit: the word is a port, not a slot.
const PORT: usize = 1;

/// Where a reply goes (module docs). Dropped without a reply, it tells its
/// destination why: the handler panicked, or the message was dropped.
pub(crate) struct Route<R> {
    word: NonNull<()>,
    /// Owns an `Arc<Slot<R>>` or a port taking `R`.
    _owns: Owns<R>,
}

// SAFETY: a route moves an `R` to its destination, from whichever thread
// holds it: an asker's slot is `Send + Sync` for `R: Send`, and a port's
// sink always is (`ReplySink` and `OwnedSink` both require it).
unsafe impl<R: Send> Send for Route<R> {}
// SAFETY: `&Route` only reads the destination's kind, through `&` of a
// `Sync` sink, or not at all for a slot.
unsafe impl<R: Send> Sync for Route<R> {}

/// What a route owns, for the compiler: a slot or a port taking `R`.
type Owns<R> = PhantomData<(Arc<Slot<R>>, fn(R))>;

/// Where the word points, decoded.
enum To<R> {
    Slot(*const Slot<R>),
    Port(NonNull<Port<R>>),
}

impl<R> Route<R> {
    /// Slots and ports leave the low bit free.
    const ALIGNED: () =
        assert!(std::mem::align_of::<Slot<R>>() > PORT && std::mem::align_of::<Port<R>>() > PORT);

    /// A route to an asker's slot; it owns `slot`'s strong count.
    #[inline]
    pub(crate) fn slot(slot: Arc<Slot<R>>) -> Self {
        let () = Self::ALIGNED;
        let raw = Arc::into_raw(slot).cast_mut().cast::<()>();
        Route {
            // SAFETY: `Arc::into_raw` is never null.
            word: unsafe { NonNull::new_unchecked(raw) },
            _owns: PhantomData,
        }
    }

    /// A route to `port`.
    ///
    /// # Safety
    ///
    /// The caller hands over one route reference of `port` (P1).
    #[inline]
    pub(crate) unsafe fn port(port: NonNull<Port<R>>) -> Self {
        let () = Self::ALIGNED;
        Route {
            word: port.cast::<()>().map_addr(|a| a | PORT),
            _owns: PhantomData,
        }
    }

    /// The word, given up: [`from_raw`](Self::from_raw) takes the route
    /// back.
    #[inline(always)]
    pub(crate) fn into_raw(self) -> *mut () {
        ManuallyDrop::new(self).word.as_ptr()
    }

    /// The route [`into_raw`](Self::into_raw) gave up.
    ///
    /// # Safety
    ///
    /// `word` came from `into_raw` of a `Route<R>`, this `R`, and is taken
    /// back once (it owns what that route owned).
    #[inline(always)]
    pub(crate) unsafe fn from_raw(word: NonNull<()>) -> Self {
        Route {
            word,
            _owns: PhantomData,
        }
    }

    #[inline]
    fn to(&self) -> To<R> {
        if self.word.addr().get() & PORT == 0 {
            To::Slot(self.word.as_ptr().cast_const().cast())
        } else {
            let port = self.word.as_ptr().map_addr(|a| a & !PORT).cast();
            // SAFETY: clearing the bit cannot make the address zero: a
            // port is aligned to more than the bit, so its address is above.
            To::Port(unsafe { NonNull::new_unchecked(port) })
        }
    }

    /// Hands `reply` to the destination.
    #[inline]
    pub(crate) fn deliver(self, reply: R) {
        let this = ManuallyDrop::new(self);
        match this.to() {
            // SAFETY: the word came from `Arc::into_raw` (`slot`) and this
            // route owns that count, given up here once (`ManuallyDrop`).
            To::Slot(slot) => Slot::complete(unsafe { Arc::from_raw(slot) }, Ok(reply)),
            // SAFETY: the route's reference, given up here once (P1).
            To::Port(port) => unsafe { Port::deliver(port, reply) },
        }
    }

    /// Tells the destination no reply comes, and why.
    pub(crate) fn unanswered(self, why: AskError) {
        let this = ManuallyDrop::new(self);
        match this.to() {
            // SAFETY: as in `deliver`.
            To::Slot(slot) => Slot::complete(unsafe { Arc::from_raw(slot) }, Err(why)),
            // SAFETY: as in `deliver`.
            To::Port(port) => unsafe { Port::unanswered(port, why) },
        }
    }

    /// The owned sink this route leads to, if it is a `T`, without
    /// delivering anything; otherwise the route, untouched.
    pub(crate) fn take_owned<T: OwnedSink<R>>(self) -> Result<T, Self>
    where
        R: 'static,
    {
        let To::Port(port) = self.to() else {
            return Err(self);
        };
        let this = ManuallyDrop::new(self);
        // SAFETY: the route's reference, handed on (P1); if the port is
        // not a `T`'s it comes back, and so does the route's ownership.
        unsafe { super::port::take_owned::<R, T>(port) }.map_err(|_| ManuallyDrop::into_inner(this))
    }

    /// How `Debug` shows this route.
    pub(crate) fn kind(&self) -> &'static str {
        match self.to() {
            To::Slot(_) => super::ASK,
            // SAFETY: the route's reference keeps the port alive (P2).
            To::Port(port) => unsafe { Port::kind(port) },
        }
    }
}

impl<R> Drop for Route<R> {
    fn drop(&mut self) {
        // Dropped without a reply: either the handler is unwinding, or the
        // message was dropped unhandled. The asker's handle names the
        // actor (a route knows none).
        let why = if std::thread::panicking() {
            AskError::Panicked(None)
        } else {
            AskError::Dropped(None)
        };
        let route = Route::<R> {
            word: self.word,
            _owns: PhantomData,
        };
        route.unanswered(why);
    }
}
