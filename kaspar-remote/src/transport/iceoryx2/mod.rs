//! Processes on one host through iceoryx2 shared memory (feature
//! `iceoryx2`).
//!
//! How the seam maps onto iceoryx2 (0.9, pure Rust, no daemon):
//!
//! - an endpoint is a publish-subscribe service of byte slices named
//!   `kaspar/inbox/<endpoint>`; [`listen`](Transport::listen) creates it and
//!   its only subscriber (the service admits one, so a second live listener
//!   is refused), with the inbox depth as the subscriber's buffer and the
//!   [`Overflow`] policy as iceoryx2's safe overflow;
//! - [`connect`](Transport::connect) opens the service, waits (up to its
//!   timeout) for the subscriber, and creates a publisher whose sample pool
//!   holds exactly the inbox depth: a full inbox makes the loan fail, so
//!   [`LinkError::Full`] comes before any byte is written and nothing ever
//!   blocks (the publisher's strategy is discard, never retry);
//! - a dead receiving process is found by the liveness monitor (see
//!   `liveness.rs`), which also removes its shared memory;
//! - names are event services whose attributes carry the record (see
//!   `discovery.rs`);
//! - a [`topic`](crate::topic) is a publish-subscribe service named
//!   `kaspar/topic/<name>` with many subscribers, each with a queue of
//!   `topic_depth` frames that drops its oldest when full (see `topic.rs`).
//!
//! Ports use iceoryx2's single-threaded `ipc` flavour, and the links are
//! made `Send` by hand (see the SAFETY notes in `tx.rs` and `rx.rs`): the
//! `ipc_threadsafe` flavour would lock a mutex on every loan, send and
//! receive, about 0.5 µs per round trip on the dev VM (`iceoryx2/raw`
//! against `iceoryx2/raw_threadsafe` in `benches/remote.rs`).

mod config;
mod discovery;
mod liveness;
mod rx;
mod topic;
mod tx;

use std::time::{Duration, Instant};

use ::iceoryx2::config::Config as IceConfig;
use ::iceoryx2::port::publisher::PublisherCreateError;
use ::iceoryx2::port::subscriber::SubscriberCreateError;
use ::iceoryx2::port::update_connections::UpdateConnections;
use ::iceoryx2::prelude::*;
use ::iceoryx2::service::builder::publish_subscribe::PublishSubscribeOpenError;
use parking_lot::Mutex;

pub use config::{Iceoryx2Config, Overflow};
pub use rx::Iceoryx2Rx;
pub use topic::Iceoryx2TopicTx;
pub use tx::Iceoryx2Tx;

use crate::link::{Announcement, LinkError, Transport};
use liveness::Monitor;

/// The iceoryx2 service flavour every port of this transport uses.
type Ipc = ipc::Service;

/// The iceoryx2 back end: one iceoryx2 node per value, shared by all its
/// links.
///
/// With its first link it starts one thread, `kaspar-iox2-liveness`, that
/// wakes every quarter of the liveness timeout to look for dead peers and
/// remove what dead processes left in shared memory; it stops when the
/// transport drops. Links may outlive their transport (they keep their
/// iceoryx2 resources), but from then on nobody reports a dead peer as
/// [`PeerState::Lost`](crate::PeerState::Lost): drop links first.
///
/// ```
/// use std::time::Duration;
/// use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport};
/// use kaspar_remote::{LinkRx, LinkTx, Transport};
///
/// let config = Iceoryx2Config::default().namespace("doc_example").inbox_depth(8);
/// let transport = Iceoryx2Transport::new(config)?;
/// // Usually in two processes; here in one.
/// let mut inbox = transport.listen("desk")?;
/// let mut link = transport.connect("desk", Duration::from_secs(1))?;
/// link.send_frame(5, &mut |buf| buf.copy_from_slice(b"hello"))?;
/// let mut got = Vec::new();
/// assert_eq!(inbox.poll(16, &mut |frame| got.extend_from_slice(frame))?, 1);
/// assert_eq!(got, b"hello");
/// # Ok::<(), kaspar_remote::LinkError>(())
/// ```
pub struct Iceoryx2Transport {
    config: Iceoryx2Config,
    ice: IceConfig,
    // `Node` is `Send` but not `Sync`; it is only used to open services.
    node: Mutex<Node<Ipc>>,
    node_id: u128,
    monitor: Monitor,
}

