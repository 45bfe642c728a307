//! Topics over Aeron: the [`TopicEngine`] of [`AeronTransport`], so that
//! the typed [`Publisher`](crate::topic::Publisher) and
//! [`Subscriber`](crate::topic::Subscriber) of a
//! [`Topic`](crate::topic::Topic) work across hosts (UDP multicast) and
//! between the processes of one host (IPC).
//!
//! A topic name resolves to a [`TopicRoute`] through
//! [`AeronConfig::topic`](super::AeronConfig::topic) (the same table in
//! every process), or, when it has none, to IPC on a stream id hashed from
//! the name (on one host, and only while
//! [`hashed_fallback`](super::AeronConfig::hashed_fallback) is on):
//!
//! - [`TopicRoute::Multicast`]: the publisher sends each frame once to a
//!   multicast group and the network copies it to every host that joined
//!   (built on [`MulticastPublisher`](super::MulticastPublisher) and
//!   [`MulticastSubscriber`](super::MulticastSubscriber)). Each host runs
//!   its own media driver; Aeron's NAKs repair what the network loses.
//! - [`TopicRoute::Ipc`]: the log buffer of this host's media driver, read
//!   in place by every subscriber (the processes must share the driver).
//!
//! Every publisher of a topic is an Aeron session of its own: its frames
//! reach each subscriber in the order it published them, interleaved with
//! other publishers' frames.
//!
//! ```
//! use std::net::Ipv4Addr;
//! use std::time::Duration;
//!
//! use kaspar::prelude::*;
//! use kaspar_remote::topic::Topic;
//! use kaspar_remote::transport::aeron::{
//!     AeronConfig, AeronTransport, MulticastGroup, TopicRoute,
//! };
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, kaspar_remote::Wire)]
//! #[wire(id = 7)]
//! pub struct Tick {
//!     pub px: i64,
//! }
//!
//! #[actor]
//! pub struct Last {
//!     px: i64,
//! }
//!
//! #[actor]
//! impl Last {
//!     #[handler(Tick)]
//!     fn on_tick(&mut self, t: Tick, _ctx: &mut Ctx<Self>) {
//!         self.px = t.px;
//!     }
//! }
//!
//! // Across hosts, every process's configuration routes the topic to the
//! // same multicast group:
//! let group = MulticastGroup::new(Ipv4Addr::new(239, 1, 2, 3), 40456, 10);
//! let _across_hosts = AeronConfig::embedded().topic("ticks/ES", TopicRoute::Multicast(group));
//!
//! // Here, one process: without a route the topic goes over IPC.
//! let engine = AeronTransport::launch(AeronConfig::embedded())?;
//! let ticks = Topic::<Tick>::new("ticks/ES");
//! let system = System::new();
//! let last = system.spawn(Last { px: 0 }).start();
//! let mut sub = ticks.subscribe(&engine, &last)?;
//! let mut publisher = ticks.publisher(&engine)?;
//! // The driver connects them in a moment.
//! for _ in 0..5_000 {
//!     if publisher.subscribers() == 1 {
//!         break;
//!     }
//!     std::thread::sleep(Duration::from_millis(1));
//! }
//! assert_eq!(publisher.publish(&Tick { px: 101 })?, 1, "one or more subscribers");
//! let mut taken = 0;
//! for _ in 0..5_000 {
//!     taken += sub.poll(16)?;
//!     if taken == 1 {
//!         break;
//!     }
//!     std::thread::sleep(Duration::from_millis(1));
//! }
//! assert_eq!(sub.stats().delivered, 1);
//! system.shutdown();
//! # Ok::<(), kaspar_remote::LinkError>(())
//! ```
//!
//! # Where Aeron differs from iceoryx2
//!
//! The [`Publisher`](crate::topic::Publisher) and
//! [`Subscriber`](crate::topic::Subscriber) are the same; what the engine
//! below them does is not:
//!
//! - **How many subscribers.** An Aeron publication knows whether some
//!   receiver is connected, not how many: a publish returns `Ok(1)` when at
//!   least one is (the frame went to all of them) and `Ok(0)` when none is
//!   (nothing was sent); [`TopicTx::subscribers`] is 1 or 0 the same way.
//!   With [`MulticastFlow::Slowest`](super::MulticastFlow::Slowest) and
//!   `min_receivers: Some(n)`, "connected" means that `n` receivers joined.
//! - **What a slow subscriber loses.** iceoryx2 drops a slow subscriber's
//!   oldest frame, one at a time. Aeron keeps a window of the log (half a
//!   term) per publication: over multicast with
//!   [`MulticastFlow::Fastest`](super::MulticastFlow::Fastest) (the
//!   default) the fastest receiver sets the pace and one that falls a
//!   window behind loses what the publisher no longer holds; over IPC a
//!   subscriber is *untethered*: it holds the publisher back (a publish is
//!   [`LinkError::Full`]) for at most Aeron's untethered window limit
//!   timeout (5 s by default), then it is left behind and, after the
//!   resting timeout (10 s by default), rejoins at the newest frame. Either way the subscriber sees the loss as a gap in the
//!   publisher's sequence numbers and counts it
//!   ([`TopicStats::missed`](crate::topic::TopicStats::missed)), as on
//!   iceoryx2. [`MulticastFlow::Slowest`](super::MulticastFlow::Slowest)
//!   trades this for no loss: the slowest receiver holds the publisher
//!   back.
//! - **Queue depth.** The window is in bytes (the term length, see
//!   [`AeronConfig::term_length`](super::AeronConfig::term_length)), not a
//!   number of frames.
//! - **Late joiners.** As on iceoryx2, a subscriber gets what is published
//!   after it joined; a multicast receiver joins when it first hears the
//!   group (within the driver's setup handshake), so frames published in
//!   between are not delivered and not counted missed.

