//! The bridge thread: one per node, it takes frames from the node's inbox
//! and delivers them: messages into local actors, replies to the asks
//! waiting for them, hellos answered. It also does the node's periodic
//! work (lost links, ask deadlines, idle sessions).
//!
//! Nothing a frame says makes it wait: the link back to a hello's sender
//! is opened off it ([`connect_back`](crate::node::connect_back)), every number
//! a peer chose is checked before it is counted with, and a panic while
//! one frame is handled is caught, counted and the frame dropped
//! ([`Inbox::poll`](crate::node::inbox::Inbox::poll)).
//!
//! While idle it waits as the node's
//! [`IdleStrategy`] says: by default it spins, yields,
//! then sleeps in short naps, so an idle node costs next to nothing and
//! never blocks for long; with `Spin` it never sleeps. After a poll that
//! answered an ask of this process it yields its core once, so that the
//! asking thread, when it waits for a core, runs at once.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::actor::inbound::{Inbound, ReplyRoute};
use crate::link::policy::{Idle, IdleStrategy};
use crate::link::LinkRx;
use crate::node::config::Gap;
use crate::node::connect_back::Parked;
use crate::node::inbox::{Catch, Inbox};
use crate::node::shared::{ExportSlot, Shared};
use crate::session::counters::Counters;
use crate::session::idmap::IdMap;
use crate::session::peer::Peer;
use crate::session::pending::Outcome;
use crate::session::sessions::SessionIn;
use crate::session::sessions::{Arrival, Sessions};
use crate::wire::control::{decode_hello, Hello};
use crate::wire::frame::{Frame, Header, Kind};
use crate::wire::Refused;
use parking_lot::Mutex;

/// How often the periodic work runs.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// Under [`IdleStrategy::Spin`] the clock is read once per this many polls,
/// not after each: on a VM a clock read costs as much as an empty poll,
/// and a spinning bridge that reads it every time answers later.
/// 32 empty polls take a few microseconds, far below [`TICK`].
const SPIN_POLLS_PER_CLOCK: u32 = 32;

/// Polls `inbox` (unless a thread in a polling wait holds it) and
/// does the periodic work, until `stop`.
pub(crate) fn run<R: LinkRx>(inbox: &Mutex<Inbox<R>>, shared: Arc<Shared>, stop: Arc<AtomicBool>) {
    // parking_lot allocates for a thread the first time it parks; do it
    // now, so a lock contended later, in steady state, allocates nothing.
    let (lock, cv) = (parking_lot::Mutex::new(()), parking_lot::Condvar::new());
    cv.wait_for(&mut lock.lock(), Duration::from_micros(1));
    let mut idle = Idle::with(shared.config.idle);
    let spin = shared.config.idle == IdleStrategy::Spin;
    let mut unclocked = 0u32;
    let mut next_tick = Instant::now() + TICK;
    let batch = shared.config.poll_batch.max(1);
    while !stop.load(Ordering::Acquire) {
        let (polled, answered) = match inbox.try_lock() {
            // (A frame's handling catches its own panics: see `Inbox::poll`.)
            Some(mut inbox) => inbox.poll(&shared, batch),
            None => (Ok(0), false),
        };
        if answered {
            // The thread waiting for that reply may be queued for this
            // core (a busy machine, or fewer cores than busy threads):
            // hand it over now rather than at the end of this thread's
            // time slice. Costs a system call where it is not.
            std::thread::yield_now();
        }
        if spin {
            // Little between two polls but this count: every instruction
            // here is added to the moment a frame is seen.
            unclocked += 1;
            if unclocked < SPIN_POLLS_PER_CLOCK {
                continue;
            }
            unclocked = 0;
        } else {
            match polled {
                Ok(0) | Err(_) => idle.wait(Some(next_tick)),
                Ok(_) => idle.reset(),
            }
        }
        let now = Instant::now();
        if now >= next_tick {
            periodic(inbox, &shared, now);
            next_tick = now + TICK;
        }
    }
}

/// The node's periodic work at `now`, once per [`TICK`]: on the bridge
/// thread, or as a simulated network's step.
#[inline]
pub(crate) fn periodic<R: LinkRx>(inbox: &Mutex<Inbox<R>>, shared: &Shared, now: Instant) {
    // Hellos whose link back is now open (or failed) are answered
    // here, not on every poll: within a tick of their connect, or
    // once a thread in a polling wait lets go of the inbox.
    if shared.connect_back.has_landed() {
        if let Some(mut inbox) = inbox.try_lock() {
            inbox.land(shared);
        }
    }
    // Idle sessions evicted, a few thousand at most per tick.
    if let Some(mut inbox) = inbox.try_lock() {
        inbox.sweep(shared, now);
    }
    // The periodic work runs watchers and completes asks: a panic
    // there is counted, and the next tick runs as usual.
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| shared.tick(now))) {
        shared.caught(payload);
    }
}

