//! `CompactMpsc`: the pooled default. An unbounded queue that holds no
//! room until messages arrive, behind a spin lock folded into the word
//! that also carries its length and its flags.
//!
//! Why not `BQueueBatched` with no ring, which it replaces as the pooled
//! default: that queue's mutex costs a push two read-modify-writes (the
//! lock's compare-and-swap and the unlock's), and carries a ring, a spare
//! ring and a condition variable a pooled actor never uses. Here a push is
//! one compare-and-swap (taking the lock) and one store (releasing it and
//! publishing the new length at once), the shape of a lock-free queue's
//! push; and the whole queue is a word, a `VecDeque`, the wake-up and the
//! consumer's spill, that last half at least a cache line from the
//! producers' (128 bytes, where that queue is 144).
//!
//! Algorithm. `word` is `len << SHIFT | LANE | CLOSED | SLEEPING | LOCKED`.
//! Whoever holds the lock (a producer pushing, the consumer draining or
//! going idle, `close`) took it with a compare-and-swap from a value
//! without `LOCKED`, and releases it with one store of the queue's new
//! length and the flags it decided. Waiters spin, then yield; nobody
//! parks on the lock. Most critical sections are a few dozen instructions
//! (a push, or a swap of two buffers); a push that grows the buffer
//! takes longer, and so does a drain that finds a deep queue while it
//! cannot spill it (below: another drain holds the spill, or the batch it
//! fills is not empty), which moves up to its batch under the lock.
//!
//! Invariants (each `unsafe` block names the one it relies on):
//! * **C1 (exclusive queue).** `queue` is touched only by the holder of
//!   `LOCKED`: the compare-and-swap that sets it is `Acquire`, the store
//!   that clears it `Release`, so each holder sees everything the one
//!   before it did.
//! * **C2 (flags under the lock).** `SLEEPING` and `CLOSED` change only in
//!   the releasing store, so "the consumer went idle on an empty queue"
//!   and "a producer pushed" are ordered by the lock: the consumer sets
//!   `SLEEPING` only while holding it on an empty, open queue, and the
//!   push that next takes the lock is the one that clears it and wakes
//!   (or schedules) the consumer, exactly once per sleep. A push that
//!   finds it clear makes no wake-up call.
//! * **C3 (length).** The length bits are the queue's length as of the
//!   last release, so a polling consumer and `len` read it without the
//!   lock (a snapshot; the decision to sleep is made under the lock).
//!
//! Draining trades buffers, as the no-ring `BQueueBatched` did: a drain
//! that takes the whole queue into an empty batch swaps the two buffers
//! (O(1), nothing moved under the lock), and a consumer going idle with
//! no buffer in the queue hands its emptied batch back. So an idle actor
//! whose messages come one activation at a time holds one small buffer;
//! a burst's room past `KEEP_IDLE` slots is freed when it goes idle. The
//! pooled actor's own drain ([`poll`](CompactMpsc::poll)) goes one step
//! further for such an actor: a lone message, with a batch that has no
//! room, is popped under the lock and served alone, and the buffer stays
//! in the queue, where the trade would have moved it out and back.
//!
//! A drain that finds more queued than it may take (a stream, or a burst)
//! takes the whole queue anyway, into the consumer's `spill`, and hands it
//! out from there without the lock (the `spill` module, C4 and C5). The
//! spill is boxed and made by the busy period's first deep drain; it is
//! freed, buffer and box, when the consumer goes idle.
//!
//! A pooled consumer answering asks one at a time, each handed over from
//! another core, inflates the queue into a lane of its own, a segmented
//! queue whose consumer writes nothing its producers read next (the
//! `lane` module, C6). From then on every push and drain goes to the lane,
//! and the word, set to `LANE`, is only read.

use std::collections::VecDeque;
use std::mem;

mod lane;
mod spill;

pub(crate) use lane::{INFLATE_AFTER, STREAM_AFTER};

use super::park::{self, Polls, Wake};
use super::segmented::SegmentedMpsc;
use super::{Drained, IdleWait, Polled};
use crate::base::backoff::Backoff;
use crate::base::prefetch;
use crate::base::sync::{thread, AtomicPtr, AtomicUsize, Ordering, UnsafeCell};
use crate::error::SendError;

