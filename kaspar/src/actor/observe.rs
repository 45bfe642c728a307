//! What a system's metrics collector and its console read of one actor
//! (features `metrics`, `console`): the actor's cell, type-erased, so that
//! one registry can hold actors of every type.
//!
//! A registry holds each cell weakly (a `Weak<dyn Observed>`), taken when
//! the cell is made; nothing here is on a delivery path. An observation
//! reads the counters the delivery paths keep anyway (`Stats`,
//! `Latencies`, the queue's length), without the actor's lock, as
//! [`Addr::stats`](crate::Addr::stats) and
//! [`Addr::latency`](crate::Addr::latency) do.

use std::sync::{Arc, Weak};

use crate::actor::cell::ActorCell;
use crate::actor::traits::Actor;
use crate::base::ids::Target;
use crate::base::latency::LatencyStats;
use crate::base::stats::ActorStats;

/// An actor the collector can read.
pub(crate) trait Observed: Send + Sync {
    /// A snapshot of the actor's counters, read without its lock while its
    /// handlers may run.
    fn observe(&self) -> Observation;
}

/// One actor, as an [`Observed::observe`] found it.
pub(crate) struct Observation {
    /// Its id, type name and instance name.
    pub(crate) target: Target,
    /// Its counters (the instance name is in `target`).
    pub(crate) stats: ActorStats,
    /// Its service times per message class, if it records them.
    pub(crate) latency: Option<LatencyStats>,
    /// Messages queued for it now: its own mailbox's, or, for a group
    /// member, its group's one queue (shared by the members).
    pub(crate) queued: usize,
    /// Whether it has stopped for good (its last observation).
    pub(crate) stopped: bool,
    /// Who sent to it, how many messages each (feature `console`).
    #[cfg(feature = "console")]
    pub(crate) edges: crate::actor::edges::EdgeCounts,
    /// The address of its lock (its group's, for a member), which names
    /// the thread that runs it (feature `console`).
    #[cfg(feature = "console")]
    pub(crate) lock: usize,
}

impl<A: Actor> Observed for ActorCell<A> {
    fn observe(&self) -> Observation {
        Observation {
            target: self.target(),
            stats: self.counters(),
            latency: self.stats.latency.get().map(|l| l.snapshot(A::CLASSES)),
            queued: self.inbox.len(),
            stopped: self.is_stopped(),
            #[cfg(feature = "console")]
            edges: self.edges.read(),
            #[cfg(feature = "console")]
            lock: Arc::as_ptr(self.lock()) as usize,
        }
    }
}

/// `cell`, as a registry holds it.
pub(crate) fn observed<A: Actor>(cell: &Arc<ActorCell<A>>) -> Weak<dyn Observed> {
    let weak: Weak<ActorCell<A>> = Arc::downgrade(cell);
    weak
}
