//! A simulated network for nodes inside a [`kaspar::sim`] run (feature
//! `sim`): every node on it runs on the simulator's thread, on the run's
//! virtual time, and every fault the network injects is drawn from the
//! run's seed, so a seed replays the same frames, lost, doubled, late or
//! overtaken at the same steps.
//!
//! A node made by [`SimNet::node`] starts no bridge thread. Instead the
//! network hands the simulator one [`Source`] per node
//! ([`SimNet::sources`]), whose steps are: deliver one due frame to the
//! node (the node's inbox poll, for that frame), or run the node's
//! periodic work (lost links, ask deadlines, acks, idle sessions) when a
//! tick is due and there is work for it. Which step runs next, among the
//! sources, the actors and the clients, is the simulator's choice.
//!
//! # What is simulated
//!
//! - Latency: each frame arrives a time after it was sent drawn from
//!   [`NetFaults::latency`]; frames of one link arrive in order unless a
//!   fault says otherwise.
//! - Drop, duplication, delay and reordering of single frames, each with
//!   its chance in parts per million ([`NetFaults`]). A frame that
//!   overtakes others on its link makes them arrive behind it, where the
//!   receiving node drops them as out of sequence and reports a gap: at
//!   most once, never twice.
//! - Partitions between two endpoints, either way, for a virtual time or
//!   until healed ([`SimNet::partition`], [`SimNet::heal`]): frames sent
//!   across, or arriving, while it lasts are lost. One that lasts the
//!   liveness timeout loses the links across it for good.
//! - Peer death ([`SimNet::kill`]): the node stops receiving and sending
//!   (what it sends is discarded, what is in flight to it is lost), and
//!   links to it are reported lost to their senders once the liveness
//!   timeout ([`SimNet::with_liveness`]) has passed in virtual time,
//!   which is when their nodes report [`AskError::PeerLost`](kaspar::AskError::PeerLost)
//!   and the loss ([`Node::losses`]). A node made later on a dead one's
//!   endpoint is a new peer: links to the dead one stay lost.
//!
//! # What is not
//!
//! - Back-pressure: a link never refuses a frame as full (its queue is
//!   unbounded), so send policies that wait are never exercised here.
//! - The threads a live node starts: a hello's link back is opened at
//!   once on the simulator's thread (the network's connect never waits);
//!   a reconnecting address ([`RemoteAddr::with_reconnect`](crate::RemoteAddr::with_reconnect))
//!   still reconnects on a thread of its own, outside the simulation, and
//!   must not be used on a simulated node; nor may the polling waits
//!   (`Node::ask_polling`, `Node::wait_polling`), which spin.
//! - Authentication's nonces come from the OS, not the seed: a node with
//!   [`NodeConfig::auth`] would not replay byte for byte (and is not
//!   tested here).
//! - Waiting for room in a full mailbox: a simulated node's
//!   [`NodeConfig::inbound_wait`] is zero (see [`SimNet::node`]).
//! - Bytes are never corrupted: hostile frames are the fuzz targets' job.
//!
//! A frame's fate is drawn when the network first looks at it after it
//! was sent (in a step of the run), so sends made outside a run (a node
//! dropped after it) are never delivered.

mod net;
mod port;
mod source;

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use kaspar::sim::Source;
use kaspar::VirtualClock;
use parking_lot::Mutex;

pub use self::port::{SimPort, SimRx, SimTx};

use self::net::Net;
use self::source::NodeSource;
use crate::link::LinkError;
use crate::node::clock::NodeTime;
use crate::node::config::NodeConfig;
use crate::node::Node;

/// What a [`SimNet`] does to the frames it carries, and how often: each
/// chance is in parts per million, drawn per frame from the run's seed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetFaults {
    /// Every frame's time in flight, uniform between the two.
    pub latency: (Duration, Duration),
    /// Chance that a frame is lost.
    pub drop_ppm: u32,
    /// Chance that a frame arrives twice (each copy with its own latency).
    pub duplicate_ppm: u32,
    /// Chance that a frame does not keep its place behind the frames sent
    /// before it on its link (it may overtake them).
    pub reorder_ppm: u32,
    /// Chance that a frame is late by up to [`delay`](Self::delay) more.
    pub delay_ppm: u32,
    /// The most a late frame is late by.
    pub delay: Duration,
}

impl Default for NetFaults {
    /// No faults; 10 to 100 µs in flight.
    fn default() -> Self {
        NetFaults {
            latency: (Duration::from_micros(10), Duration::from_micros(100)),
            drop_ppm: 0,
            duplicate_ppm: 0,
            reorder_ppm: 0,
            delay_ppm: 0,
            delay: Duration::ZERO,
        }
    }
}

impl NetFaults {
    /// No faults: frames arrive in order, once, after the default latency.
    pub fn none() -> Self {
        NetFaults::default()
    }

    /// A mix for sweeping seeds: 2% of frames lost, 2% doubled, 2%
    /// reordered, 5% late by up to 2 ms.
    pub fn some() -> Self {
        NetFaults::default()
            .drops(20_000)
            .duplicates(20_000)
            .reorders(20_000)
            .delays(50_000, Duration::from_millis(2))
    }

    /// Frames are lost with this chance.
    pub fn drops(mut self, ppm: u32) -> Self {
        self.drop_ppm = ppm;
        self
    }

    /// Frames arrive twice with this chance.
    pub fn duplicates(mut self, ppm: u32) -> Self {
        self.duplicate_ppm = ppm;
        self
    }

    /// Frames may overtake those sent before them with this chance.
    pub fn reorders(mut self, ppm: u32) -> Self {
        self.reorder_ppm = ppm;
        self
    }

