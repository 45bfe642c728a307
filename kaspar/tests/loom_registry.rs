//! Loom models of the deadlock registry where a run loop waits for its own
//! actor's lock (which it cannot back out of, so it registers without
//! refusing) and a synchronous caller holding that lock waits for the run
//! loop: during `Held::bump`, and when the run loop takes the lock for a
//! batch (`Held::acquire_watched`) after the caller's wait began.
//!
//! Run with its own target dir (see `.ci/steps/loom.sh`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_registry --target-dir target/loom
//! ```
//!
//! Everything is the shipped code: the run loop's hold and bump (`Held`,
//! through `kaspar::__loom::Hold`), the registry's `before_wait` and
//! `Registered::recheck` with its mutex (loom's under `--cfg loom`), and
//! the lock. Under loom each model thread has its own runtime thread
//! state, so each has its own token (passed explicitly to the registry,
//! as the runtime passes `chain::thread_token()`), and `before_wait` reads
//! the waiting thread's own chain: the caller's handler has a frame on it,
//! so its wait is in the graph.
//!
//! A waiter that can back out looks at the graph again every `RECHECK`
//! while it waits (`Ask::wait`, a send waiting for room); here, after each
//! `yield_now`, after which loom runs the other threads (it can take the
//! waiter back before they block only by preempting them, and the
//! preemption bound is 3). A waiter still without a cycle after
//! [`RECHECKS`] looks, while nothing it waits for can come, is waiting for
//! good: the model fails.
#![cfg(loom)]

use kaspar::__loom::{thread_token, Lock};
use kaspar::{WaitEdge, WaitKind};
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// Rechecks before a waiter is declared stuck: more than the preemption
/// bound lets loom run the waiter again before the others have blocked
/// (each recheck but the first follows a yield).
const RECHECKS: usize = 8;

/// How a waiter's wait ended. Nothing it waits for can come in these
/// models, so it must end with a cycle. (A spawned loom thread that
/// panics while it holds loom objects aborts the test run, so the waiter
/// reports, and the model's main thread checks.)
#[derive(Debug)]
enum Ended {
    /// `before_wait` refused it: waiting would close a cycle.
    AtRegistration(Vec<WaitEdge>),
    /// A recheck found that a later registration closed a cycle.
    OnRecheck(Vec<WaitEdge>),
    /// Still waiting after [`RECHECKS`] looks, no cycle reported.
    Stuck,
}

/// A waiter's loop (token `me`, the calling thread's) while nothing it
/// waits for can come: register on `lock`'s queue for `kind`, then recheck
/// until a cycle is found. `registered` is set once the wait is in the
/// graph, or refused.
fn wait(lock: &Lock, me: usize, kind: WaitKind, registered: &AtomicBool) -> Ended {
    let wait = lock.before_wait(me, kind);
    registered.store(true, Ordering::Release);
    let wait = match wait {
        Ok(wait) => wait,
        Err(cycle) => return Ended::AtRegistration(cycle),
    };
    if !wait.in_graph() {
        // A handler's wait is in the graph; this one is not: stuck.
        return Ended::Stuck;
    }
    for _ in 0..RECHECKS {
        if let Err(cycle) = wait.recheck() {
            return Ended::OnRecheck(cycle);
        }
        thread::yield_now();
    }
    Ended::Stuck
}

/// Checks how the wait of the caller (token `me`) ended: its `kind` wait
/// on the queue of `run_loop`'s actor, while holding that actor's lock,
/// is a cycle, reported with the caller's own edge first; found on a
/// recheck, it goes through the run loop's registered wait for its lock.
fn check_cycle(ended: &Ended, me: usize, kind: WaitKind, run_loop: usize) {
    let edges = match ended {
        Ended::AtRegistration(edges) | Ended::OnRecheck(edges) => edges,
        Ended::Stuck => {
            panic!("both waiting for good with no cycle reported (the caller's {kind:?} wait)")
        }
    };
    assert_eq!(
        edges[0].thread, me,
        "the cycle starts with the caller's edge"
    );
    assert_eq!(edges[0].kind, kind);
    if let Ended::OnRecheck(edges) = ended {
        assert!(
            edges
                .iter()
                .any(|e| e.thread == run_loop && e.kind == WaitKind::Lock),
            "found on a recheck, not through the run loop's wait: {edges:?}"
        );
    }
}

