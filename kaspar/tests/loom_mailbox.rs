//! Loom models of the mailbox queues' synchronization.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_mailbox --target-dir target/loom`
//!
//! Each model is tiny (two or three threads, a few operations) so loom can
//! explore every interleaving within the preemption bound. What each proves:
//! every message is taken exactly once, in per-producer order, and a
//! consumer parked on an empty queue is always woken, by a push or by
//! `close` (a lost wakeup shows up as a loom deadlock), whether it went to
//! sleep at once or polled first.
#![cfg(loom)]

use kaspar::mailbox::{
    Drained, IdleWait, Mailbox, MailboxKind, SegmentedMpsc, ShardedBQueue, WhenFull,
};
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

/// Drains until `Closed`, waiting as `pop` does.
fn drain_all<T>(pop: impl Fn(&mut Vec<T>) -> Drained) -> Vec<T> {
    let mut out = Vec::new();
    while let Drained::Got(_) = pop(&mut out) {}
    out
}

fn assert_per_producer_fifo(out: &[(u8, u8)], producers: u8, each: u8) {
    assert_eq!(out.len(), usize::from(producers) * usize::from(each));
    for p in 0..producers {
        let seen: Vec<u8> = out.iter().filter(|m| m.0 == p).map(|m| m.1).collect();
        assert_eq!(seen, (0..each).collect::<Vec<_>>());
    }
}

/// What the one producer of a model does after its pushes.
#[derive(Clone, Copy)]
enum Then {
    /// Closes the queue, which wakes the consumer a last time.
    Close,
    /// Leaves it open: each of the consumer's sleeps must be ended by a
    /// push.
    LeaveOpen,
}

/// Spawns the one producer of a model: it pushes `(0, 0)`, `(0, 1)`, ..
/// `(0, n - 1)` into `q`, in that order, then does what `then` says.
fn produce(q: &Arc<Mailbox<(u8, u8)>>, n: u8, then: Then) -> thread::JoinHandle<()> {
    let q = Arc::clone(q);
    thread::spawn(move || {
        for i in 0..n {
            q.push((0, i)).unwrap();
        }
        if let Then::Close = then {
            q.close();
        }
    })
}

/// Two producers race for the ring's slots while the consumer (the main
/// thread) parks and is woken; the last producer closes, which wakes it for
/// the last time.
#[test]
fn lockfree_two_producers_no_lost_wakeup() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::LockFree {
            capacity: 2,
            when_full: WhenFull::Reject,
        }));
        let first = {
            let q = Arc::clone(&q);
            thread::spawn(move || q.push((0u8, 0u8)).unwrap())
        };
        let second = {
            let q = Arc::clone(&q);
            thread::spawn(move || {
                q.push((1u8, 0u8)).unwrap();
                first.join().unwrap();
                q.close();
            })
        };
        let out = drain_all(|out| q.pop_batch(out, 4, IdleWait::Park));
        second.join().unwrap();
        assert_per_producer_fifo(&out, 2, 1);
    });
}

/// A producer laps a two-slot ring and waits for space; the consumer frees
/// slots one at a time. Neither side may sleep through the other's signal.
#[test]
fn lockfree_wait_when_full() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::LockFree {
            capacity: 2,
            when_full: WhenFull::Wait,
        }));
        let producer = produce(&q, 2, Then::Close);
        let out = drain_all(|out| q.pop_batch(out, 1, IdleWait::Park));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 2);
    });
}

/// A full ring hands the message back, and a closed one does too.
#[test]
fn lockfree_full_and_closed_hand_back() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::LockFree {
            capacity: 2,
            when_full: WhenFull::Reject,
        }));
        let q2 = Arc::clone(&q);
        let producer = thread::spawn(move || {
            let mut accepted = Vec::new();
            for i in 0..3u8 {
                match q2.push(i) {
                    Ok(_) => accepted.push(i),
                    Err(e) => assert_eq!(e.into_inner(), i),
                }
            }
            accepted
        });
        let mut out = Vec::new();
        q.try_pop_batch(&mut out, 1);
        let accepted = producer.join().unwrap();
        q.close();
        assert!(q.push(9).unwrap_err().is_closed());
        while let Drained::Got(_) = q.pop_batch(&mut out, 4, IdleWait::Park) {}
        assert_eq!(out, accepted);
    });
}