/// Someone holds the lock (C1).
const LOCKED: usize = 1;
/// The consumer is asleep (a thread) or idle (pooled): the next push wakes
/// or schedules it (C2).
const SLEEPING: usize = 2;
/// `close` was called: no push succeeds any more.
const CLOSED: usize = 4;
/// The queue has inflated: every push goes to its lane (C6, the `lane`
/// module).
const LANE: usize = 8;
/// The flags a holder carries through its critical section.
const FLAGS: usize = SLEEPING | CLOSED | LANE;
/// `word >> SHIFT` is the queue's length (C3).
const SHIFT: u32 = 4;

/// Up to this many messages, a drain that cannot swap pops them one by
/// one; past it, the deque's bulk move (see `blocking`'s `FEW`).
const FEW: usize = 16;

/// Slots a queue keeps while its consumer is idle; a burst's room past
/// them is freed as it goes idle.
const KEEP_IDLE: usize = 8;

/// An unbounded queue behind a one-word spin lock: one compare-and-swap and
/// one store per push; no memory until messages arrive.
///
/// In two halves, in this order (hence `repr(C)`): what every push touches
/// (the word and the queue), then what only the consumer touches (its
/// drain token and spill), at least a cache line after the first half's
/// last byte, wherever the queue is placed. Side by side, as the compiler
/// had laid them out, the consumer wrote the producers' line on every
/// batch it handed out of the spill. The wake-up, touched only at a sleep
/// and the wake that ends it, sits between them, and a little padding
/// makes up the line.
#[repr(C)]
pub struct CompactMpsc<T> {
    /// `len << SHIFT | LANE | CLOSED | SLEEPING | LOCKED`.
    word: AtomicUsize,
    /// Only the holder of `LOCKED` touches it (C1).
    queue: UnsafeCell<VecDeque<T>>,
    /// The lane, once the queue has inflated (C6); null until then.
    lane: AtomicPtr<SegmentedMpsc<T>>,
    pub(super) wake: Wake,
    _apart: [Gap; APART],
    /// `spilled << SPILL_SHIFT | ROOM | CONSUMING` (the `spill` module).
    drain: AtomicUsize,
    /// Messages a deep drain took from the queue and has yet to hand out,
    /// boxed while the consumer is busy (the `spill` module); only the
    /// holder of `CONSUMING` touches it (C4).
    spill: UnsafeCell<spill::Room<T>>,
}

/// Padding after the wake-up, so that the consumer's first byte is at
/// least 64 bytes after the producers' last: no 64-byte line holds both.
const APART: usize = 63usize
    .saturating_sub(std::mem::size_of::<Wake>())
    .next_multiple_of(8);

/// A byte of that padding: one valid value, so the padding is a niche in
/// which the enums around the queue (`Mailbox`, the cell's `Inbox`) keep
/// their tag, where a `u8` would leave them a word of their own. A test
/// checks that they do.
#[derive(Clone, Copy)]
#[repr(u8)]
enum Gap {
    Zero = 0,
}

#[cfg(not(loom))]
const _: () = {
    use std::mem::{offset_of, size_of};
    type Q = CompactMpsc<u64>;
    let producers_end = offset_of!(Q, lane) + size_of::<usize>();
    assert!(offset_of!(Q, word) < offset_of!(Q, queue));
    assert!(offset_of!(Q, queue) < offset_of!(Q, lane));
    assert!(offset_of!(Q, drain) >= producers_end - 1 + 64);
    assert!(offset_of!(Q, spill) > offset_of!(Q, drain));
};

// SAFETY: the queue owns its messages and moves them from producer threads
// to the consumer, never handing out `&T`; its one piece of shared mutable
// state, `queue` and `spill`, is touched only under the lock (C1) or the
// drain's token (C4). So `T: Send` is all sending and sharing it need.
unsafe impl<T: Send> Send for CompactMpsc<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for CompactMpsc<T> {}

impl<T> std::fmt::Debug for CompactMpsc<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompactMpsc")
            .field("len", &self.len())
            .field("closed", &self.is_closed())
            .field("consumer", &self.wake.task)
            .finish()
    }
}

