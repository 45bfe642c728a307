//! Asks (and hellos) waiting for their reply from another process, by
//! correlation id, with the link they went out on and a deadline.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use crate::error::Refused;

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
    complete: Complete,
}

#[derive(Default)]
struct Table {
    entries: HashMap<u64, Entry>,
    /// (deadline, correlation id) in the order they were added; deadlines
    /// are increasing since every entry gets the same timeout.
    deadlines: VecDeque<(Instant, u64)>,
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
        t.entries.insert(id, Entry { peer, complete });
        t.deadlines.push_back((deadline, id));
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
        let mut expired = Vec::new();
        {
            let mut t = self.table.lock();
            while let Some(&(deadline, id)) = t.deadlines.front() {
                if deadline > now {
                    break;
                }
                t.deadlines.pop_front();
                if let Some(e) = t.entries.remove(&id) {
                    expired.push(e);
                }
            }
            // Answered entries leave their deadline behind; keep the queue
            // from growing past the live entries for long.
            if t.deadlines.len() > 64 && t.deadlines.len() > 4 * t.entries.len() {
                let Table { entries, deadlines } = &mut *t;
                deadlines.retain(|(_, id)| entries.contains_key(id));
            }
        }
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
            t.deadlines.clear();
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
