//! [`Subscriber`]: takes a topic's frames and delivers them to a local
//! actor, checking each publisher's sequence.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::link::policy::{Idle, IdleStrategy};
use crate::link::{LinkError, LinkRx};
use crate::wire::frame::{Frame, Kind};
use crate::wire::{decode_exact, Wire};

/// Delivers one decoded message to the subscribed actor; hands it back
/// if the actor does not take it.
type Deliver<M> = Box<dyn FnMut(M) -> Result<(), M> + Send>;

/// A subscriber's counters, from [`Subscriber::stats`] or
/// [`SubscriberThread::stats`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
#[non_exhaustive]
pub struct TopicStats {
    /// Frames taken from the engine.
    pub received: u64,
    /// Messages the actor's mailbox took.
    pub delivered: u64,
    /// Messages known lost before they reached this subscriber: dropped
    /// as the oldest of a full queue (a slow subscriber), counted from the
    /// gaps in each publisher's sequence numbers (saturating at
    /// `u64::MAX`).
    pub missed: u64,
    /// Frames dropped because their number was not new (at most once).
    pub duplicates: u64,
    /// Frames that were not a message of this topic's type (a bad frame,
    /// a sequence number of `u64::MAX`, another wire id, a body that does
    /// not decode or has bytes left after the message).
    pub rejected: u64,
    /// Messages decoded but not delivered: the actor's mailbox was full
    /// or the actor had stopped. They are dropped, as a queue overflow
    /// would drop them.
    pub undelivered: u64,
    /// Polls the engine failed (the thread of [`Subscriber::spawn`]
    /// carries on after them).
    pub errors: u64,
}

#[derive(Default)]
struct Counters {
    received: AtomicU64,
    delivered: AtomicU64,
    missed: AtomicU64,
    duplicates: AtomicU64,
    rejected: AtomicU64,
    undelivered: AtomicU64,
    errors: AtomicU64,
}

impl Counters {
    fn bump(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// Adds a count a publisher's frame chose: saturates, never wraps.
    fn add_saturating(c: &AtomicU64, n: u64) {
        let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            Some(v.saturating_add(n))
        });
    }

    fn snapshot(&self) -> TopicStats {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        TopicStats {
            received: l(&self.received),
            delivered: l(&self.delivered),
            missed: l(&self.missed),
            duplicates: l(&self.duplicates),
            rejected: l(&self.rejected),
            undelivered: l(&self.undelivered),
            errors: l(&self.errors),
        }
    }
}

/// One subscription to a topic, delivering into one local actor, from
/// [`Topic::subscribe`](super::Topic::subscribe).
///
/// Nothing arrives until it is polled: by the application's own loop
/// ([`poll`](Self::poll)), or by a thread of its own
/// ([`spawn`](Self::spawn)). Each message is delivered with the actor's
/// `send` (its mailbox's order, its thread), in the order its publisher
/// published it, at most once.
pub struct Subscriber<M> {
    rx: Box<dyn LinkRx>,
    deliver: Deliver<M>,
    /// Per publisher session: the next sequence number expected.
    next: HashMap<u64, u64>,
    counters: Arc<Counters>,
}

impl<M> fmt::Debug for Subscriber<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscriber")
            .field("publishers", &self.next.len())
            .field("stats", &self.counters.snapshot())
            .finish()
    }
}

impl<M: Wire> Subscriber<M> {
    pub(super) fn new(rx: Box<dyn LinkRx>, deliver: Deliver<M>) -> Self {
        Subscriber {
            rx,
            deliver,
            next: HashMap::new(),
            counters: Arc::default(),
        }
    }

    /// Takes at most `limit` frames that have arrived and delivers their
    /// messages; returns how many frames it took. Never blocks: `Ok(0)`
    /// when nothing is there.
    pub fn poll(&mut self, limit: usize) -> Result<usize, LinkError> {
        let Subscriber {
            rx,
            deliver,
            next,
            counters,
        } = self;
        let taken = rx.poll(limit, &mut |bytes| on_frame(bytes, deliver, next, counters));
        if taken.is_err() {
            Counters::bump(&counters.errors, 1);
        }
        taken
    }

    /// This subscriber's counters.
    pub fn stats(&self) -> TopicStats {
        self.counters.snapshot()
    }

    /// Polls on a thread of its own (named `kaspar-topic`), waiting as
    /// `idle` says while nothing arrives, until the returned handle is
    /// stopped or dropped.
    pub fn spawn(mut self, idle: IdleStrategy) -> std::io::Result<SubscriberThread<M>> {
        let stop = Arc::new(AtomicBool::new(false));
        let counters = self.counters.clone();
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("kaspar-topic".into())
                .spawn(move || {
                    let mut wait = Idle::with(idle);
                    while !stop.load(Ordering::Acquire) {
                        match self.poll(256) {
                            Ok(0) | Err(_) => wait.wait(None),
                            Ok(_) => wait.reset(),
                        }
                    }
                    self
                })?
        };
        Ok(SubscriberThread {
            stop,
            thread: Some(thread),
            counters,
        })
    }
}

