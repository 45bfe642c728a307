//! A reconnecting address's route: the links it has used, the current
//! one, the state of a gap, and the thread that closes it.
//!
//! Invariants:
//!
//! - `current` names an entry of `hops` that was set before `current`
//!   was stored (release), so a sender that loads it (acquire) finds the
//!   entry; it only moves forward, in [`Route::install`], under `state`'s
//!   lock.
//! - Every link in `hops` but the current one is lost, and its engine
//!   handle has been released.
//! - `state.lost` is set once per link, by the first report of that
//!   link's loss ([`Route::on_lost`]), and cleared when the next link is
//!   installed; the watchers are told in the same step that sets it, so
//!   each hears of each loss once.
//! - At most one reconnect thread runs per route (`state.running`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;

use parking_lot::Mutex;

use super::hops::Hops;
use super::Reconnect;
use crate::link::LinkError;
use crate::node::error::LookupError;
use crate::node::shared::Shared;
use crate::session::peer::Peer;

/// One link an address has used: the peer and the export's slot there
/// (a restarted process may export the actor in another slot).
pub(crate) struct Hop {
    pub(crate) peer: Arc<Peer>,
    pub(crate) slot: u32,
}

/// Someone told of every loss; returns whether to keep telling it (a
/// watcher that has stopped is dropped).
pub(crate) type RouteWatcher = dyn Fn() -> bool + Send + Sync;

pub(crate) struct Route {
    shared: Arc<Shared>,
    /// What to look up again: the export's name, the actor's type name
    /// and schema hash.
    export: Arc<str>,
    actor: &'static str,
    schema: u64,
    policy: Reconnect,
    hops: Hops<Hop>,
    /// The index in `hops` of the link sends use.
    current: AtomicUsize,
    state: Mutex<State>,
    me: Weak<Route>,
}

#[derive(Default)]
struct State {
    /// The current link is lost, and its watchers were told: the gap.
    lost: bool,
    /// A reconnect thread runs.
    running: bool,
    /// The route stopped trying: the current link is lost for good.
    gave_up: bool,
    /// Links installed after the first.
    reconnects: u64,
    /// Why the last lookup failed, while in a gap.
    last_error: Option<LookupError>,
    watchers: Vec<Arc<RouteWatcher>>,
}

impl Route {
    /// A route whose first link is `peer`, where `export` is in `slot`;
    /// from now on it hears of that link's loss (at once, if it was lost
    /// already).
    pub(crate) fn new(
        shared: Arc<Shared>,
        first: Hop,
        export: Arc<str>,
        actor: &'static str,
        schema: u64,
        policy: Reconnect,
    ) -> Arc<Route> {
        let route = Arc::new_cyclic(|me| Route {
            shared,
            export,
            actor,
            schema,
            policy,
            hops: Hops::new(first),
            current: AtomicUsize::new(0),
            state: Mutex::new(State::default()),
            me: me.clone(),
        });
        route.arm(0);
        route
    }

    /// The link sends use now: three acquire loads, no lock.
    #[inline]
    pub(crate) fn current(&self) -> &Hop {
        let i = self.current.load(Ordering::Acquire);
        // `current` names an entry set before it was stored (invariants).
        match self.hops.get(i) {
            Some(hop) => hop,
            None => unreachable!("the current link {i} of a route was never set"),
        }
    }

    pub(crate) fn policy(&self) -> Reconnect {
        self.policy
    }

    pub(crate) fn reconnects(&self) -> u64 {
        self.state.lock().reconnects
    }

    pub(crate) fn last_error(&self) -> Option<LookupError> {
        self.state.lock().last_error.clone()
    }

    pub(crate) fn gave_up(&self) -> bool {
        self.state.lock().gave_up
    }

    /// Tells the route when link `i` is reported lost.
    fn arm(&self, i: usize) {
        let Some(hop) = self.hops.get(i) else {
            return;
        };
        let me = self.me.clone();
        self.shared.watch(
            &hop.peer,
            Box::new(move || {
                if let Some(route) = me.upgrade() {
                    route.on_lost(i);
                }
            }),
        );
    }