/// The lock, held: releases it when dropped (even by a panic), publishing
/// the queue's length and `flags` in one store.
struct Held<'a, T> {
    q: &'a CompactMpsc<T>,
    /// What the release publishes: `SLEEPING` and `CLOSED` (C2).
    flags: usize,
}

impl<T> Held<'_, T> {
    #[inline(always)]
    fn queue<R>(&mut self, f: impl FnOnce(&mut VecDeque<T>) -> R) -> R {
        // SAFETY: C1: we hold `LOCKED` until `drop`, and `&mut self`
        // keeps this the only borrow of the queue meanwhile.
        self.q.queue.with_mut(|p| f(unsafe { &mut *p }))
    }
}

impl<T> Drop for Held<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        let len = self.queue(|q| q.len());
        // Release: what we did to the queue happens-before the next
        // holder's Acquire (C1).
        self.q
            .word
            .store((len << SHIFT) | self.flags, Ordering::Release);
    }
}

impl<T> Default for CompactMpsc<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> CompactMpsc<T> {
    /// An empty, open queue; nothing is allocated until the first push.
    pub fn new() -> Self {
        CompactMpsc {
            word: AtomicUsize::new(0),
            queue: UnsafeCell::new(VecDeque::new()),
            lane: AtomicPtr::new(std::ptr::null_mut()),
            drain: AtomicUsize::new(0),
            spill: UnsafeCell::new(None),
            wake: Wake::default(),
            _apart: [Gap::Zero; APART],
        }
    }

