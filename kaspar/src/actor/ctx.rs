//! `Ctx`, the handler's context (documented on the type).

use std::sync::Arc;
use std::time::Duration;

use crate::actor::addr::Addr;
use crate::actor::cell::ActorCell;
use crate::actor::instance::Instance;
use crate::actor::traits::{Actor, Handler};
use crate::base::clock::Time;
use crate::base::timer::TimerId;

/// The handler's context: the same type, with the same methods, whichever
/// way the message arrived.
///
/// `Ctx` deliberately has no method, field or trait impl that tells a
/// handler how it was reached (inline on a caller's thread, or dequeued on
/// its own), which thread runs it, whether a sender is blocked on it, or how
/// deep its mailbox is. That is receiver transparency (paper §7.2), made a
/// property of the type rather than a convention.
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

    /// This actor's name and system, for `Ctx::spawn` (in the system
    /// layer, which this one does not see).
    pub(crate) fn instance(&self) -> &Instance {
        &self.cell.instance
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

    /// Delivers `msg` to this actor after `delay` on its clock, as an
    /// ordinary queued message. Timers due at the same time arrive in the
    /// order they were scheduled.
    pub fn schedule_once<M>(&self, delay: Duration, msg: M) -> TimerId
    where
        A: Handler<M>,
        M: Send + 'static,
    {
        let me = self.myself();
        let mut msg = Some(msg);
        let due = self.now().saturating_add(delay);
        self.cell.clock.timers().schedule(
            due,
            None,
            Box::new(move || match msg.take() {
                Some(m) => me.send_timer(m).is_ok(),
                None => false,
            }),
        )
    }

    /// Delivers a clone of `msg` to this actor every `period`, the first
    /// one `period` from now, until cancelled or the actor stops.
    pub fn schedule_every<M>(&self, period: Duration, msg: M) -> TimerId
    where
        A: Handler<M>,
        M: Clone + Send + 'static,
    {
        let me = self.myself();
        let due = self.now().saturating_add(period);
        self.cell.clock.timers().schedule(
            due,
            Some(period),
            Box::new(move || me.send_timer(msg.clone()).is_ok()),
        )
    }

    /// Cancels a timer; false if it already fired or was cancelled.
    pub fn cancel(&self, timer: TimerId) -> bool {
        self.cell.clock.timers().cancel(timer)
    }

    /// Stops the actor once the current handler returns: its mailbox stops
    /// accepting, what it already accepted is still handled, then the
    /// `#[stopped]` hook runs and its thread exits.
    pub fn stop(&self) {
        self.cell.inbox.close();
    }
}
