//! `BQueue`: the baseline blocking queue (paper §7.6).
//!
//! Algorithm: one mutex guards a fixed-capacity ring and an unbounded
//! overflow; one condition variable wakes the consumer.
//!
//! Invariants:
//! * every message in `ring` is older than every message in `overflow`:
//!   a push goes to the ring only while the overflow is empty;
//! * the ring never grows past its initial capacity, so in steady state (a
//!   backlog below `capacity`) neither push nor pop allocates; the overflow
//!   absorbs bursts and gives its memory back once drained;
//! * once `closed`, no push succeeds, but everything accepted before is
//!   still popped.
//!
//! The consumer pops one message per lock acquisition, and every push
//! notifies: this is the "pop-one" baseline the batching measurements
//! compare against.

use std::collections::VecDeque;

use super::{Drained, IdleWait};
use crate::error::SendError;
use crate::sync::{Condvar, Mutex, MutexGuard};

/// Mutex + condvar around a ring with an overflow; pops one at a time.
#[derive(Debug)]
pub struct BQueue<T> {
    state: Mutex<State<T>>,
    nonempty: Condvar,
}

#[derive(Debug)]
pub(super) struct State<T> {
    pub(super) ring: VecDeque<T>,
    pub(super) capacity: usize,
    pub(super) overflow: VecDeque<T>,
    pub(super) closed: bool,
    /// The consumer is asleep on `nonempty`.
    pub(super) sleeping: bool,
}

impl<T> State<T> {
    pub(super) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        State {
            ring: VecDeque::with_capacity(capacity),
            capacity,
            overflow: VecDeque::new(),
            closed: false,
            sleeping: false,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.ring.len() + self.overflow.len()
    }

    /// Appends in FIFO position.
    pub(super) fn enqueue(&mut self, msg: T) {
        if self.overflow.is_empty() && self.ring.len() < self.capacity {
            self.ring.push_back(msg);
        } else {
            self.overflow.push_back(msg);
        }
    }

    /// Takes the oldest message.
    pub(super) fn dequeue(&mut self) -> Option<T> {
        match self.ring.pop_front() {
            Some(m) => Some(m),
            None => {
                let m = self.overflow.pop_front();
                if self.overflow.is_empty() && self.overflow.capacity() > self.capacity {
                    // The burst is over; give its memory back.
                    self.overflow = VecDeque::new();
                }
                m
            }
        }
    }
}

impl<T> BQueue<T> {
    /// A queue whose ring holds `capacity` messages before spilling.
    pub fn new(capacity: usize) -> Self {
        BQueue {
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
        st.enqueue(msg);
        let len = st.len();
        let wake = st.sleeping;
        drop(st);
        if wake {
            self.nonempty.notify_one();
        }
        Ok(len)
    }

    /// Pops at most one message (this is the pop-one queue), waiting per
    /// `idle` while empty and open.
    pub fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        let _ = max;
        let mut spins = match idle {
            IdleWait::Park => 0,
            IdleWait::SpinThenPark { spins } => spins,
            IdleWait::Spin => u32::MAX,
        };
        loop {
            let mut st = self.state.lock();
            if let Some(m) = st.dequeue() {
                out.push(m);
                return Drained::Got(1);
            }
            if st.closed {
                return Drained::Closed;
            }
            if spins > 0 {
                if idle != IdleWait::Spin {
                    spins -= 1;
                }
                drop(st);
                crate::sync::hint::spin_loop();
                continue;
            }
            st = self.sleep(st);
            drop(st);
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

    /// Pops at most one message without waiting.
    pub fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        if max == 0 {
            return 0;
        }
        match self.state.lock().dequeue() {
            Some(m) => {
                out.push(m);
                1
            }
            None => 0,
        }
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
