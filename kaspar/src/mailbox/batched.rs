//! `BQueueBatched`: the blocking queue with a batch drain (paper §9.2).
//!
//! Algorithm: the same locked core as [`BQueue`](super::BQueue) (one mutex
//! over a fixed ring that spills into an unbounded overflow, one condition
//! variable; its invariants are stated in `blocking.rs`), with one
//! difference: the consumer takes everything queued (up to `max`) under one
//! lock acquisition, so a deep mailbox costs one lock per batch rather than
//! one per message. A batch that is the whole ring is taken by swapping the
//! ring for the consumer's spare one and copied into the caller's reused
//! `Vec` after the lock is released. As in the core, a
//! producer touches the condition variable only when the consumer sleeps,
//! which it does only on an empty queue: only on the empty→non-empty
//! transition.

use super::blocking::{locked_queue_methods, Locked};
use super::{Drained, IdleWait, Polled};
use crate::error::SendError;

/// Mutex + condvar around a ring with an overflow; drains in batches and
/// wakes the consumer only when the queue turns non-empty.
#[derive(Debug)]
pub struct BQueueBatched<T>(Locked<T>);

impl<T> BQueueBatched<T> {
    /// A queue whose ring holds `capacity` messages before spilling.
    ///
    /// # Panics
    ///
    /// If the ring cannot be allocated, or `capacity` is 2^32 or more.
    pub fn new(capacity: usize) -> Self {
        BQueueBatched(Locked::new(capacity))
    }

    /// Appends `msg`; returns the length after the push. Touches the
    /// condition variable only if the consumer sleeps, i.e. only on the
    /// empty→non-empty transition.
    pub fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        self.0.push(msg)
    }

    /// Moves up to `max` of the oldest messages into `out` (at least one
    /// when any is queued), waiting per `idle` while empty and open.
    pub fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        self.0.pop_batch(out, max, idle)
    }

    /// Moves up to `max` of the oldest messages into `out` without waiting.
    pub fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        self.0.try_pop_batch(out, max)
    }

    /// The pooled consumer's drain (see `Locked::poll_batch`).
    pub(crate) fn poll_batch(&self, out: &mut Vec<T>, max: usize) -> Polled {
        self.0.poll_batch(out, max)
    }

    locked_queue_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_in_fifo_order_across_ring_and_overflow() {
        let q = BQueueBatched::new(4);
        for i in 0..10 {
            q.push(i).unwrap();
        }
        let mut out = Vec::new();
        assert_eq!(q.pop_batch(&mut out, 3, IdleWait::Park), Drained::Got(3));
        // The ring has room again but the overflow does not: order holds.
        for i in 10..13 {
            q.push(i).unwrap();
        }
        assert_eq!(q.pop_batch(&mut out, 5, IdleWait::Park), Drained::Got(5));
        assert_eq!(q.try_pop_batch(&mut out, usize::MAX), 5);
        assert_eq!(out, (0..13).collect::<Vec<_>>());
        assert!(q.is_empty());
    }

    #[test]
    fn closed_hands_back_and_drains() {
        let q = BQueueBatched::new(2);
        q.push(1).unwrap();
        q.push(2).unwrap();
        q.push(3).unwrap();
        q.close();
        assert_eq!(q.push(4), Err(SendError::closed(4)));
        let mut out = Vec::new();
        assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Got(3));
        assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Closed);
        assert_eq!(out, vec![1, 2, 3]);
    }

    #[test]
    fn consumer_asleep_is_woken_by_push_and_by_close() {
        let q = crate::base::sync::Arc::new(BQueueBatched::new(2));
        let consumer = {
            let q = crate::base::sync::Arc::clone(&q);
            std::thread::spawn(move || {
                let mut out = Vec::new();
                let mut got = 0;
                while let Drained::Got(n) = q.pop_batch(&mut out, 16, IdleWait::Park) {
                    got += n;
                }
                (got, out)
            })
        };
        for i in 0..100 {
            q.push(i).unwrap();
        }
        q.close();
        let (got, out) = consumer.join().unwrap();
        assert_eq!(got, 100);
        assert_eq!(out, (0..100).collect::<Vec<_>>());
    }
}