    /// Registers `watcher` for every loss from now on; tells it at once if
    /// the address is in a gap (or lost for good) now.
    pub(crate) fn watch(&self, watcher: Arc<RouteWatcher>) {
        let lost = {
            let mut s = self.state.lock();
            s.watchers.push(watcher.clone());
            s.lost
        };
        if lost && !watcher() {
            self.forget(&watcher);
        }
    }

    fn forget(&self, watcher: &Arc<RouteWatcher>) {
        self.state
            .lock()
            .watchers
            .retain(|w| !Arc::ptr_eq(w, watcher));
    }

    /// Link `i` was reported lost (once per link: a link's watchers are
    /// taken when its loss is reported). Opens the gap: tells the
    /// watchers and starts the reconnect thread, unless the node is
    /// closed.
    fn on_lost(&self, i: usize) {
        let (watchers, start) = {
            let mut s = self.state.lock();
            if i != self.current.load(Ordering::Relaxed) || s.lost {
                return;
            }
            s.lost = true;
            let start = if self.shared.closed.load(Ordering::Acquire) {
                s.gave_up = true;
                false
            } else {
                !s.running && !s.gave_up
            };
            s.running |= start;
            (s.watchers.clone(), start)
        };
        // Told without the lock: a watcher's send may wait for room.
        for w in &watchers {
            if !w() {
                self.forget(w);
            }
        }
        if start {
            let me = self.me.clone();
            let spawned = std::thread::Builder::new()
                .name("kaspar-remote:reconnect".into())
                .spawn(move || reconnect(me));
            if let Err(e) = spawned {
                let mut s = self.state.lock();
                s.running = false;
                s.gave_up = true;
                s.last_error = Some(LookupError::Link(LinkError::Transport(format!(
                    "no thread to reconnect on: {e}"
                ))));
            }
        }
    }

    /// One lookup; `true` when the thread is done (back, given up, or the
    /// node closed), `false` to try again later.
    fn attempt(&self, since: Instant) -> bool {
        let closed = self.shared.closed.load(Ordering::Acquire);
        let expired = self.policy.give_up.is_some_and(|g| since.elapsed() >= g);
        if closed || expired {
            let mut s = self.state.lock();
            s.running = false;
            s.gave_up = true;
            return true;
        }
        // An engine that panics fails this lookup, not the thread (which
        // would leave the route waiting for a thread that is gone).
        let found = catch_unwind(AssertUnwindSafe(|| {
            self.shared.lookup(&self.export, self.actor, self.schema)
        }))
        .unwrap_or_else(|_| {
            Err(LookupError::Link(LinkError::Transport(
                "the transport panicked during the lookup".into(),
            )))
        });
        match found {
            Ok((peer, slot)) => self.install(Hop { peer, slot }),
            Err(e) => {
                self.state.lock().last_error = Some(e);
                false
            }
        }
    }

    /// Makes `hop` the current link, and closes the gap. Returns `true`
    /// (the thread is done), including when the list has no room left,
    /// where the route gives up.
    fn install(&self, hop: Hop) -> bool {
        let old = {
            let mut s = self.state.lock();
            s.running = false;
            let i = self.current.load(Ordering::Relaxed);
            let next = i + 1;
            if !self.hops.set(next, hop) {
                s.gave_up = true;
                return true;
            }
            self.current.store(next, Ordering::Release);
            s.lost = false;
            s.last_error = None;
            s.reconnects += 1;
            i
        };
        if let Some(old) = self.hops.get(old) {
            old.peer.release();
        }
        self.arm(old + 1);
        true
    }
}

/// The reconnect thread of the route `route` points to: lookups, with
/// the policy's waits between them, until one succeeds or the route is
/// done. Holds the route only while it looks up, so dropping the
/// address's last clone ends it within one wait.
fn reconnect(route: Weak<Route>) {
    let since = Instant::now();
    let mut failed = 0u32;
    loop {
        let wait = {
            let Some(r) = route.upgrade() else {
                return;
            };
            if r.attempt(since) {
                return;
            }
            failed = failed.saturating_add(1);
            r.policy.wait_after(failed)
        };
        std::thread::sleep(wait);
    }
}
