//! The Aeron back end (feature `aeron`): IPC on one host, UDP unicast and
//! multicast across hosts, through the `rusteron` crates (Aeron's C client
//! and media driver).
//!
//! Aeron moves messages through a *media driver*: clients write into and
//! read from log buffers the driver maps (IPC goes from client to client
//! through them without the driver touching the data; UDP goes through the
//! driver's sender and receiver). A process either starts a driver inside
//! itself ([`AeronConfig::embedded`], for tests and small setups) or uses one
//! that runs on its own ([`AeronConfig::external`]; in production, Aeron's
//! `aeronmd` started with the liveness settings the transport is told).
//! Processes that talk over IPC must use the same driver.
//!
//! Mapping onto the [`link`](crate::link) seam:
//!
//! - an endpoint name resolves to a channel and a stream id through the
//!   static [`Directory`] (Aeron has no discovery; names outside the
//!   directory fall back to hashed IPC stream ids on one host);
//! - [`Transport::listen`] adds a subscription, [`Transport::connect`] an
//!   exclusive publication and waits until a subscriber is connected;
//! - a send claims term space and writes the frame in place
//!   ([`AeronLinkTx`]); a poll reads frames in place ([`AeronLinkRx`]);
//! - a lost peer: Aeron disconnects the publication when the subscriber's
//!   client stops heart-beating (IPC: the driver's client liveness timeout)
//!   or its status messages stop (UDP: the publication connection timeout).
//!   Both are the configured [`AeronConfig::liveness`];
//! - `announce`/`discover` run over an announcement stream (see
//!   [Announcements](#announcements)).
//!
//! Beside the links, [`MulticastPublisher`] / [`MulticastSubscriber`] move
//! raw frames to every host of a multicast group, and the transport is a
//! [`TopicEngine`](crate::topic::TopicEngine), so typed
//! [`Topic`](crate::topic::Topic)s run over multicast or IPC (see
//! [`topic`]).
//!
//! # Announcements
//!
//! Records are repeated on one well-known stream (by default `aeron:ipc`,
//! stream [`ANNOUNCE_STREAM_ID`]; across hosts, a multicast channel set with
//! [`AeronConfig::announce_on`]) by a background thread started on first
//! use, and forgotten by listeners when not repeated within the liveness
//! timeout. The first `discover` waits two repeat intervals so that it has
//! heard every live announcer once.

mod announce;
mod config;
mod driver;
mod multicast;
mod rx;
pub mod topic;
mod tx;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use rusteron_client::{Aeron, AeronExclusivePublication, Handlers};

pub use config::{
    AeronConfig, AnnounceChannel, Directory, DriverIdle, DriverMode, Endpoint, ANNOUNCE_STREAM_ID,
    HASHED_STREAM_IDS,
};
pub use multicast::{MulticastFlow, MulticastGroup, MulticastPublisher, MulticastSubscriber};
pub use rx::AeronLinkRx;
pub use topic::{AeronTopicRx, AeronTopicTx, TopicRoute};
pub use tx::AeronLinkTx;

use crate::link::{Announcement, LinkError, Transport};
use announce::Registry;
use driver::{c_string, engine, EmbeddedDriver};

/// How long the driver may take to create a subscription or publication.
const SETUP_TIMEOUT: Duration = Duration::from_secs(5);

/// What every link of a transport shares; dropped when the transport and
/// its last link are.
pub(crate) struct Shared {
    // Field order is drop order: the announcement thread stops first, then
    // the client closes, then the embedded driver (if any) stops.
    registry: Mutex<Option<Arc<Registry>>>,
    aeron: Aeron,
    config: AeronConfig,
    dir: PathBuf,
    listening: Mutex<HashSet<String>>,
    errors: Arc<Mutex<Option<String>>>,
    _driver: Option<EmbeddedDriver>,
}

