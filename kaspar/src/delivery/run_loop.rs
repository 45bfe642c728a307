//! The thread that serves one standalone actor's mailbox.
//!
//! Per batch: drain the mailbox (one message for a pop-one queue, up to
//! `max_batch` for a batching one), take the actor's lock once, and run each
//! message's handler with the actor's frame seeding the call chain. Between
//! messages the lock is offered to any parked synchronous caller, so a long
//! batch does not starve `fast_send`.
//!
//! A handler panic is caught here and handed to supervision
//! ([`crate::failure::supervision`]). A message dequeued for an actor that
//! supervision stopped, or after the system stopped waiting for this
//! thread at shutdown, goes to dead letters instead of its handler.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use crate::actor::cell::{ActorCell, Entered, Held, STOPPED, TIMED, VACANT};
use crate::actor::ctx::Ctx;
use crate::actor::packed::{Parcel, Stored};
use crate::actor::traits::Actor;
use crate::actor::{letters, restart, trace};
use crate::base::ids::ClassId;
use crate::base::stats::Rare;
use crate::failure::dead_letters::DeadLetterReason;
use crate::failure::supervision::ExitReason;
use crate::failure::{drop_quietly, quietly};
use crate::guard::chain;
use crate::mailbox::{Drained, IdleWait};

/// How a run loop drains.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoopConfig {
    pub(crate) idle: IdleWait,
    pub(crate) max_batch: usize,
}

/// How a run loop's actor gets its state: `build` runs first thing on the
/// actor's thread (it moves a state made elsewhere, or runs the user's
/// factory), under the lock the spawner handed over; `None` when the
/// spawner filled the cell itself (no `started` hook, not thread-bound).
/// A `thread_bound` state lives only on that thread and is dropped there
/// when the actor stops.
pub(crate) struct Init<A: Actor> {
    pub(crate) build: Option<Box<dyn FnOnce() -> A + Send>>,
    pub(crate) thread_bound: bool,
    /// Records what the loop serves (`Spawn::flight_recorder`).
    #[cfg(feature = "journal")]
    pub(crate) flight: Option<crate::delivery::flight::FlightRecorder<A::Msg>>,
}

/// Builds the state (if `init` says so) and runs `started`, serves the
/// mailbox until it is closed and empty, then runs `stopped` and marks the
/// actor stopped.
///
/// The spawner handed the actor's lock over to this thread
/// ([`ActorLock::hand_over`](crate::guard::lock::ActorLock::hand_over)), so
/// no synchronous caller enters before the state is built and `started`
/// has run.
///
/// The thread never dies silently. Handlers and hooks run under their own
/// `catch_unwind`, and user values the runtime drops are dropped quietly
/// ([`drop_quietly`]); should anything unwind out of the loop all the same,
/// the actor still ends in the defined state of a stopped actor ([`die`]):
/// marked stopped, its mailbox closed and everything it had accepted
/// handed to dead letters (so the asks among it resolve), its watchers
/// told it panicked. Either way a thread-bound state is dropped here, on
/// its own thread, and the actor's home is forgotten.
pub(crate) fn run<A: Actor>(cell: Arc<ActorCell<A>>, config: LoopConfig, init: Init<A>) {
    // From here on this thread is the one that handles the actor's queue:
    // a thread waiting on an `ask` to it, or for room in its mailbox,
    // waits for this thread (the deadlock detector's view).
    let _consuming = cell.lock().consuming(chain::thread_token());
    let thread_bound = init.thread_bound;
    let mut batch: Vec<Stored<A>> = Vec::new();
    let served = catch_unwind(AssertUnwindSafe(|| {
        serve_until_closed(&cell, config, init, &mut batch);
        let held = cell.hold();
        stop_under(&cell, &held);
    }));
    if let Err(payload) = served {
        drop_quietly(payload);
        die(&cell, &mut batch);
    }
    if thread_bound {
        // A state built on this thread is dropped on it, outside the lock
        // (its destructor may call other actors).
        let held = cell.hold();
        let state = cell.vacate(&held);
        drop(held);
        if drop_quietly(state) > 0 {
            cell.stats.shared.bump(Rare::Panics);
        }
    }
    cell.clear_home();
}

/// The life of the actor on its thread, short of stopping: its state and
/// `started` (if this thread builds them), then every batch its mailbox
/// yields until it is closed and empty. `batch` is the caller's, so that
/// whatever an unwind leaves in it is still there for [`die`].
fn serve_until_closed<A: Actor>(
    cell: &Arc<ActorCell<A>>,
    config: LoopConfig,
    init: Init<A>,
    batch: &mut Vec<Stored<A>>,
) {
    if let Some(build) = init.build {
        // SAFETY: the spawner handed this lock over to this thread before
        // starting it (it does whenever there is a `build`), and nothing
        // else adopts it.
        let held = unsafe { Held::adopt(cell.lock()) };
        cell.bind_home(&held);
        build_under(cell, &held, build);
        if cell.flags() & STOPPED == 0 {
            start_under(cell, &held);
        }
    }
    let mailbox = cell
        .inbox
        .own()
        .expect("kaspar: a standalone actor owns its mailbox");
    let mailbox = trace::consumer(mailbox);
    batch.reserve(config.max_batch.min(4096));
    loop {
        match mailbox.pop_batch(batch, config.max_batch, config.idle) {
            Drained::Closed => break,
            Drained::Got(_) => {
                #[cfg(feature = "journal")]
                if let Some(flight) = &init.flight {
                    crate::delivery::flight::serve_recorded(cell, flight, batch);
                    continue;
                }
                serve(cell, batch)
            }
        }
    }
}

