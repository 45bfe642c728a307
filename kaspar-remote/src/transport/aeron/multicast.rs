//! One publisher, many subscribers: Aeron over multicast UDP.
//!
//! The frames-level piece of a multicast topic (market data to every
//! strategy host): the publisher sends each frame once, the network copies
//! it to every host that joined the group, and Aeron's NAKs repair losses.
//! Flow control decides who the publisher waits for (see [`MulticastFlow`]).

use std::net::{IpAddr, Ipv4Addr};

use super::rx::Subscriber;
use super::tx::Publisher;
use crate::link::{LinkError, LinkRx, LinkTx, PeerState};

/// Which receivers hold the publisher back.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MulticastFlow {
    /// The fastest receiver sets the pace (Aeron's `fc=max`, its default): a
    /// slow receiver falls behind and loses data rather than slowing the
    /// feed. Market data.
    Fastest,
    /// The slowest receiver sets the pace (Aeron's `fc=min`): every
    /// receiver gets every frame, and the publisher reports `Full` when the
    /// slowest is a window behind. With `min_receivers`, the publisher is
    /// not connected (and sends nothing) until that many have joined.
    Slowest {
        /// Receivers needed before the publisher is connected (`g:/N`).
        min_receivers: Option<u32>,
    },
}

/// A multicast group: where the publisher sends and the subscribers join.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MulticastGroup {
    /// A group address in 224.0.0.0/4 whose last octet is odd: Aeron sends
    /// data to it and status messages to the address one above.
    pub group: Ipv4Addr,
    /// The UDP port of the group.
    pub port: u16,
    /// The local interface to send and join on (`interface=`); `None` lets
    /// the system choose.
    pub interface: Option<IpAddr>,
    /// The stream id on the group.
    pub stream_id: i32,
    /// Who holds the publisher back.
    pub flow: MulticastFlow,
}

impl MulticastGroup {
    /// `group:port`, stream `stream_id`, the fastest receiver setting the pace.
    pub fn new(group: Ipv4Addr, port: u16, stream_id: i32) -> Self {
        MulticastGroup {
            group,
            port,
            interface: None,
            stream_id,
            flow: MulticastFlow::Fastest,
        }
    }

    /// Sends and joins on `interface`.
    pub fn interface(mut self, interface: IpAddr) -> Self {
        self.interface = Some(interface);
        self
    }

    /// Who holds the publisher back.
    pub fn flow(mut self, flow: MulticastFlow) -> Self {
        self.flow = flow;
        self
    }

    /// Checks the address Aeron will accept.
    pub(crate) fn validate(&self) -> Result<(), LinkError> {
        if !self.group.is_multicast() {
            return Err(LinkError::Transport(format!(
                "{} is not a multicast address (224.0.0.0/4)",
                self.group
            )));
        }
        if self.group.octets()[3].is_multiple_of(2) {
            return Err(LinkError::Transport(format!(
                "aeron multicast needs an odd last octet (data on {}, control one above)",
                self.group
            )));
        }
        Ok(())
    }

    /// The subscriber's channel URI.
    pub fn subscriber_channel(&self) -> String {
        let mut uri = format!("aeron:udp?endpoint={}:{}", self.group, self.port);
        if let Some(interface) = self.interface {
            uri.push_str(&format!("|interface={interface}"));
        }
        uri
    }

    /// The publisher's channel URI (the subscriber's plus flow control).
    pub fn publisher_channel(&self) -> String {
        let mut uri = self.subscriber_channel();
        match self.flow {
            MulticastFlow::Fastest => uri.push_str("|fc=max"),
            MulticastFlow::Slowest {
                min_receivers: None,
            } => uri.push_str("|fc=min"),
            MulticastFlow::Slowest {
                min_receivers: Some(n),
            } => uri.push_str(&format!("|fc=min,g:/{n}")),
        }
        uri
    }
}

/// Sends frames to every subscriber of a [`MulticastGroup`].
///
/// Unlike a point-to-point link, receivers come and go: with none connected
/// a send is [`LinkError::PeerLost`] and [`LinkTx::peer`] is
/// [`PeerState::Connecting`], and both recover when a receiver joins.
pub struct MulticastPublisher {
    pub(crate) inner: Publisher,
}

impl MulticastPublisher {
    /// Whether any receiver (with `min_receivers`: enough of them) is
    /// connected.
    pub fn is_connected(&self) -> bool {
        self.inner.is_connected()
    }
}

impl LinkTx for MulticastPublisher {
    fn send_frame(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> Result<(), LinkError> {
        self.inner.send(len, fill)
    }

    fn max_frame_len(&self) -> usize {
        self.inner.max_frame()
    }

    fn peer(&self) -> PeerState {
        self.inner.peer()
    }
}

impl std::fmt::Debug for MulticastPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MulticastPublisher")
            .field("connected", &self.inner.is_connected())
            .finish()
    }
}

/// Receives the frames published to a [`MulticastGroup`] from the moment it
/// joined (Aeron does not replay what was sent before).
pub struct MulticastSubscriber {
    pub(crate) inner: Subscriber,
}

impl MulticastSubscriber {
    /// Whether a publisher's image is connected.
    pub fn is_connected(&self) -> bool {
        self.inner.is_connected()
    }
}

impl LinkRx for MulticastSubscriber {
    fn poll(&mut self, limit: usize, on_frame: &mut dyn FnMut(&[u8])) -> Result<usize, LinkError> {
        self.inner.poll(limit, on_frame)
    }
}

impl std::fmt::Debug for MulticastSubscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MulticastSubscriber")
            .field("connected", &self.inner.is_connected())
            .finish()
    }
}
