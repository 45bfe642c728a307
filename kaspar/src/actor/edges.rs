//! Who sends to whom (feature `console`): per target actor, a fixed table
//! of (sender, count) pairs, and per thread, the actor whose handler runs
//! on it now (the sender of whatever that handler sends).
//!
//! # The table
//!
//! [`SLOTS`] slots of two atomics each, `sender` and `count`, inside the
//! target's cell, and one `overflow` counter. A send by actor `s` scans the
//! slots in order: the slot whose `sender` is `s` is bumped; the first
//! empty one ([`EMPTY`]) is claimed for `s` by one compare-and-swap, then
//! bumped; a send from a new sender once every slot is taken bumps
//! `overflow`. Nothing is allocated, locked or freed, so a send pays a few
//! loads and one relaxed `fetch_add` on a line other senders to the same
//! target also write (the one shared write of this feature).
//!
//! Invariants: a slot's `sender` goes from `EMPTY` to one sender once and
//! never changes again, and its `count` grows only by senders that read
//! that sender there first. So a count belongs to the sender its slot
//! shows, and a reader pairs them by reading the two words (relaxed: a
//! count read a moment late is a count of the next read). A slot is never
//! given back: a target whose senders come and go (short-lived workers)
//! fills its table, and the rest land in `overflow`, shown as "others".
//!
//! Sender 0 is "outside": a thread that runs no handler (`main`, a plain
//! thread of the host program, kaspar-remote's receiving thread).
//!
//! # The current actor
//!
//! Every entry into a handler, synchronous or queued, sets this thread's
//! current actor for as long as the handler runs and puts back the
//! previous one when it ends (also on unwind), through a [`Current`] held
//! by the entry. A queued message is counted when it is queued (in
//! `ActorCell::push`), a synchronous delivery when its entry is admitted
//! (`Entered::count`), so each message counts once, however it came. The call chain cannot stand in for it: an intra-group
//! entry pushes no frame, so the innermost frame of a chain
//! `Buffer → Arbiter → Decoder` (one group) is still `Buffer`'s.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::base::ids::ActorId;

/// Senders one target tells apart; more land in the overflow count.
pub(crate) const SLOTS: usize = 8;

/// A slot's `sender` before any sender claimed it. No actor id is this
/// large (ids count up from 1).
const EMPTY: u64 = u64::MAX;

/// The sender of a send made by a thread that runs no handler.
pub(crate) const OUTSIDE: u64 = 0;

thread_local! {
    /// The id of the actor whose handler runs on this thread now, or
    /// [`OUTSIDE`].
    static CURRENT: Cell<u64> = const { Cell::new(OUTSIDE) };
}

/// One sender of a target: its id (`EMPTY` while unclaimed) and the
/// messages it sent.
struct Slot {
    sender: AtomicU64,
    count: AtomicU64,
}

/// A target actor's senders and how many messages each sent it: the
/// incoming edges of the actor graph.
pub(crate) struct Edges {
    slots: [Slot; SLOTS],
    /// Messages from senders that found every slot taken.
    overflow: AtomicU64,
}

impl Default for Edges {
    fn default() -> Self {
        Edges {
            slots: [const {
                Slot {
                    sender: AtomicU64::new(EMPTY),
                    count: AtomicU64::new(0),
                }
            }; SLOTS],
            overflow: AtomicU64::new(0),
        }
    }
}

/// What a target's [`Edges`] held at a read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct EdgeCounts {
    /// (sender id, messages), in the order the senders first sent;
    /// [`OUTSIDE`] for plain threads. Senders that sent nothing yet are
    /// left out.
    pub(crate) senders: Vec<(u64, u64)>,
    /// Messages from senders past the table's [`SLOTS`].
    pub(crate) others: u64,
}

impl Edges {
    /// Counts one message from this thread's current actor.
    #[inline]
    pub(crate) fn record_send(&self) {
        self.record(CURRENT.with(Cell::get));
    }

