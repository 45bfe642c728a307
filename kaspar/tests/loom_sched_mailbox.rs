//! Loom models of a pooled actor's scheduling: the idle → scheduled
//! transition under racing producers and a racing `close`, for every
//! mailbox kind.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_sched_mailbox --target-dir target/loom`
//!
//! The mailbox's consumer is pooled: a push that finds it idle calls a
//! hook (here: count a pending schedule and wake the model's worker)
//! instead of unparking a thread. The worker runs activations: drain until
//! idle, as `delivery/sched/actor.rs` does. What each model proves:
//!
//! * every message is handled exactly once, in per-producer order, and the
//!   last activation sees the close (a lost schedule leaves the worker
//!   waiting: a loom deadlock);
//! * the actor is never scheduled twice for one idle period (the hook
//!   asserts no schedule is pending already), so no two activations ever
//!   run at once.
//!
//! Replace `SegmentedMpsc::poll_batch`'s idle compare-and-swap by the
//! thread consumer's `fetch_or` and take-back, and the models fail (a
//! producer's schedule is swallowed by the take-back, and loom reports the
//! worker waiting for ever: checked).
#![cfg(loom)]

use kaspar::__loom::{Poll, PooledMailbox};
use kaspar::mailbox::{MailboxKind, WhenFull};
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

/// The model's run queue: schedules pending (at most one, asserted).
#[derive(Default)]
struct RunQueue {
    pending: Mutex<usize>,
    ready: Condvar,
    schedules: AtomicUsize,
}

impl RunQueue {
    fn schedule(&self) {
        self.schedules.fetch_add(1, Ordering::Relaxed);
        let mut pending = self.pending.lock().unwrap();
        assert_eq!(*pending, 0, "scheduled twice for one idle period");
        *pending += 1;
        self.ready.notify_one();
    }

    /// Waits for a schedule and takes it.
    fn take(&self) {
        let mut pending = self.pending.lock().unwrap();
        while *pending == 0 {
            pending = self.ready.wait(pending).unwrap();
        }
        *pending -= 1;
    }
}

/// Runs activations until the mailbox reports itself closed and drained;
/// returns what was handled. The first activation is scheduled by the
/// spawn (here: the worker simply starts with one).
fn worker(q: &PooledMailbox<(u8, u8)>, run: &RunQueue) -> Vec<(u8, u8)> {
    let mut out = Vec::new();
    loop {
        // One activation.
        loop {
            match q.poll_batch(&mut out, 2) {
                Poll::Got(_) => {}
                Poll::Busy => thread::yield_now(),
                Poll::Idle => break,
                Poll::Closed => return out,
            }
        }
        run.take();
    }
}

/// [`worker`] as a pooled actor drains: with `Mailbox::poll`, handing
/// each batch on at once, so the batch has no room and a lone message
/// comes back as itself (the compact queue's lone path) while two or more
/// trade buffers.
fn lone_worker(q: &PooledMailbox<(u8, u8)>, run: &RunQueue) -> Vec<(u8, u8)> {
    drain_as_pooled(q, run, None)
}

/// [`lone_worker`], inflating the queue before each drain
/// (`Mailbox::inflate`; a compact queue inflates at the first drain that
/// finds it empty, wherever that falls among the pushes).
fn inflating_worker(q: &PooledMailbox<(u8, u8)>, run: &RunQueue) -> Vec<(u8, u8)> {
    drain_as_pooled(q, run, Some(0))
}

/// [`lone_worker`], inflating the queue before each drain as a stream's
/// consumer does (`Mailbox::inflate_into`): with up to two messages still
/// queued, taken and handled ahead of anything the lane gets.
fn inflating_into_worker(q: &PooledMailbox<(u8, u8)>, run: &RunQueue) -> Vec<(u8, u8)> {
    drain_as_pooled(q, run, Some(2))
}

/// `inflate`: `None`, never; `Some(0)`, `inflate` (an asked actor's);
/// `Some(k)`, `inflate_into` taking up to `k` (a stream's consumer's).
fn drain_as_pooled(
    q: &PooledMailbox<(u8, u8)>,
    run: &RunQueue,
    inflate: Option<usize>,
) -> Vec<(u8, u8)> {
    let mut handled = Vec::new();
    let mut batch = Vec::new();
    loop {
        loop {
            match inflate {
                None => {}
                Some(0) => {
                    q.inflate();
                }
                Some(k) if q.inflate_into(&mut batch, k).is_some_and(|n| n > 0) => {
                    handled.append(&mut batch);
                    continue;
                }
                Some(_) => {}
            }
            match q.poll(&mut batch, 2) {
                Ok(msg) => handled.push(msg),
                Err(Poll::Got(_)) => handled.append(&mut std::mem::take(&mut batch)),
                Err(Poll::Busy) => thread::yield_now(),
                Err(Poll::Idle) => break,
                Err(Poll::Closed) => return handled,
            }
        }
        run.take();
    }
}

