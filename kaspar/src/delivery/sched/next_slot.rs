//! A worker's next-to-run slot, shared with the rest of its pool.
//!
//! The slot holds the actor a handler on this worker has just sent to, so
//! that it runs next, here, a function call away (tokio's LIFO slot). Its
//! owner is the only thread that puts into it, and takes from it on every
//! hop of a chain of sends, so that path costs one compare-and-swap on a
//! line nobody else writes. Other threads may take from it too
//! ([`steal`](NextSlot::steal)): the pool's monitor does, when the owner
//! has been inside one activation for long (`super::monitor`). A slot that
//! only its owner could empty would keep the actor waiting for that
//! activation to end however long it ran, with other workers idle; this is
//! tokio's open issue #4941, measured here as a 20 ms wait behind a 20 ms
//! handler.
//!
//! The protocol, on `state`:
//!
//! * `EMPTY` → `FULL`: the owner only ([`put`](NextSlot::put)), after
//!   writing the value, with a `Release` store.
//! * `FULL` → `EMPTY`: the owner's [`take`](NextSlot::take), a
//!   compare-and-swap (`Acquire`) it must win before reading the value.
//! * `FULL` → `TAKING` → `EMPTY`: a thief's [`steal`](NextSlot::steal): it
//!   wins the compare-and-swap, reads the value, then stores `EMPTY`
//!   (`Release`).
//!
//! Invariants (each `unsafe` block names the one it relies on):
//!
//! * **N1 (one reader).** The value is read only by the thread whose
//!   compare-and-swap moved `state` from `FULL`, and exactly once per
//!   `put`: only one compare-and-swap can succeed from each `FULL`.
//! * **N2 (one writer).** The value is written only by the owner, only
//!   after it saw `EMPTY` with `Acquire`, so a thief's read of the value
//!   before (its `Release` store of `EMPTY`) happens before the write, and
//!   the owner's own read of the previous value was earlier in its own
//!   thread. While `state` is `FULL` or `TAKING` the owner does not write:
//!   `put` hands the value back instead, and the caller queues it.
//! * **N3 (initialised).** `state` is `FULL` only after a `put` wrote the
//!   value (its `Release` store pairs with the reader's `Acquire`), and a
//!   read moves `state` away from `FULL` first, so a value is never read
//!   twice or before it is written, and the one left at drop is dropped
//!   once.
//!
//! The loom model `tests/loom_next_slot.rs` checks these against this
//! code: an owner putting and taking while two thieves steal, nothing lost
//! and nothing taken twice.

use std::mem::MaybeUninit;

use crate::base::sync::{AtomicU8, Ordering, UnsafeCell};

const EMPTY: u8 = 0;
const FULL: u8 = 1;
/// A thief won the value and is reading it.
const TAKING: u8 = 2;

/// One worker's next-to-run slot (module docs).
pub struct NextSlot<T> {
    state: AtomicU8,
    value: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: the slot moves a `T` from the owner to whichever thread takes it
// (N1, N2), never sharing a `&T`; so `T: Send` is all that sending or
// sharing the slot needs.
unsafe impl<T: Send> Send for NextSlot<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for NextSlot<T> {}

impl<T> std::fmt::Debug for NextSlot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NextSlot")
            .field("full", &self.is_full())
            .finish()
    }
}

