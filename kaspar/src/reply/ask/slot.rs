//! The one-shot meeting point of an `ask` and its reply: one state byte,
//! the reply, and whoever waits for it (a blocked thread or a task's
//! waker), without a lock.
//!
//! # Protocol
//!
//! Two parties share a slot: the *asker* (the one [`Ask`](super::Ask)
//! handle) and *repliers* (whoever holds the other references: a
//! `ReplyTo`, kaspar-remote's pending entry). The state byte has three
//! bits:
//!
//! - `CLAIMED`: a replier won the right to store the reply. Set once, by
//!   `fetch_or`; a replier that finds it set already stores nothing (a
//!   second fill of the same slot is dropped, never raced).
//! - `VALUE`: the reply is in `value`, set by the claiming replier after
//!   writing it (release).
//! - `WAITER`: a waiter is in `waiter`. Only the asker sets and clears it.
//!
//! The rules the `unsafe` accesses rely on:
//!
//! - **S1**: only the replier that set `CLAIMED` writes `value`, and only
//!   before it sets `VALUE`; it never touches `value` again.
//! - **S2**: the asker reads `value` only after it has seen `VALUE`
//!   (acquire), which orders the replier's write before.
//! - **W1**: the asker writes `waiter` only while `WAITER` is clear and
//!   `VALUE` is not set, as it saw last (it sets and clears `WAITER`
//!   itself, clearing only while `VALUE` is not set, by compare-and-swap).
//! - **W2**: the replier touches `waiter` only if `WAITER` was set in the
//!   state its `fetch_or` of `VALUE` replaced: the asker set it after its
//!   write (release, acquired here), and cannot clear it any more (its
//!   swap expects `VALUE` unset), so from then on `waiter` is the
//!   replier's. It takes the waiter out, lets go of the slot, then wakes
//!   it: by the time the asker runs, its handle is usually the slot's only
//!   owner, and the slot can be recycled at once.
//! - **R**: the slot is reset for reuse only through a unique reference
//!   (`Arc::get_mut`, whose acquire orders every replier's last access
//!   before).
//!
//! An `ask(..).await` whose reply comes after its first poll costs three
//! locked instructions here (the asker's `WAITER`, the replier's `CLAIMED`
//! and `VALUE`) where a mutex around the same state cost six (a lock and
//! an unlock for the registration, the reply and the take). The loom model
//! `tests/loom_ask.rs` checks the protocol against this code.

use std::fmt;
use std::task::Waker;

use crate::base::sync::thread::Thread;
use crate::base::sync::{Arc, AtomicU8, Ordering, UnsafeCell};
use crate::error::AskError;

/// A replier won the right to store the reply.
const CLAIMED: u8 = 1;
/// The reply is stored.
const VALUE: u8 = 2;
/// The asker left a waiter.
const WAITER: u8 = 4;

/// The one-shot meeting point of an `ask` and its reply (module docs).
/// Public only through `__private` (kaspar-remote keeps a remote ask's
/// slot as its pending entry, with no box around it).
pub struct Slot<R> {
    state: AtomicU8,
    value: UnsafeCell<Option<Result<R, AskError>>>,
    waiter: UnsafeCell<Waiter>,
}

/// Who waits for a slot's reply.
pub(super) enum Waiter {
    Nobody,
    /// A thread blocked in `wait` or `wait_timeout`.
    Thread(Thread),
    /// A task awaiting the `Ask` as a future.
    Task(Waker),
}

impl Waiter {
    fn wake(self) {
        match self {
            Waiter::Nobody => {}
            Waiter::Thread(t) => t.unpark(),
            Waiter::Task(w) => w.wake(),
        }
    }
}

// SAFETY: a slot moves an `R` from a replier to the asker (S1, S2) and
// never hands out a shared `&R`; `Thread` and `Waker` are `Send + Sync`.
// So `R: Send` is all that sending or sharing the slot needs.
unsafe impl<R: Send> Send for Slot<R> {}
// SAFETY: as for `Send`; every shared access follows S1, S2, W1 and W2.
unsafe impl<R: Send> Sync for Slot<R> {}

