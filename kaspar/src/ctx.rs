//! The handler's context: the same type, with the same methods, whichever
//! way the message arrived.
//!
//! `Ctx` deliberately has no method, field or trait impl that tells a
//! handler how it was reached (inline on a caller's thread, or dequeued on
//! its own), which thread runs it, whether a sender is blocked on it, or how
//! deep its mailbox is. That is receiver transparency (paper §7.2), made a
//! property of the type rather than a convention.

use std::sync::Arc;

use crate::actor::Actor;
use crate::addr::Addr;
use crate::cell::ActorCell;
use crate::clock::Time;

/// What a handler may ask of the runtime. See the module docs for what it
/// deliberately does not offer.
pub struct Ctx<'a, A: Actor> {
    cell: &'a Arc<ActorCell<A>>,
}

impl<A: Actor> std::fmt::Debug for Ctx<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names the actor, nothing about the delivery.
        write!(f, "Ctx({})", self.cell.target())
    }
}

impl<'a, A: Actor> Ctx<'a, A> {
    #[inline(always)]
    pub(crate) fn new(cell: &'a Arc<ActorCell<A>>) -> Self {
        Ctx { cell }
    }

    /// The address of the actor running this handler.
    pub fn myself(&self) -> Addr<A> {
        Addr::from_cell(Arc::clone(self.cell))
    }

    /// The current time from the actor's injected clock: the system clock
    /// live, virtual time in simulation. Read time only through here, never
    /// through `Instant::now()`, and a simulated run is repeatable.
    pub fn now(&self) -> Time {
        self.cell.clock.now()
    }

    /// Stops the actor once the current handler returns: its mailbox stops
    /// accepting, what it already accepted is still handled, then the
    /// `#[stopped]` hook runs and its thread exits.
    pub fn stop(&self) {
        self.cell.inbox.close();
    }
}
