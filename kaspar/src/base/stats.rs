//! Per-actor metrics.
//!
//! Counters updated while the actor's lock is held (`handled`,
//! `void_inline`, in [`LockedCounters`]) are written with a plain load +
//! store, not an atomic read-modify-write: only the lock holder writes
//! them. Counters of refusals and fallbacks ([`Rare`], in
//! [`SharedCounters`]) are off the fast path, written by any thread with
//! `fetch_add`, and made when an actor on a thread of its own or in a
//! group starts (so that no send to it allocates later) or, for a pooled
//! actor, on its first refusal; beside them, the mailbox's high-water mark
//! is read by every push.
//!
//! The two groups are not padded to cache lines of their own (that made
//! every actor cell 384 bytes of counters, aligned to 128). Instead the
//! actor cell places them apart: the lock holder's counters beside the
//! state the holder writes anyway, the shared ones beside the mailbox that
//! senders write anyway, and at least 64 bytes of fields that are written
//! rarely between the two (`ActorCell`'s layout), so that a handled
//! message does not take the line a sender reads the high-water mark from.

use std::sync::Arc;

use once_cell::race::OnceBox;

use crate::base::latency::Latencies;
use crate::base::sync::{AtomicU64, Ordering::Relaxed};

/// A snapshot of one actor's counters, from [`Addr::stats`](crate::Addr::stats).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
#[non_exhaustive]
pub struct ActorStats {
    /// The instance name given at spawn ([`Spawn::name`](crate::Spawn::name);
    /// a group member's is its group's), if any.
    pub name: Option<Arc<str>>,
    /// Handlers entered, in every mode (each runs to completion or
    /// panics). Counted as the handler starts, so a caller that has seen a
    /// reply also sees its message counted.
    pub handled: u64,
    /// `fast_send_void` calls that ran inline.
    pub void_inline: u64,
    /// `fast_send_void` calls that fell back to the mailbox (the paper's
    /// contention signal).
    pub void_queued: u64,
    /// `fast_send_x` calls refused because the lock was held.
    pub busy: u64,
    /// Synchronous deliveries refused as call-chain cycles.
    pub cycles: u64,
    /// Synchronous deliveries, and sends waiting for room, refused as
    /// cross-thread deadlocks.
    pub deadlocks: u64,
    /// Handler panics caught.
    pub panics: u64,
    /// The most messages ever queued in the mailbox at once, as its pushes
    /// saw it: exact for every kind but `Segmented`, whose lock-free push
    /// reads the consumer's position only once per block, so its mark may
    /// be up to one block (31 messages) above the true peak.
    pub mailbox_high_water: u64,
    /// Messages for this actor that went to dead letters: panicked,
    /// queued when supervision stopped it or a shutdown gave up on it, and
    /// `request` replies or notifications it could not accept.
    pub dead_letters: u64,
    /// Supervised restarts of the actor's state.
    pub restarts: u64,
    /// Whether the actor's mailbox, a pooled actor's compact queue, has
    /// inflated into its lane: asked one message at a time in a tight loop
    /// from another thread, or keeping up with a stream of more than
    /// 16,384 messages, the actor took a segmented queue of its own (about
    /// 2 KiB, kept while the actor lives; what a backlog grows it by is
    /// given back each time the actor goes idle, but for one spare block;
    /// the guide's pool chapter says when and why).
    pub mailbox_lane: bool,
}

/// Written only under the actor's lock.
#[derive(Debug, Default)]
pub(crate) struct LockedCounters {
    handled: AtomicU64,
    void_inline: AtomicU64,
}

impl LockedCounters {
    /// Caller holds the actor's lock.
    #[inline(always)]
    pub(crate) fn handled(&self) {
        self.handled
            .store(self.handled.load(Relaxed).wrapping_add(1), Relaxed);
    }

    /// Caller holds the actor's lock.
    #[inline(always)]
    pub(crate) fn void_inline(&self) {
        self.void_inline
            .store(self.void_inline.load(Relaxed).wrapping_add(1), Relaxed);
    }
}

