//! Loom model of the actor lock's word protocol: one word holding the owner
//! that nested entry and the deadlock detector read, plus the `PARKED` and
//! `FLAGGED` bits, including a run loop's `bump` handing the lock to a
//! waiter between two messages, and a flag set by another thread surviving
//! the holder's release.
//!
//! Run with its own target dir (see `.ci/steps/loom.sh`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_lock --target-dir target/loom
//! ```
//!
//! The lock's atomics and parking come from `kaspar`'s `sync` shim (loom's
//! models under `--cfg loom`, where a park is a yield), so these models run
//! the code that ships. Each
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

/// Thread tokens: addresses of 8-aligned thread-local data in the runtime.
const T1: usize = 8;
const T2: usize = 16;

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
            g2.lock.park_acquire(T2);
            g2.handle(T2);
            // SAFETY: acquired just above, released once.
            unsafe { g2.lock.release(T2) };
        });
        g.lock.park_acquire(T1);
        g.handle(T1);
        // SAFETY: acquired just above, released once.
        unsafe { g.lock.release(T1) };
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
            if g2.lock.try_acquire(T2) {
                g2.handle(T2);
                // SAFETY: acquired just above, released once.
                unsafe { g2.lock.release(T2) };
            } else {
                assert!(!g2.lock.held_by(T2));
            }
        });
        if g.lock.try_acquire(T1) {
            g.handle(T1);
            // SAFETY: acquired just above, released once.
            unsafe { g.lock.release(T1) };
        } else {
            assert!(!g.lock.held_by(T1));
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
            g2.lock.park_acquire(T2);
            g2.handle(T2);
            // SAFETY: acquired just above, released once.
            unsafe { g2.lock.release(T2) };
        });
        g.lock.park_acquire(T1);
        g.handle(T1);
        // SAFETY: this thread holds the lock (acquired above).
        unsafe { g.lock.bump(T1) };
        g.handle(T1);
        // SAFETY: held since `bump` returned; released once.
        unsafe { g.lock.release(T1) };
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
            !g.lock.held_by(T1) && !g.lock.held_by(T2),
            "held for nobody yet"
        );
        let adopter = Arc::clone(&g);
        let t = thread::spawn(move || {
            // SAFETY: handed over for this thread just above; only it adopts.
            unsafe { adopter.lock.adopt(T2) };
            adopter.handle(T2); // the "started" hook: state 0 -> 1
                                // SAFETY: adopted above, released once.
            unsafe { adopter.lock.release(T2) };
        });
        // Busy until the adopter releases; after that, free.
        if !g.lock.try_acquire(T1) {
            g.lock.park_acquire(T1);
        }
        // SAFETY: this thread holds the lock.
        let seen = g.state.with(|s| unsafe { *s });
        assert_eq!(seen, 1, "the caller entered before the adopter's hook");
        g.handle(T1);
        // SAFETY: acquired just above, released once.
        unsafe { g.lock.release(T1) };
        t.join().unwrap();
    });
}

/// `FLAGGED` (an actor flag is set: stopped, timed, ...) is set by a thread
/// that does not hold the lock while another holds it and releases. The
/// flag survives the release, so the uncontended entry (which skips the
/// flags check) refuses until the holder clears it with no actor flag left.
#[test]
fn loom_lock_a_flag_set_during_a_hold_survives_the_release() {
    model(|| {
        let g = Arc::new(Guarded::default());
        let flags = Arc::new(loom::sync::atomic::AtomicU8::new(0));
        let (g2, flags2) = (Arc::clone(&g), Arc::clone(&flags));
        let setter = thread::spawn(move || {
            flags2.fetch_or(1, loom::sync::atomic::Ordering::SeqCst);
            g2.lock.flag();
        });
        if g.lock.try_acquire_unflagged(T1) {
            g.handle(T1);
            // SAFETY: acquired just above, released once.
            unsafe { g.lock.release(T1) };
        }
        setter.join().unwrap();
        assert!(
            !g.lock.try_acquire_unflagged(T1),
            "the flag was lost: an entry would skip the flags check"
        );
        assert!(g.lock.try_acquire(T1), "a flagged free lock is still free");
        assert_eq!(g.lock.owner(), T1);
        // The holder clears the flag only when no actor flag is left.
        g.lock
            .unflag_if(|| flags.load(loom::sync::atomic::Ordering::SeqCst));
        // SAFETY: acquired just above, released once.
        unsafe { g.lock.release(T1) };
        assert!(
            !g.lock.try_acquire_unflagged(T1),
            "unflagged with a flag set"
        );
    });
}

/// The holder clears `FLAGGED` (its last actor flag went) while another
/// thread sets a new actor flag: whichever order they run in, the word
/// ends flagged, because the setter flags after its flag and the clearer
/// re-reads the flags after clearing.
#[test]
fn loom_lock_clearing_the_flag_never_hides_a_new_one() {
    model(|| {
        let g = Arc::new(Guarded::default());
        let flags = Arc::new(loom::sync::atomic::AtomicU8::new(0));
        g.lock.flag();
        assert!(g.lock.try_acquire(T1));
        let (g2, flags2) = (Arc::clone(&g), Arc::clone(&flags));
        let setter = thread::spawn(move || {
            flags2.fetch_or(2, loom::sync::atomic::Ordering::SeqCst);
            g2.lock.flag();
        });
        g.lock
            .unflag_if(|| flags.load(loom::sync::atomic::Ordering::SeqCst));
        // SAFETY: acquired above, released once.
        unsafe { g.lock.release(T1) };
        setter.join().unwrap();
        assert!(!g.lock.try_acquire_unflagged(T1), "a new flag was hidden");
    });
}

/// A flagged lock (a stopped actor's, or a group's) makes every release
/// take the slow path. A waiter that marks the word `PARKED` and sleeps
/// while the holder is already inside that path must still be woken:
/// clearing the word must never drop a `PARKED` it did not see. (The park
/// model really sleeps, so a lost wake-up is a deadlock loom reports.)
#[test]
fn loom_lock_a_flagged_release_never_loses_a_parked_waiter() {
    model(|| {
        let g = Arc::new(Guarded::default());
        g.lock.flag();
        assert!(g.lock.try_acquire(T1));
        let g2 = Arc::clone(&g);
        let waiter = thread::spawn(move || {
            g2.lock.park_acquire(T2);
            g2.handle(T2);
            // SAFETY: acquired just above, released once.
            unsafe { g2.lock.release(T2) };
        });
        g.handle(T1);
        // SAFETY: acquired above, released once.
        unsafe { g.lock.release(T1) };
        waiter.join().unwrap();
        assert_eq!(g.lock.owner(), 0);
    });
}
