//! Asks (and hellos) waiting for their reply from another process, by
//! correlation id, with the link they went out on and a deadline. The
//! asks are bounded ([`NodeConfig::max_pending`](crate::NodeConfig::max_pending)):
//! one past the bound is refused when it is registered, before it is sent.
//!
//! Registering an ask reads no clock: a clock read costs about 20 ns on a
//! VM, a tenth of a shared-memory round trip. The entry carries its
//! timeout, and the bridge's periodic work (which reads the clock anyway)
//! turns it into a deadline at its next tick, so an ask expires after its
//! timeout and at most one tick (about a millisecond) later, never
//! earlier.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaspar::__private::AskSlot;
use kaspar::AskError;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;

use crate::session::counters::Counters;
use crate::session::idmap::IdMap;
use crate::wire::frame::Kind;
use crate::wire::Refused;
use crate::wire::{decode_exact, DecodeError};

/// How a pending ask ends.
pub(crate) enum Outcome<'a> {
    /// The reply frame's body, still encoded.
    Reply(Body<'a>),
    /// The other node refused the message.
    Refused(Refused),
    /// The link was lost, or no reply came before the deadline.
    Lost,
}

/// Completes one pending ask; run exactly once.
pub(crate) enum Complete {
    /// An `ask`'s reply slot, decoded into in place: the slot is the
    /// entry, so a remote ask allocates nothing here.
    Slot(Arc<dyn Fill>),
    /// Anything else (a `request`'s reply sent on as a message, a
    /// lookup's hello).
    Call(Box<dyn FnOnce(Outcome<'_>) + Send>),
}

impl Complete {
    /// The entry for an `ask` whose handle waits on `slot`.
    pub(crate) fn slot<R: DeserializeOwned + Send + 'static>(slot: Arc<AskSlot<R>>) -> Complete {
        Complete::Slot(slot)
    }

    fn run(self, outcome: Outcome<'_>) {
        match self {
            Complete::Slot(slot) => slot.fill(outcome),
            Complete::Call(call) => call(outcome),
        }
    }
}

/// An ask's slot, whatever its reply type.
pub(crate) trait Fill: Send + Sync {
    /// Completes the asker's handle with `outcome`'s reply, decoded, or
    /// the error it stands for.
    fn fill(self: Arc<Self>, outcome: Outcome<'_>);
}

impl<R: DeserializeOwned + Send + 'static> Fill for AskSlot<R> {
    fn fill(self: Arc<Self>, outcome: Outcome<'_>) {
        AskSlot::fill(self, outcome.into_reply());
    }
}

/// A reply frame's body, still encoded, and the node's count of bodies
/// refused for bytes left after their value.
#[derive(Clone, Copy)]
pub(crate) struct Body<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) trailing: &'a AtomicU64,
}

impl Body<'_> {
    /// The body as an `R` that uses every byte of it.
    #[inline]
    pub(crate) fn decode<R: DeserializeOwned>(self) -> Result<R, DecodeError> {
        decode_exact(self.bytes).inspect_err(|e| {
            if e.is_trailing() {
                Counters::bump(self.trailing, 1);
            }
        })
    }
}

impl<'a> Outcome<'a> {
    /// What the asker of a remote `ask` gets: the reply decoded, or the
    /// error this outcome stands for (a body that does not decode, or has
    /// bytes left after the reply, is [`AskError::Dropped`], as a refusal
    /// other than a panic is).
    pub(crate) fn into_reply<R: DeserializeOwned>(self) -> Result<R, AskError> {
        match self {
            // The asker's handle knows no local actor: unnamed.
            Outcome::Reply(body) => body.decode().map_err(|_| AskError::Dropped(None)),
            Outcome::Refused(Refused::Panicked) => Err(AskError::Panicked(None)),
            Outcome::Refused(_) => Err(AskError::Dropped(None)),
            Outcome::Lost => Err(AskError::PeerLost),
        }
    }

    /// The outcome a reply frame of `kind` (`Welcome`, `Reply` or
    /// `Error`) with `body` stands for; `trailing` counts bodies with
    /// bytes left after their value.
    #[inline]
    pub(crate) fn of_frame(kind: Kind, bytes: &'a [u8], trailing: &'a AtomicU64) -> Outcome<'a> {
        let body = Body { bytes, trailing };
        if kind == Kind::Error {
            Outcome::Refused(
                body.decode::<Refused>()
                    .unwrap_or_else(|e| Refused::Decode(e.to_string())),
            )
        } else {
            Outcome::Reply(body)
        }
    }
}

