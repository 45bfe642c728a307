//! Loom model of the actor lock's owner protocol: the raw lock plus the
//! owner word that nested entry and the deadlock detector read, including a
//! run loop's `bump` handing the lock to a waiter between two messages.
//!
//! Run with its own target dir (see `.ci/steps/loom.sh`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_lock --target-dir target/loom
//! ```
//!
//! The lock's raw mutex comes from `kaspar`'s `sync` shim (loom's model of
//! it under `--cfg loom`), so these models run the code that ships. Each
//! checks: mutual exclusion (the state is a loom `UnsafeCell`, so two
//! holders at once is a reported data race), the owner word names the
//! holder whenever a holder looks, and no thread ever takes a lock it does
//! not hold for its own.
#![cfg(loom)]

use kaspar::__loom::Lock;
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// An actor's state behind its lock.
#[derive(Default)]
struct Guarded {
    lock: Lock,
    state: UnsafeCell<u32>,
}

impl Guarded {
    /// Runs one "handler" under the lock as thread `me`.
    fn handle(&self, me: usize) {
        assert!(self.lock.held_by(me), "the holder sees itself as owner");
        self.state.with_mut(|s| {
            // SAFETY: this thread holds the lock (asserted above), and the
            // lock is the only way to this cell in the model.
            unsafe { *s += 1 }
        });
        assert_eq!(self.lock.owner(), me, "nobody else wrote the owner");
    }
}

#[test]
fn loom_lock_two_parked_callers_exclude_each_other() {
    model(|| {
        let g = Arc::new(Guarded::default());
        let g2 = Arc::clone(&g);
        let t = thread::spawn(move || {
            g2.lock.park_acquire(2);
            g2.handle(2);
            // SAFETY: acquired just above, released once.
            unsafe { g2.lock.release() };
        });
        g.lock.park_acquire(1);
        g.handle(1);
        // SAFETY: acquired just above, released once.
        unsafe { g.lock.release() };
        t.join().unwrap();
        assert_eq!(g.lock.owner(), 0, "a free lock names no owner");
        // SAFETY: both threads are done with the lock.
        assert_eq!(g.state.with(|s| unsafe { *s }), 2);
    });
}

#[test]
fn loom_lock_a_failed_try_never_looks_held_by_the_caller() {
    model(|| {
        let g = Arc::new(Guarded::default());
        let g2 = Arc::clone(&g);
        let t = thread::spawn(move || {
            if g2.lock.try_acquire(2) {
                g2.handle(2);
                // SAFETY: acquired just above, released once.
                unsafe { g2.lock.release() };
            } else {
                assert!(!g2.lock.held_by(2));
            }
        });
        if g.lock.try_acquire(1) {
            g.handle(1);
            // SAFETY: acquired just above, released once.
            unsafe { g.lock.release() };
        } else {
            assert!(!g.lock.held_by(1));
        }
        t.join().unwrap();
    });
}

/// A run loop (token 1) holds the lock for a batch of two messages and
/// bumps between them; a synchronous caller (token 2) waits for the lock.
/// The caller may run in the gap, never during a message, and the run loop
/// owns the lock again when `bump` returns.
#[test]
fn loom_lock_bump_lets_a_waiter_in_between_two_messages_only() {
    model(|| {
        let g = Arc::new(Guarded::default());
        let g2 = Arc::clone(&g);
        let caller = thread::spawn(move || {
            g2.lock.park_acquire(2);
            g2.handle(2);
            // SAFETY: acquired just above, released once.
            unsafe { g2.lock.release() };
        });
        g.lock.park_acquire(1);
        g.handle(1);
        // SAFETY: this thread holds the lock (acquired above).
        unsafe { g.lock.bump(1) };
        g.handle(1);
        // SAFETY: held since `bump` returned; released once.
        unsafe { g.lock.release() };
        caller.join().unwrap();
        // SAFETY: both threads are done with the lock.
        assert_eq!(g.state.with(|s| unsafe { *s }), 3);
    });
}

/// `start`'s hand-over: the spawner acquires the lock for a thread that has
/// not run yet; that thread adopts it, fills the state (its `#[started]`
/// hook), and releases. A caller that races `start` waits for the lock and
/// always finds the state filled: it never gets in before the hook.
#[test]
fn loom_lock_a_handed_over_lock_lets_nobody_in_before_the_adopter() {
    model(|| {
        let g = Arc::new(Guarded::default());
        g.lock.hand_over();
        assert!(
            !g.lock.held_by(1) && !g.lock.held_by(2),
            "held for nobody yet"
        );
        let adopter = Arc::clone(&g);
        let t = thread::spawn(move || {
            // SAFETY: handed over for this thread just above; only it adopts.
            unsafe { adopter.lock.adopt(2) };
            adopter.handle(2); // the "started" hook: state 0 -> 1
                               // SAFETY: adopted above, released once.
            unsafe { adopter.lock.release() };
        });
        // Busy until the adopter releases; after that, free.
        if !g.lock.try_acquire(1) {
            g.lock.park_acquire(1);
        }
        // SAFETY: this thread holds the lock.
        let seen = g.state.with(|s| unsafe { *s });
        assert_eq!(seen, 1, "the caller entered before the adopter's hook");
        g.handle(1);
        // SAFETY: acquired just above, released once.
        unsafe { g.lock.release() };
        t.join().unwrap();
    });
}