impl std::fmt::Debug for Iceoryx2Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iceoryx2Transport")
            .field("config", &self.config)
            .field("node_id", &self.node_id)
            .finish()
    }
}

impl Iceoryx2Transport {
    /// Creates the process's iceoryx2 node in the configured namespace.
    /// Installs no signal handler.
    pub fn new(config: Iceoryx2Config) -> Result<Self, LinkError> {
        config.validate()?;
        let mut ice = IceConfig::global_config().clone();
        if let Some(ns) = &config.namespace {
            ice.global.prefix = FileName::new(format!("kaspar_{ns}_").as_bytes())
                .map_err(|e| LinkError::Transport(format!("namespace {ns:?}: {e:?}")))?;
        }
        let node = NodeBuilder::new()
            .config(&ice)
            .signal_handling_mode(SignalHandlingMode::Disabled)
            .create::<Ipc>()
            .map_err(|e| LinkError::Transport(format!("iceoryx2 node: {e:?}")))?;
        let node_id = node.id().value();
        let monitor = Monitor::new(ice.clone(), config.check_interval());
        Ok(Iceoryx2Transport {
            config,
            ice,
            node: Mutex::new(node),
            node_id,
            monitor,
        })
    }

    /// The settings this transport was built with.
    pub fn config(&self) -> &Iceoryx2Config {
        &self.config
    }

    /// The id of this process's iceoryx2 node (what peers watch).
    pub fn node_id(&self) -> u128 {
        self.node_id
    }

    /// The iceoryx2 configuration (namespace included) behind this
    /// transport, for tools that inspect its nodes and services.
    pub fn iceoryx2_config(&self) -> &IceConfig {
        &self.ice
    }

    /// How many dead processes' nodes this transport's liveness monitor
    /// has removed from shared memory.
    pub fn dead_nodes_cleaned(&self) -> u64 {
        self.monitor.dead_nodes_cleaned()
    }

    /// One attempt to connect: `Ok(None)` while the inbox or its listener
    /// is not there yet.
    fn try_connect(
        &self,
        endpoint: &str,
        name: &ServiceName,
    ) -> Result<Option<Iceoryx2Tx>, LinkError> {
        let node = self.node.lock();
        let service = match node
            .service_builder(name)
            .publish_subscribe::<[u8]>()
            .open()
        {
            Ok(service) => service,
            Err(
                PublishSubscribeOpenError::DoesNotExist
                | PublishSubscribeOpenError::IsMarkedForDestruction
                | PublishSubscribeOpenError::HangsInCreation
                | PublishSubscribeOpenError::ServiceInCorruptedState,
            ) => return Ok(None),
            Err(e) => return Err(engine(endpoint, "open the inbox of", e)),
        };
        let mut listener = None;
        service.dynamic_config().list_subscribers(|s| {
            listener = Some((s.node_id.value(), s.buffer_size));
            CallbackProgression::Stop
        });
        let Some((peer_node, depth)) = listener else {
            return Ok(None);
        };
        // Fail: the inbox depth, so that a full inbox fails the loan.
        // Drop-oldest: one more for the loan in hand and one for the
        // sample the reader is looking at, so that a send always succeeds.
        let overflows = service.static_config().has_safe_overflow();
        let pool = if overflows { depth + 2 } else { depth };
        let publisher = service
            .publisher_builder()
            .initial_max_slice_len(self.config.max_frame_len)
            .allocation_strategy(AllocationStrategy::Static)
            .max_loaned_samples(1)
            .backpressure_strategy(BackpressureStrategy::DiscardData)
            .override_sample_preallocation(move |_| pool)
            .create()
            .map_err(|e| match e {
                PublisherCreateError::ExceedsMaxSupportedPublishers => {
                    LinkError::Transport(format!(
                        "the inbox {endpoint:?} accepts no more senders ({} at most)",
                        service.static_config().max_publishers()
                    ))
                }
                e => engine(endpoint, "create a sender to", e),
            })?;
        drop(node);
        publisher
            .update_connections()
            .map_err(|e| engine(endpoint, "connect to", e))?;
        let watch = self
            .monitor
            .watch(Some(peer_node))
            .map_err(LinkError::Transport)?;
        Ok(Some(Iceoryx2Tx::new(
            publisher,
            service,
            watch,
            self.config.max_frame_len,
            overflows,
        )))
    }
}

