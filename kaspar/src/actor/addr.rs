//! `Addr<A>`: the typed, cloneable handle every delivery goes through.

use std::fmt;
use std::sync::Arc;

use crate::actor::cell::ActorCell;
use crate::actor::traits::{Actor, ActorConfig, Handler};
use crate::base::ids::ActorId;
use crate::base::latency::LatencyStats;
use crate::base::stats::{ActorStats, Rare};
use crate::base::timer::{Fired, QueueKey};
use crate::error::{SendError, Target};
use crate::reply::{Ask, AskTarget, Asked, ReplySink, ReplyTo};

/// The address of an actor of type `A`.
///
/// `Clone + Send + Sync`; a clone is one reference-count increment. Every
/// delivery operation is a method here: the asynchronous ones ([`send`],
/// [`ask`], [`request`]) and the synchronous `fast_send` family (see
/// [`fast_send`](Addr::fast_send)). A message type the actor has no
/// `#[handler]` for does not compile.
///
/// [`send`]: Addr::send
/// [`ask`]: Addr::ask
/// [`request`]: Addr::request
pub struct Addr<A: Actor> {
    pub(crate) cell: Arc<ActorCell<A>>,
}

impl<A: Actor> Clone for Addr<A> {
    fn clone(&self) -> Self {
        Addr {
            cell: Arc::clone(&self.cell),
        }
    }
}

impl<A: Actor> fmt::Debug for Addr<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Addr({:?})", self.cell.target())
    }
}

impl<A: Actor> PartialEq for Addr<A> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.cell, &other.cell)
    }
}

impl<A: Actor> Eq for Addr<A> {}

impl<A: Actor> Addr<A> {
    pub(crate) fn from_cell(cell: Arc<ActorCell<A>>) -> Self {
        Addr { cell }
    }

    /// The actor's identity.
    pub fn id(&self) -> ActorId {
        self.cell.id()
    }

