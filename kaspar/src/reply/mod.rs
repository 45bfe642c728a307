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
pub(crate) use ask::{answered, slot, AskTarget, Asked};

/// Where the reply to a queued message goes. Built by the runtime, consumed
/// by the generated dispatch.
///
/// Two words: every queued message carries one, so its size is part of
/// every mailbox slot's (a `u64` ask's envelope is 32 bytes with it).
pub struct ReplyTo<R> {
    /// `None`: nobody waits (a `send`).
    route: Option<Route<R>>,
}

#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<ReplyTo<u64>>() == 2 * std::mem::size_of::<usize>());

/// A reply's destination: one fat pointer. An asker's slot is a sink like
/// an actor's mailbox, so `Option<Route>` is two words (its `None` is the
/// null pointer), where an enum of the three kinds was three.
#[cfg(not(loom))]
type Route<R> = Arc<dyn ReplySink<R>>;

/// Under loom a slot lives in loom's `Arc`, which cannot be coerced to a
/// `dyn` sink, so the two kinds stay apart; the slot's own protocol, what
/// the loom models check, is the same either way.
#[cfg(loom)]
enum Route<R> {
    Ask(sync::Arc<Slot<R>>),
    Sink(Arc<dyn ReplySink<R>>),
}

/// What a `ReplyTo` does with its route: build one, hand it the reply,
/// tell it there is none, name its kind. Each a call on the sink.
#[cfg(not(loom))]
mod route {
    use super::*;

    #[inline]
    pub(super) fn ask<R: Send + 'static>(slot: sync::Arc<Slot<R>>) -> Route<R> {
        slot
    }

    #[inline]
    pub(super) fn sink<R>(sink: Arc<dyn ReplySink<R>>) -> Route<R> {
        sink
    }

    #[inline]
    pub(super) fn deliver<R>(route: Route<R>, reply: R) {
        route.deliver(reply);
    }

    #[inline]
    pub(super) fn unanswered<R>(route: Route<R>, why: impl FnOnce() -> AskError) {
        route.unanswered(why());
    }

    pub(super) fn kind<R>(route: &Route<R>) -> &'static str {
        route.kind()
    }
}

/// The same operations under loom, a `match` over the slot and the sink.
#[cfg(loom)]
mod route {
    use super::*;

    pub(super) fn ask<R: Send + 'static>(slot: sync::Arc<Slot<R>>) -> Route<R> {
        Route::Ask(slot)
    }

    pub(super) fn sink<R>(sink: Arc<dyn ReplySink<R>>) -> Route<R> {
        Route::Sink(sink)
    }

    pub(super) fn deliver<R>(route: Route<R>, reply: R) {
        match route {
            Route::Ask(slot) => Slot::complete(slot, Ok(reply)),
            Route::Sink(sink) => sink.deliver(reply),
        }
    }

    pub(super) fn unanswered<R>(route: Route<R>, why: impl FnOnce() -> AskError) {
        match route {
            Route::Ask(slot) => Slot::complete(slot, Err(why())),
            Route::Sink(sink) => sink.unanswered(why()),
        }
    }

    pub(super) fn kind<R>(route: &Route<R>) -> &'static str {
        match route {
            Route::Ask(_) => ASK,
            Route::Sink(sink) => sink.kind(),
        }
    }
}

/// How `Debug` shows a route to an asker's slot.
const ASK: &str = "ReplyTo::Ask";

impl<R> fmt::Debug for ReplyTo<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match &self.route {
            None => "ReplyTo::Nobody",
            Some(route) => route::kind(route),
        })
    }
}

/// Something that accepts a reply as a message: an actor's mailbox, an
/// asker's slot, or (through `__private`, for kaspar-remote) an encoder
/// that sends the reply back to another process.
pub trait ReplySink<R>: Send + Sync {
    /// Takes the handler's reply. By value, so that a sink can let go of
    /// its route's reference before it wakes anyone (an asker's slot does:
    /// the woken asker then owns it alone and can reuse it).
    fn deliver(self: Arc<Self>, reply: R);

    /// The route is dropped without a reply: `why` says whether the
    /// handler panicked, the message was dropped unhandled, or what
    /// [`ReplyTo::fail`] was given. By default the sink is only dropped (it
    /// may report the loss from its own `Drop`).
    fn unanswered(self: Arc<Self>, why: AskError) {
        let _ = why;
    }