/// Aeron as a kaspar-remote [`Transport`].
///
/// Cheap to clone (every clone is the same client). Dropping the last clone
/// and the last link closes the client and, if it was embedded, stops the
/// media driver.
#[derive(Clone)]
pub struct AeronTransport {
    shared: Arc<Shared>,
}

impl AeronTransport {
    /// Starts the embedded driver (if asked for) and connects a client to
    /// the driver. Fails with [`LinkError::Transport`] if the driver cannot
    /// start or cannot be reached.
    pub fn launch(config: AeronConfig) -> Result<Self, LinkError> {
        let dir = driver::driver_dir(&config.driver);
        let embedded = match &config.driver {
            DriverMode::Embedded { .. } => Some(EmbeddedDriver::launch(&dir, &config)?),
            DriverMode::External { .. } => None,
        };
        let errors = Arc::new(Mutex::new(None));
        let aeron = driver::connect_client(&dir, &config, &errors)?;
        Ok(AeronTransport {
            shared: Arc::new(Shared {
                registry: Mutex::new(None),
                aeron,
                config,
                dir,
                listening: Mutex::new(HashSet::new()),
                errors,
                _driver: embedded,
            }),
        })
    }

    /// The media driver's directory: hand it to other processes on this host
    /// ([`AeronConfig::external`]) so that they share the driver, which IPC
    /// needs.
    pub fn aeron_dir(&self) -> &Path {
        &self.shared.dir
    }

    /// The configuration the transport runs with.
    pub fn config(&self) -> &AeronConfig {
        &self.shared.config
    }

    /// The endpoint `name` resolves to.
    pub fn resolve(&self, name: &str) -> Result<Endpoint, LinkError> {
        self.shared.config.resolve(name).ok_or_else(|| {
            LinkError::Transport(format!(
                "no endpoint named {name:?} in the aeron directory (and the hashed fallback is off)"
            ))
        })
    }

    /// The last asynchronous error the client reported (a channel the driver
    /// refused, a driver timeout), if any.
    pub fn last_error(&self) -> Option<String> {
        lock(&self.shared.errors).clone()
    }

    /// A publisher to a multicast group. It does not wait for receivers.
    pub fn publish_multicast(
        &self,
        group: &MulticastGroup,
    ) -> Result<MulticastPublisher, LinkError> {
        group.validate()?;
        let uri = c_string(&group.publisher_channel())?;
        let publication = self
            .shared
            .aeron
            .add_exclusive_publication(&uri, group.stream_id, SETUP_TIMEOUT)
            .map_err(|e| self.refused("multicast publication", e))?;
        Ok(MulticastPublisher {
            inner: tx::Publisher::new(publication, false, Arc::clone(&self.shared))?,
        })
    }

    /// Joins a multicast group.
    pub fn subscribe_multicast(
        &self,
        group: &MulticastGroup,
    ) -> Result<MulticastSubscriber, LinkError> {
        group.validate()?;
        let uri = c_string(&group.subscriber_channel())?;
        let subscription = self
            .shared
            .aeron
            .add_subscription(
                &uri,
                group.stream_id,
                Handlers::NONE,
                Handlers::NONE,
                SETUP_TIMEOUT,
            )
            .map_err(|e| self.refused("multicast subscription", e))?;
        Ok(MulticastSubscriber {
            inner: rx::Subscriber::new(subscription, Arc::clone(&self.shared)),
        })
    }

    fn registry(&self) -> Result<Arc<Registry>, LinkError> {
        let mut slot = lock(&self.shared.registry);
        if let Some(registry) = &*slot {
            return Ok(Arc::clone(registry));
        }
        let registry = Arc::new(Registry::start(
            &self.shared.aeron,
            &self.shared.config.announce,
            self.shared.config.liveness,
        )?);
        *slot = Some(Arc::clone(&registry));
        Ok(registry)
    }

    /// An engine error, with the client's last asynchronous error (which
    /// usually says why the driver refused).
    fn refused(&self, what: &str, error: impl std::fmt::Display) -> LinkError {
        match self.last_error() {
            Some(reason) => LinkError::Transport(format!("aeron {what}: {error}: {reason}")),
            None => engine(what, error),
        }
    }