    /// The actor's type name: `#[actor(name = "...")]` if it gives one,
    /// otherwise its type's. All actors of one type share it; the
    /// [`id`](Self::id) tells instances apart, and so does the instance
    /// name given at spawn ([`Spawn::name`](crate::Spawn::name)), in
    /// [`target`](Self::target).
    pub fn name(&self) -> &'static str {
        <A as ActorConfig>::NAME
    }

    /// The actor's identity, type name and instance name, as errors,
    /// dead letters and `Debug` show it.
    pub fn target(&self) -> Target {
        self.cell.target()
    }

    /// Stops the actor gracefully, from outside (as [`Ctx::stop`] does from
    /// inside): its mailbox stops accepting at once (later queued sends get
    /// `Closed`, the message handed back), it handles everything it
    /// accepted before (a synchronous `fast_send` still runs inline while
    /// it does, and is refused as `Closed` once the actor has stopped), then
    /// its `#[stopped]` hook runs on its own thread and its watchers get
    /// [`Terminated`](crate::Terminated). Returns without waiting; use
    /// [`watch`](Self::watch) to learn when it is done. A group member's
    /// queued messages are still handled, and its hook runs when its group
    /// stops.
    ///
    /// [`Ctx::stop`]: crate::Ctx::stop
    pub fn stop(&self) {
        self.cell.inbox.close();
    }

    /// A snapshot of the actor's counters, with its instance name. Handler
    /// service times are apart, in [`latency`](Self::latency).
    pub fn stats(&self) -> ActorStats {
        ActorStats {
            name: self.cell.instance.name(),
            mailbox_lane: self.cell.inbox.own().is_some_and(|m| m.inflated()),
            ..self.cell.counters()
        }
    }

    /// The actor's handler service times per message class (count, mean,
    /// p50 to p99.9, max), or `None` unless it was spawned with
    /// [`record_latency(true)`](crate::Spawn::record_latency) (or its
    /// group with [`GroupSpawn::record_latency`](crate::GroupSpawn::record_latency)).
    ///
    /// Reads without a lock, while handlers run; allocates the snapshot.
    /// Recording costs two clock reads and a few stores per handler run;
    /// an actor that does not record pays nothing for the feature.
    pub fn latency(&self) -> Option<LatencyStats> {
        self.cell
            .stats
            .latency
            .get()
            .map(|l| l.snapshot(A::CLASSES))
    }

    /// Whether the actor has stopped for good: its `#[stopped]` hook has
    /// run, or supervision halted it after a panic
    /// ([`Supervision::stop`](crate::Supervision::stop), or a restart
    /// limit reached). A halted actor refuses every delivery from then on;
    /// a halted group member reads as stopped at once, although its
    /// `#[stopped]` hook runs only when its whole group stops. A stop asked
    /// for with [`stop`](Self::stop) counts once the hook has run.
    pub fn is_stopped(&self) -> bool {
        self.cell.is_stopped()
    }

    /// Queues `msg` for the actor's own thread and returns at once.
    ///
    /// Messages one thread sends to one actor are handled in the order
    /// sent. A full bounded mailbox or a stopped actor hands `msg` back.
    /// In steady state (the mailbox's ring not full) this allocates nothing.
    #[inline]
    pub fn send<M>(&self, msg: M) -> Result<(), SendError<M>>
    where
        A: Handler<M>,
    {
        self.push(<A as Handler<M>>::envelope(msg, ReplyTo::nobody()))
    }

    /// Queues `msg` and returns a handle to its reply.
    ///
    /// The handle can be waited on from a plain thread or awaited from any
    /// executor. The reply slot comes from a per-thread cache of answered
    /// slots, so in steady state an `ask` allocates nothing.
    pub fn ask<M>(&self, msg: M) -> Result<Ask<<A as Handler<M>>::Reply>, SendError<M>>
    where
        A: Handler<M>,
    {
        let slot = crate::reply::slot::<<A as Handler<M>>::Reply>();
        let reply = ReplyTo::ask(crate::base::sync::Arc::clone(&slot));
        self.push(<A as Handler<M>>::envelope(msg, reply))?;
        let target: AskTarget = self.cell.clone();
        Ok(Ask::new(slot, Some(target)))
    }

    /// Queues `msg`; the handler's reply is delivered to `reply_to`'s
    /// mailbox as an ordinary message. Compiles only if `S` has a handler
    /// for the reply type.
    pub fn request<M, S>(&self, msg: M, reply_to: &Addr<S>) -> Result<(), SendError<M>>
    where
        A: Handler<M>,
        S: Handler<<A as Handler<M>>::Reply>,
    {
        self.request_into(msg, ReplyTo::shared(&reply_to.cell))
    }

    /// [`request`](Self::request) with the reply's route already made
    /// (what a [`Recipient`](crate::Recipient) hands on).
    pub(crate) fn request_into<M>(
        &self,
        msg: M,
        reply_to: ReplyTo<<A as Handler<M>>::Reply>,
    ) -> Result<(), SendError<M>>
    where
        A: Handler<M>,
    {
        self.push(<A as Handler<M>>::envelope(msg, reply_to))
    }

    /// Fires one of the actor's own timers: queues the message in `slot`
    /// like a `send` (a journaled group records the firing), except that
    /// it never waits for room (see [`base::timer`](crate::base::timer)).
    /// A full mailbox leaves the message in `slot` for the timer queue to
    /// retry ([`Fired::Full`]). A stopped actor refuses it
    /// ([`Fired::Gone`]): the timer ends and the message is dropped, as
    /// every timer firing into a stopped actor is. An empty `slot` (a
    /// one-shot timer already delivered) is `Gone` too.
    pub(crate) fn fire_timer<M>(&self, slot: &mut Option<M>, tag: Option<u64>) -> Fired
    where
        A: Handler<M>,
    {
        let Some(msg) = slot.take() else {
            return Fired::Gone;
        };
        let envelope = <A as Handler<M>>::envelope(msg, ReplyTo::nobody());
        match self.cell.push_timer(envelope, tag.unwrap_or(0)) {
            Ok(len) => {
                self.cell.shared_counters().saw_len(len);
                Fired::Delivered
            }
            Err(SendError::Full { msg: envelope, .. }) => {
                *slot = Some(<A as Handler<M>>::open(envelope).0);
                Fired::Full
            }
            Err(_) => Fired::Gone,
        }
    }

    /// Names the queue the actor's timers deliver into, for their order
    /// (see [`QueueKey`]): its lock, one per actor and one per group, as
    /// its queue is.
    pub(crate) fn timer_queue(&self) -> QueueKey {
        QueueKey::of(Arc::as_ptr(self.cell.lock()))
    }

    #[inline(always)]
    fn push<M>(&self, envelope: A::Msg) -> Result<(), SendError<M>>
    where
        A: Handler<M>,
    {
        match self.cell.push(envelope) {
            Ok(len) => {
                self.cell.shared_counters().saw_len(len);
                Ok(())
            }
            Err(e) => Err(e.map(|env| <A as Handler<M>>::open(env).0)),
        }
    }
}