/// Two producers on two lanes (one pushes twice, for per-lane order);
/// the consumer (the main thread) sweeps the lanes and parks on the shared
/// state word; the last producer closes.
#[test]
fn sharded_two_lanes_no_lost_wakeup() {
    model(|| {
        let q = Arc::new(ShardedBQueue::new(2, 2));
        let first = {
            let q = Arc::clone(&q);
            thread::spawn(move || {
                q.push_from(0, (0u8, 0u8)).unwrap();
                q.push_from(0, (0u8, 1u8)).unwrap();
            })
        };
        let second = {
            let q = Arc::clone(&q);
            thread::spawn(move || {
                q.push_from(1, (1u8, 0u8)).unwrap();
                first.join().unwrap();
                q.close();
            })
        };
        let out = drain_all(|out| q.pop_batch(out, 4, IdleWait::Park));
        second.join().unwrap();
        assert_eq!(out.len(), 3);
        let lane0: Vec<_> = out.iter().filter(|m| m.0 == 0).map(|m| m.1).collect();
        assert_eq!(lane0, vec![0, 1]);
        assert!(out.contains(&(1, 0)));
    });
}

/// A push racing with `close`: it is either refused or drained, never lost.
#[test]
fn sharded_push_races_close() {
    model(|| {
        let q = Arc::new(ShardedBQueue::new(2, 2));
        let q2 = Arc::clone(&q);
        let producer = thread::spawn(move || q2.push_from(1, 7u8).is_ok());
        q.close();
        let out = drain_all(|out| q.pop_batch(out, 4, IdleWait::Park));
        let accepted = producer.join().unwrap();
        // After close returned, `Closed` may come only once the lanes are
        // empty; a push that was accepted was therefore drained, unless it
        // was accepted after our drain, which `close` forbids.
        assert_eq!(out, if accepted { vec![7] } else { vec![] });
    });
}

/// The batched drain's wakeup: the producer notifies only on the
/// empty→non-empty transition, the consumer drains everything per lock.
#[test]
fn batched_no_lost_wakeup() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::BQueueBatched { capacity: 1 }));
        let producer = produce(&q, 3, Then::Close);
        let out = drain_all(|out| q.pop_batch(out, 8, IdleWait::Park));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 3);
    });
}

/// The batched drain's ring swap: the queue spills (a drain then
/// allocates the spare ring), and a later drain of a ring holding more
/// than `FEW` (one, under loom) swaps rings under the lock and copies
/// after releasing it, while the producer pushes into the swapped-in ring.
/// Nothing is lost or reordered, and a sleeping consumer is still woken.
#[test]
fn batched_ring_swap_keeps_fifo() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::BQueueBatched { capacity: 2 }));
        let producer = produce(&q, 5, Then::Close);
        let out = drain_all(|out| q.pop_batch(out, 8, IdleWait::Park));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 5);
    });
}

/// Pops with `pop` until `n` messages are in; a lost wake-up leaves the
/// consumer asleep forever, which loom reports. (Unlike `drain_all`, no
/// `close` comes to the rescue: `close` wakes the consumer
/// unconditionally.)
fn take<T>(n: usize, pop: impl Fn(&mut Vec<T>) -> Drained) -> Vec<T> {
    let mut out = Vec::new();
    while out.len() < n {
        assert!(matches!(pop(&mut out), Drained::Got(_)));
    }
    out
}

/// The default consumer polls before it sleeps: `BQueue` polls its
/// lock-free length hint (never the lock), then sleeps under the lock. A
/// push landing in either phase, or between them, must reach it.
#[test]
fn bqueue_polling_consumer_no_lost_wakeup() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::BQueue { capacity: 1 }));
        let producer = produce(&q, 2, Then::LeaveOpen);
        let out = take(2, |out| q.pop_batch(out, 8, IdleWait::Backoff));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 2);
        // One sleep is ended by one wake-up, never by one per push.
        assert!(q.wakeups() <= 2);
    });
}

/// The lock-free ring's consumer polls `tail` before it sets `SLEEPING`;
/// a reservation in the polling phase must be seen, one after it must
/// unpark.
#[test]
fn lockfree_polling_consumer_no_lost_wakeup() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::LockFree {
            capacity: 2,
            when_full: WhenFull::Reject,
        }));
        let producer = produce(&q, 1, Then::LeaveOpen);
        let out = take(1, |out| q.pop_batch(out, 4, IdleWait::Backoff));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 1);
        assert!(q.wakeups() <= 1);
    });
}

/// The sharded queue's consumer polls the count word before it sets
/// `SLEEPING`.
#[test]
fn sharded_polling_consumer_no_lost_wakeup() {
    model(|| {
        let q = Arc::new(ShardedBQueue::new(2, 2));
        let producer = {
            let q = Arc::clone(&q);
            thread::spawn(move || q.push_from(1, (0u8, 0u8)).unwrap())
        };
        let out = take(1, |out| q.pop_batch(out, 4, IdleWait::Backoff));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 1);
        assert!(q.wakeups() <= 1);
    });
}

