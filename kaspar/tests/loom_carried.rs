//! Loom model of a pooled actor's activations handed between two workers:
//! what one activation carries to the next (`sched::carried`) is touched by
//! one activation at a time, though the next can be scheduled, and popped
//! by the other worker, the moment this one has set the mailbox idle.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_carried --target-dir target/loom`
//!
//! Each activation runs inside `Carry::enter` (the shipped
//! `Carried::enter`) and drains the shipped mailbox into the carried batch,
//! as `delivery/sched/actor.rs` does; after its drain went idle it still
//! touches the state (it trims the batch, as the actor's activation does).
//! The state sits in loom's `UnsafeCell`, so loom reports any two
//! activations in it at once. What the models prove, for three mailbox
//! kinds:
//!
//! * no two activations are ever in the carried state together, in any
//!   interleaving of a producer (two pushes and a close) with two workers;
//! * every message is handled once, in order, and the close is seen;
//! * the actor's hold on itself goes from each activation to the push (or
//!   close) that ends the idle period it ended in, through the shipped
//!   slot (`sched::parked`), as `Hook::schedule` and `run` hand it: one
//!   owner at a time, never lost, never counted twice.
//!
//! Take out `Carried::enter`'s wait (C2: enter at once) and every model
//! fails: loom reports a concurrent mutable access to the state (checked).
//! Park the hold after the activation instead of before it, and loom
//! reports the slot's concurrent access (checked).
#![cfg(loom)]

use std::sync::Arc as Hold;

use kaspar::__loom::{thread_token, Carry, Lock, Park, Poll, PooledMailbox};
use kaspar::mailbox::{MailboxKind, WhenFull};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

/// Two preemptions, whatever `LOOM_MAX_PREEMPTIONS` says: an activation
/// that finds a push reserved but not yet written goes to the back of the
/// run queue and comes again, and with a third preemption loom can keep
/// the producer off for longer than its branch limit allows.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(f);
}

/// The workers' shared run queue: the schedule pending (at most one: the
/// actor's hold on itself, as a pool's run queue holds it), and whether
/// the actor is done.
#[derive(Default)]
struct RunQueue {
    state: Mutex<(Option<Hold<()>>, bool)>,
    ready: Condvar,
}

impl RunQueue {
    fn schedule(&self, hold: Hold<()>) {
        let mut state = self.state.lock().unwrap();
        assert!(state.0.is_none(), "scheduled twice for one idle period");
        state.0 = Some(hold);
        self.ready.notify_one();
    }

    /// Waits for a schedule and takes it; `None` once the actor is done.
    fn take(&self) -> Option<Hold<()>> {
        let mut state = self.state.lock().unwrap();
        loop {
            if let Some(hold) = state.0.take() {
                return Some(hold);
            }
            if state.1 {
                return None;
            }
            state = self.ready.wait(state).unwrap();
        }
    }

    fn done(&self) {
        self.state.lock().unwrap().1 = true;
        self.ready.notify_all();
    }
}

/// What the activations carry.
#[derive(Default)]
struct State {
    batch: Vec<u8>,
    handled: Vec<u8>,
}

enum Ran {
    Idle,
    Again,
    Done,
}

/// The actor: its mailbox, its lock (whose consumer record the deadlock
/// detector reads), what its activations carry, and the slot its hold on
/// itself is parked in (shared with the mailbox's hook, as the shipped
/// hook holds it).
struct Actor {
    q: PooledMailbox<u8>,
    lock: Lock,
    carry: Carry<State>,
    park: Arc<Park<()>>,
}

/// One worker: runs the activations it takes off the run queue.
fn worker(actor: &Actor, run: &RunQueue) {
    let Actor {
        q,
        lock,
        carry,
        park,
    } = actor;
    let me = thread_token();
    while let Some(hold) = run.take() {
        // SAFETY: as `run` does: this activation owns the slot until its
        // mailbox goes idle (P1).
        unsafe { park.put(hold) };
        // SAFETY: this runs an activation the model's state machine
        // scheduled: the spawn's first, the one the push or close that
        // found the mailbox idle scheduled, or one put back below after
        // the one before left.
        let ran = unsafe {
            carry.enter(|st| {
                // As `activate`: this worker runs the actor's queue until
                // the activation ends (after its drain went idle).
                let consuming = lock.consuming(me);
                let ran = loop {
                    match q.poll_batch(&mut st.batch, 1) {
                        Poll::Got(_) => {
                            assert_eq!(lock.consumer(), me, "the record names this worker");
                            st.handled.append(&mut st.batch);
                        }
                        Poll::Busy => break Ran::Again,
                        Poll::Idle => break Ran::Idle,
                        Poll::Closed => break Ran::Done,
                    }
                };
                drop(consuming);
                if let Ran::Idle = ran {
                    // After going idle, as the actor's trim.
                    st.batch.shrink_to_fit();
                }
                ran
            })
        };
        if let Ran::Idle = ran {
            // The hold is the next owner's: not touched again.
            continue;
        }
        // SAFETY: the mailbox did not go idle: the slot is still ours.
        let hold = unsafe { park.take() }.expect("parked at the start");
        match ran {
            Ran::Idle => unreachable!(),
            Ran::Again => {
                thread::yield_now();
                run.schedule(hold);
            }
            Ran::Done => {
                drop(hold);
                run.done();
            }
        }
    }
}

fn two_workers(kind: MailboxKind) {
    model(move || {
        let run = Arc::new(RunQueue::default());
        let park = Arc::new(Park::default());
        let actor = {
            let (run, hooked) = (Arc::clone(&run), Arc::clone(&park));
            Arc::new(Actor {
                // As `Hook::schedule`: the push or close that ended the
                // idle period takes the parked hold and schedules it.
                q: PooledMailbox::new(kind, move || {
                    // SAFETY: P1: the mailbox calls this from the one
                    // party that ended the idle period.
                    let hold = unsafe { hooked.take() };
                    run.schedule(hold.expect("a hold parked for every idle period"));
                }),
                lock: Lock::default(),
                carry: Carry::new(State::default()),
                park,
            })
        };
        // The spawn schedules the first activation, with a hold of its own.
        let spawned = Hold::new(());
        run.schedule(Hold::clone(&spawned));
        let producer = {
            let actor = Arc::clone(&actor);
            thread::spawn(move || {
                actor.q.push(1).unwrap();
                actor.q.close();
            })
        };
        let other = {
            let (actor, run) = (Arc::clone(&actor), Arc::clone(&run));
            thread::spawn(move || worker(&actor, &run))
        };
        worker(&actor, &run);
        other.join().unwrap();
        producer.join().unwrap();
        assert_eq!(actor.lock.consumer(), 0, "no worker runs the queue now");
        // SAFETY: both workers have returned: nobody else is in.
        let handled = unsafe { actor.carry.enter(|st| st.handled.clone()) };
        assert_eq!(handled, [1], "the message once");
        // SAFETY: both workers have returned: the slot is nobody's.
        assert!(
            unsafe { actor.park.take() }.is_none(),
            "the last activation took it back"
        );
        assert_eq!(Hold::strong_count(&spawned), 1, "no hold lost or left");
    });
}

#[test]
fn segmented_activations_take_turns_in_the_carried_state() {
    two_workers(MailboxKind::Segmented { capacity: 1 });
}

#[test]
fn lockfree_activations_take_turns_in_the_carried_state() {
    two_workers(MailboxKind::LockFree {
        capacity: 4,
        when_full: WhenFull::Reject,
    });
}

#[test]
fn bqueue_activations_take_turns_in_the_carried_state() {
    two_workers(MailboxKind::BQueue { capacity: 1 });
}
