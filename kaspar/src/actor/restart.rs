//! Supervision's mechanics on a cell: what a caught panic does to the
//! actor's state (resume, restart from the factory, halt), performed under
//! the entry that ran the handler, and the watchers it tells. The policy and
//! its bookkeeping live in [`failure::supervision`](crate::failure::supervision);
//! the rules are in that module's docs.

use std::any::Any;
use std::sync::Arc;

use crate::actor::addr::Addr;
use crate::actor::cell::{ActorCell, Entered, Held, HALTED, RESTART_PENDING, STOPPED, VACANT};
use crate::actor::traits::{Actor, Handler};
use crate::base::ids::ClassId;
use crate::base::stats::Rare;
use crate::failure::dead_letters::{DeadLetter, DeadLetterReason, DeadLetters};
use crate::failure::supervision::{ExitReason, Restarted, Supervision, Terminated, Verdict};
use crate::failure::{drop_quietly, quietly};
use crate::reply::ReplySink;

impl<A: Actor> Addr<A> {
    /// Sets what a panic in one of this actor's handlers does, from the
    /// next panic on. For a group member, this is how its policy is set.
    pub fn supervise(&self, policy: Supervision<A>) {
        self.cell.sup.set(policy);
    }

    /// Sends `watcher` a [`Terminated`] message when this actor stops, for
    /// any reason. If it has stopped already, at once. Compiles only if
    /// `W` has a `#[handler(Terminated)]`.
    pub fn watch<W: Handler<Terminated>>(&self, watcher: &Addr<W>) {
        let sink: Arc<dyn ReplySink<Terminated>> = watcher.cell.clone();
        if let Some(reason) = self.cell.sup.watch(&sink) {
            sink.deliver(Terminated {
                target: self.target(),
                reason,
            });
        }
    }

    /// Sends `watcher` a [`Restarted`] message after each restart of this
    /// actor. Compiles only if `W` has a `#[handler(Restarted)]`.
    pub fn watch_restarts<W: Handler<Restarted>>(&self, watcher: &Addr<W>) {
        let sink: Arc<dyn ReplySink<Restarted>> = watcher.cell.clone();
        self.cell.sup.watch_restarts(&sink);
    }

    /// The system's dead-letter sink this actor reports to.
    pub fn dead_letters(&self) -> DeadLetters {
        self.cell.sup.dead.clone()
    }
}

#[cfg(feature = "journal")]
thread_local! {
    /// Handler panics caught on this thread: a flight recorder compares it
    /// before and after serving a message to know a panic happened there.
    static HANDLER_PANICS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many handler panics this thread has caught so far.
#[cfg(feature = "journal")]
pub(crate) fn handler_panics_here() -> u64 {
    HANDLER_PANICS.with(std::cell::Cell::get)
}

/// Applies the actor's policy after its handler for `class` panicked with
/// `payload`, under the entry that ran it.
#[cold]
#[inline(never)]
pub(crate) fn on_panic<A: Actor>(
    entered: &mut Entered<'_, A>,
    class: ClassId,
    payload: Box<dyn Any + Send>,
) {
    #[cfg(feature = "journal")]
    HANDLER_PANICS.with(|n| n.set(n.get() + 1));
    let cell = entered.cell();
    cell.stats.shared.bump(Rare::Panics);
    cell.stats.shared.bump(Rare::DeadLetters);
    cell.sup.dead.post(DeadLetter {
        target: cell.target(),
        class: A::CLASSES
            .get(class.index() as usize)
            .copied()
            .unwrap_or("lifecycle"),
        reason: DeadLetterReason::Panicked,
        message: None,
        panic: Some(payload),
    });
    if entered.flags() & (HALTED | STOPPED) != 0 {
        return;
    }
    let verdict = cell.sup.verdict(cell.clock.now());
    match verdict {
        Verdict::Resume => {}
        Verdict::Halt(reason) => halt(entered, reason),
        Verdict::Restart(factory) => {
            if entered.may_replace_state() {
                restart(entered, &*factory);
            } else {
                entered.set_flag(RESTART_PENDING);
            }
        }
    }
}

/// Performs a restart left pending by a panic in a nested entry; called by
/// the outermost entry that finds the flag.
#[cold]
#[inline(never)]
pub(crate) fn restart_pending<A: Actor>(entered: &mut Entered<'_, A>) {
    if !entered.may_replace_state() {
        return;
    }
    match entered.cell().sup.factory() {
        Some(f) => restart(entered, &*f),
        // The policy changed since the panic: nothing to restart.
        None => entered.clear_flag(RESTART_PENDING),
    }
}

fn restart<A: Actor>(entered: &mut Entered<'_, A>, factory: &(dyn Fn() -> A + Send + Sync)) {
    let cell = entered.cell();
    entered.clear_flag(RESTART_PENDING);
    let fresh = match quietly(factory) {
        Some(fresh) => fresh,
        None => {
            cell.stats.shared.bump(Rare::Panics);
            halt(entered, ExitReason::Panicked);
            return;
        }
    };
    match entered.replace_state(fresh) {
        Ok(old) => {
            // A panicking destructor must not take the caller down.
            if drop_quietly(old) > 0 {
                cell.stats.shared.bump(Rare::Panics);
            }
        }
        Err(_) => {
            entered.set_flag(RESTART_PENDING);
            return;
        }
    }
    cell.stats.shared.bump(Rare::Restarts);
    let (restarts, watchers) = cell.sup.restarted();
    for w in watchers {
        w.deliver(Restarted {
            target: cell.target(),
            restarts,
        });
    }
}

/// Stops the actor now: it refuses later entries and sends, its queue is
/// handed to dead letters by its run loop, its watchers are told.
fn halt<A: Actor>(entered: &mut Entered<'_, A>, reason: ExitReason) {
    let cell = entered.cell();
    entered.set_flag(HALTED);
    cell.inbox.close();
    notify_terminated(cell, reason);
}

/// Tells the watchers, once, that the actor stopped; later calls only
/// keep the first reason.
pub(crate) fn notify_terminated<A: Actor>(cell: &ActorCell<A>, reason: ExitReason) {
    let Some(watchers) = cell.sup.exited(reason) else {
        return;
    };
    for w in watchers {
        w.deliver(Terminated {
            target: cell.target(),
            reason,
        });
    }
}

/// Called by a run loop, under `held`, before it serves a queued message
/// of an actor whose flags are set or whose system gave up waiting.
/// Performs a pending restart; returns why the message must go to dead
/// letters instead of being handled, if it must.
#[cold]
#[inline(never)]
pub(crate) fn before_queued<A: Actor>(
    cell: &ActorCell<A>,
    held: &Held<'_>,
) -> Option<DeadLetterReason> {
    let flags = cell.flags();
    if flags & (HALTED | STOPPED | VACANT) != 0 {
        return Some(cell.sup.halt_reason());
    }
    if cell.sup.dead.is_abandoned() {
        return Some(DeadLetterReason::ShutdownTimeout);
    }
    if flags & RESTART_PENDING != 0 {
        let mut entered = cell.enter_held(held, ClassId::LIFECYCLE);
        restart_pending(&mut entered);
        if entered.flags() & HALTED != 0 {
            return Some(cell.sup.halt_reason());
        }
    }
    None
}
