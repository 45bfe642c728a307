//! A node's table of inbound sessions, bounded: at most
//! [`NodeConfig::max_sessions`](crate::NodeConfig::max_sessions) at once,
//! and a session that sends nothing for
//! [`NodeConfig::session_idle`](crate::NodeConfig::session_idle) evicted.
//!
//! Eviction is a second-chance sweep (the CLOCK page-replacement scheme)
//! over a FIFO of due checks, one per session:
//!
//! - a session opened gets a check due `idle` after the last sweep;
//! - a check that comes due looks at the session's next expected sequence
//!   number: if it moved since the check was queued (the session sent
//!   something), or the session has a live link back to its sender (a peer
//!   that said hello and is alive), the check is queued again, due `idle`
//!   from now; otherwise the session is evicted and its memory freed;
//! - the first check of a session never evicts it: the time it was queued
//!   with may be old (the last sweep's), so it only starts the count.
//!
//! Invariants: each live session has exactly one check in the queue whose
//! generation matches its own (a session removed otherwise, by a goodbye or
//! a reconnect, leaves a stale check, dropped when it comes due or when
//! the queue is compacted); the queue is ordered by due time (every check
//! is queued at the time of the sweep or poll that queues it, and those
//! times do not go back). So a session is evicted only after at least
//! `idle` without a frame, and at most about twice that; a sweep looks at
//! the front only, and each check is looked at once per `idle` per
//! session, O(1) amortised per session and per period; the queue never
//! holds more than twice the table plus a constant between compactions,
//! which cost O(1) amortised per check they drop.
//!
//! A known session's frame pays one comparison here (whether the queue
//! needs compacting), beside the lookup it always had; a new session one
//! push onto the queue.

use std::collections::hash_map::Entry;
use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

use crate::session::idmap::IdMap;
use std::sync::Arc;

use crate::session::peer::Peer;

/// Checks a sweep looks at, at most, per call: the bridge's periodic work
/// stays short however many sessions come due at once (the rest wait a
/// tick).
const SWEEP_BATCH: usize = 4096;

/// Stale checks tolerated beyond the table's size before the queue is
/// compacted.
const SLACK: usize = 64;

/// The inbound sessions, by session id. Reads and removals go through the
/// map ([`Deref`]); a session is opened only through
/// [`arrive`](Self::arrive), which keeps the bound and queues its first
/// check.
pub(crate) struct Sessions {
    map: IdMap<SessionIn>,
    due: VecDeque<Check>,
    next_gen: u32,
    /// When the last sweep ran: a new session's first check is queued at
    /// this time.
    swept_at: Instant,
    limit: usize,
    idle: Duration,
}

/// One session's next look.
struct Check {
    id: u64,
    /// The session's generation (`SessionIn::gen`) when queued: a check
    /// whose session was removed, and maybe opened again since, is stale.
    gen: u32,
    /// The session's `expected` when queued; `None` for its first check.
    expected: Option<u64>,
    at: Instant,
}

/// What [`Sessions::arrive`] found.
pub(crate) enum Arrival<'a> {
    /// The session, in the table.
    Known(&'a mut SessionIn),
    /// A new session, opened.
    Opened,
    /// A new session, refused: the table is full.
    Refused,
}

impl Sessions {
    /// An empty table holding at most `limit` sessions, evicting those
    /// idle for `idle` (`Duration::MAX`: never); `now` is the node's time
    /// (the first sessions' checks count from it).
    pub(crate) fn new(limit: usize, idle: Duration, now: Instant) -> Self {
        Sessions {
            map: IdMap::default(),
            due: VecDeque::new(),
            next_gen: 0,
            swept_at: now,
            limit,
            idle,
        }
    }

    /// A frame of session `id` arrived, numbered `next - 1`: the session,
    /// if it is in the table; otherwise it is opened, expecting `next`, or
    /// refused at the limit.
    #[inline]
    pub(crate) fn arrive(&mut self, id: u64, next: u64) -> Arrival<'_> {
        // The one cost a known session's frame pays: a comparison.
        if self.due.len() > 2 * self.map.len() + SLACK {
            self.compact();
        }
        let len = self.map.len();
        match self.map.entry(id) {
            Entry::Occupied(o) => Arrival::Known(o.into_mut()),
            Entry::Vacant(_) if len >= self.limit => Arrival::Refused,
            Entry::Vacant(v) => {
                let gen = self.next_gen;
                self.next_gen = gen.wrapping_add(1);
                v.insert(SessionIn::new(next, gen));
                self.due.push_back(Check {
                    id,
                    gen,
                    expected: None,
                    at: self.swept_at,
                });
                Arrival::Opened
            }
        }
    }

    /// Drops the stale checks: afterwards the queue holds exactly one
    /// check per session, in the same order.
    #[cold]
    fn compact(&mut self) {
        let map = &self.map;
        self.due
            .retain(|c| map.get(&c.id).is_some_and(|s| s.gen == c.gen));
    }

    /// The periodic work, at `now`: evicts the sessions idle for the
    /// configured time (see the module's header); returns how many.
    pub(crate) fn sweep(&mut self, now: Instant) -> u64 {
        self.swept_at = now;
        let mut evicted = 0;
        for _ in 0..SWEEP_BATCH {
            let Some(front) = self.due.front() else {
                break;
            };
            // An idle time past what the clock can count never comes due.
            if front.at.checked_add(self.idle).is_none_or(|due| due > now) {
                break;
            }
            let Some(check) = self.due.pop_front() else {
                break;
            };
            let Some(s) = self.map.get(&check.id) else {
                continue;
            };
            if s.gen != check.gen {
                continue;
            }
            let linked = s.reply.as_ref().is_some_and(|peer| !peer.is_lost());
            if linked || check.expected != Some(s.expected) {
                let expected = Some(s.expected);
                self.due.push_back(Check {
                    expected,
                    at: now,
                    ..check
                });
            } else {
                drop(self.map.remove(&check.id));
                evicted += 1;
            }
        }
        if evicted > 0 {
            self.release();
        }
        evicted
    }

    /// Gives memory back once most of the table has gone: a flood of
    /// sessions, evicted, leaves no large table behind.
    fn release(&mut self) {
        let len = self.map.len();
        if self.map.capacity() > 64 && len < self.map.capacity() / 4 {
            self.map.shrink_to(2 * len);
        }
        if self.due.capacity() > 64 && self.due.len() < self.due.capacity() / 4 {
            self.due.shrink_to(2 * self.due.len());
        }
    }
}

