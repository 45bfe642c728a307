//! Where a simulated run watches the runtime from (feature `sim`; the
//! simulator is [`crate::sim`], its pool's seam `delivery/sched/sim.rs`).
//!
//! The run loop tells the thread's [`Watch`] which message it is about to
//! hand to which handler (for the trace, and so that it can inject a
//! panic there instead), and a send into a bounded rejecting mailbox asks
//! it whether to find the mailbox full. A thread without a watch (every
//! thread but a simulator's) pays one thread-local load and a branch.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::base::ids::Target;

/// What the simulator is told on its thread, and decides there.
pub(crate) trait Watch {
    /// `target`'s handler for `class` is about to run, for a dequeued
    /// message or (`inline`) a synchronous delivery; `true` makes it
    /// panic instead (an injected fault: the message is consumed and
    /// supervision acts, as for any panic; a synchronous caller gets
    /// `Panicked`).
    fn handling(&self, target: &Target, class: &'static str, inline: bool) -> bool;
    /// A send into `target`'s bounded mailbox that rejects when full;
    /// `true` finds it full (the message comes back in `SendError::Full`).
    fn full(&self, target: &Target) -> bool;
}

thread_local! {
    static WATCH: RefCell<Option<Rc<dyn Watch>>> = const { RefCell::new(None) };
    /// Whether `WATCH` is set: a `Cell<bool>` needs no destructor, so
    /// reading it is one load of the thread's own memory, the whole cost
    /// on every thread but a simulator's.
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

/// The payload of an injected panic.
pub(crate) const INJECTED: &str = "kaspar::sim: injected panic";

/// Makes `watch` the calling thread's; returns the one it replaces.
pub(crate) fn replace(watch: Option<Rc<dyn Watch>>) -> Option<Rc<dyn Watch>> {
    ACTIVE.with(|a| a.set(watch.is_some()));
    WATCH.with(|w| std::mem::replace(&mut *w.borrow_mut(), watch))
}

/// Whether the calling thread is watched.
#[inline(always)]
fn active() -> bool {
    ACTIVE.with(Cell::get)
}

/// Before a handler runs (from the run loop, or inline from a synchronous
/// delivery): tells the watch, and panics in the handler's place if it
/// says so.
#[inline]
pub(crate) fn handling(target: impl FnOnce() -> Target, class: &'static str, inline: bool) {
    if active() {
        watched(target, class, inline);
    }
}

#[cold]
#[inline(never)]
fn watched(target: impl FnOnce() -> Target, class: &'static str, inline: bool) {
    let inject = WATCH.with(|w| match &*w.borrow() {
        Some(w) => w.handling(&target(), class, inline),
        None => false,
    });
    if inject {
        std::panic::panic_any(INJECTED);
    }
}

/// From a send into a bounded mailbox that rejects when full: whether the
/// simulator finds it full now.
#[inline]
pub(crate) fn full(target: impl FnOnce() -> Target) -> bool {
    active() && found_full(target)
}

#[cold]
#[inline(never)]
fn found_full(target: impl FnOnce() -> Target) -> bool {
    WATCH.with(|w| match &*w.borrow() {
        Some(w) => w.full(&target()),
        None => false,
    })
}