struct Entry {
    peer: u64,
    /// `None` until the first tick after the entry was registered.
    deadline: Option<Instant>,
    timeout: Duration,
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
    /// Some entry registered since the last tick has no deadline yet.
    /// The tick then looks at every entry waiting: as many as the asks in
    /// flight, and nothing to allocate.
    unstamped: bool,
}

pub(crate) struct Pending {
    table: Mutex<Table>,
    next: AtomicU64,
    /// The most entries [`try_insert`](Self::try_insert) lets wait.
    limit: usize,
    /// Entries `try_insert` refused.
    refused: AtomicU64,
}

impl Default for Pending {
    /// No bound.
    fn default() -> Self {
        Pending::with_limit(usize::MAX)
    }
}

impl Pending {
    /// An empty table whose asks are bounded at `limit`.
    pub(crate) fn with_limit(limit: usize) -> Self {
        Pending {
            table: Mutex::default(),
            next: AtomicU64::new(0),
            limit,
            refused: AtomicU64::new(0),
        }
    }

    /// A fresh correlation id (never 0, which tells and control frames
    /// carry).
    pub(crate) fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Registers `complete` under `id` for an ask sent on link `peer`,
    /// as [`insert`](Self::insert) does, unless the table holds its limit
    /// already: then `complete` is dropped unrun, the refusal counted,
    /// and `false` returned (the caller hands the message back).
    pub(crate) fn try_insert(
        &self,
        id: u64,
        peer: u64,
        timeout: Duration,
        complete: Complete,
    ) -> bool {
        let mut t = self.table.lock();
        if t.entries.len() >= self.limit {
            drop(t);
            Counters::bump(&self.refused, 1);
            return false;
        }
        Self::register(&mut t, id, peer, timeout, complete);
        true
    }

    /// Registers `complete` under `id` for a hello sent on link `peer`,
    /// to fail once `timeout` has passed without a reply (counted from
    /// the next tick of [`expire`](Self::expire)). Not bounded: a lookup
    /// waits for its entry to go on its own thread, so there are no more
    /// of these than threads looking up.
    pub(crate) fn insert(&self, id: u64, peer: u64, timeout: Duration, complete: Complete) {
        Self::register(&mut self.table.lock(), id, peer, timeout, complete);
    }

    fn register(t: &mut Table, id: u64, peer: u64, timeout: Duration, complete: Complete) {
        t.entries.insert(
            id,
            Entry {
                peer,
                deadline: None,
                timeout,
                complete,
            },
        );
        t.unstamped = true;
    }

    /// Asks refused at the limit so far.
    pub(crate) fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
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
                e.complete.run(outcome);
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
            e.complete.run(Outcome::Lost);
        }
        n
    }

    /// The periodic work, at `now`: sets the deadlines of the entries
    /// registered since the last call, then fails every entry whose
    /// deadline is before `now`; returns how many failed.
    pub(crate) fn expire(&self, now: Instant) -> usize {
        let expired: Vec<Entry> = {
            let mut guard = self.table.lock();
            let t = &mut *guard;
            if std::mem::take(&mut t.unstamped) {
                for e in t.entries.values_mut().filter(|e| e.deadline.is_none()) {
                    // A timeout past what the clock can count (a caller's
                    // `Duration::MAX`) is a century: never a panic here.
                    let deadline = now
                        .checked_add(e.timeout)
                        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400));
                    e.deadline = Some(deadline);
                    t.earliest = Some(t.earliest.map_or(deadline, |d| d.min(deadline)));
                }
            }
            if t.earliest.is_none_or(|e| e > now) {
                return 0;
            }
            let ids: Vec<u64> = t
                .entries
                .iter()
                .filter(|(_, e)| e.deadline.is_some_and(|d| d <= now))
                .map(|(&id, _)| id)
                .collect();
            let expired = ids.iter().filter_map(|id| t.entries.remove(id)).collect();
            t.earliest = t.entries.values().filter_map(|e| e.deadline).min();
            expired
        };
        let n = expired.len();
        for e in expired {
            e.complete.run(Outcome::Lost);
        }
        n
    }

    /// Fails everything (the node is closing).
    pub(crate) fn fail_all(&self) {
        let all: Vec<Entry> = {
            let mut t = self.table.lock();
            t.earliest = None;
            t.unstamped = false;
            t.entries.drain().map(|(_, e)| e).collect()
        };
        for e in all {
            e.complete.run(Outcome::Lost);
        }
    }

    /// Entries waiting.
    pub(crate) fn len(&self) -> usize {
        self.table.lock().entries.len()
    }
}