    /// The address one past the producers' half, and the address of the
    /// consumer's half (for the cell's layout test).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn halves(&self) -> (usize, usize) {
        let lane = &self.lane as *const _ as usize;
        (
            lane + std::mem::size_of_val(&self.lane),
            &self.drain as *const _ as usize,
        )
    }

    /// Takes the lock.
    #[inline(always)]
    fn lock(&self) -> Held<'_, T> {
        match self.try_lock_from(self.word.load(Ordering::Relaxed), LOCKED) {
            Some(held) => held,
            None => match self.lock_contended(LOCKED) {
                Ok(held) => held,
                Err(_) => unreachable!("only a push is sent to the lane"),
            },
        }
    }

    /// Takes the lock if the word is still `w` and `w` has none of `busy`
    /// (`LOCKED`, and for a push `LANE`).
    #[inline(always)]
    fn try_lock_from(&self, w: usize, busy: usize) -> Option<Held<'_, T>> {
        if w & busy == 0
            && self
                .word
                .compare_exchange_weak(w, w | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            // Made only once the lock is ours: dropping a `Held` releases
            // the lock.
            Some(Held {
                q: self,
                flags: w & FLAGS,
            })
        } else {
            None
        }
    }

    /// [`lock`](Self::lock) when another thread holds it: spin, then yield.
    /// The holder is a few dozen instructions from done unless it was
    /// preempted. Then a yield may let it run again, but need not: on a
    /// loaded machine the waiters keep yielding where a mutex's would
    /// sleep. (The pool's slow Savina chameneos on the dev VM was not
    /// this, but cross-core cost: see the pool's `steal_cost`.)
    ///
    /// With `LANE` in `busy` (a push), returns the lane instead once the
    /// queue has inflated.
    #[cold]
    #[inline(never)]
    fn lock_contended(&self, busy: usize) -> Result<Held<'_, T>, &SegmentedMpsc<T>> {
        let mut backoff = Backoff::new();
        loop {
            let w = self.word.load(Ordering::Relaxed);
            if let Some(held) = self.try_lock_from(w, busy) {
                return Ok(held);
            }
            // A push that finds the queue inflated goes to the lane (C6).
            // Read again with Acquire, the bit proves the pointer stored:
            // the store that set it, or a later holder's, which acquired
            // it, released it.
            if w & busy & LANE != 0 && self.word.load(Ordering::Acquire) & LANE != 0 {
                return Err(self.lane().expect("stored before LANE (C6)"));
            }
            if w & LOCKED == 0 {
                // Unlocked, but the word moved under us: retry at once.
                continue;
            }
            // Under loom, a yield every time: a spin that does not yield
            // is a branch loom explores at every step.
            if cfg!(loom) || !backoff.snooze() {
                thread::yield_now();
            }
        }
    }

    /// Appends `msg`; returns the length after the push, the spill's
    /// included (as [`len`](Self::len) counts it). Never full: hands the
    /// message back only once closed.
    ///
    /// Inlined into the sender by `always`, not left to the hint: as
    /// `#[inline]` the compiler came to call it from a `send` loop, and an
    /// inflated queue's push was then two calls a message (this one, and
    /// `lock_contended`, where the lane was found): 16 ns a message in
    /// the peers' pooled tell where it takes 12 now (the median of the
    /// 2-core VM's near mood). The lane is tested first, on the word's one
    /// load.
    #[inline(always)]
    pub fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        let w = self.word.load(Ordering::Relaxed);
        if w & LANE != 0 {
            // Inflated (C6): straight to the lane. A null pointer here
            // (the bit read, Relaxed, before the pointer's store was
            // seen) goes the long way: `lock_contended` reads the bit
            // again with Acquire, which proves the pointer stored.
            if let Some(lane) = self.lane() {
                return self.push_to_lane(lane, msg);
            }
        }
        let mut held = match self.try_lock_from(w, LOCKED | LANE) {
            Some(held) => held,
            None => match self.lock_contended(LOCKED | LANE) {
                Ok(held) => held,
                Err(lane) => return self.push_to_lane(lane, msg),
            },
        };
        if held.flags & CLOSED != 0 {
            return Err(SendError::closed(msg));
        }
        // This push ends the consumer's sleep (C2): only it wakes it.
        let asleep = held.flags & SLEEPING != 0;
        held.flags &= !SLEEPING;
        let len = held.queue(|q| {
            if q.capacity() == 0 {
                // One slot, not the deque's four: an actor that gets a
                // message at a time keeps this one between activations
                // (the buffer trade), and a burst grows it as usual.
                q.reserve_exact(1);
            }
            q.push_back(msg);
            prefetch_ahead(q);
            q.len()
        });
        drop(held);
        if asleep {
            self.wake.wake();
        }
        // With the spill's (C5): what the consumer took from the queue and
        // has yet to hand out is still queued, as `len` counts it, and the
        // actor's high-water mark is read from this.
        Ok(len + self.spilled())
    }

    /// The pooled consumer's drain: moves up to `max` messages without
    /// waiting; with none, reports the queue closed and drained, or goes
    /// idle: sets `SLEEPING` under the lock, so the push that makes the
    /// queue non-empty (or `close`) takes it and schedules the consumer,
    /// exactly once (C2).
    pub(crate) fn poll_batch(&self, out: &mut Vec<T>, max: usize) -> Polled {
        match self.poll_with(out, max, false) {
            Ok(msg) => {
                // Not reached: asked for batches only.
                out.push(msg);
                Polled::Got(1)
            }
            Err(polled) => polled,
        }
    }

    /// [`poll_batch`](Self::poll_batch), except that a lone queued message
    /// comes back as itself (`Ok`) when `out` is empty and has no room:
    /// the steady state of an actor that gets a message at a time, whose
    /// one buffer is the queue's (the trade, below). It is popped under
    /// the lock and the buffer stays where it is, where the trade would
    /// have moved it to the batch and back (two conversions between
    /// `VecDeque` and `Vec`, about fifty instructions).
    #[inline]
    // With `tracing`, the loops drain through `trace::Consumer`, which
    // always batches.
    #[cfg_attr(feature = "tracing", allow(dead_code))]
    pub(crate) fn poll(&self, out: &mut Vec<T>, max: usize) -> Result<T, Polled> {
        self.poll_with(out, max, true)
    }

    /// [`poll`](Self::poll), taking a lone message as itself only if
    /// `lone`.
    #[inline(always)]
    fn poll_with(&self, out: &mut Vec<T>, max: usize, lone: bool) -> Result<T, Polled> {
        // The spill first: handing it out reads only the consumer's line,
        // and an inflated queue's spill is empty (C6).
        let n = self.take_spilled(out, max.max(1));
        if n > 0 {
            return Err(Polled::Got(n));
        }
        if let Some(lane) = self.lane() {
            return Err(lane.poll_batch(out, max));
        }
        let mut held = self.lock();
        debug_assert!(
            held.flags & SLEEPING == 0,
            "a pooled consumer runs only while awake"
        );
        let len = held.queue(|q| q.len());
        if lone && len == 1 && out.capacity() == 0 {
            if let Some(msg) = held.queue(VecDeque::pop_front) {
                return Ok(msg);
            }
        }
        if len > 0 {
            return Err(Polled::Got(take(held, out, max.max(1))));
        }
        Err(self.go_idle(held, out))
    }

    /// `poll`'s end on an empty queue: closed and drained, or idle.
    fn go_idle(&self, mut held: Held<'_, T>, out: &mut Vec<T>) -> Polled {
        if held.flags & CLOSED != 0 {
            return Polled::Closed;
        }
        held.flags |= SLEEPING;
        let burst = held.queue(|q| {
            // A burst's room goes (freed outside the lock); then the
            // batch's buffer comes back if the queue has none: an idle
            // actor holds one small buffer, not two. Both O(1).
            let burst = (q.capacity() > KEEP_IDLE).then(|| mem::take(q));
            if q.capacity() == 0 && out.is_empty() && (1..=KEEP_IDLE).contains(&out.capacity()) {
                let none = mem::replace(q, VecDeque::from(mem::take(out)));
                // Unallocated and empty: nothing to drop.
                debug_assert!(none.capacity() == 0 && none.is_empty());
                mem::forget(none);
            }
            burst
        });
        drop(held);
        drop(burst);
        // The spill is empty (C5: handed out first); its buffer goes too.
        // Under the spill's token, not the lock: a push may have scheduled
        // the consumer again already, and the spill is its to fill.
        if self.spill_has_room() {
            self.free_spill_room();
        }
        Polled::Idle
    }

    /// Moves up to `max` messages into `out` (at least one when any is
    /// queued), waiting per `idle` while empty and open.
    pub fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        let max = max.max(1);
        let mut polls = Polls::new(idle);
        loop {
            let n = self.take_spilled(out, max);
            if n > 0 {
                return Drained::Got(n);
            }
            // After the spill, as in `poll_with`.
            if let Some(lane) = self.lane() {
                return lane.pop_batch(out, max, idle);
            }
            {
                let mut held = self.lock();
                if held.queue(|q| !q.is_empty()) {
                    return Drained::Got(take(held, out, max));
                }
                if held.flags & CLOSED != 0 {
                    return Drained::Closed;
                }
            }
            // Poll the word without the lock: a length or `CLOSED` (C3).
            if polls.until(|| self.word.load(Ordering::Relaxed) & !(LOCKED | SLEEPING) != 0) {
                continue;
            }
            let mut held = self.lock();
            if held.queue(|q| q.is_empty()) && held.flags & CLOSED == 0 {
                held.flags |= SLEEPING;
                drop(held);
                // The push that clears `SLEEPING` leaves a token (C2): a
                // park after it returns at once.
                park::sleep(|| self.wake.parker.park());
            }
        }
    }

    /// Moves up to `max` messages into `out` without waiting.
    pub fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        if max == 0 {
            return 0;
        }
        let n = self.take_spilled(out, max);
        if n > 0 {
            return n;
        }
        if let Some(lane) = self.lane() {
            return lane.try_pop_batch(out, max);
        }
        let mut held = self.lock();
        if held.queue(|q| q.is_empty()) {
            return 0;
        }
        take(held, out, max)
    }

    /// Refuses further pushes and wakes (or schedules) the consumer if it
    /// sleeps. Messages already accepted stay and are still popped.
    pub fn close(&self) {
        let mut held = self.lock();
        let asleep = held.flags & SLEEPING != 0;
        held.flags = (held.flags | CLOSED) & !SLEEPING;
        drop(held);
        // An inflated queue's consumer sleeps on the lane, never on the
        // word (C6): at most one of the two finds it asleep.
        let lane_asleep = self.lane().is_some_and(SegmentedMpsc::close_quiet);
        if asleep || lane_asleep {
            self.wake.wake();
        }
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.word.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Messages queued, the spill's included (a snapshot, read without
    /// the lock: C3, C5).
    pub fn len(&self) -> usize {
        if let Some(lane) = self.lane() {
            return lane.len();
        }
        (self.word.load(Ordering::Relaxed) >> SHIFT) + self.spilled()
    }

    /// Whether nothing is queued (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Times a push (or `close`) found the consumer asleep (or idle) and
    /// woke (or scheduled) it.
    pub fn wakeups(&self) -> u64 {
        self.wake.wakes()
    }

    /// Whether the consumer is asleep (or idle): the next push wakes it.
    #[cfg(test)]
    pub(super) fn consumer_asleep(&self) -> bool {
        match self.lane() {
            Some(lane) => lane.consumer_asleep(),
            None => self.word.load(Ordering::Acquire) & SLEEPING != 0,
        }
    }

    /// The capacity of the buffer the queue holds now (tests of the trade).
    #[cfg(test)]
    fn room(&self) -> usize {
        self.lock().queue(|q| q.capacity())
    }

    /// Where the buffer the queue holds now starts, if it holds one of a
    /// slot (tests of the lone path).
    #[cfg(test)]
    fn slot_buffer(&self) -> Option<usize> {
        self.lock().queue(|q| {
            (q.capacity() == 1).then(|| {
                let (front, back) = q.as_slices();
                debug_assert!(back.is_empty());
                front.as_ptr() as usize
            })
        })
    }
}

