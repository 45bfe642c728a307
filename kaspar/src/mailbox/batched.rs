//! `BQueueBatched`: the blocking queue with a batch drain (paper §9.2).
//!
//! Algorithm: the same state as [`BQueue`](super::BQueue) (one mutex over a
//! fixed ring that spills into an unbounded overflow, one condition
//! variable), with two changes on the hot path:
//!
//! * the consumer moves everything queued (up to `max`) into the caller's
//!   reused `Vec` under one lock acquisition, so a deep mailbox costs one
//!   lock per batch rather than one per message;
//! * a producer notifies only on the empty→non-empty transition and only if
//!   the consumer is asleep; while the consumer is busy, pushes never touch
//!   the condition variable.
//!
//! Invariants:
//! * FIFO across ring and overflow: every message in the ring is older than
//!   every message in the overflow (a push goes to the ring only while the
//!   overflow is empty), and a drain takes the ring before the overflow;
//! * `sleeping` is set only by the consumer, only under the lock, and only
//!   while the queue is empty and open; so a push that finds it set is the
//!   push that made the queue non-empty, and it notifies. No wakeup is lost
//!   because the consumer re-checks emptiness under the same lock it sleeps
//!   on;
//! * once `closed`, no push succeeds, and everything accepted before is
//!   still drained; `Closed` is reported only when closed and empty.

use super::blocking::State;
use super::park::SpinBudget;
use super::{Drained, IdleWait};
use crate::error::SendError;
use crate::sync::{Condvar, Mutex, MutexGuard};

/// Mutex + condvar around a ring with an overflow; drains in batches and
/// wakes the consumer only when the queue turns non-empty.
#[derive(Debug)]
pub struct BQueueBatched<T> {
    state: Mutex<State<T>>,
    nonempty: Condvar,
}

impl<T> BQueueBatched<T> {
    /// A queue whose ring holds `capacity` messages before spilling.
    pub fn new(capacity: usize) -> Self {
        BQueueBatched {
            state: Mutex::new(State::new(capacity)),
            nonempty: Condvar::new(),
        }
    }

    /// Appends `msg`; returns the length after the push.
    pub fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        let mut st = self.state.lock();
        if st.closed {
            return Err(SendError::Closed(msg));
        }
        let was_empty = st.len() == 0;
        st.enqueue(msg);
        let len = st.len();
        let wake = was_empty && st.sleeping;
        drop(st);
        if wake {
            self.nonempty.notify_one();
        }
        Ok(len)
    }

    /// Moves up to `max` of the oldest messages into `out` (at least one
    /// when any is queued), waiting per `idle` while empty and open.
    pub fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        let max = max.max(1);
        let mut budget = SpinBudget::new(idle);
        loop {
            let mut st = self.state.lock();
            let n = drain(&mut st, out, max);
            if n > 0 {
                return Drained::Got(n);
            }
            if st.closed {
                return Drained::Closed;
            }
            if budget.spin() {
                drop(st);
                continue;
            }
            st.sleeping = true;
            while st.len() == 0 && !st.closed {
                st = self.nonempty.wait(st);
            }
            st.sleeping = false;
        }
    }

    /// Moves up to `max` of the oldest messages into `out` without waiting.
    pub fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        if max == 0 {
            return 0;
        }
        drain(&mut self.state.lock(), out, max)
    }

    /// Refuses further pushes and wakes the consumer.
    pub fn close(&self) {
        self.state.lock().closed = true;
        self.nonempty.notify_all();
    }

    /// Whether the queue is closed.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Queued messages.
    pub fn len(&self) -> usize {
        self.state.lock().len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Moves up to `max` messages, ring first, then overflow.
fn drain<T>(st: &mut MutexGuard<'_, State<T>>, out: &mut Vec<T>, max: usize) -> usize {
    let from_ring = st.ring.len().min(max);
    out.extend(st.ring.drain(..from_ring));
    let from_overflow = st.overflow.len().min(max - from_ring);
    if from_overflow > 0 {
        out.extend(st.overflow.drain(..from_overflow));
        if st.overflow.is_empty() && st.overflow.capacity() > st.capacity {
            // The burst is over; give its memory back.
            st.overflow = std::collections::VecDeque::new();
        }
    }
    from_ring + from_overflow
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
        assert_eq!(q.push(4), Err(SendError::Closed(4)));
        let mut out = Vec::new();
        assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Got(3));
        assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Closed);
        assert_eq!(out, vec![1, 2, 3]);
    }

    #[test]
    fn consumer_asleep_is_woken_by_push_and_by_close() {
        let q = crate::sync::Arc::new(BQueueBatched::new(2));
        let consumer = {
            let q = crate::sync::Arc::clone(&q);
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