/// The run loop (this thread, the actor's queue's consumer) holds its
/// actor's lock for a batch; a synchronous caller parks for it, and the
/// run loop's `bump` between two messages lets it in. The caller's
/// handler then waits for the run loop: for the reply to an `ask` to the
/// same actor (`Reply`), or for room in its full mailbox (`Room`), neither
/// of which can come while the run loop waits to take its lock back. Its
/// batch done, the run loop takes the lock for the next one
/// (`acquire_watched`). Whichever order loom picks for the two waits'
/// registrations, the caller gets the cycle: at registration (the wait
/// depends on the lock's holder, the caller itself, as well as on the
/// consumer), or had it registered before the run loop, on a recheck that
/// finds the run loop's registered wait; never both waiting with no cycle
/// reported. With the holder in the walk it is always at registration.
fn caller_let_in_by_bump_waits_for_the_run_loop(kind: WaitKind) {
    model(move || {
        let lock = Arc::new(Lock::default());
        let run_loop = thread_token();
        let consuming = lock.consuming(run_loop);
        let mut held = lock.hold();
        let caller = {
            let lock = Arc::clone(&lock);
            thread::spawn(move || {
                let me = thread_token();
                let ended = lock.call(me, || wait(&lock, me, kind, &AtomicBool::new(false)));
                (me, ended)
            })
        };
        // The first message, until the caller has parked for the lock.
        while !lock.has_parked() {
            thread::yield_now();
        }
        held.bump();
        drop(held);
        drop(lock.hold_watched());
        drop(consuming);
        let (me, ended) = caller.join().unwrap();
        check_cycle(&ended, me, kind, run_loop);
        assert!(
            matches!(ended, Ended::AtRegistration(_)),
            "a {kind:?} wait by the holder of the lock its run loop waits for \
             was admitted: {ended:?}"
        );
    });
}

/// The caller let in by `bump` asks its own actor and waits for the reply.
#[test]
fn loom_registry_a_caller_let_in_by_bump_that_asks_the_run_loop_gets_the_cycle() {
    caller_let_in_by_bump_waits_for_the_run_loop(WaitKind::Reply);
}

/// The caller let in by `bump` sends to its own actor, whose mailbox is
/// full, and waits for room.
#[test]
fn loom_registry_a_caller_let_in_by_bump_waiting_for_room_gets_the_cycle() {
    caller_let_in_by_bump_waits_for_the_run_loop(WaitKind::Room);
}

/// The recheck's scenario: the run loop registers its wait only after the
/// caller's wait began. The run loop is between batches (it waits for
/// nothing, so it is not in the graph) when a synchronous caller takes
/// its actor's lock and waits for room in its full mailbox. Only once
/// that wait is registered (or refused) does the run loop take its lock
/// for the batch it has popped (`acquire_watched`): it finds the lock
/// held, and registers its wait without refusing. The caller must get the
/// cycle, at registration or on a recheck, and back out, so the run loop
/// gets its lock. (Since room waits for the lock's holder too, the caller
/// is refused at registration and the recheck is not reached: the model
/// fails with the recheck disabled only where room waits for the consumer
/// alone, as it did in the walk of d33bbbc.)
#[test]
fn loom_registry_a_run_loop_registering_after_the_waiter_never_leaves_the_cycle_unreported() {
    model(|| {
        let lock = Arc::new(Lock::default());
        let run_loop = thread_token();
        let _consuming = lock.consuming(run_loop);
        let registered = Arc::new(AtomicBool::new(false));
        let caller = {
            let (lock, registered) = (Arc::clone(&lock), Arc::clone(&registered));
            thread::spawn(move || {
                let me = thread_token();
                let ended = lock.call(me, || wait(&lock, me, WaitKind::Room, &registered));
                (me, ended)
            })
        };
        while !registered.load(Ordering::Acquire) {
            thread::yield_now();
        }
        drop(lock.hold_watched());
        let (me, ended) = caller.join().unwrap();
        check_cycle(&ended, me, WaitKind::Room, run_loop);
    });
}
