//! Reply routing. A handler returns its reply by value; where it goes is
//! decided here, never by the handler:
//!
//! * a synchronous delivery hands it straight back as the return value (it
//!   never builds a [`ReplyTo`] at all);
//! * `ask` parks it in a one-shot slot the [`Ask`] handle waits on;
//! * `request` enqueues it on the `reply_to` actor's mailbox as a message.
//!
//! Because the reply is the handler's return value, it is produced exactly
//! once per handled message: replying twice is not expressible.

mod ask;

use std::fmt;
use std::sync::Arc;

use crate::base::sync;
use crate::error::AskError;

#[cfg(loom)]
pub(crate) use ask::cached_slots;
pub use ask::Ask;
pub use ask::Slot;
pub(crate) use ask::{slot, AskTarget, Asked};

/// Where the reply to a queued message goes. Built by the runtime, consumed
/// by the generated dispatch.
pub struct ReplyTo<R> {
    route: Route<R>,
}

enum Route<R> {
    Nobody,
    Ask(sync::Arc<Slot<R>>),
    Actor(Arc<dyn ReplySink<R>>),
}

impl<R> fmt::Debug for ReplyTo<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.route {
            Route::Nobody => "ReplyTo::Nobody",
            Route::Ask(_) => "ReplyTo::Ask",
            Route::Actor(_) => "ReplyTo::Actor",
        })
    }
}

/// Something that accepts a reply as a message: an actor's mailbox, or
/// (through `__private`, for kaspar-remote) an encoder that sends the reply
/// back to another process.
pub trait ReplySink<R>: Send + Sync {
    /// Takes the handler's reply.
    fn deliver(&self, reply: R);
}

/// A pending `ask` whose reply will come from elsewhere (another process,
/// for kaspar-remote): the handle the asker waits on and the route that
/// completes it. Dropping the route unused completes the handle with
/// [`AskError::Dropped`]; [`ReplyTo::fail`] picks the error.
pub fn ask_pair<R: Send + 'static>() -> (Ask<R>, ReplyTo<R>) {
    let (ask, slot) = ask_slot::<R>();
    (ask, ReplyTo::ask(slot))
}

/// [`ask_pair`] with the bare slot for the route (kaspar-remote keeps it
/// as a pending ask's entry, type-erased without a box). Unlike a
/// [`ReplyTo`], a slot dropped unfilled does not complete the handle:
/// its holder must [`fill`](Slot::fill) it exactly once.
#[doc(hidden)]
pub fn ask_slot<R: Send + 'static>() -> (Ask<R>, sync::Arc<Slot<R>>) {
    let slot = slot::<R>();
    (Ask::new(sync::Arc::clone(&slot), None), slot)
}

impl<R> ReplyTo<R> {
    /// The reply is discarded (`send`, `fast_send_void` fallback).
    #[inline]
    pub(crate) fn nobody() -> Self {
        ReplyTo {
            route: Route::Nobody,
        }
    }

    pub(crate) fn ask(slot: sync::Arc<Slot<R>>) -> Self {
        ReplyTo {
            route: Route::Ask(slot),
        }
    }

    pub(crate) fn actor(sink: Arc<dyn ReplySink<R>>) -> Self {
        ReplyTo {
            route: Route::Actor(sink),
        }
    }

    /// A route to `sink` (kaspar-remote: the reply goes back to the
    /// process that asked). Dropped without a reply, the route drops
    /// `sink`, which may then report the loss.
    #[doc(hidden)]
    pub fn to_sink(sink: Arc<dyn ReplySink<R>>) -> Self {
        ReplyTo::actor(sink)
    }

    /// Completes an asker's handle with `why` instead of a reply
    /// (kaspar-remote: the peer was lost). Other routes are dropped.
    #[doc(hidden)]
    pub fn fail(mut self, why: AskError) {
        if let Route::Ask(slot) = std::mem::replace(&mut self.route, Route::Nobody) {
            Slot::complete(slot, Err(why));
        }
    }

    /// Routes the handler's return value. Called by generated dispatch code.
    #[doc(hidden)]
    #[inline]
    pub fn deliver(self, reply: R) {
        if let Route::Nobody = self.route {
            // A `send`: the reply is dropped here, and a `Nobody` route
            // owns nothing, so skipping its `drop` (which would only look
            // at the route again) loses nothing.
            std::mem::forget(self);
            return;
        }
        self.deliver_routed(reply);
    }

    /// [`deliver`](Self::deliver) to an asker or an actor.
    fn deliver_routed(mut self, reply: R) {
        match std::mem::replace(&mut self.route, Route::Nobody) {
            Route::Nobody => {}
            Route::Ask(slot) => Slot::complete(slot, Ok(reply)),
            Route::Actor(sink) => sink.deliver(reply),
        }
    }
}

impl<R> Drop for ReplyTo<R> {
    fn drop(&mut self) {
        if let Route::Ask(slot) = std::mem::replace(&mut self.route, Route::Nobody) {
            // Dropped without a reply: either the handler is unwinding, or
            // the message was dropped unhandled.
            // The asker's handle names the actor (this route knows none).
            let why = if std::thread::panicking() {
                AskError::Panicked(None)
            } else {
                AskError::Dropped(None)
            };
            Slot::complete(slot, Err(why));
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts its drops.
    struct Counted<'a>(&'a AtomicUsize);

    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_reply_nobody_waits_for_is_dropped_once_on_delivery() {
        let drops = AtomicUsize::new(0);
        ReplyTo::nobody().deliver(Counted(&drops));
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        drop(ReplyTo::<Counted<'_>>::nobody());
        assert_eq!(
            drops.load(Ordering::Relaxed),
            1,
            "no reply, nothing dropped"
        );
    }
}
