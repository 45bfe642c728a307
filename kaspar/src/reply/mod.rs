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
//!
//! A [`ReplyTo`] is one word (`route`): a tagged pointer to the asker's
//! slot or to a *port* (`port`), the thin header of any other destination.
//! An actor's cell keeps one port per reply type routed to it, so a
//! `request` allocates nothing after its reply type's first.

mod ask;
mod port;
mod route;

use std::fmt;
use std::sync::Arc;

use crate::base::sync;
use crate::error::AskError;

#[cfg(loom)]
pub(crate) use ask::cached_slots;
pub use ask::Ask;
pub use ask::Slot;
pub(crate) use ask::{answered, slot, AskTarget, Asked};
pub use port::OwnedSink;
pub(crate) use port::{HasPorts, Ports};
use route::Route;

/// Where the reply to a queued message goes. Built by the runtime, consumed
/// by the generated dispatch.
///
/// One word: every queued message carries one, so its size is part of
/// every mailbox slot's (a `u64` message's envelope is 24 bytes with it,
/// 16 for an actor with one handler). `None` is the null pointer.
pub struct ReplyTo<R> {
    /// `None`: nobody waits (a `send`).
    route: Option<Route<R>>,
}

const _: () = assert!(std::mem::size_of::<ReplyTo<u64>>() == std::mem::size_of::<usize>());

/// How `Debug` shows a route to an asker's slot.
const ASK: &str = "ReplyTo::Ask";

impl<R> fmt::Debug for ReplyTo<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match &self.route {
            None => "ReplyTo::Nobody",
            Some(route) => route.kind(),
        })
    }
}

/// Something that accepts a reply as a message: an actor's mailbox, or
/// (through `__private`, for kaspar-remote) an encoder that sends the reply
/// back to another process.
pub trait ReplySink<R>: Send + Sync {
    /// Takes the handler's reply. By value, so that a sink can let go of
    /// its route's reference before it wakes anyone.
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

    /// The reply goes to an asker's slot.
    #[inline]
    pub(crate) fn ask(slot: sync::Arc<Slot<R>>) -> Self {
        ReplyTo {
            route: Some(Route::slot(slot)),
        }
    }

    /// The reply goes to `sink`, through the port it keeps for `R`: no
    /// allocation once a route to it for `R` has been made (an actor's
    /// cell, for `request`).
    pub(crate) fn shared<T>(sink: &Arc<T>) -> Self
    where
        T: ReplySink<R> + HasPorts + 'static,
        R: 'static,
    {
        let port = port::shared::<T, R>(sink);
        // SAFETY: `shared` gave us one route reference of `port`.
        let route = unsafe { Route::port(port) };
        ReplyTo { route: Some(route) }
    }

    /// A route to `sink`, moved into the route's one allocation
    /// (kaspar-remote: the reply goes back to the process that asked).
    /// Dropped without a reply, the route calls
    /// [`OwnedSink::unanswered`].
    #[doc(hidden)]
    pub fn to_owned_sink<T: OwnedSink<R>>(sink: T) -> Self
    where
        R: 'static,
    {
        let port = port::owned(sink);
        // SAFETY: `owned` made the port for this one route.
        let route = unsafe { Route::port(port) };
        ReplyTo { route: Some(route) }
    }

    /// The owned sink this route was made with, if it is a `T`, taken back
    /// without a reply and without telling it anything (kaspar-remote:
    /// the message was refused, and the sink reports why itself);
    /// otherwise the route, unchanged.
    #[doc(hidden)]
    pub fn into_owned_sink<T: OwnedSink<R>>(mut self) -> Result<T, Self>
    where
        R: 'static,
    {
        match self.route.take() {
            None => Err(self),
            Some(route) => route
                .take_owned::<T>()
                .map_err(|route| ReplyTo { route: Some(route) }),
        }
    }

    /// Completes an asker's handle with `why` instead of a reply
    /// (kaspar-remote: the peer was lost). Another sink is handed `why`
    /// through [`ReplySink::unanswered`], which by default drops it.
    #[doc(hidden)]
    pub fn fail(mut self, why: AskError) {
        if let Some(route) = self.route.take() {
            route.unanswered(why);
        }
    }

    /// The route as a bare pointer (null for nobody), for a packed
    /// message's word (`actor::packed`); [`from_raw`](Self::from_raw)
    /// takes it back.
    #[inline(always)]
    pub(crate) fn into_raw(self) -> *mut () {
        self.route.map_or(std::ptr::null_mut(), Route::into_raw)
    }

    /// The route [`into_raw`](Self::into_raw) gave up.
    ///
    /// # Safety
    ///
    /// `raw` came from `into_raw` of a `ReplyTo<R>`, this `R`, and is taken
    /// back once.
    #[inline(always)]
    pub(crate) unsafe fn from_raw(raw: *mut ()) -> Self {
        ReplyTo {
            // SAFETY: the caller's contract, passed on.
            route: std::ptr::NonNull::new(raw).map(|word| unsafe { Route::from_raw(word) }),
        }
    }

    /// Routes the handler's return value. Called by generated dispatch code.
    #[doc(hidden)]
    #[inline]
    pub fn deliver(self, reply: R) {
        match self.route {
            // A `send`: the reply is dropped here.
            None => drop(reply),
            Some(route) => route.deliver(reply),
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

    impl OwnedSink<u32> for Arc<Log> {
        fn deliver(self, reply: u32) {
            self.heard.lock().push(format!("reply {reply}"));
        }

        fn unanswered(self, why: AskError) {
            self.heard.lock().push(format!("{why:?}"));
        }
    }

    #[test]
    fn a_sink_hears_its_reply_or_why_there_is_none_exactly_once() {
        let log = Arc::new(Log::default());
        let sink = || ReplyTo::to_owned_sink(Arc::clone(&log));
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
    fn an_askers_route_is_one_word_and_completes_its_handle() {
        assert_eq!(size_of::<ReplyTo<u64>>(), size_of::<usize>());
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
