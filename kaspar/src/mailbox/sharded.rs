//! `ShardedBQueue`: N independently locked lanes (paper §9.2, fan-in).
//!
//! Algorithm: the queue is `lanes` FIFO deques, each behind its own mutex.
//! A producer keeps to one lane, picked from a per-sender token (its
//! thread's, or a pooled actor's, whose activations move between threads),
//! so producers on different threads mostly take different locks and a long
//! fan-in does not convoy on one mutex. The single consumer drains the
//! lanes round-robin, starting each drain one lane further than the last,
//! taking as many messages per lane lock as `max` allows. One atomic word,
//! `state`, counts queued messages and carries the consumer's `SLEEPING`
//! bit and the `CLOSED` bit; it is the consumer's one wakeup mechanism (see
//! [`park`]).
//!
//! Invariants:
//! * per-sender FIFO: one sender's pushes go to one lane (a thread's token
//!   is fixed for the thread's life; a pooled actor's is its own, on
//!   whichever thread its activation runs, and its activations never
//!   overlap) and a lane is FIFO. There is no order *between*
//!   lanes: two threads' messages may be handled in either order even if
//!   one pushed strictly before the other;
//! * `state >> 2` never undercounts a lane's contents: a producer adds its
//!   message to the count while still holding the lane lock, and the
//!   consumer subtracts only what it took under that lock, so the count
//!   never wraps below zero;
//! * the consumer sleeps only after setting `SLEEPING` with a
//!   read-modify-write that saw a zero count and no `CLOSED`; any later push
//!   increments with a read-modify-write that therefore sees `SLEEPING`, and
//!   the producer that clears it unparks the consumer;
//! * a lane's `queued` hint is zero only if the lane was empty at its last
//!   unlock, and a producer writes it before its count increment, so a
//!   consumer that saw the count also sees the hint: skipping lanes whose
//!   hint is zero loses nothing;
//! * `close` marks every lane closed under its lock *before* setting
//!   `CLOSED`, so once the consumer sees `CLOSED`, no push can succeed any
//!   more and one empty sweep of the lanes means empty for good.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;

use super::park::{self, Polls, Wake};
use super::{Drained, IdleWait, Polled};
use crate::base::sync::{AtomicUsize, Mutex, Ordering};
use crate::error::SendError;

/// The consumer is parked, or about to park.
const SLEEPING: usize = 1;
/// `close` was called and every lane refuses pushes.
const CLOSED: usize = 2;
/// One queued message in `state`.
const ONE: usize = 4;

/// N mutex-guarded lanes; a producer keeps to one lane; the consumer drains
/// them round-robin.
pub struct ShardedBQueue<T> {
    lanes: Box<[CachePadded<LaneSlot<T>>]>,
    /// Bit 0: `SLEEPING`. Bit 1: `CLOSED`. Bits 2..: queued messages.
    state: CachePadded<AtomicUsize>,
    /// The lane the next drain starts at. Only the consumer touches it;
    /// an atomic so the queue stays `Sync` without `unsafe`.
    cursor: AtomicUsize,
    pub(super) wake: Wake,
}

struct LaneSlot<T> {
    /// The lane's length as of its last unlock: written only under `lane`,
    /// read without it so the consumer's sweep skips empty lanes unlocked.
    queued: AtomicUsize,
    lane: Mutex<Lane<T>>,
}

struct Lane<T> {
    queue: VecDeque<T>,
    /// The capacity the lane was made with; memory past it is given back
    /// once a burst drains.
    reserved: usize,
    closed: bool,
}

impl<T> std::fmt::Debug for ShardedBQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.load(Ordering::Relaxed);
        f.debug_struct("ShardedBQueue")
            .field("lanes", &self.lanes.len())
            .field("len", &(state / ONE))
            .field("closed", &(state & CLOSED != 0))
            .finish()
    }
}

impl<T> ShardedBQueue<T> {
    /// A queue of `lanes` lanes (at least one) sharing `capacity`
    /// preallocated slots; a lane grows past its share when it must.
    pub fn new(lanes: usize, capacity: usize) -> Self {
        let lanes = lanes.max(1);
        let per_lane = (capacity / lanes).max(1);
        ShardedBQueue {
            lanes: (0..lanes)
                .map(|_| {
                    CachePadded::new(LaneSlot {
                        queued: AtomicUsize::new(0),
                        lane: Mutex::new(Lane {
                            queue: VecDeque::with_capacity(per_lane),
                            reserved: per_lane,
                            closed: false,
                        }),
                    })
                })
                .collect(),
            state: CachePadded::new(AtomicUsize::new(0)),
            cursor: AtomicUsize::new(0),
            wake: Wake::default(),
        }
    }

