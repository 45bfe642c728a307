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

use parking_lot::Mutex;

use crate::base::ids::ActorId;
use crate::guard::chain::{self, CallChain};
use crate::guard::lock::ActorLock;

/// One thread's wait, as recorded in the registry.
struct WaitEntry {
    thread: usize,
    lock: Arc<ActorLock>,
    target: (ActorId, &'static str),
    chain: CallChain,
}

static REGISTRY: Mutex<Vec<WaitEntry>> = Mutex::new(Vec::new());

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
        let mut reg = REGISTRY.lock();
        if let Some(i) = reg.iter().position(|e| e.thread == self.thread) {
            reg.swap_remove(i);
        }
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
    if closes_cycle(&reg, me, lock) {
        return Err(cycle_edges(&reg, me, lock, target));
    }
    reg.push(WaitEntry {
        thread: me,
        lock: Arc::clone(lock),
        target,
        chain: chain::snapshot(),
    });
    Ok(Registered { thread: me })
}

/// Follows lock -> owner -> awaited lock from `lock`; true if it reaches
/// `me`. Each step follows one registered thread, so a walk longer than the
/// registry has entered a cycle that does not include `me`.
fn closes_cycle(reg: &[WaitEntry], me: usize, lock: &ActorLock) -> bool {
    let mut current = lock;
    for _ in 0..=reg.len() {
        let holder = current.owner();
        if holder == me {
            return true;
        }
        match reg.iter().find(|e| holder != 0 && e.thread == holder) {
            Some(entry) => current = &entry.lock,
            None => return false,
        }
    }
    false
}

#[cold]
fn cycle_edges(
    reg: &[WaitEntry],
    me: usize,
    lock: &ActorLock,
    target: (ActorId, &'static str),
) -> Vec<WaitEdge> {
    let mut edges = vec![WaitEdge {
        thread: me,
        chain: chain::snapshot(),
        waits_for: target.0,
        waits_for_name: target.1,
    }];
    let mut current = lock;
    for _ in 0..reg.len() {
        let holder = current.owner();
        if holder == me {
            break;
        }
        let Some(entry) = reg.iter().find(|e| e.thread == holder) else {
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
