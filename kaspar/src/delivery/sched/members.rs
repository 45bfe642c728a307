//! The pool's members: a slab of the units that have joined and not yet
//! left, so that shutdown can close them and an idle, unreachable member
//! stays alive until it is stopped (as an actor's thread keeps its actor).

use std::sync::Arc;

use super::Member;

/// Slots of members, with the free ones chained for reuse: joining and
/// leaving are O(1), and the slab is as long as the most members the pool
/// held at once. The slots come in fixed chunks rather than one growing
/// `Vec`, so a member costs its 16-byte slot and nothing more: a doubling
/// `Vec` held up to twice that (and, while it grew, both copies).
#[derive(Default)]
pub(super) struct Members {
    chunks: Vec<Box<Chunk>>,
    /// Slots handed out so far, the free ones included.
    len: usize,
    free: Vec<usize>,
}

/// Slots per chunk: 16 KiB.
const CHUNK: usize = 1024;

type Chunk = [Option<Arc<dyn Member>>; CHUNK];

impl Members {
    /// Adds `member`; returns its slot.
    pub(super) fn insert(&mut self, member: Arc<dyn Member>) -> usize {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                if self.len.is_multiple_of(CHUNK) {
                    self.chunks.push(Box::new([const { None }; CHUNK]));
                }
                self.len += 1;
                self.len - 1
            }
        };
        let cell = &mut self.chunks[slot / CHUNK][slot % CHUNK];
        debug_assert!(cell.is_none());
        *cell = Some(member);
        slot
    }

    /// Takes the member out of `slot` (to be dropped outside the lock: it
    /// may be the last hold on an actor, whose drop runs user code).
    pub(super) fn remove(&mut self, slot: usize) -> Option<Arc<dyn Member>> {
        let member = self
            .chunks
            .get_mut(slot / CHUNK)
            .and_then(|chunk| chunk[slot % CHUNK].take());
        if member.is_some() {
            self.free.push(slot);
        }
        member
    }

    /// Every member now, to close outside the lock.
    pub(super) fn all(&self) -> Vec<Arc<dyn Member>> {
        self.chunks
            .iter()
            .flat_map(|chunk| chunk.iter())
            .flatten()
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;
    impl Member for Nothing {
        fn close(&self) {}
    }

    #[test]
    fn slots_are_reused_after_leaving_and_all_lists_the_members_left() {
        let mut m = Members::default();
        let a = m.insert(Arc::new(Nothing));
        let b = m.insert(Arc::new(Nothing));
        assert_eq!((a, b), (0, 1));
        assert!(m.remove(a).is_some());
        assert!(m.remove(a).is_none(), "a slot is emptied once");
        assert_eq!(m.insert(Arc::new(Nothing)), 0);
        assert_eq!(m.insert(Arc::new(Nothing)), 2);
        assert_eq!(m.all().len(), 3);
    }

    #[test]
    fn slots_past_a_chunk_land_in_the_next_and_are_found_and_freed() {
        let mut m = Members::default();
        let slots: Vec<usize> = (0..CHUNK + 2)
            .map(|_| m.insert(Arc::new(Nothing)))
            .collect();
        assert_eq!(slots, (0..CHUNK + 2).collect::<Vec<_>>());
        assert_eq!(m.chunks.len(), 2);
        assert!(m.remove(CHUNK + 1).is_some());
        assert!(m.remove(CHUNK + 5).is_none(), "never handed out");
        assert_eq!(m.all().len(), CHUNK + 1);
        assert_eq!(m.insert(Arc::new(Nothing)), CHUNK + 1, "reused");
        assert_eq!(m.chunks.len(), 2);
    }
}
