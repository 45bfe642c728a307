//! Where a node reads the time, and where its session ids come from.
//!
//! A live node reads [`Instant::now`] and draws session ids from the OS,
//! as it always did: [`NodeTime::Live`] is one enum arm, matched where
//! the node's periodic work, a parked hello or a new session reads it.
//! Under feature `sim` a node on a simulated network
//! (`transport::sim::SimNet`) reads the run's virtual
//! clock instead, as an `Instant`: a fixed anchor plus the virtual time
//! elapsed since the node was made, so every deadline the node keeps
//! (ask deadlines, session idle checks, the pause after a failed connect
//! back) falls due in virtual time; and its session ids are numbered by
//! the network, so a seed replays them exactly.

#[cfg(feature = "sim")]
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(feature = "sim")]
use std::sync::Arc;
use std::time::Instant;

/// A node's source of time and session ids.
pub(crate) enum NodeTime {
    /// The wall clock and the OS's randomness.
    Live,
    /// A simulated run's virtual clock, and the network's counter.
    #[cfg(feature = "sim")]
    Simulated(Box<Simulated>),
}

/// The simulated arm of [`NodeTime`].
#[cfg(feature = "sim")]
pub(crate) struct Simulated {
    /// The `Instant` that stands for `origin`.
    anchor: Instant,
    /// The virtual time when the node was made.
    origin: kaspar::Time,
    clock: kaspar::VirtualClock,
    /// The network's next session id.
    sessions: Arc<AtomicU64>,
}

impl NodeTime {
    /// A node on `clock`'s virtual time, numbering its sessions from
    /// `sessions` (shared by every node of one network, so ids are unique
    /// on it).
    #[cfg(feature = "sim")]
    pub(crate) fn simulated(clock: &kaspar::VirtualClock, sessions: Arc<AtomicU64>) -> Self {
        NodeTime::Simulated(Box::new(Simulated {
            anchor: Instant::now(),
            origin: clock.now(),
            clock: clock.clone(),
            sessions,
        }))
    }

    /// The time now: the wall clock's, or the virtual time as an `Instant`.
    #[inline]
    pub(crate) fn now(&self) -> Instant {
        match self {
            NodeTime::Live => Instant::now(),
            #[cfg(feature = "sim")]
            NodeTime::Simulated(s) => s.anchor + s.clock.now().saturating_duration_since(s.origin),
        }
    }

    /// A fresh session id for a new outbound link.
    pub(crate) fn new_session(&self) -> u64 {
        match self {
            NodeTime::Live => crate::wire::new_session(),
            #[cfg(feature = "sim")]
            NodeTime::Simulated(s) => s.sessions.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Whether this is a simulated node's (no bridge thread, no threads
    /// of its own).
    #[cfg(feature = "sim")]
    #[inline]
    pub(crate) fn is_simulated(&self) -> bool {
        match self {
            NodeTime::Live => false,
            #[cfg(feature = "sim")]
            NodeTime::Simulated(_) => true,
        }
    }
}