/// What is left to do when something unwound out of the run loop: the
/// actor becomes a stopped actor, whatever it was doing. It is told to
/// its watchers as `Panicked`; its `stopped` hook runs (caught, as
/// always); the rest of the interrupted batch and everything its mailbox
/// accepted go to dead letters, the mailbox's reserved slots included.
#[cold]
#[inline(never)]
pub(crate) fn die<A: Actor>(cell: &Arc<ActorCell<A>>, batch: &mut Vec<Stored<A>>) {
    cell.stats.shared.bump(Rare::Panics);
    // Sends are refused (and hand their message back) from here on.
    cell.inbox.close();
    restart::notify_terminated(cell, ExitReason::Panicked);
    {
        let held = cell.hold();
        if cell.flags() & STOPPED == 0 {
            quietly(|| stop_under(cell, &held));
            if cell.flags() & STOPPED == 0 {
                cell.mark_stopped(&held);
            }
        }
    }
    // `serve` takes messages from the back of its (reversed) batch.
    while let Some(msg) = batch.pop() {
        quietly(|| {
            cell.sup
                .dead
                .post_queued(cell, msg.load(), DeadLetterReason::Stopped)
        });
    }
    letters::drain_closed(cell, DeadLetterReason::Stopped);
}

/// Fills the cell with the state `factory` builds on this thread. If the
/// factory panics, the actor stops before it started: what is queued goes
/// to dead letters, and watchers hear `Panicked`.
pub(crate) fn build_under<A: Actor>(
    cell: &Arc<ActorCell<A>>,
    held: &Held<'_>,
    factory: Box<dyn FnOnce() -> A + Send>,
) {
    match quietly(factory) {
        Some(actor) => cell.fill(held, actor),
        None => {
            cell.stats.shared.bump(Rare::Panics);
            cell.mark_stopped(held);
            cell.inbox.close();
            restart::notify_terminated(cell, ExitReason::Panicked);
        }
    }
}

/// Runs `stopped` under `held`, marks the actor stopped and tells its
/// watchers. Does nothing for an actor already stopped.
pub(crate) fn stop_under<A: Actor>(cell: &Arc<ActorCell<A>>, held: &Held<'_>) {
    if cell.flags() & STOPPED != 0 {
        return;
    }
    if cell.flags() & VACANT != 0 {
        // It never had a state (a group whose factory panicked, or that
        // was prepared and dropped): there is no hook to run.
        cell.mark_stopped(held);
        restart::notify_terminated(cell, ExitReason::Stopped);
        return;
    }
    {
        let mut entered = cell.enter_held(held, ClassId::LIFECYCLE);
        let mut ctx = Ctx::new(cell);
        if quietly(|| A::stopped(entered.access(), &mut ctx)).is_none() {
            cell.stats.shared.bump(Rare::Panics);
        }
    }
    cell.mark_stopped(held);
    restart::notify_terminated(cell, ExitReason::Stopped);
}

/// Runs `started` under `held`.
pub(crate) fn start_under<A: Actor>(cell: &Arc<ActorCell<A>>, held: &Held<'_>) {
    if !A::HAS_STARTED {
        return;
    }
    let mut entered = cell.enter_held(held, ClassId::LIFECYCLE);
    let mut ctx = Ctx::new(cell);
    if quietly(|| A::started(entered.access(), &mut ctx)).is_none() {
        cell.stats.shared.bump(Rare::Panics);
    }
}

/// Handles one queued message under `held`, seeding the chain with it.
#[inline]
pub(crate) fn serve_one<A: Actor>(cell: &Arc<ActorCell<A>>, held: &Held<'_>, msg: impl Parcel<A>) {
    // Every message served takes its cause, whether it is handled or not.
    #[cfg(feature = "tracing")]
    let _arrival = trace::arrive();
    let flags = cell.flags();
    if flags != 0 || cell.sup.dead.is_abandoned() {
        if let Some(reason) = restart::before_queued(cell, held) {
            cell.sup.dead.post_queued(cell, msg.into_msg(), reason);
            return;
        }
        if flags & TIMED != 0 {
            return serve_timed(cell, held, msg);
        }
    }
    handle_queued(cell, held, msg);
}

/// [`serve_one`] for an actor that records latency: the handler's run is
/// timed, from entry to the reply handed to its route.
#[cold]
#[inline(never)]
fn serve_timed<A: Actor>(cell: &Arc<ActorCell<A>>, held: &Held<'_>, msg: impl Parcel<A>) {
    let start = Instant::now();
    let class = handle_queued(cell, held, msg);
    if let Some(latency) = cell.stats.latency.get() {
        // Still under `held`: the only writer.
        latency.record(class, start.elapsed());
    }
}