/// Written by any thread, off the fast path. The high-water mark first:
/// it is read by every push, and sits next to the mailbox in the cell.
/// The refusal counters are boxed: most actors never see a refusal, and
/// inline they were 56 bytes of zeros in every actor. A pooled actor makes
/// them on its first refusal; any other actor, when it starts.
#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct SharedCounters {
    pub(crate) mailbox_high_water: AtomicU64,
    rare: OnceBox<[AtomicU64; Rare::COUNT]>,
}

/// A counter of refusals and fallbacks, in [`SharedCounters`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rare {
    /// `fast_send_void` fell back to the mailbox.
    VoidQueued,
    /// A `fast_send_x` was refused: the lock was held.
    Busy,
    /// A synchronous delivery was refused as a call-chain cycle.
    Cycles,
    /// A delivery, or a wait for room, was refused as a deadlock.
    Deadlocks,
    /// A handler panicked.
    Panics,
    /// A message for the actor went to dead letters.
    DeadLetters,
    /// A supervised restart.
    Restarts,
}

impl Rare {
    const COUNT: usize = Rare::Restarts as usize + 1;
}

impl SharedCounters {
    /// Counts one; the first count of any kind makes the counters.
    #[inline]
    pub(crate) fn bump(&self, counter: Rare) {
        match self.rare.get() {
            Some(rare) => {
                rare[counter as usize].fetch_add(1, Relaxed);
            }
            None => self.bump_first(counter),
        }
    }

    /// [`bump`](Self::bump) before the counters exist: out of line, so
    /// that the paths `bump` is inlined into stay as small as they were
    /// with the counters inline (inlined whole, `get_or_init` cost the
    /// intra-group `fast_send` three instructions, by callgrind).
    #[cold]
    #[inline(never)]
    fn bump_first(&self, counter: Rare) {
        self.rare.get_or_init(Default::default)[counter as usize].fetch_add(1, Relaxed);
    }

    /// Makes the counters now, for an actor whose sends must not allocate
    /// after it starts: one on a thread of its own or in a group (where 56
    /// bytes are nothing beside a thread), whose first refusal may come
    /// long after any warm-up. A pooled actor makes them on first use.
    pub(crate) fn make_rare(&self) {
        self.rare.get_or_init(Default::default);
    }

    /// A count so far.
    pub(crate) fn get(&self, counter: Rare) -> u64 {
        self.rare
            .get()
            .map_or(0, |rare| rare[counter as usize].load(Relaxed))
    }

    /// Records a mailbox length seen by a push.
    #[inline]
    pub(crate) fn saw_len(&self, len: usize) {
        let len = len as u64;
        if len > self.mailbox_high_water.load(Relaxed) {
            self.mailbox_high_water.fetch_max(len, Relaxed);
        }
    }
}

/// The counters any thread writes, and the handler service times. The lock
/// holder's counters ([`LockedCounters`]) live apart, in the cell.
#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct Stats {
    pub(crate) shared: SharedCounters,
    /// Handler service times per class, once the actor was spawned with
    /// `record_latency(true)`. Set once by the spawner, which may be after
    /// the address is out (`System::prepare`), hence set-once. Boxed:
    /// most actors never time their handlers, and a `OnceBox` is one
    /// pointer where a `OnceLock<Box<_>>` is two words.
    pub(crate) latency: OnceBox<Latencies>,
}

impl Stats {
    pub(crate) fn snapshot(&self, locked: &LockedCounters) -> ActorStats {
        let s = &self.shared;
        ActorStats {
            name: None,
            handled: locked.handled.load(Relaxed),
            void_inline: locked.void_inline.load(Relaxed),
            void_queued: s.get(Rare::VoidQueued),
            busy: s.get(Rare::Busy),
            cycles: s.get(Rare::Cycles),
            deadlocks: s.get(Rare::Deadlocks),
            panics: s.get(Rare::Panics),
            mailbox_high_water: s.mailbox_high_water.load(Relaxed),
            dead_letters: s.get(Rare::DeadLetters),
            restarts: s.get(Rare::Restarts),
            // Known to the mailbox, not here (`Addr::stats`).
            mailbox_lane: false,
        }
    }
}