impl Drop for Pending {
    /// An ask's slot dropped unfilled would leave its handle waiting for
    /// ever: whatever is still pending fails as lost.
    fn drop(&mut self) {
        self.fail_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// An entry that counts how it ended: 1 lost, 2 reply.
    fn entry(ended: &Arc<AtomicUsize>) -> Complete {
        let ended = ended.clone();
        Complete::Call(Box::new(move |o: Outcome<'_>| {
            let code = match o {
                Outcome::Lost => 1,
                _ => 2,
            };
            ended.store(code, Ordering::SeqCst);
        }))
    }

    #[test]
    fn an_ask_expires_a_timeout_after_the_tick_that_first_saw_it_never_before() {
        let p = Pending::default();
        let ended = Arc::new(AtomicUsize::new(0));
        let timeout = Duration::from_millis(50);
        p.insert(7, 1, timeout, entry(&ended));
        let first_tick = Instant::now();
        // The first tick sets the deadline; even a timeout's worth of
        // ticks later than registration, nothing expires before it.
        assert_eq!(p.expire(first_tick), 0);
        assert_eq!(p.expire(first_tick + timeout - Duration::from_nanos(1)), 0);
        assert_eq!(ended.load(Ordering::SeqCst), 0);
        assert_eq!(p.expire(first_tick + timeout), 1);
        assert_eq!(ended.load(Ordering::SeqCst), 1);
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn a_timeout_past_the_clock_never_expires_and_never_panics() {
        let p = Pending::default();
        let ended = Arc::new(AtomicUsize::new(0));
        p.insert(7, 1, Duration::MAX, entry(&ended));
        let t = Instant::now();
        assert_eq!(p.expire(t), 0);
        assert_eq!(p.expire(t + Duration::from_secs(86_400)), 0);
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn the_limit_refuses_the_next_ask_and_frees_with_an_answer() {
        let p = Pending::with_limit(2);
        let ended: Vec<_> = (0..3).map(|_| Arc::new(AtomicUsize::new(0))).collect();
        let t = Duration::from_secs(1);
        assert!(p.try_insert(1, 1, t, entry(&ended[0])));
        assert!(p.try_insert(2, 1, t, entry(&ended[1])));
        assert!(!p.try_insert(3, 1, t, entry(&ended[2])));
        assert_eq!((p.len(), p.refused()), (2, 1));
        // Dropped unrun: the caller reports the refusal.
        assert_eq!(ended[2].load(Ordering::SeqCst), 0);
        // Lookups' hellos are not bounded.
        p.insert(4, 1, t, entry(&ended[2]));
        assert_eq!(p.len(), 3);
        let trailing = AtomicU64::new(0);
        assert!(p.complete(1, Outcome::of_frame(Kind::Reply, &[], &trailing)));
        assert!(p.complete(4, Outcome::of_frame(Kind::Reply, &[], &trailing)));
        assert!(p.try_insert(5, 1, t, entry(&ended[0])));
        assert_eq!((p.len(), p.refused()), (2, 1));
    }

    #[test]
    fn an_answered_ask_leaves_nothing_for_the_tick() {
        let p = Pending::default();
        let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        p.insert(1, 1, Duration::from_millis(5), entry(&a));
        p.insert(2, 1, Duration::from_millis(10), entry(&b));
        let trailing = AtomicU64::new(0);
        let reply = || Outcome::of_frame(Kind::Reply, &[], &trailing);
        assert!(p.complete(1, reply()));
        assert!(!p.complete(1, reply()), "completed once only");
        let t = Instant::now();
        assert_eq!(p.expire(t), 0);
        assert_eq!(p.expire(t + Duration::from_millis(9)), 0);
        assert_eq!(p.expire(t + Duration::from_millis(10)), 1);
        assert_eq!((a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)), (2, 1));
    }
}
