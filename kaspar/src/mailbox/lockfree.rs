//! `LockFreeMpsc`: a bounded ring after Dmitry Vyukov's bounded MPMC queue
//! (1024cores.net, "Bounded MPMC queue"), specialised to one consumer.
//!
//! Algorithm. `cap` slots (a power of two, at least 2), each holding a
//! sequence number `seq` and room for one message. Positions count up
//! forever; position `p` lives in slot `p % cap`.
//!
//! * A producer reads `tail` (the next position to fill), checks that slot's
//!   `seq == p` (the slot is free for lap `p / cap`), and reserves `p` with
//!   one compare-and-swap `tail: p -> p + 1`. It then writes the message and
//!   publishes it with `seq = p + 1`. If `seq < p` the slot still holds the
//!   message from one lap ago: the ring is full.
//! * The consumer, at `head = h`, takes slot `h % cap` when `seq == h + 1`,
//!   reads the message out, and frees the slot for the next lap with
//!   `seq = h + cap`. It takes as many consecutive published slots as `max`
//!   allows.
//!
//! The `tail` word also carries two flags in its low bits: `SLEEPING` (the
//! consumer is parked or about to park) and `CLOSED`. Because every
//! reservation is a compare-and-swap on that same word, a producer learns
//! that the consumer sleeps from the very operation that reserves its slot,
//! and the reservation clears the bit: exactly one producer unparks the
//! consumer, after publishing. Closing sets `CLOSED` in the word, so a
//! reservation can never slip past a close.
//!
//! Invariants (each `unsafe` block below names the one it relies on):
//! * **S1 (exclusive write).** Only the producer whose CAS moved `tail` from
//!   `p` writes slot `p % cap` for lap `p / cap`, and it does so only after
//!   seeing `seq == p`, i.e. after the consumer freed the slot (or it was
//!   never used). Positions are unique, so no two producers write one slot.
//! * **S2 (initialised read).** The consumer reads a slot only when
//!   `seq == h + 1`, which the producer stores with `Release` after its write
//!   completes; the consumer's `Acquire` load makes the write visible.
//! * **S3 (single consumer).** `head` and every read of a slot's value are
//!   done only while holding the `consuming` flag, so two threads calling
//!   the consumer methods at once cannot both read one message.
//! * **S4 (each message dropped once).** A message is moved out by the
//!   consumer (which then frees the slot), or by `Drop`, which walks the
//!   published slots from `head`; never both.
//! * **S5 (one position space).** Positions, and every `seq` and `head`
//!   derived from them, live modulo `2^(usize::BITS - 2)` (the room left in
//!   `tail` beside its two flags): all arithmetic on them is masked with
//!   `POS_MASK`, and "behind" is read as a signed distance in that space.
//!   The space is a multiple of `cap`, so a position's slot is the same
//!   before and after a wrap. A wrap comes after 2^30 pushes on a 32-bit
//!   target (seconds of traffic) and 2^62 on a 64-bit one; both are
//!   ordinary operation, tested by starting a ring just before the wrap.
//!
//! A reserved slot is not yet visible until its producer publishes it. A
//! consumer that finds the next slot reserved but unpublished yields until
//! it is, which is the one place this queue is not lock-free: a producer
//! descheduled between its CAS and its publish delays the consumer (never
//! other producers).

use std::mem::MaybeUninit;

use crossbeam_utils::CachePadded;

use super::park::{self, Polls, Wake};
use super::{Drained, IdleWait, Polled, WhenFull};
use crate::base::sync::{AtomicBool, AtomicUsize, Condvar, Mutex, Ordering, UnsafeCell};
use crate::error::SendError;
use crate::guard::deadlock::RECHECK;
use crate::mailbox::Watch;

/// The consumer is parked, or about to park.
const SLEEPING: usize = 1;
/// `close` was called; no reservation succeeds any more.
const CLOSED: usize = 2;
/// `tail >> SHIFT` is the next position to fill.
const SHIFT: u32 = 2;
/// Positions wrap at `POS_MASK + 1` (invariant S5).
const POS_MASK: usize = usize::MAX >> SHIFT;

/// `a + b` in position space (S5).
#[inline(always)]
fn pos_add(a: usize, b: usize) -> usize {
    a.wrapping_add(b) & POS_MASK
}

