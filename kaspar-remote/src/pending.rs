//! Asks (and hellos) waiting for their reply from another process, by
//! correlation id, with the link they went out on and a deadline.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use crate::error::Refused;
use crate::idmap::IdMap;

/// How a pending ask ends.
pub(crate) enum Outcome<'a> {
    /// The reply frame's body, still encoded.
    Reply(&'a [u8]),
    /// The other node refused the message.
    Refused(Refused),
    /// The link was lost, or no reply came before the deadline.
    Lost,
}

/// Completes one pending ask; called exactly once.
pub(crate) type Complete = Box<dyn FnOnce(Outcome<'_>) + Send>;

struct Entry {
    peer: u64,
    deadline: Instant,
    complete: Complete,
}

#[derive(Default)]
struct Table {
    entries: IdMap<Entry>,
    /// No entry's deadline is before this (it may be earlier than every
    /// deadline left, after the entry that set it was answered): expiring
    /// scans the table only once it has passed, so answered asks cost no
    /// bookkeeping and the steady state allocates nothing.
    earliest: Option<Instant>,
}

#[derive(Default)]
pub(crate) struct Pending {
    table: Mutex<Table>,
    next: AtomicU64,
}

impl Pending {
    /// A fresh correlation id (never 0, which tells and control frames
    /// carry).
    pub(crate) fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Registers `complete` under `id` for an ask sent on link `peer`.
    pub(crate) fn insert(&self, id: u64, peer: u64, deadline: Instant, complete: Complete) {
        let mut t = self.table.lock();
        t.entries.insert(
            id,
            Entry {
                peer,
                deadline,
                complete,
            },
        );
        t.earliest = Some(t.earliest.map_or(deadline, |e| e.min(deadline)));
    }

    /// Removes the entry for `id` unanswered (its send failed).
    pub(crate) fn cancel(&self, id: u64) {
        let entry = self.table.lock().entries.remove(&id);
        drop(entry);
    }

    /// Completes the entry for `id`, if it is still waiting; returns
    /// whether it was.
    pub(crate) fn complete(&self, id: u64, outcome: Outcome<'_>) -> bool {
        let entry = self.table.lock().entries.remove(&id);
        match entry {
            Some(e) => {
                (e.complete)(outcome);
                true
            }
            None => false,
        }
    }

    /// Fails every entry sent on link `peer` (it was lost); returns how
    /// many.
    pub(crate) fn fail_link(&self, peer: u64) -> usize {
        let lost: Vec<Entry> = {
            let mut t = self.table.lock();
            let ids: Vec<u64> = t
                .entries
                .iter()
                .filter(|(_, e)| e.peer == peer)
                .map(|(&id, _)| id)
                .collect();
            ids.iter().filter_map(|id| t.entries.remove(id)).collect()
        };
        let n = lost.len();
        for e in lost {
            (e.complete)(Outcome::Lost);
        }
        n
    }

    /// Fails every entry whose deadline is before `now`; returns how many.
    pub(crate) fn expire(&self, now: Instant) -> usize {
        let expired: Vec<Entry> = {
            let mut t = self.table.lock();
            if t.earliest.is_none_or(|e| e > now) {
                return 0;
            }
            let ids: Vec<u64> = t
                .entries
                .iter()
                .filter(|(_, e)| e.deadline <= now)
                .map(|(&id, _)| id)
                .collect();
            let expired = ids.iter().filter_map(|id| t.entries.remove(id)).collect();
            t.earliest = t.entries.values().map(|e| e.deadline).min();
            expired
        };
        let n = expired.len();
        for e in expired {
            (e.complete)(Outcome::Lost);
        }
        n
    }

    /// Fails everything (the node is closing).
    pub(crate) fn fail_all(&self) {
        let all: Vec<Entry> = {
            let mut t = self.table.lock();
            t.earliest = None;
            t.entries.drain().map(|(_, e)| e).collect()
        };
        for e in all {
            (e.complete)(Outcome::Lost);
        }
    }

    /// Entries waiting.
    pub(crate) fn len(&self) -> usize {
        self.table.lock().entries.len()
    }
}
