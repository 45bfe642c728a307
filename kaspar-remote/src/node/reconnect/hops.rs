//! An append-only list read without a lock or a read-modify-write: the
//! links a reconnecting address has used, in order.
//!
//! A sender finds the address's link by its index in this list and uses it
//! without holding a count of it. That is sound because nothing is ever
//! removed while the list lives: a link replaced while a send on it is
//! under way stays where it was until the list is dropped, with the last
//! clone of the address. The price is the memory of each replaced entry
//! (its `Peer`: a few hundred bytes, its engine handle already let go:
//! [`Peer::release`](crate::session::peer::Peer::release)) per reconnect, for the
//! address's life.
//!
//! Layout: segment `k` holds `2^k` slots, allocated when the first of them
//! is set, so index `i` lives in segment `⌊log2(i + 1)⌋` at offset
//! `i + 1 - 2^k`; [`SEGMENTS`] segments hold `2^SEGMENTS - 1` entries.
//! Each segment and each slot is a [`OnceLock`]: set once, by a writer
//! the caller serializes, and read with one acquire load each (a plain
//! load on x86-64), so a reader that found an index sees the entry set
//! before that index was published.

use std::sync::OnceLock;

/// Segments: room for `2^32 - 1` entries, far past any address's
/// reconnects.
const SEGMENTS: usize = 32;

pub(crate) struct Hops<T> {
    segments: [OnceLock<Box<[OnceLock<T>]>>; SEGMENTS],
}

impl<T> Hops<T> {
    /// A list holding `first` at index 0.
    pub(crate) fn new(first: T) -> Self {
        let hops = Hops {
            segments: std::array::from_fn(|_| OnceLock::new()),
        };
        let set = hops.set(0, first);
        debug_assert!(set, "index 0 of a new list is free");
        hops
    }

    /// Segment and offset of index `i`; `None` past the last segment.
    fn place(i: usize) -> Option<(usize, usize)> {
        let n = i.checked_add(1)?;
        let k = (usize::BITS - 1 - n.leading_zeros()) as usize;
        (k < SEGMENTS).then(|| (k, n - (1 << k)))
    }

    /// The entry at `i`, if it was set.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        let (k, off) = Self::place(i)?;
        self.segments[k].get()?.get(off)?.get()
    }

    /// Sets the entry at `i`; `false`, leaving the list as it was, if `i`
    /// is past the list's room or was set already.
    pub(crate) fn set(&self, i: usize, value: T) -> bool {
        let Some((k, off)) = Self::place(i) else {
            return false;
        };
        let segment =
            self.segments[k].get_or_init(|| (0..1usize << k).map(|_| OnceLock::new()).collect());
        segment[off].set(value).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_map_to_doubling_segments() {
        let places: Vec<_> = (0..8).map(Hops::<()>::place).collect();
        let want = [
            (0, 0),
            (1, 0),
            (1, 1),
            (2, 0),
            (2, 1),
            (2, 2),
            (2, 3),
            (3, 0),
        ];
        assert_eq!(places, want.map(Some));
        assert_eq!(
            Hops::<()>::place((1 << SEGMENTS) - 2),
            Some((SEGMENTS - 1, (1 << (SEGMENTS - 1)) - 1))
        );
        assert_eq!(Hops::<()>::place((1 << SEGMENTS) - 1), None);
        assert_eq!(Hops::<()>::place(usize::MAX), None);
    }

    #[test]
    fn entries_are_set_once_and_read_back() {
        let hops = Hops::new(10u32);
        for i in 1..100 {
            assert_eq!(hops.get(i), None);
            assert!(hops.set(i, 10 + i as u32));
        }
        assert!(!hops.set(5, 0), "set once");
        assert!(!hops.set(usize::MAX, 0), "past the room");
        let got: Vec<u32> = (0..100).map(|i| *hops.get(i).unwrap()).collect();
        assert_eq!(got, (10..110).collect::<Vec<_>>());
    }

    #[test]
    fn an_entry_read_on_another_thread_stays_valid_while_later_ones_are_set() {
        let hops = std::sync::Arc::new(Hops::new(String::from("0")));
        let first = hops.get(0).unwrap() as *const String;
        let writer = {
            let hops = hops.clone();
            std::thread::spawn(move || {
                for i in 1..200 {
                    assert!(hops.set(i, i.to_string()));
                }
            })
        };
        writer.join().unwrap();
        assert_eq!(hops.get(0).unwrap() as *const String, first, "never moved");
        assert_eq!(hops.get(199).map(String::as_str), Some("199"));
    }
}