/// `a - b` in position space (S5), in `0..=POS_MASK`.
#[inline(always)]
fn pos_sub(a: usize, b: usize) -> usize {
    a.wrapping_sub(b) & POS_MASK
}

/// How many times a producer retries a full ring, yielding between tries,
/// before it sleeps until the consumer frees space (`WhenFull::Wait`).
const FULL_RETRIES: u32 = 16;

struct Slot<T> {
    /// `p`: free for position `p`. `p + 1`: holds the message of position
    /// `p`. Only the producer that reserved `p` moves it from `p` to `p + 1`;
    /// only the consumer moves it from `p + 1` to `p + cap`.
    seq: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

/// The consumer's side, on its own cache line.
struct Consumer {
    /// The next position to take. Written only by the holder of `consuming`;
    /// read by anyone for `len`.
    head: AtomicUsize,
    /// Held while a thread runs the consumer side (invariant S3).
    consuming: AtomicBool,
}

/// A bounded lock-free ring: one compare-and-swap reserves a slot; the
/// consumer drains published slots without any lock.
pub struct LockFreeMpsc<T> {
    /// Bits 0–1: `SLEEPING`, `CLOSED`. Bits 2..: the next position to fill.
    tail: CachePadded<AtomicUsize>,
    consumer: CachePadded<Consumer>,
    slots: Box<[Slot<T>]>,
    mask: usize,
    pub(super) wake: Wake,
    when_full: WhenFull,
    /// Producers asleep (or about to sleep) on `space` (`WhenFull::Wait`).
    space_waiters: AtomicUsize,
    space_lock: Mutex<()>,
    space: Condvar,
}

// SAFETY: the queue owns its messages and moves them from a producer thread
// to the consumer thread; it never hands out `&T`. So sending and sharing
// the queue need only `T: Send`. Concurrent access to slot values is ruled
// out by invariants S1–S3.
unsafe impl<T: Send> Send for LockFreeMpsc<T> {}
// SAFETY: as for `Send`: shared access only moves `T` values across threads.
unsafe impl<T: Send> Sync for LockFreeMpsc<T> {}

impl<T> std::fmt::Debug for LockFreeMpsc<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockFreeMpsc")
            .field("capacity", &self.capacity())
            .field("len", &self.len())
            .field("closed", &self.is_closed())
            .field("when_full", &self.when_full)
            .finish()
    }
}

/// Releases the consumer side when a drain ends, even by a panic.
struct ConsumerGuard<'a>(&'a AtomicBool);

impl Drop for ConsumerGuard<'_> {
    fn drop(&mut self) {
        // Release: our `head` update and slot reads happen-before the next
        // consumer's acquire of the flag.
        self.0.store(false, Ordering::Release);
    }
}

impl<T> LockFreeMpsc<T> {
    /// A ring of `capacity` slots (rounded up to a power of two, at least
    /// 2), allocated here and never again.
    pub fn new(capacity: usize, when_full: WhenFull) -> Self {
        Self::starting_at(0, capacity, when_full)
    }

    /// A ring whose first position is `start` (tests start just before the
    /// position space wraps, S5).
    fn starting_at(start: usize, capacity: usize, when_full: WhenFull) -> Self {
        let cap = capacity.max(2).next_power_of_two();
        let start = start & POS_MASK;
        LockFreeMpsc {
            tail: CachePadded::new(AtomicUsize::new(start << SHIFT)),
            consumer: CachePadded::new(Consumer {
                head: AtomicUsize::new(start),
                consuming: AtomicBool::new(false),
            }),
            // Slot `i` is first used by the position in `start..start + cap`
            // that it holds; it is free for exactly that position.
            slots: (0..cap)
                .map(|i| Slot {
                    seq: AtomicUsize::new(pos_add(start, pos_sub(i, start) & (cap - 1))),
                    value: UnsafeCell::new(MaybeUninit::uninit()),
                })
                .collect(),
            mask: cap - 1,
            wake: Wake::default(),
            when_full,
            space_waiters: AtomicUsize::new(0),
            space_lock: Mutex::new(()),
            space: Condvar::new(),
        }
    }