/// Enters for `msg`, runs its handler, routes its reply; returns its class.
#[inline(always)]
fn handle_queued<A: Actor>(
    cell: &Arc<ActorCell<A>>,
    held: &Held<'_>,
    msg: impl Parcel<A>,
) -> ClassId {
    let class = msg.class();
    let mut entered = cell.enter_held(held, class);
    #[cfg(feature = "tracing")]
    let _span = trace::queued(cell, class);
    let run = catch_unwind(AssertUnwindSafe(|| dispatch(cell, &mut entered, msg)));
    if let Err(payload) = run {
        restart::on_panic(&mut entered, class, payload);
    }
    class
}

/// Runs `msg`'s handler under `entered` and routes its reply; a panic
/// unwinds to the caller's `catch_unwind`.
#[inline(always)]
fn dispatch<A: Actor>(cell: &Arc<ActorCell<A>>, entered: &mut Entered<'_, A>, msg: impl Parcel<A>) {
    let mut ctx = Ctx::new(cell);
    // The simulator's view of the step, and its injected panic.
    #[cfg(feature = "sim")]
    crate::base::sim_watch::handling(
        || cell.target(),
        crate::actor::letters::name_of_class::<A>(msg.class()),
        false,
    );
    msg.dispatch(entered.access(), &mut ctx)
}

/// [`serve`] for one message that came alone (a pooled drain's lone
/// message, `Mailbox::poll`): under one hold of the lock, as a batch of one.
#[inline]
pub(crate) fn serve_lone<A: Actor>(cell: &Arc<ActorCell<A>>, msg: Stored<A>) {
    let held = cell.hold();
    serve_one(cell, &held, msg);
}

/// Handles a batch drained from the actor's own mailbox (messages as it
/// stores them, [`Actor::pack`]ed) under one lock acquisition.
///
/// A message leaves `batch` only as it is served: should anything unwind
/// mid-batch, the messages not yet served are still in `batch` (in
/// reverse order), for the caller to hand to dead letters. (A drain
/// iterator would drop them during the unwind, where a destructor that
/// panics aborts the process.)
#[inline]
pub(crate) fn serve<A: Actor>(cell: &Arc<ActorCell<A>>, batch: &mut Vec<Stored<A>>) {
    let mut held = cell.hold();
    if batch.len() == 1 {
        // The common case of a pop-one mailbox, or a consumer that keeps
        // up: one message, nobody to let in.
        if let Some(msg) = batch.pop() {
            serve_one(cell, &held, msg);
        }
        return;
    }
    // Served from the back, so the first message goes first.
    batch.reverse();
    serve_run(cell, &held, batch);
    while !batch.is_empty() {
        held.bump(|| cell.target());
        serve_run(cell, &held, batch);
    }
}

/// Serves messages from the back of `batch`, at least one, under one
/// entry and one `catch_unwind`: as long as the actor stays ordinary (no
/// flag, dead letters not abandoned), no handler panics and no thread
/// waits for the lock, each next message reuses the entry, its frame
/// renamed for the message's class ([`Entered::next_message`]), where
/// [`serve_one`] would pop the frame and push it again and catch each
/// handler's unwind apart. What a handler sees is the same either way:
/// its own frame on the chain, its message counted before it runs; and
/// a panic goes to supervision with the panicking message's class, as
/// from [`serve_one`]. What ends a run ends it before the next message,
/// which [`serve`] then takes past the lock's waiters and back here, or
/// through [`serve_one`]'s checks. With `tracing`, every message takes
/// [`serve_one`]: its span covers the handler and what supervision does
/// after a panic.
#[inline]
fn serve_run<A: Actor>(cell: &Arc<ActorCell<A>>, held: &Held<'_>, batch: &mut Vec<Stored<A>>) {
    let Some(msg) = batch.pop() else {
        return;
    };
    if cfg!(feature = "tracing") || !ordinary(cell) {
        return serve_one(cell, held, msg);
    }
    let mut class = msg.class();
    let mut entered = cell.enter_held(held, class);
    let run = catch_unwind(AssertUnwindSafe(|| {
        let mut msg = msg;
        loop {
            dispatch(cell, &mut entered, msg);
            if !ordinary(cell) || held.others_wait() {
                return;
            }
            let Some(next) = batch.pop() else {
                return;
            };
            class = next.class();
            entered.next_message(class);
            msg = next;
        }
    }));
    if let Err(payload) = run {
        restart::on_panic(&mut entered, class, payload);
    }
}

/// Whether the next queued message can go straight to its handler: no
/// flag set ([`serve_one`]'s slow path: stopped, restarting, timed, ...)
/// and dead letters not abandoned.
#[inline(always)]
fn ordinary<A: Actor>(cell: &ActorCell<A>) -> bool {
    cell.flags() == 0 && !cell.sup.dead.is_abandoned()
}
