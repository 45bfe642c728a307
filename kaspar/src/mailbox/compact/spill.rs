//! The compact queue's consumer-side backlog: when a drain finds more
//! queued than it may take, it takes all of them at once, by trading the
//! queue's buffer for the spill's (empty) one under the lock, and hands
//! them out from here on later drains without the lock.
//!
//! Why: moving `max` messages out of a deep queue under the lock held the
//! producers off for the whole copy, and a queue that kept growing behind
//! a busy consumer reallocated under the lock as well. With the spill, a
//! deep drain holds the lock for a swap of two buffers, and the two trade
//! places from one deep drain to the next, so a steady stream reuses them.
//! This is the note's drain-side batching: the consumer pays for a batch,
//! not for each message, and never in the producers' critical section.
//!
//! The spill ([`Backlog`]: the deque traded in, and the same messages as
//! a stack while they are handed out) is boxed, made by the first deep
//! drain of a busy period and freed with its buffer when the consumer
//! goes idle: inline, its 56 bytes would stay in every idle actor's cell
//! (the deque alone, 32, did before it was boxed). That first deep drain
//! finds no box and does not make one under the lock: it moves its `max`
//! messages out the old way and makes the box after releasing the lock,
//! so the next deep drain trades into it.
//!
//! Invariants (each `unsafe` block names the one it relies on):
//! * **C4 (one drain at a time).** `spill` is touched only by the holder of
//!   `CONSUMING` in `drain`, taken with an `Acquire` compare-and-swap and
//!   released with a `Release` store. A mailbox has one consumer, so the
//!   compare-and-swap never waits in practice; it is there so that safe
//!   code draining one queue from two threads stays sound.
//! * **C5 (the spill is older).** Messages enter the spill only from the
//!   whole queue, and only while the spill is empty; a drain hands out the
//!   spill before it looks at the queue. So the consumer sees each
//!   producer's messages in push order. The releasing store publishes the
//!   spill's length (`drain >> SPILL_SHIFT`) and whether it has its box
//!   (`ROOM`), which the drain reads without the token to skip the spill
//!   when it is empty (its own last store, so never stale for the one
//!   consumer) and `len` adds to the queue's.

use std::collections::VecDeque;
use std::mem;

use super::CompactMpsc;
use crate::base::sync::Ordering;

/// The spill's storage, boxed, while the consumer is busy.
pub(super) type Room<T> = Option<Box<Backlog<T>>>;

/// The spilled messages. A deep drain trades the queue's whole deque for
/// `deque` (then empty) under the lock; the first drain to hand them out
/// turns that deque into `stack`, newest first (the same buffer: free
/// unless the deque had wrapped, then one pass to reverse it, without the
/// lock), and each drain pops its share off the stack's end. Taking the
/// oldest `max` off a `Vec`'s end is a tight copy where `VecDeque::drain`
/// moved message by message (about 40 instructions each). The emptied
/// buffer goes back to `deque`, for the next deep drain to trade into the
/// queue: the two buffers keep trading as before.
pub(super) struct Backlog<T> {
    /// Traded in by a deep drain, oldest first; else empty, holding the
    /// buffer the next deep drain trades out.
    deque: VecDeque<T>,
    /// What is being handed out, newest first.
    stack: Vec<T>,
}

impl<T> Default for Backlog<T> {
    fn default() -> Self {
        Backlog {
            deque: VecDeque::new(),
            stack: Vec::new(),
        }
    }
}

impl<T> Backlog<T> {
    /// Messages spilled and not yet handed out.
    pub(super) fn len(&self) -> usize {
        self.deque.len() + self.stack.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.deque.is_empty() && self.stack.is_empty()
    }

    /// The traded-in side (tests of the trade).
    #[cfg(test)]
    pub(super) fn deque_mut(&mut self) -> &mut VecDeque<T> {
        &mut self.deque
    }

    /// Moves the oldest `max` messages (or fewer, all there are) into
    /// `out`, oldest first.
    pub(super) fn take(&mut self, out: &mut Vec<T>, max: usize) -> usize {
        if self.stack.is_empty() {
            if self.deque.is_empty() {
                return 0;
            }
            self.stack = Vec::from(mem::take(&mut self.deque));
            self.stack.reverse();
        }
        let n = self.stack.len().min(max);
        let from = self.stack.len() - n;
        out.extend(self.stack.drain(from..).rev());
        if self.stack.is_empty() {
            self.deque = VecDeque::from(mem::take(&mut self.stack));
        }
        n
    }
}

/// A drain holds the spill (C4).
pub(super) const CONSUMING: usize = 1;
/// The spill has its box (its deque, empty or not): going idle frees it.
pub(super) const ROOM: usize = 2;
/// `drain >> SPILL_SHIFT` is the spill's length as of the last release.
pub(super) const SPILL_SHIFT: u32 = 2;