    /// Slots in the ring: the most messages it holds at once.
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// Appends `msg`. When the ring is full, hands it back as
    /// [`SendError::Full`] or waits for room, as the queue was configured.
    /// Returns the length after the push (an upper bound).
    #[inline]
    pub fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        self.push_watched(msg, &|| Ok(None))
    }

    /// [`push`](Self::push), calling `watch` once before a wait for room
    /// would block: the actor layer's deadlock check.
    #[inline]
    pub(crate) fn push_watched(&self, msg: T, watch: Watch<'_>) -> Result<usize, SendError<T>> {
        match self.try_push(msg) {
            Err(SendError::Full { msg, .. }) if self.when_full == WhenFull::Wait => {
                self.push_waiting(msg, watch)
            }
            other => other,
        }
    }

    /// Appends `msg` or hands it back at once if the ring is full.
    pub fn try_push(&self, msg: T) -> Result<usize, SendError<T>> {
        let mut t = self.tail.load(Ordering::Relaxed);
        loop {
            if t & CLOSED != 0 {
                return Err(SendError::closed(msg));
            }
            let pos = t >> SHIFT;
            let slot = &self.slots[pos & self.mask];
            // Acquire pairs with the consumer's Release when it freed the
            // slot: its read of the old message happens-before our write.
            let seq = slot.seq.load(Ordering::Acquire);
            // Signed distance in position space (S5): `seq` behind `pos`
            // is a slot still full from the last lap.
            let lag = (pos_sub(seq, pos) << SHIFT) as isize;
            if lag == 0 {
                let next = pos_add(pos, 1) << SHIFT;
                // The new word drops `SLEEPING`: if it was set, this
                // reservation takes the duty to unpark. AcqRel orders the
                // reservation against the consumer's `SLEEPING` update on
                // this same word.
                match self
                    .tail
                    .compare_exchange_weak(t, next, Ordering::AcqRel, Ordering::Relaxed)
                {
                    Ok(_) => {
                        slot.value.with_mut(|p| {
                            // SAFETY: S1. Our CAS reserved position `pos`
                            // and we saw `seq == pos`, so the consumer is
                            // done with this slot and no other producer can
                            // hold `pos`: we are its only accessor.
                            unsafe { (*p).write(msg) };
                        });
                        // Release publishes the write (S2).
                        slot.seq.store(pos_add(pos, 1), Ordering::Release);
                        if t & SLEEPING != 0 {
                            self.wake.wake();
                        }
                        let head = self.consumer.head.load(Ordering::Relaxed);
                        return Ok(pos_sub(pos_add(pos, 1), head).min(self.capacity()));
                    }
                    Err(actual) => t = actual,
                }
            } else if lag < 0 {
                // The slot still holds the message from one lap ago. Full,
                // unless `tail` moved while we looked.
                let now = self.tail.load(Ordering::Relaxed);
                if now & !SLEEPING == t & !SLEEPING {
                    return Err(SendError::full(msg));
                }
                t = now;
            } else {
                // Another producer reserved `pos` after we read `tail`.
                t = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Whether a push now would not find the ring full: the slot at the
    /// tail is free (or another producer has just taken it, and the tail
    /// moved on), or the queue is closed (the push is refused at once).
    fn room_or_closed(&self) -> bool {
        let t = self.tail.load(Ordering::Acquire);
        if t & CLOSED != 0 {
            return true;
        }
        let pos = t >> SHIFT;
        let seq = self.slots[pos & self.mask].seq.load(Ordering::Acquire);
        (pos_sub(seq, pos) << SHIFT) as isize >= 0
    }

    /// The `WhenFull::Wait` slow path: retry, then sleep until the consumer
    /// frees space or the queue closes.
    #[cold]
    fn push_waiting(&self, mut msg: T, watch: Watch<'_>) -> Result<usize, SendError<T>> {
        let mut registered = None;
        loop {
            for _ in 0..FULL_RETRIES {
                crate::base::sync::thread::yield_now();
                match self.try_push(msg) {
                    Err(SendError::Full { msg: m, .. }) => msg = m,
                    other => return other,
                }
            }
            if registered.is_none() {
                // A pooled consumer that only this thread may be able to
                // run now (a hosted pool's, `Schedule::help_blocked`):
                // run it here until there is room, then retry.
                if self
                    .wake
                    .task
                    .get()
                    .is_some_and(|t| t.help_blocked(&|| self.room_or_closed(), None))
                {
                    continue;
                }
                // About to sleep: first make sure the consumer is not
                // (transitively) waiting for this thread.
                match watch() {
                    Ok(r) => registered = Some(r),
                    Err(cycle) => {
                        return Err(SendError::Deadlock {
                            target: None,
                            msg,
                            cycle,
                        })
                    }
                }
                continue;
            }
            let guard = self.space_lock.lock();
            // A read-modify-write, so that either the consumer's
            // read-modify-write in `freed_space` sees us, or we see the slot
            // it freed before it (see `freed_space`).
            self.space_waiters.fetch_add(1, Ordering::AcqRel);
            match self.try_push(msg) {
                Err(SendError::Full { msg: m, .. }) => {
                    msg = m;
                    // Bounded, so a cycle closed later by a waiter that
                    // cannot back out is found (the recheck below).
                    drop(self.space.wait_timeout(guard, RECHECK));
                    self.space_waiters.fetch_sub(1, Ordering::AcqRel);
                    if let Some(Some(r)) = &registered {
                        if let Err(cycle) = r.recheck() {
                            return Err(SendError::Deadlock {
                                target: None,
                                msg,
                                cycle,
                            });
                        }
                    }
                }
                other => {
                    self.space_waiters.fetch_sub(1, Ordering::AcqRel);
                    return other;
                }
            }
        }
    }

    /// Called by the consumer after it freed slots: wakes producers waiting
    /// for space.
    #[inline]
    fn freed_space(&self) {
        if self.when_full != WhenFull::Wait {
            return;
        }
        // A read-modify-write (not a load) so it is ordered with a waiter's
        // increment: if it comes first, the waiter's increment acquires it
        // and the waiter's retry sees the freed slot.
        if self.space_waiters.fetch_add(0, Ordering::AcqRel) > 0 {
            let _guard = self.space_lock.lock();
            self.space.notify_all();
        }
    }

    /// Moves up to `max` messages into `out` (at least one when any is
    /// published), waiting per `idle` while empty and open.
    pub fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        let max = max.max(1);
        let mut polls = Polls::new(idle);
        loop {
            let n = self.try_pop_batch(out, max);
            if n > 0 {
                return Drained::Got(n);
            }
            let t = self.tail.load(Ordering::Acquire);
            let head = self.consumer.head.load(Ordering::Relaxed);
            if t >> SHIFT != head {
                // Reserved but not yet published: its producer finishes
                // without our help; let it run.
                crate::base::sync::thread::yield_now();
                continue;
            }
            if t & CLOSED != 0 {
                // Closed and nothing reserved: nothing more can arrive.
                return Drained::Closed;
            }
            // Poll `tail` (the word every reservation moves), not the
            // consumer flag and the slot, until it moves or closes, or the
            // budget is spent.
            if polls.until(|| self.tail.load(Ordering::Relaxed) & !SLEEPING != t & !SLEEPING) {
                continue;
            }
            // The CAS of any later reservation will see this bit.
            let prev = self.tail.fetch_or(SLEEPING, Ordering::AcqRel);
            if prev >> SHIFT != head || prev & CLOSED != 0 {
                self.tail.fetch_and(!SLEEPING, Ordering::AcqRel);
                continue;
            }
            park::sleep(|| self.wake.parker.park());
        }
    }

    /// The pooled consumer's drain: moves up to `max` published messages
    /// into `out` without waiting; with none, reports the queue closed and
    /// drained, goes idle, or reports `Busy` while a reservation is being
    /// written. Going idle is a compare-and-swap from the `tail` the drain
    /// found empty, so it fails if any reservation came since (see
    /// `park`'s module docs).
    pub(crate) fn poll_batch(&self, out: &mut Vec<T>, max: usize) -> Polled {
        let n = self.try_pop_batch(out, max.max(1));
        if n > 0 {
            return Polled::Got(n);
        }
        let t = self.tail.load(Ordering::Acquire);
        debug_assert!(t & SLEEPING == 0, "a pooled consumer runs only while awake");
        if t >> SHIFT != self.consumer.head.load(Ordering::Relaxed) {
            return Polled::Busy;
        }
        if t & CLOSED != 0 {
            return Polled::Closed;
        }
        // AcqRel: the next reservation's CAS reads this bit.
        match self
            .tail
            .compare_exchange(t, t | SLEEPING, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Polled::Idle,
            Err(_) => Polled::Busy,
        }
    }

    /// Moves up to `max` published messages into `out` without waiting.
    pub fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        let consumer = &self.consumer;
        while consumer
            .consuming
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Another thread is draining: not how a mailbox is used, but
            // it must stay sound (S3), so wait for it.
            crate::base::sync::thread::yield_now();
        }
        let _guard = ConsumerGuard(&consumer.consuming);
        let mut head = consumer.head.load(Ordering::Relaxed);
        let mut taken = 0;
        while taken < max {
            let slot = &self.slots[head & self.mask];
            // Acquire pairs with the producer's publishing Release (S2).
            if slot.seq.load(Ordering::Acquire) != pos_add(head, 1) {
                break;
            }
            let msg = slot.value.with(|p| {
                // SAFETY: S2 and S3. `seq == head + 1` was stored with
                // Release after the message was written, so it is
                // initialised and visible; we hold `consuming`, so no other
                // thread reads it; and the slot is not freed (producers
                // cannot write it) until the store below.
                unsafe { (*p).assume_init_read() }
            });
            // Release: our read of the message happens-before the next
            // lap's producer writes this slot (S1).
            slot.seq
                .store(pos_add(head, self.capacity()), Ordering::Release);
            head = pos_add(head, 1);
            taken += 1;
            out.push(msg);
        }
        // Once per batch: producers read `head` for the length they
        // report, so a store per message would bounce its line per message.
        consumer.head.store(head, Ordering::Relaxed);
        drop(_guard);
        if taken > 0 {
            self.freed_space();
        }
        taken
    }

    /// Refuses further pushes, wakes the consumer and any producer waiting
    /// for space.
    pub fn close(&self) {
        // `CLOSED` in, `SLEEPING` out, in one step: only the close that
        // finds the consumer asleep wakes it.
        let prev = self
            .tail
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                Some((t | CLOSED) & !SLEEPING)
            })
            .unwrap_or_else(|t| t);
        if prev & SLEEPING != 0 {
            self.wake.wake();
        }
        let _guard = self.space_lock.lock();
        self.space.notify_all();
    }

    /// Whether the queue is closed.
    pub fn is_closed(&self) -> bool {
        self.tail.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Reserved messages not yet taken (a snapshot).
    pub fn len(&self) -> usize {
        let tail = self.tail.load(Ordering::Acquire) >> SHIFT;
        let head = self.consumer.head.load(Ordering::Acquire);
        pos_sub(tail, head).min(self.capacity())
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
        self.tail.load(Ordering::Acquire) & SLEEPING != 0
    }
}

