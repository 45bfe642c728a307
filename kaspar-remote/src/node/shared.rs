//! A node's state that its bridge thread, its remote addresses and its
//! handle share: exports, outbound links, inbound sessions, pending asks,
//! counters.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, RwLock};

use crate::actor::inbound::Inbound;
use crate::link::{Announcement, LinkError, LinkTx};
use crate::node::clock::NodeTime;
use crate::node::config::{Gap, NodeConfig, NodeStats};
use crate::node::connect_back::ConnectBack;
use crate::session::auth::AuthState;
use crate::session::counters::Counters;
use crate::session::peer::{Peer, Watcher};
use crate::session::pending::Pending;
use crate::wire::control::PreviousSession;
use crate::wire::Refused;

/// Opens a link to an endpoint: the transport, with its type erased.
pub(crate) type Connect =
    Box<dyn Fn(&str, Duration) -> Result<Box<dyn LinkTx>, LinkError> + Send + Sync>;

/// Delivers one inbound message to an exported actor.
pub(crate) type DeliverFn = Box<dyn Fn(Inbound<'_>) -> Result<(), Refused> + Send + Sync>;

pub(crate) struct ExportSlot {
    pub(crate) name: String,
    pub(crate) actor: &'static str,
    pub(crate) schema: u64,
    pub(crate) deliver: DeliverFn,
    pub(crate) _announcement: Announcement,
    /// The key ids that may call it ([`Export::allow`](crate::Export::allow)).
    pub(crate) allow: Option<Box<[Box<str>]>>,
}

/// Gaps kept for [`Node::gaps`](crate::Node::gaps); older ones are
/// dropped (their frames stay counted in `missed`).
const GAPS_KEPT: usize = 1024;

pub(crate) struct Shared {
    pub(crate) endpoint: String,
    pub(crate) config: NodeConfig,
    pub(crate) pending: Pending,
    pub(crate) counters: Counters,
    pub(crate) exports: RwLock<Vec<Option<ExportSlot>>>,
    peers: Mutex<Peers>,
    gaps: Mutex<Vec<Gap>>,
    connect: Connect,
    /// Finds announced exports ([`lookup`](crate::node::lookup)).
    pub(crate) discover: crate::node::lookup::Discover,
    /// The node is gone: nothing is sent or answered any more.
    pub(crate) closed: AtomicBool,
    next_peer: AtomicU64,
    /// Links back to the senders of hellos, opened off the receiving
    /// thread.
    pub(crate) connect_back: ConnectBack,
    /// This value, for the connector threads it starts.
    pub(crate) me: Weak<Shared>,
    /// Peer authentication, when the node requires it.
    pub(crate) auth: Option<AuthState>,
    /// The outbound links found lost, with what they sent that was never
    /// acknowledged ([`acks`](crate::session::acks)).
    pub(crate) losses: crate::session::acks::Losses,
    /// Where the node reads the time and draws session ids: the wall
    /// clock, or a simulated run's virtual clock.
    pub(crate) time: NodeTime,
}

#[derive(Default)]
struct Peers {
    live: HashMap<String, Arc<Peer>>,
    /// The last lost session to each endpoint, for the next hello there.
    previous: HashMap<String, PreviousSession>,
    /// The endpoints a thread is connecting to now. Connecting can wait
    /// the connect timeout, so it is done outside this map's lock (the
    /// bridge's periodic work and every lookup take it); another thread
    /// that wants a link there waits for that connect instead of opening
    /// a second link.
    connecting: HashMap<String, Arc<Flight>>,
}

/// A connect in progress, which threads wanting the same endpoint wait
/// for.
#[derive(Default)]
struct Flight {
    landed: Mutex<bool>,
    cv: Condvar,
}

impl Flight {
    fn wait(&self) {
        let mut landed = self.landed.lock();
        while !*landed {
            self.cv.wait(&mut landed);
        }
    }
}

/// Ends a [`Flight`] however its connect ends (an engine that panics
/// included): takes it out of the map and wakes its waiters.
struct Landing<'a> {
    peers: &'a Mutex<Peers>,
    endpoint: &'a str,
    flight: Arc<Flight>,
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        {
            let mut peers = self.peers.lock();
            if peers
                .connecting
                .get(self.endpoint)
                .is_some_and(|f| Arc::ptr_eq(f, &self.flight))
            {
                peers.connecting.remove(self.endpoint);
            }
        }
        *self.flight.landed.lock() = true;
        self.flight.cv.notify_all();
    }
}