    /// Counts one message from `sender`.
    #[inline]
    pub(crate) fn record(&self, sender: u64) {
        for slot in &self.slots {
            let claimed = slot.sender.load(Ordering::Relaxed);
            let mine = claimed == sender
                || (claimed == EMPTY
                    && match slot.sender.compare_exchange(
                        EMPTY,
                        sender,
                        // Relaxed: the word orders nothing but itself; a
                        // reader pairs counts with senders by coherence
                        // (module docs).
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => true,
                        // Another thread claimed it first: for this sender
                        // too, or for another, and then the scan goes on.
                        Err(now) => now == sender,
                    });
            if mine {
                slot.count.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        self.overflow.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts now, read while sends go on.
    pub(crate) fn read(&self) -> EdgeCounts {
        let mut senders = Vec::new();
        for slot in &self.slots {
            let sender = slot.sender.load(Ordering::Relaxed);
            if sender == EMPTY {
                // Claimed in order, but a relaxed read may see a later
                // claim before an earlier one: look at every slot.
                continue;
            }
            let count = slot.count.load(Ordering::Relaxed);
            if count != 0 {
                senders.push((sender, count));
            }
        }
        EdgeCounts {
            senders,
            others: self.overflow.load(Ordering::Relaxed),
        }
    }
}

/// This thread's current actor while a handler of `actor` runs; the
/// previous one again when dropped. Held by every entry into a handler
/// (`Entered`). Not `Send`: it is dropped on the thread whose state it
/// changed.
pub(crate) struct Current {
    /// The actor that was current when the entry began: the sender, for a
    /// synchronous delivery.
    previous: u64,
    /// Whether the entry is a synchronous delivery (a message sent now),
    /// not a run loop's serving of one queued before (counted then).
    call: bool,
    _not_send: PhantomData<*const ()>,
}

impl Current {
    /// A synchronous entry into `actor` from this thread: `actor` is
    /// current from now on; the delivery is counted once admitted
    /// ([`admitted`](Self::admitted)).
    #[inline]
    pub(crate) fn call(actor: ActorId) -> Current {
        Self::enter(actor, true)
    }

    /// A run loop's entry into `actor` for a queued message (or a hook):
    /// the message was counted when it was queued.
    #[inline]
    pub(crate) fn serve(actor: ActorId) -> Current {
        Self::enter(actor, false)
    }

    #[inline]
    fn enter(actor: ActorId, call: bool) -> Current {
        Current {
            previous: CURRENT.with(|c| c.replace(actor.get())),
            call,
            _not_send: PhantomData,
        }
    }

    /// The entry passed the target's checks and its handler is about to
    /// run: a synchronous delivery counts as a message from the previous
    /// current actor in `edges`, the target's. (A refused one counts
    /// nothing, as a refused send does not.)
    #[inline]
    pub(crate) fn admitted(&self, edges: &Edges) {
        if self.call {
            edges.record(self.previous);
        }
    }
}

impl Drop for Current {
    #[inline]
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn senders_get_a_slot_each_in_order_and_the_rest_overflow() {
        let edges = Edges::default();
        for sender in 1..=(SLOTS as u64 + 2) {
            for _ in 0..sender {
                edges.record(sender);
            }
        }
        edges.record(OUTSIDE);
        let read = edges.read();
        let expected: Vec<(u64, u64)> = (1..=SLOTS as u64).map(|s| (s, s)).collect();
        assert_eq!(read.senders, expected);
        // Senders 9 and 10 (9 + 10 messages) and the outside one.
        assert_eq!(read.others, 9 + 10 + 1);
    }

    #[test]
    fn racing_senders_claim_distinct_slots_and_lose_no_count() {
        let edges = Edges::default();
        let per = if cfg!(miri) { 50 } else { 20_000 };
        std::thread::scope(|s| {
            for sender in 1..=4u64 {
                let edges = &edges;
                s.spawn(move || {
                    for _ in 0..per {
                        edges.record(sender);
                    }
                });
            }
        });
        let mut read = edges.read().senders;
        read.sort_unstable();
        assert_eq!(read, (1..=4).map(|s| (s, per)).collect::<Vec<_>>());
        assert_eq!(edges.read().others, 0);
    }

    #[test]
    fn the_current_actor_nests_and_is_restored() {
        let a = Edges::default();
        let b = Edges::default();
        {
            let _outer = Current::serve(ActorId(7));
            {
                let inner = Current::call(ActorId(8));
                inner.admitted(&a);
                b.record_send();
                // Not admitted: counted nowhere, though current meanwhile.
                let _refused = Current::call(ActorId(9));
            }
            b.record_send();
        }
        a.record_send();
        assert_eq!(a.read().senders, vec![(7, 1), (OUTSIDE, 1)]);
        assert_eq!(b.read().senders, vec![(8, 1), (7, 1)]);
    }

    #[test]
    fn a_panicking_handler_still_restores_the_current_actor() {
        let edges = Edges::default();
        let caught = std::panic::catch_unwind(|| {
            let current = Current::serve(ActorId(3));
            current.admitted(&edges);
            panic!("handler");
        });
        assert!(caught.is_err());
        edges.record_send();
        // Serving a queued message counts nothing; the send after it is
        // the outside's again.
        assert_eq!(edges.read().senders, vec![(OUTSIDE, 1)]);
    }
}