    /// Frames are late by up to `max` with this chance.
    pub fn delays(mut self, ppm: u32, max: Duration) -> Self {
        self.delay_ppm = ppm;
        self.delay = max;
        self
    }
}

/// What a [`SimNet`] did so far, frame by frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetStats {
    /// Frames sent on it (by live nodes).
    pub sent: u64,
    /// Frames handed to a node.
    pub delivered: u64,
    /// Frames lost by the drop fault.
    pub dropped: u64,
    /// Frames sent twice by the duplication fault.
    pub duplicated: u64,
    /// Frames that did not keep their place on their link.
    pub reordered: u64,
    /// Frames made late by the delay fault.
    pub delayed: u64,
    /// Frames lost to a partition.
    pub cut: u64,
    /// Frames from or to a dead node, discarded.
    pub discarded: u64,
}

/// A simulated network (see the [module docs](self)). Clones share it.
#[derive(Clone)]
pub struct SimNet {
    hub: Arc<Hub>,
}

struct Hub {
    clock: VirtualClock,
    /// Session ids for every node on it.
    sessions: Arc<AtomicU64>,
    net: Mutex<Net>,
    records: Mutex<HashMap<String, (u64, Vec<u8>)>>,
}

impl std::fmt::Debug for SimNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let net = self.hub.net.lock();
        f.debug_struct("SimNet")
            .field("ports", &net.ports.keys().collect::<Vec<_>>())
            .field("stats", &net.stats)
            .finish()
    }
}

impl SimNet {
    /// A network on `clock` (the run's: [`Sim::clock`](kaspar::sim::Sim::clock))
    /// with `faults`; a 20 ms liveness timeout and a 1 ms tick, as a live
    /// bridge's.
    pub fn new(clock: &VirtualClock, faults: NetFaults) -> Self {
        SimNet {
            hub: Arc::new(Hub {
                clock: clock.clone(),
                sessions: Arc::new(AtomicU64::new(1)),
                net: Mutex::new(Net::new(faults)),
                records: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// With links to a dead or cut off node found lost after `d` of
    /// virtual time (the engine's liveness timeout).
    pub fn with_liveness(self, d: Duration) -> Self {
        self.hub.net.lock().liveness = d;
        self
    }

    /// With each node's periodic work every `d` of virtual time (while it
    /// has work).
    pub fn with_tick(self, d: Duration) -> Self {
        self.hub.net.lock().tick = d.max(Duration::from_nanos(1));
        self
    }

    /// Replaces the faults from now on (frames already in flight keep
    /// their fate).
    pub fn set_faults(&self, faults: NetFaults) {
        self.hub.net.lock().faults = faults;
    }

    /// A node listening on `endpoint`, with no thread of its own: its
    /// steps are its [`Source`]'s ([`sources`](Self::sources)).
    ///
    /// Its [`NodeConfig::inbound_wait`] is zero: waiting for room in a
    /// full mailbox would wait on the wall clock, on the simulator's
    /// thread, so a message that finds its actor's mailbox full is
    /// refused at once ([`Refused::Full`](crate::Refused::Full)).
    pub fn node(&self, endpoint: &str, config: NodeConfig) -> Result<Node<SimPort>, LinkError> {
        let config = NodeConfig {
            inbound_wait: Duration::ZERO,
            ..config
        };
        let port = SimPort {
            hub: self.hub.clone(),
            me: endpoint.into(),
            gen: Default::default(),
        };
        let time = NodeTime::simulated(&self.hub.clock, self.hub.sessions.clone());
        let (node, driver) = Node::simulated(port, endpoint, config, time)?;
        let now = self.hub.clock.now();
        let mut net = self.hub.net.lock();
        let tick = net.tick;
        if let Some(p) = net.ports.get_mut(endpoint) {
            p.driver = Some(driver);
            p.next_tick = now.saturating_add(tick);
        }
        Ok(node)
    }

    /// One [`Source`] per node on the network, in endpoint order, for
    /// [`Sim::source`](kaspar::sim::Sim::source). Call it once, after
    /// making the nodes: a source serves its endpoint, so a node made
    /// later on the endpoint of a dead one (a restart, even from inside
    /// the run) is stepped by it, while one on a new endpoint has none.
    pub fn sources(&self) -> Vec<Box<dyn Source>> {
        let net = self.hub.net.lock();
        net.ports
            .iter()
            .filter(|(_, p)| p.driver.is_some())
            .map(|(e, _)| Box::new(NodeSource::new(self.hub.clone(), e.clone())) as Box<dyn Source>)
            .collect()
    }

    /// Kills `endpoint`'s node, as if its process died now: it receives
    /// and sends nothing more, frames in flight to it are lost, and the
    /// links to it are found lost a liveness timeout from now. Returns
    /// whether the endpoint exists.
    pub fn kill(&self, endpoint: &str) -> bool {
        let now = self.hub.clock.now();
        self.hub.net.lock().kill(endpoint, None, now)
    }

    /// Whether `endpoint` was killed (or its node dropped).
    pub fn is_dead(&self, endpoint: &str) -> bool {
        self.hub.net.lock().is_dead(endpoint)
    }

    /// Cuts `a` and `b` apart, both ways, from now for `d` of virtual
    /// time (`None`: until [`heal`](Self::heal)).
    pub fn partition(&self, a: &str, b: &str, d: Option<Duration>) {
        let now = self.hub.clock.now();
        let until = d.map(|d| now.saturating_add(d));
        self.hub.net.lock().cut(a, b, now, until);
    }

    /// Ends every partition between `a` and `b` now.
    pub fn heal(&self, a: &str, b: &str) {
        let now = self.hub.clock.now();
        self.hub.net.lock().heal(a, b, now);
    }

    /// What the network did so far.
    pub fn stats(&self) -> NetStats {
        self.hub.net.lock().stats.clone()
    }
}