/// `BQueue`'s consumer sleeping at once (`Park`): each push that finds it
/// asleep must wake it; no `close` follows to hide a lost one.
#[test]
fn bqueue_parked_consumer_is_woken_by_each_push() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::BQueueBatched { capacity: 1 }));
        let producer = produce(&q, 2, Then::LeaveOpen);
        let out = take(2, |out| q.pop_batch(out, 1, IdleWait::Park));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 2);
    });
}

/// The segmented queue's blocks hold three messages under loom, so these
/// models cross blocks: the producer that takes a block's last slot
/// installs the next one (from the free stack or a new allocation) while
/// the consumer leaves spent blocks on that stack.
fn segmented(capacity: usize) -> Arc<Mailbox<(u8, u8)>> {
    Arc::new(Mailbox::new(MailboxKind::Segmented { capacity }))
}

/// [`model`] for the models where three threads wait on each other
/// (producers at a lap's end wait for the installer, the consumer for a
/// reserved slot to be written). Every wait is a yield loop, and an
/// execution that explores many of them runs past loom's default of 1,000
/// branches without being stuck. The preemption bound is 2 whatever
/// `LOOM_MAX_PREEMPTIONS` says: at 3 these models ran for more than five
/// minutes each on the 2-core dev VM (the recycling one finished, in about
/// four and a half; the two-producer one was stopped after six).
fn model_long(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.max_branches = 20_000;
    builder.check(f);
}

/// Two producers race for slots (the first one's second message takes
/// the block's last slot and installs the next block while the other may
/// be waiting at the lap's end); the consumer parks at once whenever it
/// finds nothing, and no `close` comes to wake it: each sleep must be
/// ended by a push.
#[test]
fn segmented_two_producers_across_a_block_no_lost_wakeup() {
    model_long(|| {
        let q = segmented(0);
        let producers: Vec<_> = (0..2u8)
            .map(|p| {
                let q = Arc::clone(&q);
                thread::spawn(move || {
                    q.push((p, 0)).unwrap();
                    q.push((p, 1)).unwrap();
                })
            })
            .collect();
        let out = take(4, |out| q.pop_batch(out, 4, IdleWait::Park));
        for p in producers {
            p.join().unwrap();
        }
        assert_per_producer_fifo(&out, 2, 2);
    });
}

/// One producer pushes two blocks' worth while the consumer drains: the
/// second install races with the consumer pushing the first block onto
/// the free stack, so it either reuses that block or allocates. Nothing
/// is lost, reordered or read twice, and `close` ends the drain.
#[test]
fn segmented_recycles_blocks_while_the_producer_installs() {
    model_long(|| {
        let q = segmented(0);
        let producer = produce(&q, 6, Then::Close);
        let out = drain_all(|out| q.pop_batch(out, 2, IdleWait::Park));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 6);
    });
}

/// One producer pushes two blocks' worth (and a message of a third)
/// while the consumer drains and, after every drain, gives back every
/// spare block (`SegmentedMpsc::trim` keeping none; a pooled actor going
/// idle keeps one): each install either takes a spare block or, finding
/// the stack empty or held by a trim, allocates; a trim frees only blocks
/// that no install is reading (G5). Nothing is lost, reordered or read
/// twice, and the blocks the queue counts are the ones it holds.
#[test]
fn segmented_trims_while_the_producer_installs() {
    model_long(|| {
        let q = Arc::new(SegmentedMpsc::new(0));
        let producer = {
            let q = Arc::clone(&q);
            thread::spawn(move || {
                for i in 0..7 {
                    q.push((0u8, i)).unwrap();
                }
                q.close();
            })
        };
        let out = drain_all(|out| {
            let got = q.pop_batch(out, 2, IdleWait::Park);
            q.trim(0);
            got
        });
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 7);
        // Drained and closed: the block in use, and whatever spare blocks
        // the last trims left (at most the two spent ones).
        q.trim(0);
        assert_eq!(q.blocks(), 1, "{q:?}");
    });
}

/// The default consumer polls its next slot (not the tail) before it sets
/// `SLEEPING`: a push in the polling phase must be seen, one after it must
/// unpark.
#[test]
fn segmented_polling_consumer_no_lost_wakeup() {
    model(|| {
        let q = segmented(0);
        let producer = produce(&q, 2, Then::LeaveOpen);
        let out = take(2, |out| q.pop_batch(out, 4, IdleWait::Backoff));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 2);
        assert!(q.wakeups() <= 2);
    });
}