impl Shared {
    /// `me` is the `Arc` this value goes into (`Arc::new_cyclic`).
    pub(crate) fn new(
        endpoint: String,
        config: NodeConfig,
        connect: Connect,
        discover: crate::node::lookup::Discover,
        me: Weak<Shared>,
        time: NodeTime,
    ) -> Self {
        let auth = config.auth.clone().map(AuthState::new);
        let pending = Pending::with_limit(config.max_pending);
        Shared {
            endpoint,
            config,
            pending,
            counters: Counters::default(),
            exports: RwLock::new(Vec::new()),
            peers: Mutex::new(Peers::default()),
            gaps: Mutex::new(Vec::new()),
            connect,
            discover,
            closed: AtomicBool::new(false),
            next_peer: AtomicU64::new(1),
            connect_back: ConnectBack::default(),
            me,
            auth,
            losses: Default::default(),
            time,
        }
    }

    /// The live link to `endpoint`, if there is one; never connects.
    pub(crate) fn live_peer(&self, endpoint: &str) -> Option<Arc<Peer>> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        let peers = self.peers.lock();
        peers.live.get(endpoint).filter(|p| !p.is_lost()).cloned()
    }

    /// The live link to `endpoint`, connecting a new one (a new session)
    /// if there is none. Also returns how the previous session to it
    /// ended, for a new link's hello. Connecting waits at most the connect
    /// timeout, on the calling thread (a lookup's, or a connector's for a
    /// hello: never the bridge's), and holds no lock meanwhile: a second
    /// caller for the same endpoint waits for this link rather than
    /// opening another, and nothing else waits.
    pub(crate) fn peer(
        &self,
        endpoint: &str,
    ) -> Result<(Arc<Peer>, Option<PreviousSession>), LinkError> {
        loop {
            if self.closed.load(Ordering::Acquire) {
                return Err(LinkError::PeerLost);
            }
            let mut peers = self.peers.lock();
            if let Some(p) = peers.live.get(endpoint) {
                if !p.is_lost() {
                    return Ok((p.clone(), peers.previous.get(endpoint).copied()));
                }
            }
            if let Some(flight) = peers.connecting.get(endpoint).cloned() {
                drop(peers);
                // Then look again: the link it opened, or none (connect
                // anew).
                flight.wait();
                continue;
            }
            // A link found lost here, before the bridge's periodic check
            // saw it, is reported here: whoever takes it out of the map
            // reports it.
            let lost = peers.live.remove(endpoint);
            if let Some(old) = &lost {
                peers.previous.insert(
                    endpoint.to_owned(),
                    PreviousSession {
                        session: old.session,
                        sent: old.sent(),
                    },
                );
            }
            let flight = Arc::new(Flight::default());
            peers.connecting.insert(endpoint.to_owned(), flight.clone());
            drop(peers);
            let landing = Landing {
                peers: &self.peers,
                endpoint,
                flight,
            };
            let connected =
                (self.connect)(endpoint, self.config.connect_timeout).and_then(|link| {
                    let mut peers = self.peers.lock();
                    if self.closed.load(Ordering::Acquire) {
                        // The node closed meanwhile and said its goodbyes:
                        // this link is not kept.
                        return Err(LinkError::PeerLost);
                    }
                    let id = self.next_peer.fetch_add(1, Ordering::Relaxed);
                    let retain = self.config.retain.as_ref().map(|r| r.frames);
                    let session = self.time.new_session();
                    let peer = Arc::new(Peer::new(id, endpoint.to_owned(), session, link, retain));
                    peers.live.insert(endpoint.to_owned(), peer.clone());
                    Ok((peer, peers.previous.get(endpoint).copied()))
                });
            drop(landing);
            // Reported once nothing is held: its watchers may look the
            // endpoint up again.
            if let Some(old) = lost {
                self.report_lost(&old);
            }
            return connected;
        }
    }

    /// Periodic work on the bridge thread: report lost links, expire
    /// asks past their deadline.
    pub(crate) fn tick(&self, now: Instant) {
        let lost: Vec<Arc<Peer>> = {
            let mut peers = self.peers.lock();
            #[cfg_attr(not(feature = "sim"), allow(unused_mut))]
            let mut gone: Vec<String> = peers
                .live
                .iter()
                .filter(|(_, p)| !p.probe())
                .map(|(e, _)| e.clone())
                .collect();
            // Reported in an order a seed replays, not the map's.
            #[cfg(feature = "sim")]
            gone.sort_unstable();
            gone.iter()
                .filter_map(|e| {
                    let p = peers.live.remove(e)?;
                    peers.previous.insert(
                        e.clone(),
                        PreviousSession {
                            session: p.session,
                            sent: p.sent(),
                        },
                    );
                    Some(p)
                })
                .collect()
        };
        for p in lost {
            self.report_lost(&p);
        }
        self.pending.expire(now);
    }

    /// Settles what `peer` sent that was never acknowledged, fails the
    /// asks sent on it and tells its watchers.
    pub(crate) fn report_lost(&self, peer: &Peer) {
        // A node that closes says goodbye first: what it sent is handled
        // in order by a live peer, not lost.
        if !self.closed.load(Ordering::Acquire) {
            self.account_loss(peer);
        }
        Counters::bump(&self.counters.peers_lost, 1);
        self.pending.fail_link(peer.id);
        for w in peer.take_watchers() {
            w();
        }
    }

    /// The live outbound link whose session is `session`.
    pub(crate) fn link_of_session(&self, session: u64) -> Option<Arc<Peer>> {
        let peers = self.peers.lock();
        peers.live.values().find(|p| p.session == session).cloned()
    }

    /// Registers `watcher` for the loss of `peer`; tells it at once if
    /// that was reported already.
    pub(crate) fn watch(&self, peer: &Peer, watcher: Watcher) {
        if let Some(now) = peer.watch(watcher) {
            now();
        }
    }

    pub(crate) fn record_gap(&self, gap: Gap) {
        Counters::add_saturating(&self.counters.missed, gap.missed);
        let mut gaps = self.gaps.lock();
        if gaps.len() == GAPS_KEPT {
            gaps.remove(0);
        }
        gaps.push(gap);
    }

    pub(crate) fn gaps(&self) -> Vec<Gap> {
        self.gaps.lock().clone()
    }

    pub(crate) fn stats(&self) -> NodeStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let lost = self.losses.totals();
        // Read before the rest, with Acquire: the session count published
        // with it (`Inbox::poll`) is at least as new.
        let frames_in = c.frames_in.load(Ordering::Acquire);
        NodeStats {
            frames_in,
            rejected: get(&c.rejected),
            refused: get(&c.refused),
            duplicates: get(&c.duplicates),
            missed: get(&c.missed),
            unsendable: get(&c.unsendable),
            peers_lost: get(&c.peers_lost),
            hellos_dropped: get(&c.hellos_dropped),
            panics: get(&c.panics),
            trailing: get(&c.trailing),
            unauthenticated: get(&c.unauthenticated),
            replayed: get(&c.replayed),
            pending: self.pending.len(),
            sessions: get(&c.sessions) as usize,
            sessions_refused: get(&c.sessions_refused),
            sessions_evicted: get(&c.sessions_evicted),
            asks_refused: self.pending.refused(),
            unacknowledged: lost.0,
            unacknowledged_dead_lettered: lost.1,
            unacknowledged_not_retained: lost.2,
        }
    }

    /// Every live link, for the goodbyes when the node closes.
    pub(crate) fn close_links(&self) -> Vec<Arc<Peer>> {
        let mut peers = self.peers.lock();
        peers.live.drain().map(|(_, p)| p).collect()
    }
}