    /// How `Debug` shows a route to this sink.
    fn kind(&self) -> &'static str {
        "ReplyTo::Actor"
    }
}

/// An asker's slot takes its reply, or the reason there is none, and
/// wakes the asker.
#[cfg(not(loom))]
impl<R: Send> ReplySink<R> for Slot<R> {
    #[inline]
    fn deliver(self: Arc<Self>, reply: R) {
        Slot::complete(self, Ok(reply));
    }

    fn unanswered(self: Arc<Self>, why: AskError) {
        Slot::complete(self, Err(why));
    }

    fn kind(&self) -> &'static str {
        ASK
    }
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
        ReplyTo { route: None }
    }

    pub(crate) fn ask(slot: sync::Arc<Slot<R>>) -> Self
    where
        R: Send + 'static,
    {
        ReplyTo {
            route: Some(route::ask(slot)),
        }
    }

    pub(crate) fn actor(sink: Arc<dyn ReplySink<R>>) -> Self {
        ReplyTo {
            route: Some(route::sink(sink)),
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
    /// (kaspar-remote: the peer was lost). Another sink is handed `why`
    /// through [`ReplySink::unanswered`], which by default drops it.
    #[doc(hidden)]
    pub fn fail(mut self, why: AskError) {
        if let Some(route) = self.route.take() {
            route::unanswered(route, || why);
        }
    }

    /// Routes the handler's return value. Called by generated dispatch code.
    #[doc(hidden)]
    #[inline]
    pub fn deliver(self, reply: R) {
        if self.route.is_none() {
            // A `send`: the reply is dropped here, and a `None` route owns
            // nothing, so skipping its `drop` (which would only look at
            // the route again) loses nothing.
            std::mem::forget(self);
            return;
        }
        self.deliver_routed(reply);
    }

    /// [`deliver`](Self::deliver) to an asker or an actor.
    fn deliver_routed(mut self, reply: R) {
        if let Some(route) = self.route.take() {
            route::deliver(route, reply);
        }
    }
}

impl<R> Drop for ReplyTo<R> {
    fn drop(&mut self) {
        if let Some(route) = self.route.take() {
            // Dropped without a reply: either the handler is unwinding, or
            // the message was dropped unhandled. The asker's handle names
            // the actor (this route knows none).
            route::unanswered(route, || {
                if std::thread::panicking() {
                    AskError::Panicked(None)
                } else {
                    AskError::Dropped(None)
                }
            });
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

    /// A sink that writes down what reached it.
    #[derive(Default)]
    struct Log {
        heard: parking_lot::Mutex<Vec<String>>,
    }

    impl ReplySink<u32> for Log {
        fn deliver(self: Arc<Self>, reply: u32) {
            self.heard.lock().push(format!("reply {reply}"));
        }

        fn unanswered(self: Arc<Self>, why: AskError) {
            self.heard.lock().push(format!("{why:?}"));
        }
    }

    #[test]
    fn a_sink_hears_its_reply_or_why_there_is_none_exactly_once() {
        let log = Arc::new(Log::default());
        let sink = || ReplyTo::to_sink(Arc::clone(&log) as Arc<dyn ReplySink<u32>>);
        sink().deliver(7);
        drop(sink());
        sink().fail(AskError::Timeout(None));
        let route = sink();
        assert_eq!(format!("{route:?}"), "ReplyTo::Actor");
        route.deliver(8);
        assert_eq!(
            *log.heard.lock(),
            ["reply 7", "Dropped(None)", "Timeout(None)", "reply 8"]
        );
        assert_eq!(Arc::strong_count(&log), 1, "every route let go of the sink");
    }

    #[test]
    fn an_askers_route_is_two_words_and_completes_its_handle() {
        assert_eq!(size_of::<ReplyTo<u64>>(), 2 * size_of::<usize>());
        let (ask, route) = ask_pair::<u64>();
        assert_eq!(format!("{route:?}"), "ReplyTo::Ask");
        route.deliver(5);
        assert_eq!(ask.wait().unwrap(), 5);
        let (mut ask, route) = ask_pair::<u64>();
        drop(route);
        // A bounded wait: a route that forgot its asker fails, not hangs.
        let waited = ask.wait_timeout(std::time::Duration::from_secs(5));
        assert!(matches!(waited, Err(AskError::Dropped(None))), "{waited:?}");
        assert_eq!(format!("{:?}", ReplyTo::<u64>::nobody()), "ReplyTo::Nobody");
    }
}
