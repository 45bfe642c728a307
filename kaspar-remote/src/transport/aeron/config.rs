//! How an [`AeronTransport`](super::AeronTransport) finds its media driver,
//! its endpoints and its peers.
//!
//! Aeron has no service discovery: a subscriber binds a channel (`aeron:ipc`,
//! or a UDP address) and a stream id, and a publisher must be told the same
//! pair. So endpoint names resolve through a static [`Directory`] written by
//! the operator (the same table in every process), and names outside it fall
//! back, on one host only, to `aeron:ipc` with a stream id hashed from the
//! name. Records for `announce`/`discover` travel on an announcement stream
//! (see [`AnnounceChannel`]).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::topic::TopicRoute;

/// Stream ids at or above this value are reserved for endpoint names that are
/// not in the [`Directory`] (their stream id is a hash of the name).
pub const HASHED_STREAM_IDS: i32 = 1 << 30;

/// The announcement stream's default stream id: just below the hashed range.
pub const ANNOUNCE_STREAM_ID: i32 = HASHED_STREAM_IDS - 1;

/// Where an endpoint lives: an Aeron channel and a stream id on it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Endpoint {
    /// The channel URI, e.g. `aeron:ipc` or `aeron:udp?endpoint=127.0.0.1:40123`.
    pub channel: String,
    /// The stream id; many endpoints may share one channel with different ids.
    pub stream_id: i32,
}

impl Endpoint {
    /// Shared memory through the media driver, on one host.
    pub fn ipc(stream_id: i32) -> Self {
        Endpoint {
            channel: "aeron:ipc".to_owned(),
            stream_id,
        }
    }

    /// UDP unicast: the listening process binds `addr`, senders send to it.
    pub fn udp(addr: SocketAddr, stream_id: i32) -> Self {
        Endpoint {
            channel: format!("aeron:udp?endpoint={addr}"),
            stream_id,
        }
    }

    /// Any channel URI Aeron accepts (with `term-length`, `mtu`, ... as the
    /// operator wants them).
    pub fn channel(channel: impl Into<String>, stream_id: i32) -> Self {
        Endpoint {
            channel: channel.into(),
            stream_id,
        }
    }

    /// The endpoint a name resolves to when it is not in the directory:
    /// `aeron:ipc` with a stream id in `HASHED_STREAM_IDS..=i32::MAX`, the
    /// same in every process (FNV-1a of the name). Two names collide with
    /// probability 2^-30 per pair.
    pub fn hashed_ipc(name: &str) -> Self {
        let mut hash: u32 = 0x811c_9dc5;
        for byte in name.bytes() {
            hash ^= u32::from(byte);
            hash = hash.wrapping_mul(0x0100_0193);
        }
        let offset = (hash % (HASHED_STREAM_IDS as u32)) as i32;
        Endpoint::ipc(HASHED_STREAM_IDS + offset)
    }
}

/// The static table of endpoint names: the same in every process that talks
/// to them.
#[derive(Clone, Default, Debug)]
pub struct Directory {
    entries: HashMap<String, Endpoint>,
}

impl Directory {
    /// An empty directory: every name falls back to hashed IPC.
    pub fn new() -> Self {
        Directory::default()
    }

    /// Adds (or replaces) `name`.
    pub fn with(mut self, name: impl Into<String>, endpoint: Endpoint) -> Self {
        self.insert(name, endpoint);
        self
    }

    /// Adds (or replaces) `name`.
    pub fn insert(&mut self, name: impl Into<String>, endpoint: Endpoint) {
        self.entries.insert(name.into(), endpoint);
    }

    /// The entry for `name`, if the operator wrote one.
    pub fn get(&self, name: &str) -> Option<&Endpoint> {
        self.entries.get(name)
    }
}

/// Which media driver the transport talks to.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum DriverMode {
    /// Start a media driver inside this process (tests, small setups). Its
    /// directory is `dir`, or a fresh one under `/dev/shm` (else the temp
    /// directory); it is deleted when the transport is dropped. Other
    /// processes on the host reach it with [`DriverMode::External`] and
    /// [`AeronTransport::aeron_dir`](super::AeronTransport::aeron_dir).
    Embedded {
        /// The driver's directory; `None` picks a fresh one.
        dir: Option<PathBuf>,
    },
    /// Use a media driver that runs on its own (production): `aeronmd`, or
    /// another process's embedded driver.
    External {
        /// The driver's directory (its `aeron.dir`).
        dir: PathBuf,
    },
}

/// How the embedded driver's threads wait for work.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DriverIdle {
    /// Spin, yield, then park up to 1 ms (Aeron's default): cheap when idle.
    Backoff,
    /// Never park: lowest UDP latency, one core per driver thread.
    BusySpin,
}

/// The stream that carries `announce`d records.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct AnnounceChannel {
    /// `aeron:ipc` (the default) reaches the processes on one media driver;
    /// across hosts use a multicast UDP channel that every host joins.
    pub channel: String,
    /// [`ANNOUNCE_STREAM_ID`] by default.
    pub stream_id: i32,
    /// How often each record is repeated, so that a process that starts
    /// listening later hears it. `discover` listens this long before it
    /// answers for the first time.
    pub interval: Duration,
}

