//! A system's actors as its observers read them (features `metrics`,
//! `console`): a weak handle on every actor's cell, registered where each
//! cell is made (`Spawn::launch`, `Prepared::new`, a group's `reserve`),
//! and, with `console`, the thread each actor's lock is served on.
//!
//! Nothing here is on a delivery path. Registering costs one push into a
//! list under a mutex, once per actor; reading it, one upgrade per actor.
//! What a cell shows of itself is `actor::observe`; the readers are
//! `system::metrics` and `system::console`.

use std::sync::{Arc, Weak};

use crate::actor::observe::Observed;
use crate::base::sync::Mutex;
#[cfg(feature = "console")]
use crate::guard::lock::ActorLock;

/// A system's actors, held weakly.
#[derive(Default)]
pub(crate) struct Registry {
    actors: Mutex<Actors>,
    /// Which thread serves which lock (feature `console`).
    #[cfg(feature = "console")]
    threads: Mutex<Vec<Placed>>,
}

#[derive(Default)]
struct Actors {
    list: Vec<Weak<dyn Observed>>,
    /// The list's length at which `add` next drops the gone: a weak
    /// handle keeps its cell's allocation, so a system that spawns and
    /// drops actors without ever reading them must not keep them all.
    /// Doubles with the live ones, so an add costs O(1) amortised.
    prune_at: usize,
}

/// The thread started to serve one lock: a standalone actor's, or a
/// group's (shared by its members).
#[cfg(feature = "console")]
struct Placed {
    /// Held weakly: the entry goes when the lock does, and its address can
    /// then be reused by another lock.
    lock: Weak<ActorLock>,
    thread: Thread,
}

/// Where an actor runs, as the console shows it.
#[cfg(feature = "console")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Thread {
    /// The thread's name (`kaspar:<name>`, `kaspar:group:<type>`, ...).
    pub(crate) name: Arc<str>,
    /// The group's type name, for a group's thread.
    pub(crate) group: Option<&'static str>,
}

impl Registry {
    /// Lets the observers read `actor` from now on.
    pub(crate) fn add(&self, actor: Weak<dyn Observed>) {
        let mut actors = self.actors.lock();
        if actors.list.len() >= actors.prune_at {
            actors.list.retain(|a| a.strong_count() > 0);
            actors.prune_at = (2 * actors.list.len()).max(64);
        }
        actors.list.push(actor);
    }

    /// The actors whose cells are still there; forgets the others.
    pub(crate) fn live(&self) -> Vec<Arc<dyn Observed>> {
        let mut actors = self.actors.lock();
        let mut live = Vec::with_capacity(actors.list.len());
        actors.list.retain(|a| match a.upgrade() {
            Some(actor) => {
                live.push(actor);
                true
            }
            None => false,
        });
        live
    }

    /// Forgets the actors at `gone` (their addresses, sorted).
    #[cfg(feature = "metrics")]
    pub(crate) fn forget(&self, gone: &[*const ()]) {
        if gone.is_empty() {
            return;
        }
        self.actors
            .lock()
            .list
            .retain(|a| gone.binary_search(&a.as_ptr().cast::<()>()).is_err());
    }

    /// Actors registered and not forgotten yet (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.actors.lock().list.len()
    }

    /// Records that the thread `thread` serves `lock` from now on.
    #[cfg(feature = "console")]
    pub(crate) fn placed(&self, lock: &Arc<ActorLock>, thread: Thread) {
        let mut threads = self.threads.lock();
        threads.retain(|p| p.lock.strong_count() > 0);
        threads.push(Placed {
            lock: Arc::downgrade(lock),
            thread,
        });
    }

    /// Every live lock's thread, by the lock's address.
    #[cfg(feature = "console")]
    pub(crate) fn threads(&self) -> Vec<(usize, Thread)> {
        let mut threads = self.threads.lock();
        threads.retain(|p| p.lock.strong_count() > 0);
        threads
            .iter()
            .map(|p| (p.lock.as_ptr() as usize, p.thread.clone()))
            .collect()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::actor::observe::Observation;
    use crate::base::ids::{ActorId, Target};
    use crate::base::stats::ActorStats;

    /// Stands for an actor, for the registry alone.
    struct Nobody;

    impl Observed for Nobody {
        fn observe(&self) -> Observation {
            Observation {
                target: Target::new(ActorId::GROUP, "Nobody", None),
                stats: ActorStats::default(),
                latency: None,
                queued: 0,
                stopped: false,
                #[cfg(feature = "console")]
                edges: Default::default(),
                #[cfg(feature = "console")]
                lock: 0,
            }
        }
    }

    #[test]
    fn the_registry_drops_gone_actors_as_it_grows() {
        let registry = Registry::default();
        let alive: Arc<dyn Observed> = Arc::new(Nobody);
        registry.add(Arc::downgrade(&alive));
        for _ in 0..1_000 {
            let gone: Arc<dyn Observed> = Arc::new(Nobody);
            registry.add(Arc::downgrade(&gone));
        }
        // Pruned whenever it doubled: never more than twice the live ones
        // plus the last batch since.
        assert!(registry.len() <= 128);
        assert_eq!(registry.live().len(), 1);
        assert_eq!(registry.len(), 1);
    }

    #[cfg(feature = "console")]
    #[test]
    fn a_thread_is_forgotten_with_its_lock() {
        let registry = Registry::default();
        let kept = Arc::new(ActorLock::new(false));
        let gone = Arc::new(ActorLock::new(true));
        let thread = |name: &str, group| Thread {
            name: name.into(),
            group,
        };
        registry.placed(&kept, thread("kaspar:a", None));
        registry.placed(&gone, thread("kaspar:g", Some("G")));
        assert_eq!(registry.threads().len(), 2);
        drop(gone);
        assert_eq!(
            registry.threads(),
            vec![(Arc::as_ptr(&kept) as usize, thread("kaspar:a", None))]
        );
    }
}