/// A push racing with `close`: refused, or drained before `Closed`.
#[test]
fn segmented_push_races_close() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::Segmented { capacity: 0 }));
        let q2 = Arc::clone(&q);
        let producer = thread::spawn(move || q2.push(7u8).is_ok());
        q.close();
        let out = drain_all(|out| q.pop_batch(out, 4, IdleWait::Backoff));
        let accepted = producer.join().unwrap();
        assert_eq!(out, if accepted { vec![7] } else { vec![] });
    });
}

/// The compact queue's thread consumer sleeping at once (`Park`): the
/// consumer sets `SLEEPING` only under the word's lock, so the push that
/// next takes it must wake it; everything arrives, in order, before
/// `Closed`. (Two producers racing for the lock are modelled with the
/// pooled consumer, in `loom_sched_mailbox`; with a parked thread as well,
/// the model does not finish in minutes.)
#[test]
fn compact_no_lost_wakeup() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::Compact));
        let producer = produce(&q, 2, Then::Close);
        let out = drain_all(|out| q.pop_batch(out, 8, IdleWait::Park));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 2);
    });
}

/// The compact queue's consumer polls its word (length and flags) without
/// the lock, then sleeps under it: a push in either phase, or between
/// them, must reach it; no `close` comes to the rescue.
#[test]
fn compact_polling_consumer_no_lost_wakeup() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::Compact));
        let producer = produce(&q, 2, Then::LeaveOpen);
        let out = take(2, |out| q.pop_batch(out, 8, IdleWait::Backoff));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 2);
        assert!(q.wakeups() <= 2);
    });
}

/// `Park` and one message per drain: each push that finds the compact
/// queue's consumer asleep must wake it.
#[test]
fn compact_parked_consumer_is_woken_by_each_push() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::Compact));
        let producer = produce(&q, 2, Then::LeaveOpen);
        let out = take(2, |out| q.pop_batch(out, 1, IdleWait::Park));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 1, 2);
    });
}

/// A drain that may take one finds two queued: it takes both into its
/// spill and hands them out from there, first, while the producer goes on
/// to `close` (C4, C5). Nothing is lost or reordered, and the consumer
/// that parks meanwhile is woken. The spill's room is made by the busy
/// period's first deep drain, before the race: `(1, 0)` is taken the old
/// way and `(1, 1)` waits in the queue, so the racing drains spill.
#[test]
fn compact_deep_drain_spills_in_order() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::Compact));
        q.push((1, 0)).unwrap();
        q.push((1, 1)).unwrap();
        let mut out = Vec::new();
        assert_eq!(q.try_pop_batch(&mut out, 1), 1);
        let producer = produce(&q, 2, Then::Close);
        out.extend(drain_all(|out| q.pop_batch(out, 1, IdleWait::Park)));
        producer.join().unwrap();
        assert_per_producer_fifo(&out, 2, 2);
        assert_eq!(q.len(), 0);
    });
}

/// Two threads drain one compact queue (not how a mailbox is used, but
/// safe code can) while the spill holds messages: the spill's token keeps
/// them apart, and each message comes out exactly once.
#[test]
fn compact_two_drains_take_each_message_once() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::Compact));
        for i in 0..3u8 {
            q.push(i).unwrap();
        }
        let other = {
            let q = Arc::clone(&q);
            thread::spawn(move || {
                let mut got = Vec::new();
                q.try_pop_batch(&mut got, 1);
                q.try_pop_batch(&mut got, 1);
                got
            })
        };
        let mut mine = Vec::new();
        q.try_pop_batch(&mut mine, 1);
        q.try_pop_batch(&mut mine, 1);
        let mut all = other.join().unwrap();
        all.append(&mut mine);
        // What neither took is still there, for one drain to take.
        while q.try_pop_batch(&mut all, 8) > 0 {}
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2]);
    });
}

/// A push racing with `close` on the compact queue: refused, or drained
/// before `Closed`.
#[test]
fn compact_push_races_close() {
    model(|| {
        let q = Arc::new(Mailbox::new(MailboxKind::Compact));
        let q2 = Arc::clone(&q);
        let producer = thread::spawn(move || q2.push(7u8).is_ok());
        q.close();
        let out = drain_all(|out| q.pop_batch(out, 4, IdleWait::Backoff));
        let accepted = producer.join().unwrap();
        assert_eq!(out, if accepted { vec![7] } else { vec![] });
    });
}