impl<R> fmt::Debug for Slot<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("ready", &(self.state.load(Ordering::Relaxed) & VALUE != 0))
            .finish()
    }
}

impl<R> Slot<R> {
    pub(crate) fn new() -> Self {
        Slot {
            state: AtomicU8::new(0),
            value: UnsafeCell::new(None),
            waiter: UnsafeCell::new(Waiter::Nobody),
        }
    }

    /// Completes the asker's handle with `value`, as a reply route does
    /// (kaspar-remote: a reply or error from another process). The first
    /// fill of a slot counts; a later one drops its value.
    #[doc(hidden)]
    pub fn fill(this: Arc<Self>, value: Result<R, AskError>) {
        Slot::complete(this, value);
    }

    /// Stores the value, lets go of the replier's reference, *then* wakes
    /// the asker (W2).
    pub(crate) fn complete(this: Arc<Self>, value: Result<R, AskError>) {
        if this.state.fetch_or(CLAIMED, Ordering::Acquire) & CLAIMED != 0 {
            return;
        }
        super::count_answer();
        // SAFETY: S1: `CLAIMED` was ours to set, so no other replier
        // writes `value`, and the asker reads it only after `VALUE` (S2).
        this.value.with_mut(|p| unsafe { *p = Some(value) });
        let before = this.state.fetch_or(VALUE, Ordering::AcqRel);
        let waiter = (before & WAITER != 0).then(|| {
            // SAFETY: W2: `WAITER` was set when `VALUE` was: the asker
            // wrote `waiter` before (its release, our acquire) and writes
            // it no more.
            this.waiter
                .with_mut(|p| unsafe { std::mem::replace(&mut *p, Waiter::Nobody) })
        });
        drop(this);
        if let Some(waiter) = waiter {
            waiter.wake();
        }
    }

    /// Whether the reply is in (a snapshot; acquire, so that the asker
    /// may take it next).
    #[inline]
    pub(super) fn is_ready(&self) -> bool {
        self.state.load(Ordering::Acquire) & VALUE != 0
    }

    /// The asker takes the reply, if it is in and not yet taken.
    #[inline]
    pub(super) fn take(&self) -> Option<Result<R, AskError>> {
        if !self.is_ready() {
            return None;
        }
        // SAFETY: S2: `VALUE` was seen (acquire); the replier is done with
        // `value`, and only the asker, this caller, touches it now.
        self.value.with_mut(|p| unsafe { (*p).take() })
    }

    /// The asker leaves a waiter for the reply to wake: `update` gets the
    /// waiter left before (or `Nobody`) to keep or replace. `false` when
    /// the reply is in already: nothing is left then (take the reply).
    pub(super) fn register(&self, update: impl FnOnce(&mut Waiter)) -> bool {
        if !self.unregister() {
            return false;
        }
        // SAFETY: W1: `WAITER` is clear (no replier touches `waiter`) and
        // `VALUE` was not set when it was cleared.
        self.waiter.with_mut(|p| update(unsafe { &mut *p }));
        self.state.fetch_or(WAITER, Ordering::AcqRel) & VALUE == 0
    }

    /// The asker takes back the waiter it left, if any: `false` when the
    /// reply came first (its replier has the waiter, W2; take the reply).
    pub(super) fn unregister(&self) -> bool {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & VALUE != 0 {
                return false;
            }
            if state & WAITER == 0 {
                return true;
            }
            match self.state.compare_exchange_weak(
                state,
                state & !WAITER,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => state = now,
            }
        }
    }

    /// Whether the asker has a waiter left (a snapshot).
    #[cfg(all(test, not(loom)))]
    pub(super) fn has_waiter(&self) -> bool {
        self.state.load(Ordering::Relaxed) & WAITER != 0
    }

    /// Empties the slot for the next `ask` (R: the reference is unique).
    pub(super) fn reset(&mut self) {
        self.state.store(0, Ordering::Relaxed);
        // SAFETY: `&mut self`: nobody else can reach the cells.
        self.value.with_mut(|p| unsafe { *p = None });
        // SAFETY: as above.
        self.waiter.with_mut(|p| unsafe { *p = Waiter::Nobody });
    }
}