use rusteron_client::Handlers;

use super::driver::c_string;
use super::multicast::MulticastGroup;
use super::rx::Subscriber;
use super::tx::Publisher;
use super::{AeronTransport, SETUP_TIMEOUT};
use crate::link::{LinkError, LinkRx};
use crate::topic::{TopicEngine, TopicTx};

/// Where one topic travels.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum TopicRoute {
    /// UDP multicast to every host that joined the group.
    Multicast(MulticastGroup),
    /// IPC through this host's media driver, on stream `stream_id`.
    Ipc {
        /// The stream id (keep it apart from the endpoints' stream ids).
        stream_id: i32,
    },
}

/// The publishing side of an Aeron topic: an exclusive publication of its
/// own (a session: its frames arrive in the order published).
pub struct AeronTopicTx {
    inner: Publisher,
}

impl TopicTx for AeronTopicTx {
    /// Claims the frame's space in the log, lets `fill` write it and
    /// commits it: every connected subscriber reads that one copy (IPC) or
    /// gets it from the network (multicast). `Ok(1)`: at least one
    /// subscriber was connected; `Ok(0)`: none was, nothing was sent and
    /// `fill` was not called. [`LinkError::Full`]: the window is full (see
    /// the [module](self) on who holds it).
    fn publish_frame(
        &mut self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<usize, LinkError> {
        match self.inner.send(len, fill) {
            Ok(()) => Ok(1),
            Err(LinkError::PeerLost) if !self.inner.is_closed() => Ok(0),
            Err(LinkError::PeerLost) => Err(LinkError::Transport(
                "the topic's aeron publication was closed (the media driver went away?)".to_owned(),
            )),
            Err(e) => Err(e),
        }
    }

    fn max_frame_len(&self) -> usize {
        self.inner.max_frame()
    }

    /// 1 when at least one subscriber is connected, else 0: Aeron does not
    /// tell a publication how many there are.
    fn subscribers(&self) -> usize {
        usize::from(self.inner.is_connected())
    }
}

impl std::fmt::Debug for AeronTopicTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AeronTopicTx")
            .field("connected", &self.inner.is_connected())
            .field("max_frame_len", &self.inner.max_frame())
            .finish()
    }
}

/// One subscriber of an Aeron topic: its own subscription, which every
/// publisher's frames reach (long frames reassembled, as on a link).
pub struct AeronTopicRx {
    inner: Subscriber,
}

impl AeronTopicRx {
    /// How many publishers' images are connected now.
    pub fn publishers(&self) -> usize {
        self.inner.senders()
    }
}

impl LinkRx for AeronTopicRx {
    fn poll(&mut self, limit: usize, on_frame: &mut dyn FnMut(&[u8])) -> Result<usize, LinkError> {
        self.inner.poll(limit, on_frame)
    }
}

impl std::fmt::Debug for AeronTopicRx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AeronTopicRx")
            .field("publishers", &self.inner.senders())
            .finish()
    }
}

impl AeronTransport {
    /// The route of topic `name`.
    pub fn topic_route(&self, name: &str) -> Result<TopicRoute, LinkError> {
        self.shared.config.resolve_topic(name).ok_or_else(|| {
            LinkError::Transport(format!(
                "no route for topic {name:?} (AeronConfig::topic) and the hashed fallback is off"
            ))
        })
    }
}

impl TopicEngine for AeronTransport {
    type Tx = AeronTopicTx;
    type Rx = AeronTopicRx;

    /// Adds the topic's publication. It does not wait for subscribers.
    fn publish(&self, topic: &str) -> Result<AeronTopicTx, LinkError> {
        let inner = match self.topic_route(topic)? {
            TopicRoute::Multicast(group) => self.publish_multicast(&group)?.inner,
            TopicRoute::Ipc { stream_id } => {
                let uri = c_string("aeron:ipc")?;
                let publication = self
                    .shared
                    .aeron
                    .add_exclusive_publication(&uri, stream_id, SETUP_TIMEOUT)
                    .map_err(|e| self.refused("topic publication", e))?;
                Publisher::new(publication, false, self.shared.clone())?
            }
        };
        Ok(AeronTopicTx { inner })
    }

    /// Adds the topic's subscription (over IPC an untethered one, so that
    /// it cannot hold the publisher back for long).
    fn subscribe(&self, topic: &str) -> Result<AeronTopicRx, LinkError> {
        let inner = match self.topic_route(topic)? {
            TopicRoute::Multicast(group) => self.subscribe_multicast(&group)?.inner,
            TopicRoute::Ipc { stream_id } => {
                let uri = c_string("aeron:ipc?tether=false")?;
                let subscription = self
                    .shared
                    .aeron
                    .add_subscription(
                        &uri,
                        stream_id,
                        Handlers::NONE,
                        Handlers::NONE,
                        SETUP_TIMEOUT,
                    )
                    .map_err(|e| self.refused("topic subscription", e))?;
                Subscriber::new(subscription, self.shared.clone())
            }
        };
        Ok(AeronTopicRx { inner })
    }
}