/// Moves up to `max` messages (at least one is queued) into `out` and
/// releases the lock.
///
/// When all of them fit and `out` is empty, the two trade buffers instead:
/// `out`'s (possibly none) becomes the queue's, and the queue's becomes
/// `out`, after the lock is released. Both conversions are O(1) here; the
/// second moves messages (outside the lock) only if the deque had wrapped.
/// When more are queued than fit, the queue's buffer trades with the
/// spill's instead, and the first `max` are handed out of the spill after
/// the lock is released (C5); if the spill has no box yet, the first `max`
/// move under the lock and the box is made after it.
#[inline]
fn take<T>(mut held: Held<'_, T>, out: &mut Vec<T>, max: usize) -> usize {
    let len = held.queue(|q| q.len());
    if out.is_empty() && len <= max {
        let mine = VecDeque::from(mem::take(out));
        let theirs = held.queue(|q| mem::replace(q, mine));
        drop(held);
        let n = theirs.len();
        *out = Vec::from(theirs);
        return n;
    }
    if len > max {
        if let Some(mut spill) = held.q.try_spill() {
            if held.queue(|q| spill.fill(q)) {
                drop(held);
                return spill.take(out, max);
            }
            if !spill.has_room() {
                // The busy period's first deep drain: `max` the old way,
                // and the spill's box made with the lock released.
                let n = held.queue(|q| move_front(q, out, max));
                drop(held);
                spill.make_room();
                return n;
            }
        }
    }
    let n = held.queue(|q| move_front(q, out, max));
    drop(held);
    n
}

