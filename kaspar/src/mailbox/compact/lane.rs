//! The compact queue's lane: a [`SegmentedMpsc`] the queue inflates into
//! when its pooled consumer answers a stream of lone asks from another
//! core, or keeps up with a stream of messages.
//!
//! Why: the compact queue's lock lives in the word that every push and
//! every drain writes. While messages come one at a time from a thread on
//! another core that waits for each reply (an `ask` loop), each
//! hand-off moves that line to the producer and back, and the buffer's
//! line after it: a round trip through two compact queues took 1.8 to 2.2
//! times as long as through two segmented ones (the mailbox table's
//! `handoff_rt_p50_ns`). A segmented queue's consumer writes nothing its
//! producers read next, but it holds a block of 31 slots from its first
//! message: about 1.5 KiB an idle actor would keep, against the compact
//! queue's few slots. So the queue starts compact and inflates, as a thin
//! lock inflates to a monitor when it is contended: the actors asked in
//! a stream pay for the lane, the million idle ones do not.
//!
//! Inflation is for good. A lane is freed with the queue, not when its
//! consumer goes idle: freeing it while a producer may still be inside it
//! would need every push to announce itself on a shared line, the cost the
//! lane is there to avoid. What a backlog grew it by is given back, though:
//! its pooled consumer trims the spare blocks each time it goes idle
//! (`SegmentedMpsc::trim`). The pooled activation inflates its queue after
//! answering [`INFLATE_AFTER`] lone asks in a row, or once it has served
//! [`STREAM_AFTER`] messages in batches and drained the queue
//! (`delivery::sched::actor`).
//!
//! Invariant:
//! * **C6 (one way in).** `lane` is stored once, by a holder of the lock,
//!   while the spill is empty and the queue is open, after that holder
//!   (the consumer) has taken whatever the queue held, to serve before it
//!   polls again; the same holder's releasing store sets `LANE`, and
//!   neither changes again until `Drop` frees the lane. A push takes the
//!   lock only from a word without `LANE` (the bit is tested with
//!   `LOCKED`), so no push enters `queue` after that release, and
//!   everything accepted after it is in the lane, in each producer's
//!   order; everything before it was drained (taken by the consumer under
//!   that same hold, if not before). The consumer, for its part, goes to
//!   the lane whenever there is one, after its spill (empty from the
//!   switch on, and read first because handing it out touches only the
//!   consumer's line). The lane's consumer is this queue's: a push or
//!   `close` that finds it asleep on the lane (it never sleeps on the word
//!   again) calls this queue's wake-up, the lane's own is unused.

use std::mem;

use super::{move_front, CompactMpsc, SegmentedMpsc, CLOSED, LANE, SLEEPING};
use crate::base::sync::Ordering;
use crate::error::SendError;

/// Asks a pooled activation answers in a row, each a lone message, before
/// it inflates its actor's compact queue: askers that hand their messages
/// over one at a time and wait for each reply, so that each hand-off's
/// latency is theirs to pay. A lone tell does not count, nor does a
/// message-at-a-time actor that goes idle between messages (the count is
/// an activation's), nor two pooled actors playing ping-pong through the
/// next-to-run slot.
pub(crate) const INFLATE_AFTER: u32 = 32;

/// Messages a pooled activation serves in batches of more than one (a
/// producer running ahead of it) before it inflates its actor's compact
/// queue at the next poll that drains it: a stream the consumer keeps up
/// with. Caught up, the consumer would take the lock every few messages,
/// on the line every push takes it on, and the two cores trade that line
/// (and the buffer's) for each handful of messages: 24-27 ns a message
/// on the 2-core AMD VM where a segmented queue took 10-12 (the peers
/// table's pooled tell). A consumer behind its producer (a busy pool, its
/// budget spent and not renewed) starts the count again with each
/// activation and stays compact: its drains are deep, and the spill
/// takes a whole queue at a lock. A burst of fewer than this many in one
/// busy period never inflates, so an actor that gets the odd burst keeps
/// the compact queue's few slots.
pub(crate) const STREAM_AFTER: usize = 16_384;

