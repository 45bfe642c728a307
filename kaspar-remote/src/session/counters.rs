//! A node's event counters: what its sessions, asks and deliveries
//! count, written by whichever thread sees the event and read into
//! [`NodeStats`](crate::NodeStats) by `Node::stats`.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) frames_in: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) duplicates: AtomicU64,
    pub(crate) missed: AtomicU64,
    pub(crate) unsendable: AtomicU64,
    pub(crate) peers_lost: AtomicU64,
    pub(crate) hellos_dropped: AtomicU64,
    pub(crate) panics: AtomicU64,
    pub(crate) trailing: AtomicU64,
    /// Inbound sessions held: a gauge, stored by the inbox's holder.
    pub(crate) sessions: AtomicU64,
    pub(crate) sessions_refused: AtomicU64,
    pub(crate) sessions_evicted: AtomicU64,
    pub(crate) unauthenticated: AtomicU64,
    pub(crate) replayed: AtomicU64,
}

impl Counters {
    /// Adds `n`, a count this node made (one event, a few frames).
    pub(crate) fn bump(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// Adds `n`, a count a peer's frame chose (a gap): saturates at
    /// `u64::MAX` rather than wrap. Off the per-frame path.
    pub(crate) fn add_saturating(c: &AtomicU64, n: u64) {
        let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            Some(v.saturating_add(n))
        });
    }
}
