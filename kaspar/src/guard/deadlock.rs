//! Cross-thread deadlock detection: a global wait-for registry (beyond the
//! paper; its future work #1).
//!
//! The per-thread call chain cannot see a cycle spread over threads: thread 1
//! runs `A` and waits for `B` while thread 2 runs `B` and waits for `A`.
//! Before a thread *waits* for an actor's lock (only after a failed
//! try-lock, so the uncontended path never comes here) it takes the
//! registry mutex and walks the edges
//!
//! ```text
//! lock --owner--> thread --waits for--> lock --owner--> ...
//! ```
//!
//! If the walk arrives back at the calling thread, waiting would close a
//! cycle: the call returns [`FastSendError::Deadlock`](crate::FastSendError)
//! instead. Otherwise the thread records its own edge and waits. Because
//! registration and walk happen under one mutex, of the threads that close a
//! cycle the last one to register always sees it; the others stay blocked
//! until it backs out and releases what it holds.
//!
//! A registered thread is blocked, so the locks it holds, and the owner
//! words of those locks, are stable while its entry exists.

use std::sync::Arc;

use crate::base::ids::ActorId;
use crate::base::sync::Mutex;
use crate::guard::chain::{self, CallChain};
use crate::guard::lock::ActorLock;

/// One thread's wait, as recorded in the registry.
struct WaitEntry {
    thread: usize,
    lock: Arc<ActorLock>,
    target: (ActorId, &'static str),
    chain: CallChain,
}

/// The wait-for graph: one entry per thread blocked on an actor lock. An
/// edge runs from a waiting thread to the lock it waits for, and from a
/// lock to its owner (the lock's owner word).
#[derive(Default)]
struct Registry {
    waiting: Vec<WaitEntry>,
}

#[cfg(not(loom))]
static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    waiting: Vec::new(),
});

#[cfg(loom)]
loom::lazy_static! {
    static ref REGISTRY: Mutex<Registry> = Mutex::new(Registry::default());
}

/// One edge of a detected cycle: a thread, what it was running, and the
/// actor whose lock it waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitEdge {
    /// Runtime token of the waiting thread (not an OS thread id).
    pub thread: usize,
    /// The waiting thread's call chain.
    pub chain: CallChain,
    /// The actor it waits for.
    pub waits_for: ActorId,
    /// That actor's type name.
    pub waits_for_name: &'static str,
}

/// Removes the calling thread's registry entry on drop.
pub(crate) struct Registered {
    thread: usize,
}

impl Drop for Registered {
    fn drop(&mut self) {
        REGISTRY.lock().remove(self.thread);
    }
}