fn on_frame<M: Wire>(
    bytes: &[u8],
    deliver: &mut Deliver<M>,
    next: &mut HashMap<u64, u64>,
    counters: &Counters,
) {
    Counters::bump(&counters.received, 1);
    let frame = match Frame::parse(bytes) {
        Ok(f) if f.header.kind == Kind::Tell && f.header.wire_id == M::WIRE_ID => f,
        _ => return Counters::bump(&counters.rejected, 1),
    };
    let h = frame.header;
    // No publisher gets to the last number, which would leave none for
    // its next frame.
    let Some(after) = h.seq.checked_add(1) else {
        return Counters::bump(&counters.rejected, 1);
    };
    let expected = next.entry(h.session).or_insert(h.seq);
    if h.seq < *expected {
        return Counters::bump(&counters.duplicates, 1);
    }
    // A subscriber that joins late starts at the first frame it sees; a
    // jump after that is frames dropped on the way (not below `expected`,
    // just checked).
    let gap = h.seq - *expected;
    if gap > 0 {
        Counters::add_saturating(&counters.missed, gap);
    }
    *expected = after;
    match decode_exact::<M>(frame.body) {
        Ok(m) => match deliver(m) {
            Ok(()) => Counters::bump(&counters.delivered, 1),
            Err(_) => Counters::bump(&counters.undelivered, 1),
        },
        Err(_) => Counters::bump(&counters.rejected, 1),
    }
}

/// A [`Subscriber`] polling on its own thread, from [`Subscriber::spawn`].
/// Dropping it stops the thread (within one idle wait) and joins it.
pub struct SubscriberThread<M> {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Subscriber<M>>>,
    counters: Arc<Counters>,
}

impl<M> fmt::Debug for SubscriberThread<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubscriberThread")
            .field("stats", &self.counters.snapshot())
            .finish()
    }
}

impl<M> SubscriberThread<M> {
    /// The subscriber's counters, as its thread updates them.
    pub fn stats(&self) -> TopicStats {
        self.counters.snapshot()
    }

    /// Stops the thread and hands the subscriber back (still subscribed),
    /// to be polled by hand or spawned again. `None` if the thread
    /// panicked.
    pub fn stop(mut self) -> Option<Subscriber<M>> {
        self.stop.store(true, Ordering::Release);
        self.thread.take().and_then(|t| t.join().ok())
    }
}

impl<M> Drop for SubscriberThread<M> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::frame::{self, Header};
    use serde::{Deserialize, Serialize};
    use std::sync::Mutex;

    #[derive(Serialize, Deserialize, kaspar_remote::Wire)]
    #[wire(id = 9)]
    struct Tick(u64);

    fn tick(session: u64, seq: u64, px: u64) -> Vec<u8> {
        let h = Header {
            kind: Kind::Tell,
            target: 0,
            wire_id: 9,
            body_len: 0,
            correlation: 0,
            session,
            seq,
        };
        frame::to_vec(&h, &Tick(px)).unwrap()
    }

    /// Sequence numbers a publisher chose, at 0, 1, MAX-1 and MAX, each
    /// sent twice on a session of its own; jumps inside a session; a body
    /// with a byte after its message. Nothing panics or wraps.
    #[test]
    fn a_publishers_numbers_at_their_extremes_and_bytes_after_a_message() {
        let counters = Counters::default();
        let mut next = HashMap::new();
        let got = Arc::new(Mutex::new(Vec::new()));
        let seen = got.clone();
        let mut deliver: Deliver<Tick> = Box::new(move |t: Tick| {
            seen.lock().unwrap().push(t.0);
            Ok(())
        });
        let mut take = |bytes: &[u8]| on_frame(bytes, &mut deliver, &mut next, &counters);
        for (i, seq) in [0, 1, u64::MAX - 1, u64::MAX].into_iter().enumerate() {
            take(&tick(i as u64, seq, i as u64));
            take(&tick(i as u64, seq, i as u64));
        }
        let s = counters.snapshot();
        assert_eq!(
            (s.delivered, s.duplicates, s.rejected, s.missed),
            (3, 3, 2, 0)
        );
        for session in [10, 11] {
            take(&tick(session, 0, 7));
            take(&tick(session, u64::MAX - 1, 8));
        }
        assert_eq!(
            counters.snapshot().missed,
            u64::MAX,
            "saturated, not wrapped"
        );
        let mut trailing = tick(20, 0, 9);
        trailing.push(0);
        let n = trailing.len() - frame::HEADER_LEN;
        trailing[12..16].copy_from_slice(&u32::try_from(n).unwrap().to_le_bytes());
        take(&trailing);
        let s = counters.snapshot();
        assert_eq!((s.delivered, s.rejected), (7, 3), "{s:?}");
        assert_eq!(*got.lock().unwrap(), [0, 1, 2, 7, 8, 7, 8]);
    }
}
