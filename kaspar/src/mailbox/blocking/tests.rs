//! The blocking queues' order, swaps and hand-backs, and the pooled
//! queue's buffers.

use super::*;

#[test]
fn fifo_across_ring_and_overflow() {
    let q = BQueue::new(4);
    for i in 0..10 {
        q.push(i).unwrap();
    }
    let mut out = Vec::new();
    for _ in 0..3 {
        q.pop_batch(&mut out, usize::MAX, IdleWait::Park);
    }
    // ring has room again, but the overflow is not empty: keep order
    for i in 10..13 {
        q.push(i).unwrap();
    }
    while q.try_pop_batch(&mut out, 1) == 1 {}
    assert_eq!(out, (0..13).collect::<Vec<_>>());
}

#[test]
fn few_and_many_drains_keep_fifo_across_ring_and_overflow() {
    // capacity 8: 8 in the ring, 92 in the overflow.
    let q = Locked::new(8);
    for i in 0..100 {
        q.push(i).unwrap();
    }
    let mut out = Vec::new();
    // A few (one by one) from the ring, then many (bulk) across the
    // ring's end into the overflow, then a few from the overflow, then
    // the rest, more than `FEW`, ending exactly at the last message.
    for (max, got) in [(5, 5), (FEW + 1, FEW + 1), (FEW, FEW), (usize::MAX, 62)] {
        assert_eq!(q.try_pop_batch(&mut out, max), got);
    }
    assert_eq!(q.try_pop_batch(&mut out, usize::MAX), 0);
    assert_eq!(out, (0..100).collect::<Vec<_>>());
    assert_eq!(q.len(), 0);
}

#[test]
fn a_whole_ring_drain_swaps_rings_and_keeps_fifo_and_capacity() {
    let q = Locked::new(64);
    let mut out = Vec::new();
    let mut next = 0..;
    // Copied (no spare yet), copied while spilled (which allocates the
    // spare), then two swaps (the second hands the first's ring back).
    for (pushes, max, spare) in [
        (40, usize::MAX, 0),
        (100, usize::MAX, 64),
        (40, usize::MAX, 64),
        (64, 64, 64),
    ] {
        for _ in 0..pushes {
            q.push(next.next().unwrap()).unwrap();
        }
        assert_eq!(q.try_pop_batch(&mut out, max), pushes);
        assert_eq!(q.len(), 0);
        let spare_capacity = q.spare.get().map_or(0, |s| s.lock().capacity());
        assert!(q.spare.get().is_none_or(|s| s.lock().is_empty()));
        assert!(spare_capacity >= spare && (spare > 0 || spare_capacity == 0));
        assert!(q.state.lock().ring.capacity() >= 64);
    }
    assert_eq!(out, (0..244).collect::<Vec<_>>());
}

#[test]
fn pops_one_at_a_time() {
    let q = BQueue::new(4);
    for i in 0..3 {
        q.push(i).unwrap();
    }
    let mut out = Vec::new();
    assert_eq!(q.pop_batch(&mut out, 16, IdleWait::Park), Drained::Got(1));
    assert_eq!(q.try_pop_batch(&mut out, 16), 1);
    assert_eq!(out, [0, 1]);
}

#[test]
fn closed_hands_back_and_drains() {
    let q = BQueue::new(2);
    q.push(1).unwrap();
    q.close();
    assert_eq!(q.push(2), Err(SendError::closed(2)));
    let mut out = Vec::new();
    assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Got(1));
    assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Closed);
    assert_eq!(out, vec![1]);
}

/// A pooled queue (nothing up front) whose messages come one activation
/// at a time holds one buffer while idle, and it is the same buffer every
/// time: the drain trades it to the consumer, going idle trades it back.
#[test]
fn a_pooled_queue_fed_between_activations_cycles_one_buffer() {
    let q = Locked::new(0);
    let mut batch: Vec<u64> = Vec::new();
    q.push(0).unwrap();
    assert!(matches!(q.poll_batch(&mut batch, 8), Polled::Got(1)));
    let buffer = batch.as_ptr();
    for round in 1..=10 {
        assert_eq!(batch, [round - 1]);
        batch.clear();
        // Idle: the emptied batch is the queue's buffer again.
        assert!(matches!(q.poll_batch(&mut batch, 8), Polled::Idle));
        assert_eq!(
            batch.capacity(),
            0,
            "round {round}: the batch kept a buffer"
        );
        q.push(round).unwrap();
        assert!(matches!(q.poll_batch(&mut batch, 8), Polled::Got(1)));
        assert_eq!(batch.as_ptr(), buffer, "round {round}: a new buffer");
    }
}

/// A message pushed while the consumer runs finds the queue's buffer
/// lent out and makes a second one, once: from then on the two trade
/// places and nothing more is made.
#[test]
fn a_push_during_an_activation_makes_a_second_buffer_once() {
    let q = Locked::new(0);
    let mut batch: Vec<u64> = Vec::new();
    q.push(0).unwrap();
    assert!(matches!(q.poll_batch(&mut batch, 8), Polled::Got(1)));
    let first = batch.as_ptr();
    q.push(1).unwrap(); // while the batch is out
    batch.clear();
    assert!(matches!(q.poll_batch(&mut batch, 8), Polled::Got(1)));
    let second = batch.as_ptr();
    assert_ne!(first, second);
    let mut next = 2;
    for _ in 0..10 {
        batch.clear();
        q.push(next).unwrap(); // again while the batch is out
        next += 1;
        assert!(matches!(q.poll_batch(&mut batch, 8), Polled::Got(1)));
        assert!([first, second].contains(&batch.as_ptr()));
        batch.clear();
        assert!(matches!(q.poll_batch(&mut batch, 8), Polled::Idle));
        // Both are in use: the batch keeps its own.
        assert!([first, second].contains(&batch.as_ptr()));
        q.push(next).unwrap();
        next += 1;
        assert!(matches!(q.poll_batch(&mut batch, 8), Polled::Got(1)));
        assert!([first, second].contains(&batch.as_ptr()));
    }
}

/// More queued than one drain takes: messages are moved, not traded, and
/// order holds across drains.
#[test]
fn a_pooled_queue_deeper_than_a_drain_moves_in_order() {
    let q = Locked::new(0);
    for i in 0..20u64 {
        q.push(i).unwrap();
    }
    let mut batch = Vec::new();
    let mut seen = Vec::new();
    while let Polled::Got(_) = q.poll_batch(&mut batch, 8) {
        seen.append(&mut batch);
    }
    assert_eq!(seen, (0..20).collect::<Vec<_>>());
}