/// Queues `msg` with its reply routed to `reply` (kaspar-remote: an
/// inbound `ask` whose reply goes back over the wire). On refusal both
/// come back, so the caller may retry without losing the route.
#[doc(hidden)]
#[allow(clippy::type_complexity)]
pub fn send_with_reply<A, M>(
    addr: &Addr<A>,
    msg: M,
    reply: ReplyTo<<A as Handler<M>>::Reply>,
) -> Result<(), SendError<(M, ReplyTo<<A as Handler<M>>::Reply>)>>
where
    A: Handler<M>,
{
    match addr.cell.push(<A as Handler<M>>::envelope(msg, reply)) {
        Ok(len) => {
            addr.cell.shared_counters().saw_len(len);
            Ok(())
        }
        Err(e) => Err(e.map(<A as Handler<M>>::open)),
    }
}

impl<A: Actor> Asked for ActorCell<A> {
    fn lock(&self) -> &Arc<crate::guard::lock::ActorLock> {
        ActorCell::lock(self)
    }

    fn target(&self) -> Target {
        ActorCell::target(self)
    }

    fn hosted(&self) -> bool {
        self.inbox.hosted()
    }

    fn dedicated(&self) -> bool {
        self.inbox.dedicated()
    }

    fn help(&self, cx: &mut std::task::Context<'_>) -> crate::mailbox::Helped {
        self.inbox.help(cx, (self as *const Self).cast())
    }

    fn help_blocked(&self, done: &dyn Fn() -> bool, deadline: Option<std::time::Instant>) -> bool {
        self.inbox.help_blocked(done, deadline)
    }
}

// SAFETY: the ports are a field of the cell: the same every time, and
// dropped with it; and a cell never leaves its `Arc` (nothing unwraps one).
unsafe impl<S: Actor> crate::reply::HasPorts for ActorCell<S> {
    fn ports(&self) -> &crate::reply::Ports {
        &self.ports
    }
}

impl<S, R> ReplySink<R> for ActorCell<S>
where
    S: Handler<R>,
    R: Send + 'static,
{
    fn deliver(self: Arc<Self>, reply: R) {
        match self.push(S::envelope(reply, ReplyTo::nobody())) {
            Ok(len) => self.shared_counters().saw_len(len),
            Err(e) => {
                self.shared_counters().bump(Rare::DeadLetters);
                let (reply, _) = S::open(e.into_inner());
                self.sup
                    .dead
                    .post(crate::failure::dead_letters::DeadLetter {
                        target: self.target(),
                        class: crate::actor::letters::class_of_handler::<S, R>(),
                        reason: crate::failure::dead_letters::DeadLetterReason::Undeliverable,
                        message: Some(Box::new(reply)),
                        panic: None,
                    });
            }
        }
    }
}