impl Deref for Sessions {
    type Target = IdMap<SessionIn>;
    fn deref(&self) -> &IdMap<SessionIn> {
        &self.map
    }
}

impl DerefMut for Sessions {
    fn deref_mut(&mut self) -> &mut IdMap<SessionIn> {
        &mut self.map
    }
}

/// An inbound session: the frames one connection to this node sent.
pub(crate) struct SessionIn {
    /// The next sequence number expected.
    pub(crate) expected: u64,
    /// The sender's endpoint and the link back to it, once it said hello
    /// and that link is open. An ask on a session without one is refused
    /// (counted in `NodeStats::refused`): a sender sends none before the
    /// answer to its hello, which goes out only once the link is set
    /// here.
    pub(crate) reply: Option<Arc<Peer>>,
    /// How the session is authenticated; `None` until some of it is (and
    /// always on a node that does not require authentication).
    pub(crate) auth: Option<Box<crate::session::auth::SessionAuth>>,
    /// The count of frames last acknowledged to the sender (see
    /// [`acks`](crate::session::acks)); `None` while its sender has not said that
    /// it reads acks, or never will (an older build).
    pub(crate) acked: Option<u64>,
    /// Which session of this id it is, for the table's idle checks
    /// ([`Sessions`]).
    pub(crate) gen: u32,
}

impl SessionIn {
    /// A session whose next frame is numbered `expected`, that has not
    /// said hello; `gen` is the table's.
    pub(crate) fn new(expected: u64, gen: u32) -> Self {
        SessionIn {
            expected,
            reply: None,
            auth: None,
            acked: None,
            gen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: Duration = Duration::from_millis(100);

    fn table(limit: usize) -> (Sessions, Instant) {
        let s = Sessions::new(limit, IDLE, Instant::now());
        let t0 = s.swept_at;
        (s, t0)
    }

    #[test]
    fn the_limit_refuses_the_next_session_and_frees_with_a_removal() {
        let (mut s, _) = table(2);
        assert!(matches!(s.arrive(1, 1), Arrival::Opened));
        assert!(matches!(s.arrive(2, 1), Arrival::Opened));
        assert!(matches!(s.arrive(3, 1), Arrival::Refused));
        assert!(
            matches!(s.arrive(1, 2), Arrival::Known(_)),
            "known ones go on"
        );
        assert_eq!(s.len(), 2);
        s.remove(&1);
        assert!(matches!(s.arrive(3, 1), Arrival::Opened));
    }

    #[test]
    fn a_session_is_evicted_after_two_idle_checks_and_not_before() {
        let (mut s, t0) = table(10);
        s.arrive(7, 1);
        // The first check only starts the count.
        assert_eq!(s.sweep(t0 + IDLE - Duration::from_nanos(1)), 0);
        assert_eq!(s.sweep(t0 + IDLE), 0);
        assert_eq!(s.len(), 1);
        assert_eq!(s.sweep(t0 + 2 * IDLE - Duration::from_nanos(1)), 0);
        assert_eq!(s.sweep(t0 + 2 * IDLE), 1);
        assert_eq!((s.len(), s.due.len()), (0, 0));
    }

    #[test]
    fn a_session_that_sent_something_is_kept_for_another_period() {
        let (mut s, t0) = table(10);
        s.arrive(7, 1);
        assert_eq!(s.sweep(t0 + IDLE), 0);
        s.get_mut(&7).unwrap().expected = 5;
        assert_eq!(s.sweep(t0 + 2 * IDLE), 0, "it moved");
        assert_eq!(s.sweep(t0 + 3 * IDLE), 1, "it did not since");
    }

    #[test]
    fn stale_checks_are_dropped_and_the_queue_stays_bounded() {
        let (mut s, t0) = table(10);
        // One id opened and removed again and again: one live check.
        for _ in 0..10_000 {
            s.arrive(9, 1);
            s.remove(&9);
        }
        s.arrive(9, 1);
        assert!(s.due.len() <= 2 * s.len() + SLACK + 1, "{}", s.due.len());
        assert_eq!(s.sweep(t0 + IDLE), 0);
        assert_eq!(s.sweep(t0 + 2 * IDLE), 1);
        assert_eq!(s.len(), 0);
    }

    #[test]
    fn an_idle_time_past_the_clock_never_evicts() {
        let mut s = Sessions::new(10, Duration::MAX, Instant::now());
        let t0 = s.swept_at;
        s.arrive(1, 1);
        assert_eq!(s.sweep(t0 + Duration::from_secs(86_400 * 365)), 0);
        assert_eq!(s.len(), 1);
    }
}
