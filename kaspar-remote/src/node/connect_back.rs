//! Links back to the senders of hellos, opened off the receiving thread.
//!
//! A hello names the endpoint its sender listens on, and the node answers
//! it (and every ask of that session) over a link it opens to that
//! endpoint. Opening one can wait the whole connect timeout (the engine
//! waits for an endpoint nobody listens on to appear), and the endpoint is
//! whatever the frame says. So the thread that reads the inbox (the
//! bridge, or a thread in a polling wait) never opens one: a hello whose
//! sender this node already has a live link to is answered at once, and
//! any other is parked here while a connector thread opens the link, then
//! answered by the bridge's periodic work (within a millisecond of the
//! connect), or refused when the link cannot be opened. The answer goes
//! out only once the session's route back is in place, so a sender that
//! waits for it, as a lookup does, never has an ask refused for want of
//! a route.
//!
//! Everything here is bounded, and a hello past a bound is dropped and
//! counted ([`NodeStats::hellos_dropped`](crate::NodeStats::hellos_dropped)):
//!
//! - at most [`CONNECTORS`] connects run at once, each on a thread of its
//!   own that ends when nothing is queued (a node that is never sent a
//!   hello from a new endpoint starts none);
//! - at most [`QUEUED`] endpoints wait for a connector;
//! - one connect per endpoint at a time: a hello naming an endpoint being
//!   connected waits for that connect; and none for [`RETRY_AFTER`] after
//!   a connect to it failed (a sender that really is there retries its
//!   lookup, and gets through after that);
//! - at most [`PARKED`] hellos wait, each at most [`PARKED_LEN`] bytes.