impl Shared {
    /// Counts a panic caught on a thread that polls the inbox, and drops
    /// its payload (whose own drop may panic: then it is leaked).
    pub(crate) fn caught(&self, payload: Box<dyn std::any::Any + Send>) {
        Counters::bump(&self.counters.panics, 1);
        if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
            std::mem::forget(again);
        }
    }

    /// One frame from the inbox; returns whether it answered an ask that
    /// a thread of this process waits for.
    pub(crate) fn on_frame(
        &self,
        sessions: &mut Sessions,
        catch: &mut Catch,
        bytes: &[u8],
    ) -> bool {
        // With authentication on, only what an authenticated session may
        // send goes on (its tag, if it has one, cut off).
        let bytes = match &self.auth {
            None => bytes,
            Some(auth) => match self.admit(auth, sessions, bytes) {
                Some(frame) => frame,
                None => return false,
            },
        };
        let frame = match Frame::parse(bytes) {
            Ok(f) => f,
            Err(_) => {
                Counters::bump(&self.counters.rejected, 1);
                return false;
            }
        };
        let h = frame.header;
        let Some(back) = self.in_sequence(sessions, &h) else {
            return false;
        };
        if catch.take(&h, frame.body) {
            return false;
        }
        match h.kind {
            Kind::Hello => self.on_hello(sessions, &h, frame.body),
            Kind::Welcome | Kind::Reply | Kind::Error => {
                let outcome = Outcome::of_frame(h.kind, frame.body, &self.counters.trailing);
                // A reply to a `request` is queued to an actor from here.
                #[cfg(feature = "tracing")]
                return kaspar::__private::arrived_remote(frame.trace, || {
                    self.pending.complete(h.correlation, outcome)
                });
                #[cfg(not(feature = "tracing"))]
                return self.pending.complete(h.correlation, outcome);
            }
            #[cfg(feature = "tracing")]
            Kind::Tell | Kind::Ask => kaspar::__private::arrived_remote(frame.trace, || {
                self.on_message(&h, frame.body, back)
            }),
            #[cfg(not(feature = "tracing"))]
            Kind::Tell | Kind::Ask => self.on_message(&h, frame.body, back),
            // A goodbye's body is `()`, which is no bytes: one with bytes
            // is not a goodbye, and its session stays.
            Kind::Bye if !frame.body.is_empty() => {
                Counters::bump(&self.counters.trailing, 1);
                Counters::bump(&self.counters.rejected, 1);
            }
            Kind::Bye => {
                sessions.remove(&h.session);
            }
            Kind::Challenge => self.on_challenge(sessions, &h, frame.body),
            Kind::Proof => self.on_proof(sessions, &h, frame.body),
            Kind::Ack => self.on_ack(sessions, &h, frame.body),
        }
        false
    }

    /// Checks the frame's sequence number against its session: `None`
    /// for a frame from the past, a duplicate (dropped: at most once), or
    /// numbered `u64::MAX` (rejected: no sender gets there, and it would
    /// leave no number for the next frame); otherwise the link back to
    /// the sender when the frame is an ask and the session has said
    /// hello (and its link back is open). A jump forward is a gap,
    /// reported.
    fn in_sequence<'s>(
        &self,
        sessions: &'s mut Sessions,
        h: &Header,
    ) -> Option<Option<&'s Arc<Peer>>> {
        let Some(next) = h.seq.checked_add(1) else {
            Counters::bump(&self.counters.rejected, 1);
            return None;
        };
        let (missed, back) = {
            match sessions.arrive(h.session, next) {
                Arrival::Opened => (h.seq, None),
                // The table is full: nothing of a new session is read.
                Arrival::Refused => {
                    Counters::bump(&self.counters.sessions_refused, 1);
                    return None;
                }
                Arrival::Known(s) => {
                    if h.seq < s.expected {
                        Counters::bump(&self.counters.duplicates, 1);
                        return None;
                    }
                    // Not below `expected`, just checked.
                    let missed = h.seq - s.expected;
                    s.expected = next;
                    let back = if h.kind == Kind::Ask {
                        s.reply.as_ref()
                    } else {
                        None
                    };
                    (missed, back)
                }
            }
        };
        if missed > 0 {
            self.record_gap(Gap {
                peer: None,
                session: h.session,
                missed,
                reconnected: false,
            });
        }
        Some(back)
    }

    /// A hello: answered now if this node has a live link to its sender;
    /// otherwise the link is opened off this thread and the hello parked
    /// until it is (see [`connect_back`](crate::node::connect_back)), or
    /// dropped and counted when that cannot be queued.
    fn on_hello(&self, sessions: &mut IdMap<SessionIn>, h: &Header, body: &[u8]) {
        let hello = match decode_hello(body) {
            Ok(hello) => hello,
            Err(e) => {
                if e.is_trailing() {
                    Counters::bump(&self.counters.trailing, 1);
                }
                Counters::bump(&self.counters.rejected, 1);
                return;
            }
        };
        if let Some(back) = self.live_peer(&hello.from) {
            return self.hello_landed(sessions, h, &hello, &back);
        }
        if !self.connect_back.park(self, *h, hello, body.len()) {
            Counters::bump(&self.counters.hellos_dropped, 1);
        }
    }

    /// Answers the parked hellos whose link back has been opened, or
    /// could not be.
    pub(crate) fn on_landed(
        &self,
        sessions: &mut IdMap<SessionIn>,
        landed: Vec<(Parked, Option<Arc<Peer>>)>,
    ) {
        for (p, link) in landed {
            match link {
                Some(back) => self.hello_landed(sessions, &p.header, &p.hello, &back),
                // No way to answer; the asker's lookup times out.
                None => Counters::bump(&self.counters.refused, 1),
            }
        }
    }

    /// Answers a hello over `back`, the link to its sender, which its
    /// session's asks are answered over from now on.
    pub(crate) fn answer_hello(
        &self,
        sessions: &mut IdMap<SessionIn>,
        h: &Header,
        hello: &Hello,
        back: &Arc<Peer>,
    ) {
        let previous = {
            if let Some(s) = sessions.get_mut(&h.session) {
                s.reply = Some(back.clone());
                // Its sender reads acks: acknowledged from the next tick.
                if h.wire_id & crate::session::acks::READS_ACKS != 0 && s.acked.is_none() {
                    s.acked = Some(0);
                }
            }
            // The lost session this one replaces: what it sent that never
            // arrived. Reported once, when the first hello of the new
            // session names it.
            hello
                .previous
                .and_then(|p| sessions.remove(&p.session).map(|old| (p, old.expected)))
        };
        if let Some((p, received)) = previous {
            let missed = p.sent.saturating_sub(received);
            if missed > 0 {
                self.record_gap(Gap {
                    peer: Some(hello.from.clone()),
                    session: p.session,
                    missed,
                    reconnected: true,
                });
            }
        }
        let verdict = {
            let exports = self.exports.read();
            match export_at(&exports, h.target) {
                Some(e) if e.name == hello.export => {
                    if e.actor == hello.actor && e.schema == hello.schema {
                        Ok(())
                    } else {
                        Err(Refused::WrongActor {
                            actor: e.actor.to_owned(),
                            schema: e.schema,
                        })
                    }
                }
                _ => Err(Refused::NoSuchExport(hello.export.clone())),
            }
        };
        let policy = self.config.policy;
        let _ = match verdict {
            Ok(()) => back.send(Kind::Welcome, 0, 0, h.correlation, &(), policy),
            Err(why) => back.send(Kind::Error, 0, 0, h.correlation, &why, policy),
        };
    }

    /// A tell or an ask for an exported actor; `back` is the link to the
    /// asker (see `in_sequence`).
    fn on_message(&self, h: &Header, body: &[u8], back: Option<&Arc<Peer>>) {
        let reply = if h.kind == Kind::Ask {
            match back {
                Some(peer) => Some(ReplyRoute {
                    peer: Cow::Borrowed(peer),
                    correlation: h.correlation,
                    policy: self.config.policy,
                }),
                None => {
                    Counters::bump(&self.counters.refused, 1);
                    return;
                }
            }
        } else {
            None
        };
        let exports = self.exports.read();
        let Some(export) = export_at(&exports, h.target) else {
            if let Some(r) = reply {
                r.refuse(&Refused::UnknownTarget(h.target));
            }
            Counters::bump(&self.counters.refused, 1);
            return;
        };
        let inbound = Inbound {
            wire_id: h.wire_id,
            body,
            reply,
            fast: false,
            wait: self.config.inbound_wait,
            trailing: Some(&self.counters.trailing),
        };
        if (export.deliver)(inbound).is_err() {
            Counters::bump(&self.counters.refused, 1);
        }
    }
}

/// The export in slot `target`, if there is one.
fn export_at(exports: &[Option<ExportSlot>], target: u32) -> Option<&ExportSlot> {
    let slot = usize::try_from(target).ok()?;
    exports.get(slot).and_then(Option::as_ref)
}