fn two_producers_and_a_close(kind: MailboxKind) {
    model(move || {
        let run = Arc::new(RunQueue::default());
        let q = {
            let run = Arc::clone(&run);
            Arc::new(PooledMailbox::new(kind, move || run.schedule()))
        };
        let first = {
            let q = Arc::clone(&q);
            thread::spawn(move || q.push((0, 0)).unwrap())
        };
        let second = {
            let q = Arc::clone(&q);
            thread::spawn(move || {
                q.push((1, 0)).unwrap();
                first.join().unwrap();
                q.close();
            })
        };
        let out = worker(&q, &run);
        second.join().unwrap();
        let mut sorted = out.clone();
        sorted.sort();
        assert_eq!(sorted, [(0, 0), (1, 0)], "each message once");
    });
}

fn one_producer_in_order(kind: MailboxKind) {
    one_producer_in_order_with(kind, worker);
}

/// A model's worker: runs activations until closed; returns what it handled.
type Drains = fn(&PooledMailbox<(u8, u8)>, &RunQueue) -> Vec<(u8, u8)>;

fn one_producer_in_order_with(kind: MailboxKind, worker: Drains) {
    model(move || {
        let run = Arc::new(RunQueue::default());
        let q = {
            let run = Arc::clone(&run);
            Arc::new(PooledMailbox::new(kind, move || run.schedule()))
        };
        let producer = {
            let q = Arc::clone(&q);
            thread::spawn(move || {
                for i in 0..3 {
                    q.push((0, i)).unwrap();
                }
                q.close();
            })
        };
        let out = worker(&q, &run);
        producer.join().unwrap();
        assert_eq!(out, [(0, 0), (0, 1), (0, 2)]);
    });
}

#[test]
fn segmented_idle_is_scheduled_once_per_push_race() {
    two_producers_and_a_close(MailboxKind::Segmented { capacity: 1 });
}

#[test]
fn segmented_one_producer_keeps_its_order() {
    one_producer_in_order(MailboxKind::Segmented { capacity: 1 });
}

#[test]
fn lockfree_idle_is_scheduled_once_per_push_race() {
    two_producers_and_a_close(MailboxKind::LockFree {
        capacity: 4,
        when_full: WhenFull::Reject,
    });
}

#[test]
fn sharded_idle_is_scheduled_once_per_push_race() {
    two_producers_and_a_close(MailboxKind::Sharded {
        lanes: 2,
        capacity: 2,
    });
}

#[test]
fn batched_idle_is_scheduled_once_per_push_race() {
    two_producers_and_a_close(MailboxKind::BQueueBatched { capacity: 0 });
}

#[test]
fn bqueue_one_producer_keeps_its_order() {
    one_producer_in_order(MailboxKind::BQueue { capacity: 1 });
}

/// The compact queue's pooled consumer against one producer and its
/// `close`. Its two-producer race is not modelled here: every operation of
/// every thread takes the queue's spin lock, and loom gives up on that
/// model ("exceeded maximum number of branches", with two preemptions as
/// with three). The parked and polling thread consumers are modelled in
/// `loom_mailbox`; producers racing for the lock are the stress test's
/// (`tests/mailbox_stress.rs`, up to 32) and Miri's.
#[test]
fn compact_one_producer_keeps_its_order() {
    one_producer_in_order(MailboxKind::Compact);
}

/// The same, drained as a pooled actor drains it (`lone_worker`): lone
/// messages popped as themselves, the queue's buffer left where it is.
/// The model reaches the lone path: it failed at once (in 0.03 s) with
/// `CompactMpsc::poll`'s lone pop made to take the back of a longer
/// queue, and again with it made to lose the message it popped.
#[test]
fn compact_lone_messages_keep_their_order() {
    one_producer_in_order_with(MailboxKind::Compact, lone_worker);
}

/// A compact queue inflating into its lane while one producer pushes and
/// closes (`compact::lane`, C6): every message once, in order, across the
/// switch, and one schedule per idle period whether the consumer idles on
/// the word or on the lane. With a push that could still take the lock of
/// an inflated queue (`LANE` left out of what `lock_or_lane` tests), the
/// model fails: a message pushed after the switch lands in the queue the
/// consumer no longer drains. Two producers racing the switch are not
/// modelled, for the reason given above (their pushes before it spin on
/// the lock); `compact::tests` races three, 20,000 messages each.
#[test]
fn compact_inflating_keeps_one_producers_order() {
    one_producer_in_order_with(MailboxKind::Compact, inflating_worker);
}

/// The same, the consumer inflating as a stream's does, taking what is
/// still queued as it switches (`CompactMpsc::inflate_into`, C6): every
/// message once and in order, those taken ahead of the lane's. With the
/// taken messages left in the queue instead, the model fails: they are
/// never drained.
#[test]
fn compact_inflating_with_messages_queued_keeps_one_producers_order() {
    one_producer_in_order_with(MailboxKind::Compact, inflating_into_worker);
}
