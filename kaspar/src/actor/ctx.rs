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
    ///
    /// Firing never waits for room: if the actor's mailbox is full when the
    /// timer is due, the message waits in the timer queue and is delivered
    /// once when room appears (retried within 1 to 10 ms live), while other
    /// actors' timers fire on time. The actor's timers still arrive in
    /// (due time, scheduling order); a group's members' timers, in that
    /// order across the group. If the actor stops first, the message is
    /// dropped.
    pub fn schedule_once<M>(&self, delay: Duration, msg: M) -> TimerId
    where
        A: Handler<M>,
        M: Send + 'static,
    {
        let me = self.myself();
        let queue = me.timer_queue();
        let tag = self.cell.timer_tag();
        let mut msg = Some(msg);
        let due = self.now().saturating_add(delay);
        self.cell.clock.timers().schedule_tagged(
            due,
            None,
            queue,
            tag,
            Box::new(move || me.fire_timer(&mut msg, tag)),
        )
    }

    /// Delivers a clone of `msg` to this actor every `period`, the first
    /// one `period` from now, until cancelled or the actor stops.
    ///
    /// A tick that finds the mailbox full waits for room as
    /// [`schedule_once`](Self::schedule_once)'s message does, and the timer
    /// does not re-arm until it is delivered: at most one tick waits, and
    /// the ticks that came due meanwhile are coalesced into it. The next
    /// tick is the first one of the original schedule after the delivery.
    pub fn schedule_every<M>(&self, period: Duration, msg: M) -> TimerId
    where
        A: Handler<M>,
        M: Clone + Send + 'static,
    {
        let me = self.myself();
        let queue = me.timer_queue();
        let tag = self.cell.timer_tag();
        let due = self.now().saturating_add(period);
        // The tick waiting for room, if any; a fresh clone otherwise.
        let mut tick = None;
        self.cell.clock.timers().schedule_tagged(
            due,
            Some(period),
            queue,
            tag,
            Box::new(move || {
                if tick.is_none() {
                    tick = Some(msg.clone());
                }
                me.fire_timer(&mut tick, tag)
            }),
        )
    }

    /// Cancels a timer; false if it already fired or was cancelled. A
    /// timer whose message waits for room in a full mailbox is still
    /// pending: cancelling it drops the message.
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