use std::collections::{HashMap, HashSet, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::node::shared::Shared;
use crate::session::peer::Peer;
use crate::wire::control::Hello;
use crate::wire::frame::Header;

/// The most connects back that run at once (one thread each).
pub(crate) const CONNECTORS: usize = 4;
/// The most endpoints waiting for a connector thread.
pub(crate) const QUEUED: usize = 16;
/// The most hellos waiting for their link back.
pub(crate) const PARKED: usize = 64;
/// The longest hello body that is parked.
pub(crate) const PARKED_LEN: usize = 4096;
/// How long hellos naming an endpoint are dropped after a connect to it
/// failed.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(1);
/// The most endpoints whose failure is remembered for [`RETRY_AFTER`].
const FAILURES_KEPT: usize = 256;

/// A hello waiting for the link back to its sender.
pub(crate) struct Parked {
    pub(crate) header: Header,
    pub(crate) hello: Hello,
}

/// A connect back that has ended: the link, or `None` if it could not be
/// opened.
struct Landed {
    endpoint: String,
    link: Option<Arc<Peer>>,
}

/// The connects back of one node (queued, running, failed lately, ended)
/// and the hellos waiting for them. Nothing here is touched per frame:
/// only by a hello that needs a link back, by the connector threads, and
/// by the bridge's periodic work once [`has_landed`](Self::has_landed).
#[derive(Default)]
pub(crate) struct ConnectBack {
    state: Mutex<State>,
    /// Set while `state.landed` holds something.
    ready: AtomicBool,
}

#[derive(Default)]
struct State {
    /// Endpoints waiting for a connector thread, oldest first.
    queue: VecDeque<String>,
    /// Endpoints queued or being connected.
    busy: HashSet<String>,
    /// Connector threads running.
    threads: usize,
    /// When a connect to an endpoint last failed.
    failed: HashMap<String, Instant>,
    /// Hellos waiting for their link back, oldest first.
    parked: Vec<Parked>,
    /// Connects that ended, whose hellos are not answered yet.
    landed: Vec<Landed>,
}

/// What [`State::admit`] decided.
#[derive(PartialEq, Eq, Debug)]
enum Admit {
    /// Refused: the queue is full, or the endpoint failed lately.
    No,
    /// Queued, or joined a connect queued or running.
    Yes,
    /// Queued, and a connector thread is to be started for it.
    Start,
}

impl State {
    fn admit(&mut self, endpoint: &str, now: Instant) -> Admit {
        if self.busy.contains(endpoint) {
            return Admit::Yes;
        }
        if self
            .failed
            .get(endpoint)
            .is_some_and(|&t| now < t + RETRY_AFTER)
        {
            return Admit::No;
        }
        if self.queue.len() >= QUEUED {
            return Admit::No;
        }
        self.busy.insert(endpoint.to_owned());
        self.queue.push_back(endpoint.to_owned());
        if self.threads < CONNECTORS {
            self.threads += 1;
            Admit::Start
        } else {
            Admit::Yes
        }
    }
}

impl ConnectBack {
    /// Parks `hello` (its frame's header `header`, its body `len` bytes)
    /// until the link back to its sender is opened, off this thread;
    /// `false`, doing nothing, if that is past a bound.
    pub(crate) fn park(&self, shared: &Shared, header: Header, hello: Hello, len: usize) -> bool {
        if len > PARKED_LEN {
            return false;
        }
        let endpoint = hello.from.clone();
        let start = {
            let mut s = self.state.lock();
            if s.parked.len() >= PARKED {
                return false;
            }
            let admit = s.admit(&endpoint, shared.time.now());
            if admit == Admit::No {
                return false;
            }
            s.parked.push(Parked { header, hello });
            admit == Admit::Start
        };
        // A simulated node has no threads of its own: the simulated
        // network's connect never waits, so the link is opened here, and
        // the hello answered by the node's next periodic step.
        #[cfg(feature = "sim")]
        if start && shared.time.is_simulated() {
            connector(shared.me.clone());
            return true;
        }
        if start {
            let me = shared.me.clone();
            let started = std::thread::Builder::new()
                .name("kaspar-remote:connect".into())
                .spawn(move || connector(me));
            if started.is_err() {
                // As a connect that failed: its hellos are refused.
                let mut s = self.state.lock();
                s.threads -= 1;
                if let Some(i) = s.queue.iter().position(|e| *e == endpoint) {
                    s.queue.remove(i);
                }
                drop(s);
                self.land(endpoint, None, shared.time.now());
            }
        }
        true
    }

    /// The next endpoint for a connector thread; `None` ends the thread.
    fn next(&self) -> Option<String> {
        let mut s = self.state.lock();
        let next = s.queue.pop_front();
        if next.is_none() {
            s.threads -= 1;
        }
        next
    }

    /// The connect to `endpoint` has ended.
    fn land(&self, endpoint: String, link: Option<Arc<Peer>>, now: Instant) {
        let mut s = self.state.lock();
        s.busy.remove(&endpoint);
        if link.is_some() {
            s.failed.remove(&endpoint);
        } else {
            if s.failed.len() >= FAILURES_KEPT {
                s.failed.retain(|_, &mut t| now < t + RETRY_AFTER);
            }
            if s.failed.len() < FAILURES_KEPT {
                s.failed.insert(endpoint.clone(), now);
            }
        }
        s.landed.push(Landed { endpoint, link });
        self.ready.store(true, Ordering::Release);
    }

    /// Whether a connect has ended since the last
    /// [`take_landed`](Self::take_landed): one atomic load, in the
    /// bridge's periodic work.
    #[inline]
    pub(crate) fn has_landed(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// The hellos whose connect has ended since the last call, in the
    /// order they came, each with its link back (`None`: it could not be
    /// opened).
    #[cold]
    pub(crate) fn take_landed(&self) -> Vec<(Parked, Option<Arc<Peer>>)> {
        let mut s = self.state.lock();
        self.ready.store(false, Ordering::Relaxed);
        let State { parked, landed, .. } = &mut *s;
        let mut answers = Vec::new();
        for l in landed.drain(..) {
            let mut i = 0;
            while i < parked.len() {
                if parked[i].hello.from == l.endpoint {
                    answers.push((parked.remove(i), l.link.clone()));
                } else {
                    i += 1;
                }
            }
        }
        answers
    }
}

/// A connector thread: opens the links queued, one after another, until
/// none is left (or the node is gone).
fn connector(node: Weak<Shared>) {
    loop {
        let Some(shared) = node.upgrade() else {
            return;
        };
        let Some(endpoint) = shared.connect_back.next() else {
            return;
        };
        // An engine that panics fails this connect, not the thread (which
        // would leave the endpoint busy for good).
        let link = catch_unwind(AssertUnwindSafe(|| shared.peer(&endpoint)))
            .ok()
            .and_then(Result::ok)
            .map(|(peer, _)| peer);
        let now = shared.time.now();
        shared.connect_back.land(endpoint, link, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_connect_per_endpoint_a_bounded_queue_and_a_pause_after_a_failure() {
        let c = ConnectBack::default();
        let admit = |e: &str, t: Instant| c.state.lock().admit(e, t);
        let t = Instant::now();
        assert_eq!(admit("a", t), Admit::Start);
        assert_eq!(admit("a", t), Admit::Yes, "joins the queued connect");
        for i in 1..CONNECTORS {
            assert_eq!(admit(&format!("e{i}"), t), Admit::Start);
        }
        for i in CONNECTORS..QUEUED {
            assert_eq!(admit(&format!("e{i}"), t), Admit::Yes, "{i}");
        }
        assert_eq!(admit("one-too-many", t), Admit::No);
        assert_eq!(c.next().as_deref(), Some("a"));
        assert_eq!(admit("a", t), Admit::Yes, "joins the running connect");
        assert!(!c.has_landed());
        c.land("a".into(), None, t);
        assert!(c.has_landed());
        assert!(c.take_landed().is_empty(), "no hello was parked");
        assert!(!c.has_landed());
        assert_eq!(admit("a", t + RETRY_AFTER / 2), Admit::No, "failed lately");
        assert_eq!(admit("b", t), Admit::Yes, "a slot freed in the queue");
        assert_eq!(admit("c", t), Admit::No);
        c.state.lock().queue.clear();
        assert_eq!(admit("a", t + RETRY_AFTER), Admit::Yes, "may retry now");
    }

    #[test]
    fn the_failures_remembered_are_bounded() {
        let c = ConnectBack::default();
        let t = Instant::now();
        for i in 0..2 * FAILURES_KEPT {
            c.land(format!("e{i}"), None, t);
        }
        assert_eq!(c.state.lock().failed.len(), FAILURES_KEPT);
        c.land("late".into(), None, t + RETRY_AFTER);
        let s = c.state.lock();
        assert_eq!(s.failed.len(), 1, "the expired ones made room");
        assert!(s.failed.contains_key("late"));
    }

    #[test]
    fn landed_hellos_come_back_in_order_with_their_link() {
        let c = ConnectBack::default();
        let hello = |from: &str, n: u64| Parked {
            header: Header {
                kind: crate::wire::frame::Kind::Hello,
                target: 0,
                wire_id: 0,
                body_len: 0,
                correlation: n,
                session: n,
                seq: 0,
            },
            hello: Hello {
                from: from.into(),
                export: "x".into(),
                actor: "X".into(),
                schema: 0,
                previous: None,
                auth: None,
            },
        };
        {
            let mut s = c.state.lock();
            for (from, n) in [("a", 1), ("b", 2), ("a", 3)] {
                s.parked.push(hello(from, n));
            }
        }
        c.land("a".into(), None, Instant::now());
        let answers = c.take_landed();
        let got: Vec<(u64, bool)> = answers
            .iter()
            .map(|(p, link)| (p.header.correlation, link.is_some()))
            .collect();
        assert_eq!(got, [(1, false), (3, false)]);
        assert_eq!(c.state.lock().parked.len(), 1, "b still waits");
    }
}