impl<T> CompactMpsc<T> {
    /// The lane, once the queue has inflated (C6).
    #[inline(always)]
    pub(in crate::mailbox) fn lane(&self) -> Option<&SegmentedMpsc<T>> {
        // Acquire: the lane's construction, before its pointer's Release.
        let p = self.lane.load(Ordering::Acquire);
        // SAFETY: C6: non-null only once made by `inflate`'s
        // `Box::into_raw`, and freed only by `Drop`, which has `&mut self`.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// A push to an inflated queue: to the lane, waking the consumer
    /// through this queue's wake-up if the lane found it idle (C6).
    ///
    /// Inlined into the sender, as the uninflated push is (`Mailbox::push`
    /// says why): called, it cost a stream into an inflated queue 17-19 ns
    /// a message where a `Segmented` mailbox took 10-12; inlined, 12-15.
    #[inline(always)]
    pub(super) fn push_to_lane(
        &self,
        lane: &SegmentedMpsc<T>,
        msg: T,
    ) -> Result<usize, SendError<T>> {
        let (len, asleep) = lane.push_quiet(msg)?;
        if asleep {
            self.wake.wake();
        }
        Ok(len)
    }

    /// Inflates the queue: from now on every push goes to a lane, a
    /// segmented queue of its own (module docs). Called by the pooled
    /// consumer between two drains; returns whether it inflated. It does
    /// not when the consumer is a thread (whose sleep the lane would not
    /// know), when the queue is closed or inflated already, or when a
    /// message is queued (a push got in since the consumer's last drain:
    /// it tries again later).
    pub(crate) fn inflate(&self) -> bool {
        self.inflate_into(&mut Vec::new(), 0).is_some()
    }

    /// [`inflate`](Self::inflate), taking up to `max` messages still queued
    /// into `out` on the way: the pooled consumer's drain and switch in one
    /// hold of the lock, for a stream whose producer has pushed again by
    /// the time its consumer tries (with `max` 0, a queued message
    /// refuses, as for `inflate`). Returns how many it took, or `None` if
    /// it did not inflate: as `inflate`, and when the spill is not empty
    /// or more than `max` are queued. The caller is the consumer and
    /// serves `out` before it polls again, so what was queued before the
    /// switch is served before anything the lane takes (C6).
    pub(crate) fn inflate_into(&self, out: &mut Vec<T>, max: usize) -> Option<usize> {
        // Refused before the lane is made where the word already tells.
        if self.wake.task.get().is_none() || self.lane().is_some() || self.len() > max {
            return None;
        }
        // Made before the lock is taken: an allocation of about 2 KiB.
        let lane = Box::new(SegmentedMpsc::new(0));
        let mut held = self.lock();
        let queued = held.queue(|q| q.len());
        if held.flags & (CLOSED | LANE) != 0 || queued > max || self.spilled() != 0 {
            drop(held);
            drop(lane);
            return None;
        }
        debug_assert!(
            held.flags & SLEEPING == 0,
            "inflated by its running consumer"
        );
        held.queue(|q| move_front(q, out, queued));
        // Release, and the lock's releasing store after it (C6).
        self.lane.store(Box::into_raw(lane), Ordering::Release);
        held.flags |= LANE;
        // The queue's kept buffer has no use any more.
        let buffer = held.queue(mem::take);
        drop(held);
        drop(buffer);
        // Empty (checked above); only its box is left to free.
        if self.spill_has_room() {
            self.free_spill_room();
        }
        Some(queued)
    }
}

impl<T> Drop for CompactMpsc<T> {
    fn drop(&mut self) {
        let p = self.lane.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: C6: made by `Box::into_raw` in `inflate`, freed only
            // here, once; `&mut self` means nobody else holds it.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}