/// The spill, held: releases `CONSUMING` when dropped (even by a panic),
/// publishing its length in the same store.
pub(super) struct Spill<'a, T> {
    q: &'a CompactMpsc<T>,
}

impl<T> CompactMpsc<T> {
    /// Takes the spill if no other drain holds it, without waiting.
    #[inline]
    pub(super) fn try_spill(&self) -> Option<Spill<'_, T>> {
        let d = self.drain.load(Ordering::Relaxed);
        if d & CONSUMING != 0 {
            return None;
        }
        self.drain
            .compare_exchange(d, d | CONSUMING, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        // Made only once the token is ours: dropping a `Spill` releases
        // it (as `Held` is made only once the lock is).
        Some(Spill { q: self })
    }

    /// Messages in the spill, as of the last drain's release (C5).
    #[inline(always)]
    pub(super) fn spilled(&self) -> usize {
        self.drain.load(Ordering::Relaxed) >> SPILL_SHIFT
    }

    /// Whether the spill has its box, as of the last drain's release.
    #[inline(always)]
    pub(super) fn spill_has_room(&self) -> bool {
        self.drain.load(Ordering::Relaxed) & ROOM != 0
    }

    /// Hands out up to `max` spilled messages into `out`, if the spill has
    /// any and no other drain holds it (C4, C5).
    #[inline(always)]
    pub(super) fn take_spilled(&self, out: &mut Vec<T>, max: usize) -> usize {
        if self.spilled() == 0 {
            return 0;
        }
        self.take_spilled_slow(out, max)
    }

    /// [`take_spilled`](Self::take_spilled) with a spill to hand out: out
    /// of line, so that a drain with none pays a load and a branch.
    #[cold]
    #[inline(never)]
    fn take_spilled_slow(&self, out: &mut Vec<T>, max: usize) -> usize {
        match self.try_spill() {
            Some(mut spill) => spill.take(out, max),
            None => 0,
        }
    }

    /// Frees the spill's box and buffer if the spill is empty and no other
    /// drain holds it: a consumer going idle keeps no spill.
    #[cold]
    #[inline(never)]
    pub(super) fn free_spill_room(&self) {
        let room = self.try_spill().map(|mut spill| spill.give_up_room());
        // Freed with the token released.
        drop(room);
    }
}

impl<T> Spill<'_, T> {
    #[inline(always)]
    pub(super) fn with<R>(&mut self, f: impl FnOnce(&mut Room<T>) -> R) -> R {
        // SAFETY: C4: we hold `CONSUMING` until `drop`, and `&mut self`
        // keeps this the only borrow of the spill meanwhile.
        self.q.spill.with_mut(|p| f(unsafe { &mut *p }))
    }

    /// Moves up to `max` messages from the front of the spill into `out`.
    pub(super) fn take(&mut self, out: &mut Vec<T>, max: usize) -> usize {
        self.with(|s| s.as_deref_mut().map_or(0, |s| s.take(out, max)))
    }

    /// Trades the whole of `queue` (held under the queue's lock) for the
    /// spill's empty buffer, and publishes the new length at once, so that
    /// `len` never misses the messages in between. Hands `queue` back
    /// untouched if the spill has no box yet (the caller makes one once
    /// the lock is released) or is not empty (only when two threads drain).
    pub(super) fn fill(&mut self, queue: &mut VecDeque<T>) -> bool {
        let n = self.with(|s| {
            let s = s.as_deref_mut()?;
            if !s.is_empty() {
                return None;
            }
            mem::swap(&mut s.deque, queue);
            Some(s.deque.len())
        });
        let Some(n) = n else {
            return false;
        };
        self.q
            .drain
            .store((n << SPILL_SHIFT) | ROOM | CONSUMING, Ordering::Relaxed);
        true
    }

    /// Whether the spill has its box.
    pub(super) fn has_room(&mut self) -> bool {
        self.with(|s| s.is_some())
    }

    /// Gives the spill its box, empty, for the next deep drain to trade
    /// into. Called without the queue's lock: this allocates.
    pub(super) fn make_room(&mut self) {
        self.with(|s| {
            if s.is_none() {
                *s = Some(Box::default());
            }
        });
    }

    /// Takes the spill's box out if the spill is empty (none otherwise),
    /// to be freed by the caller.
    pub(super) fn give_up_room(&mut self) -> Room<T> {
        self.with(|s| {
            if s.as_deref().is_some_and(Backlog::is_empty) {
                s.take()
            } else {
                None
            }
        })
    }
}

impl<T> Drop for Spill<'_, T> {
    #[inline]
    fn drop(&mut self) {
        let (len, room) = self.with(|s| s.as_deref().map_or((0, false), |s| (s.len(), true)));
        // Release: what we did to the spill happens-before the next
        // holder's Acquire (C4).
        self.q.drain.store(
            (len << SPILL_SHIFT) | if room { ROOM } else { 0 },
            Ordering::Release,
        );
    }
}
