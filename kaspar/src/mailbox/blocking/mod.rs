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
//! * `spare` is empty between drains and locked only by the consumer. A
//!   drain that takes the whole queue, all of it in the ring and more than
//!   a few messages, swaps the ring with `spare` under `state`'s lock and
//!   moves the messages out after releasing it; both rings hold at least
//!   `capacity` slots, so the ring still never grows and the swap never
//!   allocates. The spare is allocated (once) by the first drain that
//!   finds the queue spilled, the event that allocates the overflow; until
//!   then drains copy. A queue with no ring (`capacity` 0) never has a
//!   spare, and holds only a pointer's room for it;
//! * a queue with no ring trades buffers with its consumer instead: a drain
//!   that takes the whole overflow into an empty batch swaps the two
//!   buffers (the batch's, possibly none, becomes the overflow), and a
//!   consumer going idle with an unallocated overflow hands its emptied
//!   batch back as the overflow. So an idle pooled actor whose messages
//!   come one activation at a time holds one small buffer, not two, and
//!   the same one every time; a push while the batch is out makes a second
//!   buffer once, and from then on the two trade places. Neither trade
//!   allocates or moves a message under the lock;
//! * `sleeping` is set only by the consumer, only under the lock, and only
//!   while the queue is empty and open, right before it waits on the
//!   condition variable; a push that finds it set is the push that made the
//!   queue non-empty: it clears it and notifies, so one sleep costs one
//!   notification however many pushes follow, and a push that finds it
//!   clear (the consumer is busy or polling) makes no wake-up call. No
//!   wakeup is lost because the consumer re-checks emptiness under the lock
//!   it sleeps on;
//! * `hint` is `len << 1 | closed`, stored (never read-modify-written)
//!   under the lock by every push, drain and close, so its last value is
//!   always the queue's state. A polling consumer reads it without the lock
//!   and takes the lock only when it is non-zero: polling never contends
//!   with producers for the mutex. A stale zero only delays the consumer by
//!   one poll; the decision to sleep is still made under the lock;
//! * once `closed`, no push succeeds, but everything accepted before is
//!   still popped; `Closed` is reported only when closed and empty.
//!
//! `BQueue` pops one message per lock acquisition: the "pop-one" baseline
//! the batching measurements compare against. `BQueueBatched` is the same
//! core draining up to a whole batch per acquisition.

use std::collections::VecDeque;
use std::sync::OnceLock;

use super::park::{self, Polls, TaskSlot};
use super::{Drained, IdleWait, Polled};
use crate::base::sync::{AtomicU64, AtomicUsize, Condvar, Mutex, MutexGuard, Ordering};
use crate::error::SendError;

