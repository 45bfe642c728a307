//! Ports: a reply destination behind a thin pointer.
//!
//! A [`Route`](super::route::Route) is one word, so a destination that is
//! not an asker's slot must be reachable through one thin pointer, while a
//! `dyn ReplySink<R>` is a fat one. A [`Port`] is the header such a
//! destination starts with: a pointer to its vtable, which knows the rest
//! of the object. Two kinds exist:
//!
//! * **Owned** ([`owned`](owned::owned)): a box holding an
//!   [`OwnedSink`], made for one route and freed by it (kaspar-remote's
//!   wire sink, made per message anyway).
//! * **Shared** ([`shared`](shared::shared)): a port kept by the sink
//!   itself, in its [`Ports`], one per reply type, made the first time a
//!   route to that sink for that type is asked for and freed with the
//!   sink. A route to it
//!   holds one strong count of the sink's `Arc`. An actor's cell is such a
//!   sink, so a `request` allocates nothing once its reply type has been
//!   routed to that actor before.
//!
//! # The contract a route relies on
//!
//! - **P1**: a route built by `owned` or `shared` owns one *route
//!   reference* of its port; exactly one of the vtable's `deliver` or
//!   `unanswered` consumes it, once.
//! - **P2**: a port is alive while a route reference to it exists: an
//!   owned port is freed only by consuming its reference, and a shared
//!   port lives in its sink's `Ports`, which live as long as the sink,
//!   which the route's strong count keeps alive.
//! - **P3**: a port's vtable is for the port's real type: a node of
//!   `Ports` is found by the `TypeId` of that type, an owned port's vtable
//!   is set where the box is made, and `take_owned` compares the
//!   `TypeId` the vtable names before it takes the sink out.

mod owned;
mod shared;
#[cfg(all(test, not(loom)))]
mod tests;

use std::any::TypeId;
use std::ptr::NonNull;

use crate::error::AskError;

pub use owned::OwnedSink;
pub(crate) use owned::{owned, take_owned};
pub(crate) use shared::{shared, HasPorts, Ports};

/// The header of every port: the route reaches the rest through it.
#[repr(C)]
pub(crate) struct Port<R> {
    /// A `&'static` in effect (the vtables are constants), kept raw so
    /// that `Port<R>` needs no `R: 'static`.
    vtable: *const PortVTable<R>,
}

/// What a route can do with a port: `deliver` and `unanswered` take the
/// route reference (P1); `kind` and `is` only read.
pub(crate) struct PortVTable<R> {
    deliver: unsafe fn(NonNull<Port<R>>, R),
    unanswered: unsafe fn(NonNull<Port<R>>, AskError),
    kind: unsafe fn(NonNull<Port<R>>) -> &'static str,
    /// The port's own type (`Owned<R, T>` or `Shared<T, R>`), for
    /// `take_owned`.
    is: fn() -> TypeId,
}

impl<R> Port<R> {
    /// Hands `reply` to the port's sink.
    ///
    /// # Safety
    ///
    /// `port` is alive and the caller gives up its route reference (P1).
    #[inline]
    pub(crate) unsafe fn deliver(port: NonNull<Self>, reply: R) {
        // SAFETY: alive by the caller's contract (P2); its vtable is for
        // its type (P3), and the reference is handed on.
        unsafe { ((*port.as_ref().vtable).deliver)(port, reply) }
    }

    /// Tells the port's sink that no reply comes, and why.
    ///
    /// # Safety
    ///
    /// As for [`deliver`](Self::deliver).
    pub(crate) unsafe fn unanswered(port: NonNull<Self>, why: AskError) {
        // SAFETY: as in `deliver`.
        unsafe { ((*port.as_ref().vtable).unanswered)(port, why) }
    }

    /// How `Debug` shows a route to this port.
    ///
    /// # Safety
    ///
    /// `port` is alive; the caller keeps its reference.
    pub(crate) unsafe fn kind(port: NonNull<Self>) -> &'static str {
        // SAFETY: as in `deliver`, and `kind` only reads.
        unsafe { ((*port.as_ref().vtable).kind)(port) }
    }
}
