//! The pool's members: a slab of the units that have joined and not yet
//! left, so that shutdown can close them (newest first: each member keeps
//! its start's place in the system's order) and an idle, unreachable
//! member stays alive until it is stopped (as an actor's thread keeps its
//! actor).

use std::sync::Arc;

use super::stop::Chain;
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
    /// A shutdown stopping members one at a time, newest first.
    pub(super) chain: Option<Chain>,
    /// While a shutdown runs ([`Shared::log_leaves`](super::Shared::log_leaves)):
    /// the members that left without having been listed for it (spawned
    /// while it ran, or stopped before their run began), in the order
    /// they left. A listed member is the shutdown's chain's to report.
    pub(super) unlisted_left: Option<Vec<crate::base::ids::Target>>,
}

/// The bit of an entry's start order that says a shutdown has listed it
/// ([`Members::by_start`]); no system starts 2^63 actors.
const LISTED: u64 = 1 << 63;

/// Slots per chunk: 24 KiB.
const CHUNK: usize = 1024;

/// A member and its place in the system's start order.
pub(super) type Entry = (u64, Arc<dyn Member>);

type Chunk = [Option<Entry>; CHUNK];

/// A member as a shutdown lists it: its place in the start order, its
/// slot, and the member.
pub(crate) struct Listed {
    pub(crate) order: u64,
    pub(super) slot: usize,
    pub(super) member: Arc<dyn Member>,
}

impl Listed {
    /// The member as a shutdown report names it.
    pub(crate) fn target(&self) -> crate::base::ids::Target {
        self.member.target()
    }
}

impl Members {
    /// Adds `member`, started as number `order` of its system; returns its
    /// slot.
    pub(super) fn insert(&mut self, order: u64, member: Arc<dyn Member>) -> usize {
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
        *cell = Some((order, member));
        slot
    }

    /// Takes the member out of `slot` (to be dropped outside the lock: it
    /// may be the last hold on an actor, whose drop runs user code). While
    /// a shutdown runs, a member it never listed is logged as it leaves
    /// ([`unlisted_left`](Self::unlisted_left)).
    pub(super) fn remove(&mut self, slot: usize) -> Option<Arc<dyn Member>> {
        let (order, member) = self
            .chunks
            .get_mut(slot / CHUNK)
            .and_then(|chunk| chunk[slot % CHUNK].take())?;
        self.free.push(slot);
        if let Some(log) = &mut self.unlisted_left {
            if order & LISTED == 0 {
                log.push(member.target());
            }
        }
        Some(member)
    }

    /// Whether `slot` holds `member` still (it has not left).
    pub(super) fn holds(&self, slot: usize, member: &Arc<dyn Member>) -> bool {
        self.chunks
            .get(slot / CHUNK)
            .and_then(|chunk| chunk[slot % CHUNK].as_ref())
            .is_some_and(|(_, m)| same(m, member))
    }

    /// Every member now, to close outside the lock.
    pub(super) fn all(&self) -> Vec<Arc<dyn Member>> {
        self.entries().map(|(_, (_, m))| Arc::clone(m)).collect()
    }

    /// Every member now, oldest start first, for a shutdown; each is
    /// marked listed, so that its leaving is the shutdown's to report.
    pub(super) fn by_start(&mut self) -> Vec<Listed> {
        let mut listed = Vec::new();
        for (slot, entry) in self
            .chunks
            .iter_mut()
            .flat_map(|chunk| chunk.iter_mut())
            .enumerate()
        {
            if let Some((order, member)) = entry {
                *order |= LISTED;
                listed.push(Listed {
                    order: *order & !LISTED,
                    slot,
                    member: Arc::clone(member),
                });
            }
        }
        listed.sort_unstable_by_key(|l| l.order);
        listed
    }

    fn entries(&self) -> impl Iterator<Item = (usize, &Entry)> {
        self.chunks
            .iter()
            .flat_map(|chunk| chunk.iter())
            .enumerate()
            .filter_map(|(slot, entry)| entry.as_ref().map(|e| (slot, e)))
    }
}

/// Whether `a` and `b` are the same member (by address: two `dyn`
/// pointers to one value may carry different vtables).
pub(super) fn same(a: &Arc<dyn Member>, b: &Arc<dyn Member>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;
    impl Member for Nothing {
        fn close(&self) {}
        fn target(&self) -> crate::base::ids::Target {
            crate::base::ids::Target::new(crate::base::ids::ActorId::GROUP, "Nothing", None)
        }
    }

    #[test]
    fn slots_are_reused_after_leaving_and_all_lists_the_members_left() {
        let mut m = Members::default();
        let a = m.insert(0, Arc::new(Nothing));
        let b = m.insert(0, Arc::new(Nothing));
        assert_eq!((a, b), (0, 1));
        assert!(m.remove(a).is_some());
        assert!(m.remove(a).is_none(), "a slot is emptied once");
        assert_eq!(m.insert(0, Arc::new(Nothing)), 0);
        assert_eq!(m.insert(0, Arc::new(Nothing)), 2);
        assert_eq!(m.all().len(), 3);
    }

    #[test]
    fn slots_past_a_chunk_land_in_the_next_and_are_found_and_freed() {
        let mut m = Members::default();
        let slots: Vec<usize> = (0..CHUNK + 2)
            .map(|_| m.insert(0, Arc::new(Nothing)))
            .collect();
        assert_eq!(slots, (0..CHUNK + 2).collect::<Vec<_>>());
        assert_eq!(m.chunks.len(), 2);
        assert!(m.remove(CHUNK + 1).is_some());
        assert!(m.remove(CHUNK + 5).is_none(), "never handed out");
        assert_eq!(m.all().len(), CHUNK + 1);
        assert_eq!(m.insert(0, Arc::new(Nothing)), CHUNK + 1, "reused");
        assert_eq!(m.chunks.len(), 2);
    }
}
