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
//! * every message is handled once, in order, and the close is seen.
//!
//! Take out `Carried::enter`'s wait (C2: enter at once) and every model
//! fails: loom reports a concurrent mutable access to the state (checked).
#![cfg(loom)]

use kaspar::__loom::{thread_token, Carry, Lock, Poll, PooledMailbox};
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

/// The workers' shared run queue: schedules pending (at most one), and
/// whether the actor is done.
#[derive(Default)]
struct RunQueue {
    state: Mutex<(usize, bool)>,
    ready: Condvar,
}

impl RunQueue {
    fn schedule(&self) {
        let mut state = self.state.lock().unwrap();
        assert_eq!(state.0, 0, "scheduled twice for one idle period");
        state.0 += 1;
        self.ready.notify_one();
    }

    /// Waits for a schedule and takes it; `false` once the actor is done.
    fn take(&self) -> bool {
        let mut state = self.state.lock().unwrap();
        loop {
            if state.0 > 0 {
                state.0 -= 1;
                return true;
            }
            if state.1 {
                return false;
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
/// detector reads) and what its activations carry.
struct Actor {
    q: PooledMailbox<u8>,
    lock: Lock,
    carry: Carry<State>,
}

/// One worker: runs the activations it takes off the run queue.
fn worker(actor: &Actor, run: &RunQueue) {
    let Actor { q, lock, carry } = actor;
    let me = thread_token();
    while run.take() {
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
        match ran {
            Ran::Idle => {}
            Ran::Again => {
                thread::yield_now();
                run.schedule();
            }
            Ran::Done => run.done(),
        }
    }
}

fn two_workers(kind: MailboxKind) {
    model(move || {
        let run = Arc::new(RunQueue::default());
        let actor = {
            let run = Arc::clone(&run);
            Arc::new(Actor {
                q: PooledMailbox::new(kind, move || run.schedule()),
                lock: Lock::default(),
                carry: Carry::new(State::default()),
            })
        };
        // The spawn schedules the first activation.
        run.schedule();
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
