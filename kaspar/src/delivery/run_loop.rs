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

use crate::actor::cell::{ActorCell, Held, STOPPED, TIMED, VACANT};
use crate::actor::ctx::Ctx;
use crate::actor::restart;
use crate::actor::traits::Actor;
use crate::base::ids::ClassId;
use crate::base::stats::SharedCounters;
use crate::failure::supervision::ExitReason;
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
pub(crate) struct Init<A> {
    pub(crate) build: Option<Box<dyn FnOnce() -> A + Send>>,
    pub(crate) thread_bound: bool,
}

/// Builds the state (if `init` says so) and runs `started`, serves the
/// mailbox until it is closed and empty, then runs `stopped` and marks the
/// actor stopped.
///
/// The spawner handed the actor's lock over to this thread
/// ([`ActorLock::hand_over`](crate::guard::lock::ActorLock::hand_over)), so
/// no synchronous caller enters before the state is built and `started`
/// has run.
pub(crate) fn run<A: Actor>(cell: Arc<ActorCell<A>>, config: LoopConfig, init: Init<A>) {
    // From here on this thread is the one that handles the actor's queue:
    // a thread waiting on an `ask` to it, or for room in its mailbox,
    // waits for this thread (the deadlock detector's view).
    let _consuming = cell.lock().consuming(chain::thread_token());
    let thread_bound = init.thread_bound;
    if let Some(build) = init.build {
        // SAFETY: the spawner handed this lock over to this thread before
        // starting it (it does whenever there is a `build`), and nothing
        // else adopts it.
        let held = unsafe { Held::adopt(cell.lock()) };
        cell.bind_home(&held);
        build_under(&cell, &held, build);
        if cell.flags() & STOPPED == 0 {
            start_under(&cell, &held);
        }
    }
    let mailbox = cell
        .inbox
        .own()
        .expect("kaspar: a standalone actor owns its mailbox");
    let mut batch: Vec<A::Msg> = Vec::with_capacity(config.max_batch.min(4096));
    loop {
        match mailbox.pop_batch(&mut batch, config.max_batch, config.idle) {
            Drained::Closed => break,
            Drained::Got(_) => serve(&cell, &mut batch),
        }
    }
    let held = cell.hold();
    stop_under(&cell, &held);
    if thread_bound {
        // A state built on this thread is dropped on it.
        drop(cell.vacate(&held));
    }
}

/// Fills the cell with the state `factory` builds on this thread. If the
/// factory panics, the actor stops before it started: what is queued goes
/// to dead letters, and watchers hear `Panicked`.
fn build_under<A: Actor>(
    cell: &Arc<ActorCell<A>>,
    held: &Held<'_>,
    factory: Box<dyn FnOnce() -> A + Send>,
) {
    match catch_unwind(AssertUnwindSafe(factory)) {
        Ok(actor) => cell.fill(held, actor),
        Err(_) => {
            SharedCounters::bump(&cell.stats.shared.panics);
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
        if catch_unwind(AssertUnwindSafe(|| A::stopped(entered.access(), &mut ctx))).is_err() {
            SharedCounters::bump(&cell.stats.shared.panics);
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
    if catch_unwind(AssertUnwindSafe(|| A::started(entered.access(), &mut ctx))).is_err() {
        SharedCounters::bump(&cell.stats.shared.panics);
    }
}

/// Handles one queued message under `held`, seeding the chain with it.
#[inline]
pub(crate) fn serve_one<A: Actor>(cell: &Arc<ActorCell<A>>, held: &Held<'_>, msg: A::Msg) {
    let flags = cell.flags();
    if flags != 0 || cell.sup.dead.is_abandoned() {
        if let Some(reason) = restart::before_queued(cell, held) {
            cell.sup.dead.post_queued(cell, msg, reason);
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
fn serve_timed<A: Actor>(cell: &Arc<ActorCell<A>>, held: &Held<'_>, msg: A::Msg) {
    let start = Instant::now();
    let class = handle_queued(cell, held, msg);
    if let Some(latency) = cell.stats.latency.get() {
        // Still under `held`: the only writer.
        latency.record(class, start.elapsed());
    }
}

/// Enters for `msg`, runs its handler, routes its reply; returns its class.
#[inline(always)]
fn handle_queued<A: Actor>(cell: &Arc<ActorCell<A>>, held: &Held<'_>, msg: A::Msg) -> ClassId {
    let class = A::class_of(&msg);
    let mut entered = cell.enter_held(held, class);
    let mut ctx = Ctx::new(cell);
    let run = catch_unwind(AssertUnwindSafe(|| {
        A::dispatch(entered.access(), msg, &mut ctx)
    }));
    if let Err(payload) = run {
        restart::on_panic(&mut entered, class, payload);
    }
    class
}

/// Handles a drained batch under one lock acquisition.
#[inline]
pub(crate) fn serve<A: Actor>(cell: &Arc<ActorCell<A>>, batch: &mut Vec<A::Msg>) {
    let held = cell.hold();
    if batch.len() == 1 {
        // The common case of a pop-one mailbox, or a consumer that keeps
        // up: no drain iterator to set up and tear down.
        if let Some(msg) = batch.pop() {
            serve_one(cell, &held, msg);
        }
        return;
    }
    let mut first = true;
    for msg in batch.drain(..) {
        if !first {
            held.bump();
        }
        first = false;
        serve_one(cell, &held, msg);
    }
}