    fn add_publication(
        &self,
        endpoint: &Endpoint,
        timeout: Duration,
    ) -> Result<AeronExclusivePublication, LinkError> {
        let uri = c_string(&endpoint.channel)?;
        self.shared
            .aeron
            .add_exclusive_publication(&uri, endpoint.stream_id, timeout)
            .map_err(|e| self.refused("publication", e))
    }
}

impl Transport for AeronTransport {
    type Tx = AeronLinkTx;
    type Rx = AeronLinkRx;

    /// Subscribes to the endpoint's channel and stream.
    ///
    /// Aeron itself lets any number of processes subscribe to one stream
    /// (each gets every frame). An endpoint has one listener, so this
    /// refuses a name this process already listens on and, for IPC, a
    /// stream some live process subscribes to (a publication to it is
    /// connected at once). Two processes racing to listen on a name can
    /// both succeed; UDP endpoints are protected by the port's bind instead.
    fn listen(&self, endpoint: &str) -> Result<AeronLinkRx, LinkError> {
        let target = self.resolve(endpoint)?;
        if !lock(&self.shared.listening).insert(endpoint.to_owned()) {
            return Err(LinkError::Transport(format!(
                "this process already listens on {endpoint:?}"
            )));
        }
        let claim = ListenClaim {
            shared: Arc::clone(&self.shared),
            name: endpoint.to_owned(),
        };
        if target.channel.starts_with("aeron:ipc") {
            let probe = self.add_publication(&target, SETUP_TIMEOUT)?;
            if probe.is_connected() {
                return Err(LinkError::Transport(format!(
                    "a live process already listens on {endpoint:?} ({} stream {})",
                    target.channel, target.stream_id
                )));
            }
        }
        let uri = c_string(&target.channel)?;
        let subscription = self
            .shared
            .aeron
            .add_subscription(
                &uri,
                target.stream_id,
                Handlers::NONE,
                Handlers::NONE,
                SETUP_TIMEOUT,
            )
            .map_err(|e| self.refused("subscription", e))?;
        Ok(AeronLinkRx {
            inner: rx::Subscriber::new(subscription, Arc::clone(&self.shared)),
            _claim: claim,
        })
    }

    /// Adds an exclusive publication (a session of its own) and waits, at
    /// most `timeout` in all, until the endpoint's subscriber is connected
    /// to it. A driver that does not create the publication in that time is
    /// a [`LinkError::Transport`].
    fn connect(&self, endpoint: &str, timeout: Duration) -> Result<AeronLinkTx, LinkError> {
        let deadline = Instant::now() + timeout;
        let target = self.resolve(endpoint)?;
        let publication = self.add_publication(&target, timeout)?;
        while !publication.is_connected() {
            if Instant::now() >= deadline {
                return Err(LinkError::PeerLost);
            }
            thread::sleep(Duration::from_millis(1));
        }
        Ok(AeronLinkTx {
            inner: tx::Publisher::new(publication, true, Arc::clone(&self.shared))?,
        })
    }

    fn announce(&self, name: &str, record: &[u8]) -> Result<Announcement, LinkError> {
        self.registry()?.announce(name, record)
    }

    fn discover(&self, name: &str) -> Result<Option<Vec<u8>>, LinkError> {
        Ok(self.registry()?.discover(name))
    }

    fn liveness_timeout(&self) -> Duration {
        self.shared.config.liveness
    }
}

impl std::fmt::Debug for AeronTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AeronTransport")
            .field("dir", &self.shared.dir)
            .field("config", &self.shared.config)
            .finish()
    }
}

/// Frees an endpoint name of this process when its inbox drops.
pub(crate) struct ListenClaim {
    shared: Arc<Shared>,
    name: String,
}

impl Drop for ListenClaim {
    fn drop(&mut self) {
        lock(&self.shared.listening).remove(&self.name);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