    /// How many lanes the queue has.
    pub fn lanes(&self) -> usize {
        self.lanes.len()
    }

    /// Appends `msg` on the calling sender's lane (the calling thread's,
    /// or the pooled actor's whose activation runs on it); returns the
    /// queue length after the push (a snapshot).
    #[inline]
    pub fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        self.push_from(crate::base::ids::sender_key(), msg)
    }

    /// Appends `msg` on the lane for `key` (`key % lanes`). Messages pushed
    /// with one key are popped in push order; [`push`](Self::push) uses a
    /// per-thread key.
    pub fn push_from(&self, key: usize, msg: T) -> Result<usize, SendError<T>> {
        let slot = &self.lanes[key % self.lanes.len()];
        let mut lane = slot.lane.lock();
        if lane.closed {
            return Err(SendError::closed(msg));
        }
        lane.queue.push_back(msg);
        // Relaxed: the increment below releases it, and the consumer
        // acquires that before it looks.
        slot.queued.store(lane.queue.len(), Ordering::Relaxed);
        // AcqRel: the increment must be ordered against the consumer's
        // `SLEEPING` read-modify-write (see the module invariants); the lane
        // lock already publishes the message itself.
        let prev = self.state.fetch_add(ONE, Ordering::AcqRel);
        drop(lane);
        if prev & SLEEPING != 0 {
            self.wake();
        }
        Ok(prev / ONE + 1)
    }

    /// Clears `SLEEPING`; whoever actually clears it unparks the consumer.
    #[cold]
    fn wake(&self) {
        if self.state.fetch_and(!SLEEPING, Ordering::AcqRel) & SLEEPING != 0 {
            self.wake.wake();
        }
    }

    /// Moves up to `max` messages into `out` (at least one when any is
    /// queued), waiting per `idle` while empty and open.
    pub fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        let max = max.max(1);
        let mut polls = Polls::new(idle);
        loop {
            let n = self.try_pop_batch(out, max);
            if n > 0 {
                return Drained::Got(n);
            }
            let state = self.state.load(Ordering::Acquire);
            if state & CLOSED != 0 {
                // Every lane refused pushes before CLOSED was set, so the
                // sweep that follows sees all there will ever be.
                let n = self.try_pop_batch(out, max);
                return if n > 0 {
                    Drained::Got(n)
                } else {
                    Drained::Closed
                };
            }
            if state >= ONE {
                // Counted after our sweep looked at its lane: sweep again.
                crate::base::sync::hint::spin_loop();
                continue;
            }
            // Poll the count, never a lane lock, until something is
            // counted (or the queue closed), or the budget is spent.
            if polls.until(|| self.state.load(Ordering::Relaxed) & !SLEEPING != 0) {
                continue;
            }
            // Acquire pairs with the producers' AcqRel increments, so a
            // non-zero count seen here comes with its message visible.
            let prev = self.state.fetch_or(SLEEPING, Ordering::AcqRel);
            if prev >= ONE || prev & CLOSED != 0 {
                self.state.fetch_and(!SLEEPING, Ordering::AcqRel);
                continue;
            }
            park::sleep(|| self.wake.parker.park());
        }
    }

    /// The pooled consumer's drain: moves up to `max` messages into `out`
    /// without waiting; with none, reports the queue closed and drained,
    /// or goes idle with a compare-and-swap of the count word from
    /// "nothing queued, open" to `SLEEPING`, which fails if any push was
    /// counted since (see `park`'s module docs). A producer that counted
    /// its message against `SLEEPING` clears it in `wake`; of several, the
    /// one that clears it schedules.
    pub(crate) fn poll_batch(&self, out: &mut Vec<T>, max: usize) -> Polled {
        let max = max.max(1);
        let n = self.try_pop_batch(out, max);
        if n > 0 {
            return Polled::Got(n);
        }
        let state = self.state.load(Ordering::Acquire);
        if state & CLOSED != 0 {
            let n = self.try_pop_batch(out, max);
            return if n > 0 {
                Polled::Got(n)
            } else {
                Polled::Closed
            };
        }
        debug_assert!(
            state & SLEEPING == 0,
            "a pooled consumer runs only while awake"
        );
        if state >= ONE {
            // Counted after our sweep looked at its lane: run again soon.
            return Polled::Busy;
        }
        // AcqRel: the next producer's increment reads this bit.
        match self
            .state
            .compare_exchange(0, SLEEPING, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Polled::Idle,
            Err(_) => Polled::Busy,
        }
    }

    /// Moves up to `max` messages into `out` without waiting, sweeping the
    /// lanes round-robin.
    pub fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        // Acquire: every message counted here has its lane's `queued` hint
        // visible (the producer wrote it before its releasing increment).
        let want = (self.state.load(Ordering::Acquire) / ONE).min(max);
        if want == 0 {
            return 0;
        }
        let lanes = self.lanes.len();
        let start = self.cursor.load(Ordering::Relaxed);
        let mut taken = 0;
        for i in 0..lanes {
            if taken >= want {
                break;
            }
            let slot = &self.lanes[(start + i) % lanes];
            if slot.queued.load(Ordering::Relaxed) == 0 {
                continue;
            }
            let mut lane = slot.lane.lock();
            let n = lane.queue.len().min(max - taken);
            out.extend(lane.queue.drain(..n));
            if lane.queue.is_empty() && lane.queue.capacity() > 2 * lane.reserved.max(16) {
                lane.queue = VecDeque::with_capacity(lane.reserved);
            }
            slot.queued.store(lane.queue.len(), Ordering::Relaxed);
            drop(lane);
            taken += n;
        }
        self.cursor.store((start + 1) % lanes, Ordering::Relaxed);
        if taken > 0 {
            self.state.fetch_sub(taken * ONE, Ordering::AcqRel);
        }
        taken
    }

    /// Refuses further pushes and wakes the consumer.
    pub fn close(&self) {
        for slot in self.lanes.iter() {
            slot.lane.lock().closed = true;
        }
        let prev = self.state.fetch_or(CLOSED, Ordering::AcqRel);
        if prev & SLEEPING != 0 {
            self.wake();
        }
    }

    /// Whether the queue is closed.
    pub fn is_closed(&self) -> bool {
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Queued messages (a snapshot).
    pub fn len(&self) -> usize {
        self.state.load(Ordering::Acquire) / ONE
    }

    /// Whether nothing is queued (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Times a push (or `close`) found the consumer asleep and woke it.
    pub fn wakeups(&self) -> u64 {
        self.wake.wakes()
    }

    /// Whether the consumer is asleep, or about to be (`SLEEPING` is set).
    #[cfg(test)]
    pub(super) fn consumer_asleep(&self) -> bool {
        self.state.load(Ordering::Acquire) & SLEEPING != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_key_fifo_and_round_robin() {
        let q = ShardedBQueue::new(3, 6);
        for i in 0..4 {
            for key in 0..3 {
                q.push_from(key, (key, i)).unwrap();
            }
        }
        assert_eq!(q.len(), 12);
        let mut out = Vec::new();
        while q.try_pop_batch(&mut out, 5) > 0 {}
        assert_eq!(out.len(), 12);
        for key in 0..3 {
            let seen: Vec<_> = out.iter().filter(|m| m.0 == key).map(|m| m.1).collect();
            assert_eq!(seen, vec![0, 1, 2, 3]);
        }
        assert!(q.is_empty());
    }

    #[test]
    fn closed_hands_back_and_drains() {
        let q = ShardedBQueue::new(2, 4);
        q.push_from(0, 1).unwrap();
        q.push_from(1, 2).unwrap();
        q.close();
        assert!(q.is_closed());
        assert_eq!(q.push_from(0, 3), Err(SendError::closed(3)));
        assert_eq!(q.push_from(1, 4), Err(SendError::closed(4)));
        let mut out = Vec::new();
        assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Got(2));
        assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Closed);
        out.sort_unstable();
        assert_eq!(out, vec![1, 2]);
    }

    #[test]
    fn sleeping_consumer_is_woken() {
        let q = crate::base::sync::Arc::new(ShardedBQueue::new(4, 8));
        let consumer = {
            let q = crate::base::sync::Arc::clone(&q);
            std::thread::spawn(move || {
                let mut out = Vec::new();
                while let Drained::Got(_) = q.pop_batch(&mut out, 16, IdleWait::Park) {}
                out
            })
        };
        let n = if cfg!(miri) { 20 } else { 1000 };
        for i in 0..n {
            q.push(i).unwrap();
        }
        q.close();
        assert_eq!(consumer.join().unwrap(), (0..n).collect::<Vec<_>>());
    }
}