impl Transport for Iceoryx2Transport {
    type Tx = Iceoryx2Tx;
    type Rx = Iceoryx2Rx;

    fn listen(&self, endpoint: &str) -> Result<Iceoryx2Rx, LinkError> {
        let name = service_name("inbox", endpoint)?;
        let c = &self.config;
        let node = self.node.lock();
        let service = node
            .service_builder(&name)
            .publish_subscribe::<[u8]>()
            .enable_safe_overflow(c.overflow == Overflow::DropOldest)
            .subscriber_max_buffer_size(c.inbox_depth)
            .subscriber_max_borrowed_samples(1)
            .history_size(0)
            .max_subscribers(1)
            .max_publishers(c.max_senders)
            .max_nodes(c.max_senders + 1)
            .open_or_create()
            .map_err(|e| engine(endpoint, "create the inbox", e))?;
        let subscriber = service
            .subscriber_builder()
            .buffer_size(c.inbox_depth)
            .create()
            .map_err(|e| match e {
                SubscriberCreateError::ExceedsMaxSupportedSubscribers => LinkError::Transport(
                    format!("the endpoint {endpoint:?} already has a live listener"),
                ),
                e => engine(endpoint, "listen on", e),
            })?;
        drop(node);
        let watch = self.monitor.watch(None).map_err(LinkError::Transport)?;
        Ok(Iceoryx2Rx::new(
            subscriber,
            service,
            watch,
            endpoint.to_owned(),
        ))
    }

    fn connect(&self, endpoint: &str, timeout: Duration) -> Result<Iceoryx2Tx, LinkError> {
        let name = service_name("inbox", endpoint)?;
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(tx) = self.try_connect(endpoint, &name)? {
                return Ok(tx);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(LinkError::PeerLost);
            }
            std::thread::sleep((deadline - now).min(Duration::from_millis(1)));
        }
    }

    fn announce(&self, name: &str, record: &[u8]) -> Result<Announcement, LinkError> {
        discovery::announce(
            &self.node.lock(),
            &self.ice,
            name,
            record,
            self.config.liveness_timeout,
        )
    }

    fn discover(&self, name: &str) -> Result<Option<Vec<u8>>, LinkError> {
        discovery::discover(&self.ice, name)
    }

    fn liveness_timeout(&self) -> Duration {
        self.config.liveness_timeout
    }
}

/// The iceoryx2 service name for an endpoint (`kind` "inbox") or an
/// announced name (`kind` "name").
fn service_name(kind: &str, name: &str) -> Result<ServiceName, LinkError> {
    if name.is_empty() {
        return Err(LinkError::Transport(format!("an empty {kind} name")));
    }
    ServiceName::new(&format!("kaspar/{kind}/{name}")).map_err(|e| {
        LinkError::Transport(format!(
            "{name:?} is not a valid iceoryx2 {kind} name: {e:?}"
        ))
    })
}

fn engine(endpoint: &str, what: &str, e: impl std::fmt::Debug) -> LinkError {
    LinkError::Transport(format!("iceoryx2 cannot {what} {endpoint:?}: {e:?}"))
}
