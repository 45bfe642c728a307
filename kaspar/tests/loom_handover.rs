//! Loom models of who may hold an actor as it starts, and who may enter a
//! thread-bound one: `start`'s hand-over of the actor lock racing a
//! synchronous caller that holds it for a moment, and the home check of a
//! thread-bound actor after its home thread has exited.
//!
//! Run with its own target dir (see `.ci/steps/loom.sh`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_handover --target-dir target/loom
//! ```
//!
//! The lock is `kaspar::__loom::Lock`, the shipped `ActorLock` (its
//! atomics and parking are loom's under `--cfg loom`), driven with
//! explicit thread tokens as in `loom_lock.rs`; the home check is the
//! shipped `ThreadState::home_id` and `ThreadState::is_home`, on thread
//! states held in storage the model owns (`kaspar::__loom::ThreadBlock`).
#![cfg(loom)]

use kaspar::__loom::{Lock, ThreadBlock};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU32, Ordering};
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// Thread tokens: addresses of 8-aligned thread-local data in the runtime.
const CALLER: usize = 8;
const RUN_LOOP: usize = 16;

/// A prepared actor: public (a caller can reach it) but vacant until its
/// run loop's `#[started]` hook fills the state.
struct Prepared {
    lock: Lock,
    state: UnsafeCell<Option<u32>>,
}

/// `start` racing a synchronous caller (`fast_send_x` and its family) into
/// a prepared actor. The caller takes the lock, finds the actor vacant
/// (`NotStarted`) and lets go; the spawner hands the lock over to the run
/// loop's thread meanwhile, and that thread adopts it and runs the
/// `started` hook. `hand_over` used to assert that the lock was free and
/// panicked when the caller held it; it now waits for the caller. The
/// hand-over never panics, the lock excludes (the state is a loom
/// `UnsafeCell`: two holders at once is a reported data race), and the
/// adopter holds the lock, under its own token, until it lets go.
///
/// With `slow`, a caller that found the actor vacant lets go only once the
/// spawner has parked for the lock (as a caller the OS preempts would), so the
/// hand-over's wait parks and is woken; otherwise it lets go at once, and
/// the hand-over's wait is mostly its spin.
fn hand_over_racing_a_momentary_holder(lock: fn() -> Lock, slow: bool) {
    model(move || {
        let p = Arc::new(Prepared {
            lock: lock(),
            state: UnsafeCell::new(None),
        });
        let caller = {
            let p = Arc::clone(&p);
            thread::spawn(move || {
                if p.lock.try_acquire(CALLER) {
                    assert!(p.lock.held_by(CALLER));
                    // Vacant (`NotStarted`), or started if it got in after
                    // the hand-over: read under the lock either way.
                    // SAFETY: this thread holds the lock (just acquired).
                    let started = p.state.with(|s| unsafe { (*s).is_some() });
                    // Vacant: the hand-over is yet to come, and waits.
                    while slow && !started && !p.lock.has_parked() {
                        thread::yield_now();
                    }
                    // SAFETY: acquired above, released once.
                    unsafe { p.lock.release(CALLER) };
                }
            })
        };
        // `start`: the spawner hands the lock over, then starts the thread.
        p.lock.hand_over();
        assert!(
            p.lock.is_handed_over(),
            "hand_over returned without holding the lock for the run loop"
        );
        let run_loop = {
            let p = Arc::clone(&p);
            thread::spawn(move || {
                // SAFETY: handed over for this thread above; only it adopts.
                unsafe { p.lock.adopt(RUN_LOOP) };
                let adopted = p.lock.owner();
                // The `started` hook fills the state.
                // SAFETY: this thread holds the lock (adopted).
                p.state.with_mut(|s| unsafe { *s = Some(1) });
                let after_hook = p.lock.owner();
                // SAFETY: adopted above, released once.
                unsafe { p.lock.release(RUN_LOOP) };
                (adopted, after_hook)
            })
        };
        caller.join().unwrap();
        let (adopted, after_hook) = run_loop.join().unwrap();
        assert_eq!(adopted, RUN_LOOP, "the adopter does not hold the lock");
        assert_eq!(after_hook, RUN_LOOP, "somebody else wrote the owner");
        assert_eq!(p.lock.owner(), 0, "a free lock names no owner");
        // SAFETY: every thread is done with the lock.
        assert_eq!(p.state.with(|s| unsafe { *s }), Some(1));
    });
}

/// A prepared actor's own lock, flagged while the actor is vacant (as
/// `ActorCell::vacant` flags it).
#[test]
fn loom_handover_waits_for_a_caller_that_found_the_actor_vacant() {
    let vacant_actor = || {
        let lock = Lock::default();
        lock.member_flagged();
        lock
    };
    hand_over_racing_a_momentary_holder(vacant_actor, false);
    hand_over_racing_a_momentary_holder(vacant_actor, true);
}

/// A prepared group's lock (flagged for good, its vacant member counted),
/// taken for a moment by a caller into that member.
#[test]
fn loom_handover_of_a_group_lock_waits_for_a_caller_into_a_vacant_member() {
    let vacant_member = || {
        let lock = Lock::group();
        lock.member_flagged();
        lock
    };
    hand_over_racing_a_momentary_holder(vacant_member, false);
    hand_over_racing_a_momentary_holder(vacant_member, true);
}

/// A thread-bound actor records its home thread's home id
/// (`ActorCell::bind_home`); an entry passes only on the thread whose home
/// id it is (`ThreadState::is_home`). The home thread exits without
/// clearing the home (its run loop died), and a thread started after it is
/// given its storage (as the OS may give a new thread a dead thread's TLS
/// block): the same token, the address the home check used to compare. It
/// must be refused, and so must a thread running meanwhile. Home ids come
/// from `home_id`'s counter and are never reused.
#[test]
fn loom_home_check_refuses_a_thread_in_the_dead_home_threads_storage() {
    model(|| {
        let home = Arc::new(AtomicU32::new(0));
        let home_thread = {
            let home = Arc::clone(&home);
            thread::spawn(move || {
                let block = ThreadBlock::default();
                home.store(block.home_id(), Ordering::Relaxed);
                let at_home = block.is_home(home.load(Ordering::Relaxed));
                (block, at_home)
            })
        };
        let meanwhile = {
            let home = Arc::clone(&home);
            thread::spawn(move || {
                let block = ThreadBlock::default();
                block.is_home(home.load(Ordering::Relaxed))
            })
        };
        // The home thread has exited.
        let (mut block, at_home) = home_thread.join().unwrap();
        assert!(at_home, "the home thread failed its own actor's home check");
        let token = block.token();
        let later = {
            let home = Arc::clone(&home);
            thread::spawn(move || {
                block.reuse();
                (block.token(), block.is_home(home.load(Ordering::Relaxed)))
            })
        };
        assert!(
            !meanwhile.join().unwrap(),
            "another live thread passed the home check"
        );
        let (reused, at_home) = later.join().unwrap();
        assert_eq!(reused, token, "the storage was not reused");
        assert!(
            !at_home,
            "a thread in the dead home thread's storage passed the home check"
        );
    });
}