impl<T> Default for NextSlot<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> NextSlot<T> {
    /// An empty slot.
    pub fn new() -> Self {
        NextSlot {
            state: AtomicU8::new(EMPTY),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// The owner puts `value` in the slot if it is empty; hands it back if
    /// it holds a value, or a thief is taking one.
    #[inline]
    pub fn put(&self, value: T) -> Result<(), T> {
        // Acquire: pairs with a thief's `Release` store of `EMPTY` (N2).
        if self.state.load(Ordering::Acquire) != EMPTY {
            return Err(value);
        }
        // SAFETY: N2: only the owner writes, and it saw `EMPTY` after
        // every earlier read of the value.
        self.value.with_mut(|p| unsafe { (*p).write(value) });
        self.state.store(FULL, Ordering::Release);
        Ok(())
    }

    /// The owner takes the value, unless a thief took it or is taking it.
    #[inline]
    pub fn take(&self) -> Option<T> {
        if self.state.load(Ordering::Relaxed) != FULL {
            return None;
        }
        self.claim(EMPTY)
    }

    /// Any thread but the owner takes the value, if there is one.
    pub fn steal(&self) -> Option<T> {
        if self.state.load(Ordering::Relaxed) != FULL {
            return None;
        }
        let value = self.claim(TAKING)?;
        // Release: our read happens before the owner's next write (N2).
        self.state.store(EMPTY, Ordering::Release);
        Some(value)
    }

    /// Whether the slot holds a value (a snapshot).
    #[inline]
    pub fn is_full(&self) -> bool {
        self.state.load(Ordering::Relaxed) == FULL
    }

    /// Moves `state` from `FULL` to `to` and reads the value, or `None` if
    /// another thread moved it first.
    #[inline]
    fn claim(&self, to: u8) -> Option<T> {
        self.state
            .compare_exchange(FULL, to, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        // SAFETY: N1 and N3: our compare-and-swap from `FULL` won, so the
        // value was written (and published by the `Release` store we
        // acquired), and no other thread reads it.
        Some(self.value.with(|p| unsafe { (*p).assume_init_read() }))
    }
}

impl<T> Drop for NextSlot<T> {
    fn drop(&mut self) {
        // `&mut self`: no thread is putting or taking (a `TAKING` left by
        // a thief that unwound mid-steal cannot happen: the read does not
        // panic).
        if self.state.load(Ordering::Relaxed) == FULL {
            // SAFETY: N3: `FULL`, so the value is initialised and unread.
            self.value.with_mut(|p| unsafe { (*p).assume_init_drop() });
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_owner_puts_and_takes_and_a_full_slot_hands_a_second_value_back() {
        let slot = NextSlot::new();
        assert!(!slot.is_full());
        assert_eq!(slot.take(), None);
        assert_eq!(slot.put(1), Ok(()));
        assert!(slot.is_full());
        assert_eq!(slot.put(2), Err(2), "occupied: handed back");
        assert_eq!(slot.take(), Some(1));
        assert_eq!(slot.take(), None);
        assert!(!slot.is_full());
    }

    #[test]
    fn a_thief_takes_what_the_owner_put_once() {
        let slot = NextSlot::new();
        assert_eq!(slot.steal(), None);
        slot.put(7).unwrap();
        assert_eq!(slot.steal(), Some(7));
        assert_eq!(slot.steal(), None);
        assert_eq!(slot.take(), None, "the owner finds it gone");
        slot.put(8).unwrap();
        assert_eq!(slot.take(), Some(8));
    }

    #[test]
    fn a_value_left_in_the_slot_is_dropped_with_it_once() {
        let value = Arc::new(());
        let slot = NextSlot::new();
        slot.put(Arc::clone(&value)).unwrap();
        drop(slot);
        assert_eq!(Arc::strong_count(&value), 1);
        let slot = NextSlot::new();
        slot.put(Arc::clone(&value)).unwrap();
        let taken = slot.steal();
        drop(slot);
        assert_eq!(Arc::strong_count(&value), 2, "taken, not dropped");
        drop(taken);
        assert_eq!(Arc::strong_count(&value), 1);
    }

    #[test]
    fn thieves_racing_the_owner_lose_nothing_and_take_nothing_twice() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        const N: usize = if cfg!(miri) { 100 } else { 20_000 };
        let slot = Arc::new(NextSlot::new());
        let taken = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let (slot, taken, done) =
                    (Arc::clone(&slot), Arc::clone(&taken), Arc::clone(&done));
                std::thread::spawn(move || {
                    let mut mine = Vec::new();
                    while !done.load(Ordering::Acquire) {
                        if let Some(v) = slot.steal() {
                            taken.fetch_add(1, Ordering::Relaxed);
                            mine.push(v);
                        }
                    }
                    mine
                })
            })
            .collect();
        let mut seen = Vec::new();
        let mut next = 0;
        while next < N {
            match slot.put(next) {
                Ok(()) => next += 1,
                Err(_) => std::thread::yield_now(),
            }
            if next % 3 == 0 {
                seen.extend(slot.take());
            }
        }
        // Whatever is left in the slot, the owner takes last.
        while seen.len() + taken.load(Ordering::Relaxed) < N {
            seen.extend(slot.take());
        }
        done.store(true, Ordering::Release);
        for t in thieves {
            seen.extend(t.join().unwrap());
        }
        seen.sort_unstable();
        assert_eq!(
            seen,
            (0..N).collect::<Vec<_>>(),
            "each value taken exactly once"
        );
    }
}