/// The methods both blocking queues ([`BQueue`] and
/// [`BQueueBatched`](super::BQueueBatched)) hand straight to the
/// [`Locked`] core they wrap; expanded inside each one's `impl<T>`.
macro_rules! locked_queue_methods {
    () => {
        pub(super) fn locked(&self) -> &Locked<T> {
            &self.0
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

        /// Times a push (or `close`) found the consumer asleep and woke it.
        pub fn wakeups(&self) -> u64 {
            self.0.wakeups()
        }

        #[cfg(test)]
        pub(super) fn consumer_asleep(&self) -> bool {
            self.0.consumer_asleep()
        }
    };
}
pub(super) use locked_queue_methods;

/// Mutex + condvar around a ring with an overflow; pops one at a time.
#[derive(Debug)]
pub struct BQueue<T>(Locked<T>);

impl<T> BQueue<T> {
    /// A queue whose ring holds `capacity` messages before spilling.
    ///
    /// # Panics
    ///
    /// If the ring cannot be allocated, or `capacity` is 2^32 or more.
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

    /// The pooled consumer's drain of at most one message (see
    /// [`Locked::poll_batch`]).
    pub(crate) fn poll_batch(&self, out: &mut Vec<T>, _max: usize) -> Polled {
        self.0.poll_batch(out, 1)
    }

    locked_queue_methods!();
}

/// The locked ring-with-overflow both blocking queues are made of.
#[derive(Debug)]
pub(super) struct Locked<T> {
    state: Mutex<State<T>>,
    /// Bit 0: closed. Bits 1..: queued messages. Written only under
    /// `state`'s lock; read without it by a polling consumer and by `len`.
    hint: AtomicUsize,
    nonempty: Condvar,
    /// Notifications sent to a sleeping consumer.
    wakeups: AtomicU64,
    /// The consumer's second ring: a drain that takes the whole ring swaps
    /// it for this one under `state`'s lock, and moves the messages out
    /// after releasing it. Locked only by the consumer; empty between
    /// drains; made when a queue with a ring first spills into the
    /// overflow (boxed: most queues never spill, and a pooled actor's has
    /// no ring to swap).
    spare: OnceLock<Box<Mutex<VecDeque<T>>>>,
    /// Set for a pooled consumer: a push that finds it `sleeping` (idle)
    /// schedules it instead of notifying `nonempty`.
    pub(super) task: TaskSlot,
}

#[derive(Debug)]
struct State<T> {
    ring: VecDeque<T>,
    overflow: VecDeque<T>,
    /// The ring's slots (a `u32` beside the flags: a word less per queue).
    capacity: u32,
    closed: bool,
    /// The consumer is asleep on `nonempty`.
    sleeping: bool,
}

/// Up to this many messages, a drain pops them one by one: a `VecDeque`
/// drain moved into a `Vec` costs about 180 instructions however few it
/// moves (callgrind, `tell` case), a `pop_front` + `push` about ten. It
/// also bounds the ring swap from below. One under loom, so that models of
/// a few messages reach the bulk drain and the swap.
#[cfg(not(loom))]
const FEW: usize = 16;
#[cfg(loom)]
const FEW: usize = 1;

/// Slots a pooled queue with nothing up front keeps while idle; a burst
/// past them is given back when the consumer goes idle.
const KEEP_IDLE: usize = 8;

impl<T> State<T> {
    fn len(&self) -> usize {
        self.ring.len() + self.overflow.len()
    }

    /// `Locked::hint`'s value for this state.
    fn hint(&self) -> usize {
        (self.len() << 1) | usize::from(self.closed)
    }

    /// Moves up to `max` of the oldest messages, ring first, then overflow.
    #[inline]
    fn drain(&mut self, out: &mut Vec<T>, max: usize) -> usize {
        if max.min(self.len()) <= FEW {
            return self.pop_few(out, max);
        }
        self.drain_many(out, max)
    }

    /// [`drain`](Self::drain) for a few messages: one `pop_front` each.
    #[inline]
    fn pop_few(&mut self, out: &mut Vec<T>, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            let Some(msg) = self.ring.pop_front().or_else(|| self.overflow.pop_front()) else {
                break;
            };
            out.push(msg);
            n += 1;
        }
        n
    }

    /// [`drain`](Self::drain) for many: the deques' own bulk moves.
    fn drain_many(&mut self, out: &mut Vec<T>, max: usize) -> usize {
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
        // 0 is allowed: nothing up front, every message in the overflow
        // (a pooled actor's mailbox that holds no memory while idle).
        Locked {
            state: Mutex::new(State {
                ring: VecDeque::with_capacity(capacity),
                capacity: u32::try_from(capacity)
                    .expect("kaspar: a mailbox ring holds fewer than 2^32 slots"),
                overflow: VecDeque::new(),
                closed: false,
                sleeping: false,
            }),
            hint: AtomicUsize::new(0),
            nonempty: Condvar::new(),
            wakeups: AtomicU64::new(0),
            spare: OnceLock::new(),
            task: TaskSlot::default(),
        }
    }

    /// Publishes `st`'s length and closed flag to pollers; called under
    /// the lock after every change.
    #[inline]
    fn publish(&self, st: &State<T>) {
        // Relaxed: the hint only says when to take the lock, and the lock
        // orders everything the consumer then reads.
        self.hint.store(st.hint(), Ordering::Relaxed);
    }

    /// Appends in FIFO position; wakes the consumer only if it sleeps
    /// (which it does only on an empty queue).
    pub(super) fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        let mut st = self.state.lock();
        if st.closed {
            return Err(SendError::closed(msg));
        }
        if st.overflow.is_empty() && st.ring.len() < st.capacity as usize {
            st.ring.push_back(msg);
        } else {
            st.overflow.push_back(msg);
        }
        let len = st.len();
        self.publish(&st);
        let wake = std::mem::take(&mut st.sleeping);
        drop(st);
        if wake {
            self.wake_one();
        }
        Ok(len)
    }

    #[cold]
    fn wake_one(&self) {
        self.wakeups.fetch_add(1, Ordering::Relaxed);
        match self.task.get() {
            Some(task) => task.schedule(),
            None => self.nonempty.notify_one(),
        }
    }

    /// The pooled consumer's drain: moves up to `max` messages without
    /// waiting; with none, reports the queue closed and drained, or goes
    /// idle: sets `sleeping` under the lock, so the push that makes the
    /// queue non-empty (or `close`) takes the flag and schedules the
    /// consumer, exactly once.
    pub(super) fn poll_batch(&self, out: &mut Vec<T>, max: usize) -> Polled {
        let mut st = self.state.lock();
        if st.len() > 0 {
            return Polled::Got(self.take(st, out, max.max(1)));
        }
        if st.closed {
            return Polled::Closed;
        }
        debug_assert!(!st.sleeping, "a pooled consumer runs only while awake");
        st.sleeping = true;
        // A queue with nothing up front (`capacity` 0)
        // gives a burst's room back as it goes idle: an idle pooled actor
        // holds at most `KEEP_IDLE` slots. (Sized queues keep their room,
        // as the allocation tests require.)
        let spare = if st.capacity == 0 && st.overflow.capacity() > KEEP_IDLE {
            Some(std::mem::take(&mut st.overflow))
        } else {
            None
        };
        if st.capacity == 0
            && st.overflow.capacity() == 0
            && out.is_empty()
            && (1..=KEEP_IDLE).contains(&out.capacity())
        {
            // The buffer the last drain took (see `take`) goes back: an
            // idle actor whose messages came one activation at a time
            // holds one buffer, not its queue's and its batch's. O(1).
            let none = std::mem::replace(&mut st.overflow, VecDeque::from(std::mem::take(out)));
            // Unallocated and empty: nothing to drop, so skip the drop's
            // ~30 instructions on every idle transition.
            debug_assert!(none.capacity() == 0 && none.is_empty());
            std::mem::forget(none);
        }
        drop(st);
        // Freed outside the lock.
        drop(spare);
        Polled::Idle
    }

    /// Moves up to `max` messages (at least one when any is queued),
    /// waiting per `idle` while empty and open.
    pub(super) fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        let max = max.max(1);
        let mut polls = Polls::new(idle);
        loop {
            let st = self.state.lock();
            if st.len() > 0 {
                return Drained::Got(self.take(st, out, max));
            }
            if st.closed {
                return Drained::Closed;
            }
            drop(st);
            // Poll without the lock until something is queued (or the
            // queue closed); sleep, under the lock, once the budget is
            // spent.
            if !polls.until(|| self.hint.load(Ordering::Relaxed) != 0) {
                drop(park::sleep(|| self.sleep(self.state.lock())));
            }
        }
    }

    fn sleep<'a>(&'a self, mut st: MutexGuard<'a, State<T>>) -> MutexGuard<'a, State<T>> {
        while st.len() == 0 && !st.closed {
            // Set again after every wake-up: the push that woke us
            // cleared it.
            st.sleeping = true;
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
        self.take(self.state.lock(), out, max)
    }

    /// Moves up to `max` messages into `out` and releases the lock.
    ///
    /// When `max` covers the whole queue, all of it in the ring, and more
    /// than a few messages, the consumer swaps its spare ring in instead
    /// of copying (once the spare exists: see `spare`): producers wait for
    /// a swap of two `VecDeque`s rather than for a copy of the whole
    /// batch, and the copy happens after the lock is released. Both rings
    /// keep at least `capacity` slots, so the swap allocates nothing.
    fn take(&self, mut st: MutexGuard<'_, State<T>>, out: &mut Vec<T>, max: usize) -> usize {
        let len = st.ring.len();
        if st.capacity == 0 && out.is_empty() && (1..=max).contains(&st.overflow.len()) {
            // Nothing up front (`capacity` 0): every message is in
            // the overflow, and all of them fit. Trade buffers instead of
            // moving messages: the consumer's empty one (possibly none)
            // becomes the overflow. Both conversions are O(1) here and
            // allocate nothing; the second moves messages (outside the
            // lock) only if the overflow had wrapped.
            let n = st.overflow.len();
            let mine = VecDeque::from(std::mem::take(out));
            let theirs = std::mem::replace(&mut st.overflow, mine);
            self.publish(&st);
            drop(st);
            *out = Vec::from(theirs);
            return n;
        }
        if let Some(spare) = self
            .spare
            .get()
            .filter(|_| len > FEW && len <= max && st.overflow.is_empty())
        {
            let mut spare = spare.lock();
            debug_assert!(spare.is_empty(), "the spare is emptied after every swap");
            if spare.capacity() >= st.capacity as usize {
                std::mem::swap(&mut st.ring, &mut *spare);
                self.publish(&st);
                drop(st);
                out.extend(spare.drain(..));
                return len;
            }
        }
        let spilled = !st.overflow.is_empty();
        let capacity = st.capacity as usize;
        let n = st.drain(out, max);
        if n > 0 {
            self.publish(&st);
        }
        drop(st);
        if spilled && capacity > 0 {
            // The spare ring is allocated when the queue first spills,
            // alongside the overflow: a mailbox that stays shallow never
            // pays for it, and a later burst no larger than the first
            // allocates nothing (the allocation test's contract).
            let mut spare = self
                .spare
                .get_or_init(|| Box::new(Mutex::new(VecDeque::new())))
                .lock();
            if spare.capacity() < capacity {
                spare.reserve_exact(capacity);
            }
        }
        n
    }

    pub(super) fn close(&self) {
        let mut st = self.state.lock();
        st.closed = true;
        self.publish(&st);
        let wake = std::mem::take(&mut st.sleeping);
        drop(st);
        if wake {
            self.wakeups.fetch_add(1, Ordering::Relaxed);
            if let Some(task) = self.task.get() {
                // Taken under the lock: only this close schedules it.
                task.schedule();
                return;
            }
        }
        // Unconditionally: a no-op without waiters, and `close` is rare.
        self.nonempty.notify_all();
    }

    pub(super) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// A snapshot, read without the lock.
    pub(super) fn len(&self) -> usize {
        self.hint.load(Ordering::Relaxed) >> 1
    }

    pub(super) fn wakeups(&self) -> u64 {
        self.wakeups.load(Ordering::Relaxed)
    }

    /// Whether the consumer is asleep on the condition variable.
    #[cfg(test)]
    pub(super) fn consumer_asleep(&self) -> bool {
        self.state.lock().sleeping
    }
}

#[cfg(test)]
mod tests;
