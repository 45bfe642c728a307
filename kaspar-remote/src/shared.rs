//! A node's state that its bridge thread, its remote addresses and its
//! handle share: exports, outbound links, inbound sessions, pending asks,
//! counters.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};

use crate::config::{Gap, NodeConfig, NodeStats};
use crate::control::PreviousSession;
use crate::error::Refused;
use crate::inbound::Inbound;
use crate::link::{Announcement, LinkError, LinkTx};
use crate::peer::{Peer, Watcher};
use crate::pending::Pending;

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
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) frames_in: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) duplicates: AtomicU64,
    pub(crate) missed: AtomicU64,
    pub(crate) unsendable: AtomicU64,
    pub(crate) peers_lost: AtomicU64,
}

impl Counters {
    pub(crate) fn bump(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
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
    /// The node is gone: nothing is sent or answered any more.
    pub(crate) closed: AtomicBool,
    next_peer: AtomicU64,
}

#[derive(Default)]
struct Peers {
    live: HashMap<String, Arc<Peer>>,
    /// The last lost session to each endpoint, for the next hello there.
    previous: HashMap<String, PreviousSession>,
}

/// A session id no other connection has: a hash of the time, the process
/// and a counter.
pub(crate) fn new_session() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut h = crate::wire::fnv1a(0xcbf2_9ce4_8422_2325, &t.to_le_bytes());
    h = crate::wire::fnv1a(h, &std::process::id().to_le_bytes());
    crate::wire::fnv1a(h, &n.to_le_bytes())
}

impl Shared {
    pub(crate) fn new(endpoint: String, config: NodeConfig, connect: Connect) -> Self {
        Shared {
            endpoint,
            config,
            pending: Pending::default(),
            counters: Counters::default(),
            exports: RwLock::new(Vec::new()),
            peers: Mutex::new(Peers::default()),
            gaps: Mutex::new(Vec::new()),
            connect,
            closed: AtomicBool::new(false),
            next_peer: AtomicU64::new(1),
        }
    }

    /// The live link to `endpoint`, connecting a new one (a new session)
    /// if there is none. Also returns how the previous session to it
    /// ended, for a new link's hello.
    pub(crate) fn peer(
        &self,
        endpoint: &str,
    ) -> Result<(Arc<Peer>, Option<PreviousSession>), LinkError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(LinkError::PeerLost);
        }
        let mut peers = self.peers.lock();
        if let Some(p) = peers.live.get(endpoint) {
            if !p.is_lost() {
                return Ok((p.clone(), peers.previous.get(endpoint).copied()));
            }
        }
        // A link found lost here, before the bridge's periodic check saw
        // it, is reported here: whoever takes it out of the map reports it.
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
        // Connecting waits at most the connect timeout, under the lock: a
        // second caller for the same endpoint waits for this link rather
        // than opening another.
        let connected = (self.connect)(endpoint, self.config.connect_timeout).map(|link| {
            let id = self.next_peer.fetch_add(1, Ordering::Relaxed);
            let peer = Arc::new(Peer::new(id, endpoint.to_owned(), new_session(), link));
            peers.live.insert(endpoint.to_owned(), peer.clone());
            (peer, peers.previous.get(endpoint).copied())
        });
        drop(peers);
        if let Some(old) = lost {
            self.report_lost(&old);
        }
        connected
    }

    /// Periodic work on the bridge thread: report lost links, expire
    /// asks past their deadline.
    pub(crate) fn tick(&self, now: Instant) {
        let lost: Vec<Arc<Peer>> = {
            let mut peers = self.peers.lock();
            let gone: Vec<String> = peers
                .live
                .iter()
                .filter(|(_, p)| !p.probe())
                .map(|(e, _)| e.clone())
                .collect();
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

    /// Fails the asks sent on `peer` and tells its watchers.
    pub(crate) fn report_lost(&self, peer: &Peer) {
        Counters::bump(&self.counters.peers_lost, 1);
        self.pending.fail_link(peer.id);
        for w in peer.take_watchers() {
            w();
        }
    }

    /// Registers `watcher` for the loss of `peer`; tells it at once if
    /// that was reported already.
    pub(crate) fn watch(&self, peer: &Peer, watcher: Watcher) {
        if let Some(now) = peer.watch(watcher) {
            now();
        }
    }

    pub(crate) fn record_gap(&self, gap: Gap) {
        Counters::bump(&self.counters.missed, gap.missed);
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
        NodeStats {
            frames_in: get(&c.frames_in),
            rejected: get(&c.rejected),
            refused: get(&c.refused),
            duplicates: get(&c.duplicates),
            missed: get(&c.missed),
            unsendable: get(&c.unsendable),
            peers_lost: get(&c.peers_lost),
            pending: self.pending.len(),
        }
    }

    /// Every live link, for the goodbyes when the node closes.
    pub(crate) fn close_links(&self) -> Vec<Arc<Peer>> {
        let mut peers = self.peers.lock();
        peers.live.drain().map(|(_, p)| p).collect()
    }
}
