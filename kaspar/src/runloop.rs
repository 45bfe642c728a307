//! The thread that serves one standalone actor's mailbox.
//!
//! Per batch: drain the mailbox (one message for a pop-one queue, up to
//! `max_batch` for a batching one), take the actor's lock once, and run each
//! message's handler with the actor's frame seeding the call chain. Between
//! messages the lock is offered to any parked synchronous caller, so a long
//! batch does not starve `fast_send`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::actor::{Actor, ClassId};
use crate::cell::{ActorCell, Held};
use crate::ctx::Ctx;
use crate::mailbox::{Drained, IdleWait};
use crate::stats::SharedCounters;

/// How a run loop drains.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoopConfig {
    pub(crate) idle: IdleWait,
    pub(crate) max_batch: usize,
}

/// Runs `started`, serves the mailbox until it is closed and empty, then
/// runs `stopped` and marks the actor stopped.
pub(crate) fn run<A: Actor>(cell: Arc<ActorCell<A>>, config: LoopConfig) {
    if A::HAS_STARTED {
        start_under(&cell, &cell.hold());
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
}

/// Runs `stopped` under `held` and marks the actor stopped.
pub(crate) fn stop_under<A: Actor>(cell: &Arc<ActorCell<A>>, held: &Held<'_>) {
    {
        let mut entered = cell.enter_held(held, ClassId::LIFECYCLE);
        let mut ctx = Ctx::new(cell);
        if catch_unwind(AssertUnwindSafe(|| A::stopped(entered.access(), &mut ctx))).is_err() {
            SharedCounters::bump(&cell.stats.shared.panics);
        }
    }
    cell.mark_stopped(held);
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
    let mut entered = cell.enter_held(held, A::class_of(&msg));
    let mut ctx = Ctx::new(cell);
    let run = catch_unwind(AssertUnwindSafe(|| {
        A::dispatch(entered.access(), msg, &mut ctx)
    }));
    drop(entered);
    if run.is_err() {
        // Resume: the state is kept, the next message is served.
        SharedCounters::bump(&cell.stats.shared.panics);
    }
}

/// Handles a drained batch under one lock acquisition.
#[inline]
pub(crate) fn serve<A: Actor>(cell: &Arc<ActorCell<A>>, batch: &mut Vec<A::Msg>) {
    let held = cell.hold();
    let mut first = true;
    for msg in batch.drain(..) {
        if !first {
            held.bump();
        }
        first = false;
        serve_one(cell, &held, msg);
    }
}