/// Configuration of an [`AeronTransport`](super::AeronTransport).
#[derive(Clone, Debug)]
pub struct AeronConfig {
    pub(crate) driver: DriverMode,
    pub(crate) directory: Directory,
    pub(crate) topics: HashMap<String, TopicRoute>,
    pub(crate) liveness: Duration,
    pub(crate) announce: AnnounceChannel,
    pub(crate) term_length: Option<usize>,
    pub(crate) driver_idle: DriverIdle,
    pub(crate) hashed_fallback: bool,
}

impl AeronConfig {
    /// Aeron's default liveness timeout for clients and images.
    pub const DEFAULT_LIVENESS: Duration = Duration::from_secs(10);

    /// A media driver started inside this process, in a fresh directory.
    pub fn embedded() -> Self {
        AeronConfig::with_driver(DriverMode::Embedded { dir: None })
    }

    /// The media driver whose directory is `dir`.
    pub fn external(dir: impl Into<PathBuf>) -> Self {
        AeronConfig::with_driver(DriverMode::External { dir: dir.into() })
    }

    fn with_driver(driver: DriverMode) -> Self {
        AeronConfig {
            driver,
            directory: Directory::new(),
            topics: HashMap::new(),
            liveness: AeronConfig::DEFAULT_LIVENESS,
            announce: AnnounceChannel {
                channel: "aeron:ipc".to_owned(),
                stream_id: ANNOUNCE_STREAM_ID,
                interval: Duration::from_millis(250),
            },
            term_length: None,
            driver_idle: DriverIdle::Backoff,
            hashed_fallback: true,
        }
    }

    /// The endpoint table (replaces any set before).
    pub fn directory(mut self, directory: Directory) -> Self {
        self.directory = directory;
        self
    }

    /// Adds one endpoint to the table.
    pub fn endpoint(mut self, name: impl Into<String>, endpoint: Endpoint) -> Self {
        self.directory.insert(name, endpoint);
        self
    }

    /// Where the topic `name` travels (see
    /// [`transport::aeron::topic`](super::topic)); replaces an earlier
    /// route for it. Topics not given a route use hashed IPC, as endpoint
    /// names do.
    pub fn topic(mut self, name: impl Into<String>, route: TopicRoute) -> Self {
        self.topics.insert(name.into(), route);
        self
    }

    /// Whether endpoint and topic names outside the directory and the topic
    /// routes resolve to hashed IPC (on by default). Turn it off across
    /// hosts, so that a missing entry is an error rather than a link or a
    /// topic that can only reach this host.
    pub fn hashed_fallback(mut self, on: bool) -> Self {
        self.hashed_fallback = on;
        self
    }

    /// How long a dead or silent peer takes to be reported lost.
    ///
    /// With an embedded driver this sets the driver's client liveness,
    /// image liveness, publication connection and flow-control receiver
    /// timeouts (and a timer interval of a tenth of it, so the checks run
    /// often enough). With an external driver it must match what the driver
    /// was started with (`aeron.client.liveness.timeout`,
    /// `aeron.image.liveness.timeout`,
    /// `aeron.publication.connection.timeout`): the transport cannot change
    /// another process's driver. At least 100 ms.
    pub fn liveness(mut self, timeout: Duration) -> Self {
        self.liveness = timeout.max(Duration::from_millis(100));
        self
    }

    /// Where `announce`d records travel (see [`AnnounceChannel`]).
    pub fn announce_on(mut self, channel: impl Into<String>, stream_id: i32) -> Self {
        self.announce.channel = channel.into();
        self.announce.stream_id = stream_id;
        self
    }

    /// How often announced records are repeated (250 ms by default).
    pub fn announce_interval(mut self, interval: Duration) -> Self {
        self.announce.interval = interval.max(Duration::from_millis(1));
        self
    }

    /// The term length of publications the embedded driver creates (UDP and
    /// IPC; a power of two from 64 KiB to 1 GiB). A publication maps three
    /// terms; a sender may run half a term ahead of its slowest receiver.
    /// Ignored with an external driver (set `term-length` in the channel).
    pub fn term_length(mut self, bytes: usize) -> Self {
        self.term_length = Some(bytes);
        self
    }

    /// How the embedded driver's threads wait for work.
    pub fn driver_idle(mut self, idle: DriverIdle) -> Self {
        self.driver_idle = idle;
        self
    }

    /// The endpoint `name` resolves to, or `None` when it is neither in the
    /// directory nor covered by the hashed fallback.
    pub fn resolve(&self, name: &str) -> Option<Endpoint> {
        match self.directory.get(name) {
            Some(endpoint) => Some(endpoint.clone()),
            None if self.hashed_fallback => Some(Endpoint::hashed_ipc(name)),
            None => None,
        }
    }

    /// The route topic `name` takes, or `None` when it has none and the
    /// hashed fallback is off. The fallback is IPC on the stream hashed
    /// from `kaspar/topic/<name>` (apart from the endpoints' names).
    pub fn resolve_topic(&self, name: &str) -> Option<TopicRoute> {
        match self.topics.get(name) {
            Some(route) => Some(route.clone()),
            None if self.hashed_fallback => Some(TopicRoute::Ipc {
                stream_id: Endpoint::hashed_ipc(&format!("kaspar/topic/{name}")).stream_id,
            }),
            None => None,
        }
    }
}
