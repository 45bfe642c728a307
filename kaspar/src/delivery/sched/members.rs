//! The pool's members: a slab of the units that have joined and not yet
//! left, so that shutdown can close them and an idle, unreachable member
//! stays alive until it is stopped (as an actor's thread keeps its actor).

use std::sync::Arc;

use super::Member;

/// Slots of members, with the free ones chained for reuse: joining and
/// leaving are O(1), and the slab is as long as the most members the pool
/// held at once.
#[derive(Default)]
pub(super) struct Members {
    slots: Vec<Option<Arc<dyn Member>>>,
    free: Vec<usize>,
}

impl Members {
    /// Adds `member`; returns its slot.
    pub(super) fn insert(&mut self, member: Arc<dyn Member>) -> usize {
        match self.free.pop() {
            Some(slot) => {
                debug_assert!(self.slots[slot].is_none());
                self.slots[slot] = Some(member);
                slot
            }
            None => {
                self.slots.push(Some(member));
                self.slots.len() - 1
            }
        }
    }

    /// Takes the member out of `slot` (to be dropped outside the lock: it
    /// may be the last hold on an actor, whose drop runs user code).
    pub(super) fn remove(&mut self, slot: usize) -> Option<Arc<dyn Member>> {
        let member = self.slots.get_mut(slot).and_then(Option::take);
        if member.is_some() {
            self.free.push(slot);
        }
        member
    }

    /// Every member now, to close outside the lock.
    pub(super) fn all(&self) -> Vec<Arc<dyn Member>> {
        self.slots.iter().flatten().cloned().collect()
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
}