/// After a push into `q`: asks for the line a later push writes (in a
/// stream, the consumer has just read that buffer: the [`prefetch`]
/// module's docs).
#[inline(always)]
fn prefetch_ahead<T>(q: &VecDeque<T>) {
    if let Some(at) = line_ahead(q) {
        prefetch::line_for_write(at);
    }
}

/// The address [`prefetch::AHEAD`] bytes past the end of `q`'s last slot,
/// when the buffer has room for the slots up to it. A small buffer (an
/// actor that gets a message at a time) has no such room: nothing is
/// fetched for it. Should the room wrap to the buffer's start, the address
/// lies past its end, and the fetch is wasted, nothing more.
#[inline(always)]
fn line_ahead<T>(q: &VecDeque<T>) -> Option<*const u8> {
    let size = mem::size_of::<T>();
    if size == 0 || q.len() + prefetch::AHEAD / size >= q.capacity() {
        return None;
    }
    let last = (q.back()? as *const T).cast::<u8>();
    Some(last.wrapping_add(size + prefetch::AHEAD))
}

/// Moves up to `max` messages from the front of `q` into `out`: one by
/// one up to `FEW`, past it the deque's bulk move.
#[inline]
fn move_front<T>(q: &mut VecDeque<T>, out: &mut Vec<T>, max: usize) -> usize {
    let n = q.len().min(max);
    if n <= FEW {
        out.extend((0..n).map_while(|_| q.pop_front()));
    } else {
        out.extend(q.drain(..n));
    }
    n
}

#[cfg(test)]
mod tests;