impl<T> Drop for LockFreeMpsc<T> {
    fn drop(&mut self) {
        // `&mut self`: every producer has finished, so every reserved slot
        // is published, and nobody else touches the ring.
        let mut head = self.consumer.head.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[head & self.mask];
            if slot.seq.load(Ordering::Relaxed) != pos_add(head, 1) {
                break;
            }
            slot.value.with_mut(|p| {
                // SAFETY: S2 and S4. `seq == head + 1` means the slot holds
                // an initialised message that the consumer has not taken
                // (taking it would have moved `seq` to `head + cap`); we have
                // exclusive access, and each position is visited once.
                unsafe { (*p).assume_init_drop() }
            });
            head = pos_add(head, 1);
        }
    }
}

#[cfg(feature = "sim")]
impl<T> LockFreeMpsc<T> {
    /// What a push to the full ring does.
    pub(crate) fn when_full(&self) -> WhenFull {
        self.when_full
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::sync::Arc;
    use std::sync::atomic::AtomicUsize as StdAtomicUsize;

    #[test]
    fn fifo_and_full_hands_back() {
        let q = LockFreeMpsc::new(3, WhenFull::Reject);
        assert_eq!(q.capacity(), 4);
        for i in 0..4 {
            assert_eq!(q.push(i), Ok(i + 1));
        }
        assert_eq!(q.push(9), Err(SendError::full(9)));
        let mut out = Vec::new();
        assert_eq!(q.try_pop_batch(&mut out, 3), 3);
        for i in 4..7 {
            q.push(i).unwrap();
        }
        assert_eq!(q.pop_batch(&mut out, 16, IdleWait::Park), Drained::Got(4));
        assert_eq!(out, (0..7).collect::<Vec<_>>());
        assert!(q.is_empty());
    }

    #[test]
    fn wraps_many_laps() {
        let q = LockFreeMpsc::new(2, WhenFull::Reject);
        let mut out = Vec::new();
        let laps = if cfg!(miri) { 20 } else { 10_000 };
        for i in 0..laps {
            q.push(2 * i).unwrap();
            q.push(2 * i + 1).unwrap();
            assert_eq!(q.try_pop_batch(&mut out, 2), 2);
        }
        assert_eq!(out, (0..2 * laps).collect::<Vec<_>>());
    }

    /// S5: positions wrap at `POS_MASK + 1` (2^30 pushes on a 32-bit
    /// target); `head` and every `seq` must wrap with `tail`, or the
    /// consumer waits for a `seq` that never comes.
    #[test]
    fn positions_wrap_with_tail_head_and_seq_together() {
        for start in [POS_MASK - 5, POS_MASK - 1, POS_MASK] {
            let q = LockFreeMpsc::starting_at(start, 4, WhenFull::Reject);
            let mut out = Vec::new();
            let mut next = 0;
            for round in 0..12 {
                // Fill the ring across the wrap point, then drain part of it.
                while q.len() < 4 {
                    q.push(next).unwrap();
                    next += 1;
                }
                assert_eq!(q.push(usize::MAX), Err(SendError::full(usize::MAX)));
                let took = q.try_pop_batch(&mut out, 1 + round % 4);
                assert_eq!(took, 1 + round % 4, "start {start}, round {round}");
                assert_eq!(q.len(), 4 - took);
            }
            q.try_pop_batch(&mut out, 4);
            assert_eq!(out, (0..next).collect::<Vec<_>>(), "start {start}");
            // Drop walks what is left across the wrap (S4).
            q.push(1).unwrap();
            q.push(2).unwrap();
        }
    }

    #[test]
    fn closed_hands_back_and_drains() {
        let q = LockFreeMpsc::new(4, WhenFull::Reject);
        q.push(1).unwrap();
        q.close();
        assert!(q.is_closed());
        assert_eq!(q.push(2), Err(SendError::closed(2)));
        let mut out = Vec::new();
        assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Got(1));
        assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Closed);
        assert_eq!(out, vec![1]);
    }

    struct Counted(Arc<StdAtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn drop_frees_queued_messages_once() {
        let drops = Arc::new(StdAtomicUsize::new(0));
        let q = LockFreeMpsc::new(8, WhenFull::Reject);
        for _ in 0..6 {
            q.push(Counted(Arc::clone(&drops))).unwrap();
        }
        let mut out = Vec::new();
        q.try_pop_batch(&mut out, 2);
        drop(out);
        assert_eq!(drops.load(std::sync::atomic::Ordering::Relaxed), 2);
        drop(q);
        assert_eq!(drops.load(std::sync::atomic::Ordering::Relaxed), 6);
    }

    #[test]
    fn producers_and_sleeping_consumer() {
        let q = Arc::new(LockFreeMpsc::new(4, WhenFull::Wait));
        let per = if cfg!(miri) { 30 } else { 20_000 };
        let producers: Vec<_> = (0..3)
            .map(|p| {
                let q = Arc::clone(&q);
                std::thread::spawn(move || {
                    for i in 0..per {
                        q.push((p, i)).unwrap();
                    }
                })
            })
            .collect();
        let consumer = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || {
                let mut out = Vec::new();
                while let Drained::Got(_) = q.pop_batch(&mut out, 3, IdleWait::Park) {}
                out
            })
        };
        for p in producers {
            p.join().unwrap();
        }
        q.close();
        let out = consumer.join().unwrap();
        assert_eq!(out.len(), 3 * per);
        for p in 0..3 {
            let seen: Vec<_> = out.iter().filter(|m| m.0 == p).map(|m| m.1).collect();
            assert_eq!(seen, (0..per).collect::<Vec<_>>());
        }
    }
}