/// Walks the wait-for graph from `lock`. On a cycle through the calling
/// thread returns its edges (the caller's own edge first); otherwise
/// registers the caller as waiting for `lock` and returns a guard that
/// deregisters it.
///
/// Allocates only to report a cycle, or to record a non-empty call chain
/// (a contended call made from inside a handler).
pub(crate) fn before_wait(
    me: usize,
    lock: &Arc<ActorLock>,
    target: (ActorId, &'static str),
) -> Result<Registered, Vec<WaitEdge>> {
    let mut reg = REGISTRY.lock();
    if reg.closes_cycle(me, lock) {
        return Err(reg.cycle_edges(me, lock, target, chain::snapshot()));
    }
    reg.waiting.push(WaitEntry {
        thread: me,
        lock: Arc::clone(lock),
        target,
        chain: chain::snapshot(),
    });
    Ok(Registered { thread: me })
}

impl Registry {
    fn remove(&mut self, thread: usize) {
        if let Some(i) = self.waiting.iter().position(|e| e.thread == thread) {
            self.waiting.swap_remove(i);
        }
    }

    fn waiter(&self, thread: usize) -> Option<&WaitEntry> {
        self.waiting
            .iter()
            .find(|e| thread != 0 && e.thread == thread)
    }

    /// Follows lock -> owner -> awaited lock from `lock`; true if it reaches
    /// `me`. Each step follows one registered thread, so a walk longer than the
    /// registry has entered a cycle that does not include `me`.
    fn closes_cycle(&self, me: usize, lock: &ActorLock) -> bool {
        let mut current = lock;
        for _ in 0..=self.waiting.len() {
            let holder = current.owner();
            if holder == me {
                return true;
            }
            match self.waiter(holder) {
                Some(entry) => current = &entry.lock,
                None => return false,
            }
        }
        false
    }

    /// The cycle's edges in wait order: the caller's own edge first, then the
    /// holder of what it waits for, and so on back to the caller.
    #[cold]
    fn cycle_edges(
        &self,
        me: usize,
        lock: &ActorLock,
        target: (ActorId, &'static str),
        my_chain: CallChain,
    ) -> Vec<WaitEdge> {
        let mut edges = vec![WaitEdge {
            thread: me,
            chain: my_chain,
            waits_for: target.0,
            waits_for_name: target.1,
        }];
        let mut current = lock;
        for _ in 0..self.waiting.len() {
            let holder = current.owner();
            if holder == me {
                break;
            }
            let Some(entry) = self.waiter(holder) else {
                break;
            };
            edges.push(WaitEdge {
                thread: entry.thread,
                chain: entry.chain.clone(),
                waits_for: entry.target.0,
                waits_for_name: entry.target.1,
            });
            current = &entry.lock;
        }
        edges
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const A: usize = 101;
    const B: usize = 102;
    const C: usize = 103;

    fn lock_held_by(thread: usize) -> Arc<ActorLock> {
        let lock = Arc::new(ActorLock::new(false));
        assert!(lock.try_acquire(thread));
        lock
    }

    fn waiting(thread: usize, lock: &Arc<ActorLock>, actor: u64) -> WaitEntry {
        WaitEntry {
            thread,
            lock: Arc::clone(lock),
            target: (ActorId(actor), "target"),
            chain: CallChain::default(),
        }
    }

    fn release(locks: &[&Arc<ActorLock>]) {
        for lock in locks {
            // SAFETY: each lock was acquired by `lock_held_by` in this test
            // and is released once, here.
            unsafe { lock.release() };
        }
    }

    /// A holds L1 and waits for L2; B holds L2 and waits for L3; C holds L3
    /// and is about to wait for L1.
    #[test]
    fn a_three_thread_ring_is_reported_from_the_closing_thread_in_wait_order() {
        let (l1, l2, l3) = (lock_held_by(A), lock_held_by(B), lock_held_by(C));
        let reg = Registry {
            waiting: vec![waiting(B, &l3, 3), waiting(A, &l2, 2)],
        };
        assert!(reg.closes_cycle(C, &l1));
        let edges = reg.cycle_edges(C, &l1, (ActorId(1), "one"), CallChain::default());
        let order: Vec<(usize, u64)> = edges
            .iter()
            .map(|e| (e.thread, e.waits_for.get()))
            .collect();
        assert_eq!(order, vec![(C, 1), (A, 2), (B, 3)]);
        assert_eq!(edges[0].waits_for_name, "one");
        release(&[&l1, &l2, &l3]);
    }

    #[test]
    fn a_chain_that_ends_at_a_running_thread_is_no_cycle() {
        // A holds L1 and waits for L2, whose holder B is running, not waiting.
        let (l1, l2) = (lock_held_by(A), lock_held_by(B));
        let reg = Registry {
            waiting: vec![waiting(A, &l2, 2)],
        };
        assert!(!reg.closes_cycle(C, &l1));
        release(&[&l1, &l2]);
    }

    #[test]
    fn a_cycle_among_other_threads_is_not_the_callers_and_the_walk_ends() {
        // A and B deadlock each other (a ring the registry should never
        // hold, but the walk must still end); C waits for L1.
        let (l1, l2) = (lock_held_by(A), lock_held_by(B));
        let reg = Registry {
            waiting: vec![waiting(A, &l2, 2), waiting(B, &l1, 1)],
        };
        assert!(!reg.closes_cycle(C, &l1));
        release(&[&l1, &l2]);
    }

    #[test]
    fn a_free_lock_closes_nothing_and_removal_forgets_the_waiter() {
        let free = Arc::new(ActorLock::new(false));
        let l2 = lock_held_by(B);
        let mut reg = Registry {
            waiting: vec![waiting(A, &l2, 2)],
        };
        assert!(!reg.closes_cycle(A, &free));
        assert!(reg.waiter(A).is_some());
        reg.remove(A);
        assert!(reg.waiter(A).is_none());
        // Token 0 means "no owner" and never matches a waiter.
        assert!(reg.waiter(0).is_none());
        release(&[&l2]);
    }
}
