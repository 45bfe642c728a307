//! Issue #25, row 8 (found by reading the code): dropping an unspawned
//! `Prepared` while other threads are sending to it.
//!
//! Dropping a `Prepared` closes its mailbox and hands what was queued to
//! dead letters. Its drain used to stop at the first slot that a sender
//! had reserved before the close but not yet written: that message, and
//! every one reserved after it, stayed in a mailbox nobody reads again:
//! accepted (`Ok`), yet never handled, never handed back and never a dead
//! letter. Reproduced with the default (`Segmented`) mailbox, whose
//! producers reserve a slot with one compare-and-swap and write it after;
//! the locked queues (`BQueueBatched`, `Sharded`) did not lose messages.
//!
//! Guaranteed after the fix: every message sent to a prepared actor that
//! is dropped unspawned has exactly one outcome: handed back to its sender
//! in an `Err`, or one dead letter (reason `Stopped`). So, counted over all
//! senders, the dead letters equal the sends that returned `Ok`.
//!
//! The race needs a sender preempted between reserving and writing its
//! slot; the test repeats it [`ROUNDS`] times per mailbox kind with
//! [`SENDERS`] threads each.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use kaspar::prelude::*;

const ROUNDS: usize = 400;
const SENDERS: usize = 3;
/// Most messages one sender sends in one round (it stops at the first
/// refusal).
const PER_SENDER: u64 = 2_000;
/// How long one round may take before it counts as hung.
const ROUND_WATCHDOG: Duration = Duration::from_secs(10);

pub struct Job(pub u64);

#[actor]
pub struct Worker;

#[actor]
impl Worker {
    #[handler(Job)]
    fn job(&mut self, _msg: Job, _ctx: &mut Ctx<Self>) {}
}

/// What one round counted.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    accepted: u64,
    handed_back: u64,
    dead_letters: u64,
    other_dead_letters: u64,
}

/// Senders push `Job`s into a prepared `Worker` while this thread drops
/// the `Prepared`.
fn round(kind: MailboxKind) -> Tally {
    let system = System::new();
    let prepared = system.prepare_with::<Worker>(kind);
    let go = Arc::new(Barrier::new(SENDERS + 1));
    let senders: Vec<_> = (0..SENDERS)
        .map(|_| {
            let addr = prepared.addr();
            let go = Arc::clone(&go);
            thread::spawn(move || {
                let (mut accepted, mut handed_back) = (0, 0);
                go.wait();
                for n in 0..PER_SENDER {
                    match addr.send(Job(n)) {
                        Ok(()) => accepted += 1,
                        Err(e) => {
                            let Job(back) = e.into_inner();
                            assert_eq!(back, n, "the refused message came back");
                            handed_back += 1;
                            break;
                        }
                    }
                }
                (accepted, handed_back)
            })
        })
        .collect();
    go.wait();
    // Let the senders get going, then drop the Prepared under them.
    thread::yield_now();
    drop(prepared);
    let mut tally = Tally::default();
    for s in senders {
        let (accepted, handed_back) = s.join().expect("a sender panicked");
        tally.accepted += accepted;
        tally.handed_back += handed_back;
    }
    let d = system.dead_letters().counts();
    tally.dead_letters = d.stopped;
    tally.other_dead_letters = d.total() - d.stopped;
    tally
}

/// Runs [`ROUNDS`] rounds with mailboxes of `kind` under a watchdog;
/// fails with every round whose accepted sends and dead letters differ.
fn every_message_has_one_outcome(kind: MailboxKind) {
    let (tx, rx) = mpsc::channel();
    let runner = thread::spawn(move || {
        for i in 0..ROUNDS {
            if tx.send((i, round(kind))).is_err() {
                return;
            }
        }
    });
    let mut lost = Vec::new();
    for _ in 0..ROUNDS {
        match rx.recv_timeout(ROUND_WATCHDOG) {
            Ok((i, t)) => {
                if t.accepted != t.dead_letters || t.other_dead_letters != 0 {
                    lost.push(format!("round {i}: {t:?}"));
                }
            }
            Err(RecvTimeoutError::Timeout) => panic!("watchdog: a round hung ({kind:?})"),
            Err(RecvTimeoutError::Disconnected) => match runner.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!(),
            },
        }
    }
    runner.join().unwrap();
    assert!(
        lost.is_empty(),
        "{kind:?}: accepted sends without exactly one dead letter each in {} of {ROUNDS} rounds:\n{}",
        lost.len(),
        lost.join("\n")
    );
}

/// The default mailbox (`Segmented`, lock-free): no accepted message of a
/// `Prepared` dropped mid-send is lost.
#[test]
fn a_prepared_actor_dropped_while_sent_to_loses_no_message_segmented() {
    every_message_has_one_outcome(MailboxKind::DEFAULT);
}

/// The same with the locked ring (`BQueueBatched`).
#[test]
fn a_prepared_actor_dropped_while_sent_to_loses_no_message_bqueue() {
    every_message_has_one_outcome(MailboxKind::batched(64));
}

/// The same with the sharded queue, one lane per sender.
#[test]
fn a_prepared_actor_dropped_while_sent_to_loses_no_message_sharded() {
    every_message_has_one_outcome(MailboxKind::sharded(SENDERS, 256));
}
