//! Owned ports: a sink made for one route, in the route's own box.

use std::any::TypeId;
use std::ptr::NonNull;

use super::{Port, PortVTable};
use crate::error::AskError;

/// A reply destination made for one route and moved into the route's own
/// allocation (kaspar-remote's wire sink: one allocation per queued remote
/// ask, the sink and its port together). Dropped without a reply, the
/// route calls [`unanswered`](Self::unanswered).
///
/// `Sync` because a shared `&ReplyTo` may name its sink's
/// [`kind`](Self::kind) from any thread.
pub trait OwnedSink<R>: Send + Sync + 'static {
    /// Takes the handler's reply.
    fn deliver(self, reply: R);

    /// The route is dropped without a reply, and `why`. By default the
    /// sink is dropped (it may report the loss from its own `Drop`).
    fn unanswered(self, why: AskError)
    where
        Self: Sized,
    {
        let _ = why;
    }

    /// How `Debug` shows a route to this sink.
    fn kind(&self) -> &'static str {
        "ReplyTo::Actor"
    }
}

/// An owned port: the header and the sink, in one box.
#[repr(C)]
struct Owned<R, T> {
    port: Port<R>,
    sink: T,
}

impl<R: 'static, T: OwnedSink<R>> Owned<R, T> {
    const VTABLE: PortVTable<R> = PortVTable {
        deliver: Self::deliver,
        unanswered: Self::unanswered,
        kind: Self::kind,
        is: TypeId::of::<Self>,
    };

    /// # Safety
    ///
    /// `port` is an `Owned<R, T>`'s (made by [`owned`], P3) and its
    /// reference is the caller's.
    unsafe fn take(port: NonNull<Port<R>>) -> T {
        // SAFETY: `owned` made this pointer from a `Box<Owned<R, T>>`
        // whose first field is the port (`repr(C)`), and this is its one
        // route reference (P1), so the box is ours to free.
        let owned = unsafe { Box::from_raw(port.cast::<Self>().as_ptr()) };
        owned.sink
    }

    unsafe fn deliver(port: NonNull<Port<R>>, reply: R) {
        // SAFETY: passed on from `Port::deliver`.
        unsafe { Self::take(port) }.deliver(reply);
    }

    unsafe fn unanswered(port: NonNull<Port<R>>, why: AskError) {
        // SAFETY: passed on from `Port::unanswered`.
        unsafe { Self::take(port) }.unanswered(why);
    }

    unsafe fn kind(port: NonNull<Port<R>>) -> &'static str {
        // SAFETY: as in `take`, only borrowed.
        unsafe { port.cast::<Self>().as_ref() }.sink.kind()
    }
}

/// A port that owns `sink`, for one route (P1): the route frees it.
pub(crate) fn owned<R: 'static, T: OwnedSink<R>>(sink: T) -> NonNull<Port<R>> {
    let owned = Box::new(Owned {
        port: Port {
            vtable: &Owned::<R, T>::VTABLE,
        },
        sink,
    });
    NonNull::from(Box::leak(owned)).cast()
}

/// The sink behind `port` if it is an owned `T`, taking the route's
/// reference; otherwise `port` is handed back untouched.
///
/// # Safety
///
/// `port` is alive and its route reference is the caller's (P1).
pub(crate) unsafe fn take_owned<R: 'static, T: OwnedSink<R>>(
    port: NonNull<Port<R>>,
) -> Result<T, NonNull<Port<R>>> {
    // SAFETY: alive by the caller's contract; its vtable is its type's (P3).
    let is = unsafe { ((*port.as_ref().vtable).is)() };
    if is == TypeId::of::<Owned<R, T>>() {
        // SAFETY: the port is an `Owned<R, T>`, and the reference is ours.
        Ok(unsafe { Owned::<R, T>::take(port) })
    } else {
        Err(port)
    }
}
