//! The flight recorder's storage: a ring of fixed-size slots, allocated
//! once, that keeps the newest `capacity` records and overwrites the
//! oldest.
//!
//! Invariants:
//!
//! * `bytes` holds `capacity` slots of `slot` bytes each, and `meta` one
//!   entry per slot; neither grows after [`Ring::new`], so taking a record
//!   never allocates.
//! * Record number `n` (counting from 0, every record ever taken) lives in
//!   slot `n % capacity`; the ring holds records `taken - held ..taken`,
//!   where `held = min(taken, capacity)`.
//! * A slot's `len` is at most `slot`: a payload that does not fit is not
//!   kept, and its record is a lost one (kind [`KIND_LOST`]) whose `len`
//!   is 0.

use crate::base::clock::Time;
use crate::delivery::flight::format::{KIND_INPUT, KIND_LOST, KIND_TIMER};

/// What the encoder made of one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Not an input: nothing recorded.
    Skip,
    /// An input of this many bytes, written at the front of the slot.
    Input(usize),
    /// A timer firing.
    Timer,
    /// An input that could not be kept.
    Lost,
}

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Meta {
    pub(crate) at: Time,
    pub(crate) len: u32,
    pub(crate) kind: u8,
}

pub(crate) struct Ring {
    capacity: usize,
    slot: usize,
    bytes: Box<[u8]>,
    meta: Box<[Meta]>,
    /// Records ever taken.
    taken: u64,
    /// Records ever taken that were lost.
    lost: u64,
}

impl Ring {
    /// Allocates the whole ring: `capacity` slots of `slot` bytes, both
    /// at least 1 (the caller checks, and that the product fits).
    pub(crate) fn new(capacity: usize, slot: usize) -> Ring {
        debug_assert!(capacity > 0 && slot > 0);
        Ring {
            capacity,
            slot,
            bytes: vec![0u8; capacity * slot].into_boxed_slice(),
            meta: vec![Meta::default(); capacity].into_boxed_slice(),
            taken: 0,
            lost: 0,
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn slot_len(&self) -> usize {
        self.slot
    }

    pub(crate) fn taken(&self) -> u64 {
        self.taken
    }

    pub(crate) fn lost(&self) -> u64 {
        self.lost
    }

    /// Takes one record: `encode` writes into the next slot (the oldest
    /// record's, once the ring is full) and says what it wrote; `now` is
    /// read only if something is recorded.
    #[inline]
    pub(crate) fn take(
        &mut self,
        now: impl FnOnce() -> Time,
        encode: impl FnOnce(&mut [u8]) -> Outcome,
    ) {
        let index = (self.taken % self.capacity as u64) as usize;
        let start = index * self.slot;
        let (len, kind) = match encode(&mut self.bytes[start..start + self.slot]) {
            Outcome::Skip => return,
            // A length past the slot is not believed: lost, like a payload
            // that did not fit.
            Outcome::Input(len) if len <= self.slot => (len as u32, KIND_INPUT),
            Outcome::Input(_) | Outcome::Lost => (0, KIND_LOST),
            Outcome::Timer => (0, KIND_TIMER),
        };
        if kind == KIND_LOST {
            self.lost += 1;
        }
        self.meta[index] = Meta {
            at: now(),
            len,
            kind,
        };
        self.taken += 1;
    }

    /// The records the ring holds, oldest first: each one's head and
    /// payload.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Meta, &[u8])> + '_ {
        let held = self.taken.min(self.capacity as u64);
        (self.taken - held..self.taken).map(move |n| {
            let index = (n % self.capacity as u64) as usize;
            let meta = self.meta[index];
            let start = index * self.slot;
            (meta, &self.bytes[start..start + meta.len as usize])
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn input(ring: &mut Ring, at: u64, payload: &[u8]) {
        ring.take(
            || Time::from_nanos(at),
            |slot| match slot.get_mut(..payload.len()) {
                Some(dst) => {
                    dst.copy_from_slice(payload);
                    Outcome::Input(payload.len())
                }
                None => Outcome::Lost,
            },
        );
    }

    fn held(ring: &Ring) -> Vec<(u64, u8, Vec<u8>)> {
        ring.iter()
            .map(|(m, p)| (m.at.as_nanos(), m.kind, p.to_vec()))
            .collect()
    }

    #[test]
    fn the_ring_keeps_the_newest_records_oldest_first() {
        let mut ring = Ring::new(3, 4);
        assert!(held(&ring).is_empty());
        input(&mut ring, 1, b"a");
        input(&mut ring, 2, b"bb");
        assert_eq!(
            held(&ring),
            vec![
                (1, KIND_INPUT, b"a".to_vec()),
                (2, KIND_INPUT, b"bb".to_vec())
            ]
        );
        input(&mut ring, 3, b"ccc");
        input(&mut ring, 4, b"dddd");
        ring.take(|| Time::from_nanos(5), |_| Outcome::Timer);
        assert_eq!(
            held(&ring),
            vec![
                (3, KIND_INPUT, b"ccc".to_vec()),
                (4, KIND_INPUT, b"dddd".to_vec()),
                (5, KIND_TIMER, vec![]),
            ]
        );
        assert_eq!((ring.taken(), ring.lost()), (5, 0));
    }

    #[test]
    fn skipped_messages_take_no_slot_and_oversized_ones_are_lost() {
        let mut ring = Ring::new(2, 2);
        ring.take(|| unreachable!("a skip reads no time"), |_| Outcome::Skip);
        input(&mut ring, 1, b"xyz");
        ring.take(|| Time::from_nanos(2), |_| Outcome::Input(3));
        assert_eq!(
            held(&ring),
            vec![(1, KIND_LOST, vec![]), (2, KIND_LOST, vec![])]
        );
        assert_eq!((ring.taken(), ring.lost()), (2, 2));
    }
}
