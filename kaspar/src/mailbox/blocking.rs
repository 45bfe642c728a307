//! `BQueue`: the baseline blocking queue (paper §7.6), and the locked core
//! it shares with [`BQueueBatched`](super::BQueueBatched).
//!
//! Algorithm: one mutex guards a fixed-capacity ring and an unbounded
//! overflow; one condition variable wakes the consumer.
//!
//! Invariants:
//! * every message in `ring` is older than every message in `overflow`:
//!   a push goes to the ring only while the overflow is empty, and a pop
//!   takes the ring before the overflow;
//! * the ring never grows past its initial capacity, so in steady state (a
//!   backlog below `capacity`) neither push nor pop allocates; the overflow
//!   absorbs bursts and keeps its memory once drained, so a burst no larger
//!   than the largest one before allocates nothing either. The price is
//!   memory: a mailbox holds on to room for its largest burst;
//! * `sleeping` is set only by the consumer, only under the lock, and only
//!   while the queue is empty and open; a push that finds it set is the push
//!   that made the queue non-empty, and it notifies. No wakeup is lost
//!   because the consumer re-checks emptiness under the lock it sleeps on;
//! * once `closed`, no push succeeds, but everything accepted before is
//!   still popped; `Closed` is reported only when closed and empty.
//!
//! `BQueue` pops one message per lock acquisition: the "pop-one" baseline
//! the batching measurements compare against. `BQueueBatched` is the same
//! core draining up to a whole batch per acquisition.

use std::collections::VecDeque;

use super::park::SpinBudget;
use super::{Drained, IdleWait};
use crate::base::sync::{Condvar, Mutex, MutexGuard};
use crate::error::SendError;

/// Mutex + condvar around a ring with an overflow; pops one at a time.
#[derive(Debug)]
pub struct BQueue<T>(Locked<T>);

impl<T> BQueue<T> {
    /// A queue whose ring holds `capacity` messages before spilling.
    pub fn new(capacity: usize) -> Self {
        BQueue(Locked::new(capacity))
    }

    /// Appends `msg`; returns the length after the push.
    pub fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        self.0.push(msg)
    }

    /// Pops at most one message (this is the pop-one queue), waiting per
    /// `idle` while empty and open.
    pub fn pop_batch(&self, out: &mut Vec<T>, _max: usize, idle: IdleWait) -> Drained {
        self.0.pop_batch(out, 1, idle)
    }

    /// Pops at most one message without waiting.
    pub fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        self.0.try_pop_batch(out, max.min(1))
    }

    /// Refuses further pushes and wakes the consumer.
    pub fn close(&self) {
        self.0.close();
    }

    /// Whether the queue is closed.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Queued messages.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The locked ring-with-overflow both blocking queues are made of.
#[derive(Debug)]
pub(super) struct Locked<T> {
    state: Mutex<State<T>>,
    nonempty: Condvar,
}

#[derive(Debug)]
struct State<T> {
    ring: VecDeque<T>,
    capacity: usize,
    overflow: VecDeque<T>,
    closed: bool,
    /// The consumer is asleep on `nonempty`.
    sleeping: bool,
}

impl<T> State<T> {
    fn len(&self) -> usize {
        self.ring.len() + self.overflow.len()
    }

    /// Moves up to `max` of the oldest messages, ring first, then overflow.
    fn drain(&mut self, out: &mut Vec<T>, max: usize) -> usize {
        let from_ring = self.ring.len().min(max);
        out.extend(self.ring.drain(..from_ring));
        let from_overflow = self.overflow.len().min(max - from_ring);
        // The overflow keeps its capacity once drained: the next burst of
        // the same size allocates nothing (it used to be freed after every
        // burst and allocated again by the next).
        out.extend(self.overflow.drain(..from_overflow));
        from_ring + from_overflow
    }
}

impl<T> Locked<T> {
    pub(super) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Locked {
            state: Mutex::new(State {
                ring: VecDeque::with_capacity(capacity),
                capacity,
                overflow: VecDeque::new(),
                closed: false,
                sleeping: false,
            }),
            nonempty: Condvar::new(),
        }
    }

    /// Appends in FIFO position; wakes the consumer only if it sleeps
    /// (which it does only on an empty queue).
    pub(super) fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        let mut st = self.state.lock();
        if st.closed {
            return Err(SendError::Closed(msg));
        }
        if st.overflow.is_empty() && st.ring.len() < st.capacity {
            st.ring.push_back(msg);
        } else {
            st.overflow.push_back(msg);
        }
        let len = st.len();
        let wake = st.sleeping;
        drop(st);
        if wake {
            self.nonempty.notify_one();
        }
        Ok(len)
    }

    /// Moves up to `max` messages (at least one when any is queued),
    /// waiting per `idle` while empty and open.
    pub(super) fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        let max = max.max(1);
        let mut budget = SpinBudget::new(idle);
        loop {
            let mut st = self.state.lock();
            let n = st.drain(out, max);
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
            drop(self.sleep(st));
        }
    }

    fn sleep<'a>(&'a self, mut st: MutexGuard<'a, State<T>>) -> MutexGuard<'a, State<T>> {
        st.sleeping = true;
        while st.len() == 0 && !st.closed {
            st = self.nonempty.wait(st);
        }
        st.sleeping = false;
        st
    }

    /// Moves up to `max` messages without waiting.
    pub(super) fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        if max == 0 {
            return 0;
        }
        self.state.lock().drain(out, max)
    }

    pub(super) fn close(&self) {
        self.state.lock().closed = true;
        self.nonempty.notify_all();
    }

    pub(super) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    pub(super) fn len(&self) -> usize {
        self.state.lock().len()
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(q.push(2), Err(SendError::Closed(2)));
        let mut out = Vec::new();
        assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Got(1));
        assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Closed);
        assert_eq!(out, vec![1]);
    }
}
