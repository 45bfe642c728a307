//! Multicast topics: one message type, one publisher side, many
//! subscribers, each a local actor in its own process.
//!
//! A [`Topic<M>`] is a name and a message type. Its [`Publisher<M>`]
//! encodes each message on the caller's thread straight into the engine's
//! buffer, once for every subscriber (the engine fans the frame out: on
//! iceoryx2 one shared-memory sample that every subscriber reads). A
//! [`Subscriber<M>`] takes the frames, decodes them and `send`s each
//! message to a local actor ([`Addr<A>`](kaspar::Addr) with
//! `A: Handler<M>`), on whichever thread calls [`Subscriber::poll`], or on
//! a thread of its own ([`Subscriber::spawn`]).
//!
//! Topics are for market data, where the newest update matters most, so a
//! slow subscriber never holds up the publisher or the other subscribers
//! (for long: on Aeron IPC a few seconds at most): each subscriber has a
//! queue of its own (on iceoryx2 `topic_depth` frames), and when it is
//! full the **oldest** frame in it is dropped for the new one (on Aeron,
//! whose log is never rewritten, the subscriber is left a window behind
//! instead). The subscriber sees the loss as a gap in the publisher's
//! sequence numbers and counts it ([`TopicStats::missed`]); what it does
//! receive is in publish order, each frame once. (A subscriber counts
//! from the first frame it receives of each publisher: frames lost before
//! that one cannot be told apart from frames published before it
//! subscribed.)
//!
//! An engine plugs in below one small trait, [`TopicEngine`]: it opens a
//! [`TopicTx`] (publish one frame to every subscriber) and a
//! [`LinkRx`] (the frames one subscriber receives) per topic
//! name. Two transports implement it: iceoryx2 (feature `iceoryx2`:
//! `transport::iceoryx2::Iceoryx2Transport`, one publish-subscribe service
//! per topic, on one host) and Aeron (feature `aeron`:
//! `transport::aeron::AeronTransport`, UDP multicast across hosts or IPC
//! on one; its module `transport::aeron::topic` says where it differs:
//! a publisher knows whether some subscriber is connected, not how many,
//! and a slow subscriber loses a window of the log rather than its oldest
//! frame).
//!
//! ```
//! # #[cfg(feature = "iceoryx2")] {
//! use kaspar::prelude::*;
//! use kaspar_remote::topic::Topic;
//! use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport};
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
//! let engine = Iceoryx2Transport::new(Iceoryx2Config::default().namespace("doc_topic"))?;
//! let ticks = Topic::<Tick>::new("ticks/ES");
//! let system = System::new();
//! let last = system.spawn(Last { px: 0 }).start();
//! // Usually in other processes.
//! let mut sub = ticks.subscribe(&engine, &last)?;
//! let mut publisher = ticks.publisher(&engine)?;
//! assert_eq!(publisher.publish(&Tick { px: 101 })?, 1);
//! assert_eq!(sub.poll(16)?, 1);
//! assert_eq!(sub.stats().delivered, 1);
//! system.shutdown();
//! # }
//! # Ok::<(), kaspar_remote::LinkError>(())
//! ```

mod publisher;
mod subscriber;

use std::fmt;
use std::marker::PhantomData;

use kaspar::{Addr, Handler};

use crate::link::{LinkError, LinkRx};
use crate::wire::Wire;

pub use publisher::Publisher;
pub use subscriber::{Subscriber, SubscriberThread, TopicStats};

/// An engine that carries topics: one publishing side and many
/// subscribers per topic name, frames fanned out by the engine.
///
/// Implemented by the iceoryx2 and Aeron transports. The frames are
/// opaque to the engine (a kaspar-remote frame header and a postcard
/// body), as on the links of [`Transport`](crate::Transport).
pub trait TopicEngine {
    /// The publishing side of a topic.
    type Tx: TopicTx;
    /// One subscriber's frames.
    type Rx: LinkRx;

    /// Opens `topic` for publishing, creating it if no process has yet.
    /// Frames published before a subscriber subscribed never reach it.
    fn publish(&self, topic: &str) -> Result<Self::Tx, LinkError>;

    /// Subscribes to `topic`, creating it if no process has yet. Frames
    /// from every publisher of the topic arrive here, each publisher's in
    /// the order it published them; when this subscriber's queue is full
    /// the oldest frame in it is dropped.
    fn subscribe(&self, topic: &str) -> Result<Self::Rx, LinkError>;
}

/// The publishing side of a topic, as an engine provides it.
pub trait TopicTx: Send + 'static {
    /// Writes one frame of exactly `len` bytes into the engine's buffer
    /// (`fill` writes its bytes, and is called at most once) and hands it
    /// to every current subscriber. Returns how many subscribers it
    /// reached, as far as the engine knows (0 is not an error: nobody
    /// listens). Never blocks.
    ///
    /// An engine may know only whether *some* subscriber is connected, not
    /// how many: an Aeron publication is connected or not, so Aeron returns
    /// 1 for "one or more" (the frame went to every connected subscriber)
    /// and 0 for none (nothing was sent). iceoryx2 counts them.
    ///
    /// - [`LinkError::TooLarge`]: `len` exceeds [`max_frame_len`](Self::max_frame_len);
    /// - [`LinkError::Full`]: the engine has no buffer free now (iceoryx2:
    ///   no sample to loan; Aeron: the publication's window is full, held
    ///   by the fastest multicast receiver or, for a few seconds at most,
    ///   by a slow IPC subscriber).
    fn publish_frame(
        &mut self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<usize, LinkError>;

    /// The longest frame this publisher writes.
    fn max_frame_len(&self) -> usize;

    /// How many subscribers the topic has now, as far as the engine knows
    /// (Aeron: 1 when at least one is connected, else 0).
    fn subscribers(&self) -> usize;
}

/// A topic: a name and the one message type published on it.
///
/// Cheap to make and to clone; it opens nothing until
/// [`publisher`](Self::publisher) or [`subscribe`](Self::subscribe).
/// Processes meet on the name (within the engine's namespace); each must
/// use the same `M` on it (a frame of another wire id is rejected and
/// counted, never delivered).
pub struct Topic<M> {
    name: String,
    _message: PhantomData<fn(M) -> M>,
}

impl<M> Clone for Topic<M> {
    fn clone(&self) -> Self {
        Topic {
            name: self.name.clone(),
            _message: PhantomData,
        }
    }
}

impl<M> fmt::Debug for Topic<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Topic({:?})", self.name)
    }
}

impl<M: Wire> Topic<M> {
    /// The topic `name` (the engine's rules for names apply when it is
    /// opened).
    pub fn new(name: impl Into<String>) -> Self {
        Topic {
            name: name.into(),
            _message: PhantomData,
        }
    }

    /// The topic's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A publisher of `M` on this topic, through `engine`.
    pub fn publisher<E: TopicEngine>(&self, engine: &E) -> Result<Publisher<M>, LinkError> {
        Ok(Publisher::new(Box::new(engine.publish(&self.name)?)))
    }

    /// Subscribes `addr` to this topic, through `engine`: every message
    /// published from now on is `send` to it when the returned
    /// [`Subscriber`] is polled (or from its own thread, see
    /// [`Subscriber::spawn`]).
    pub fn subscribe<E: TopicEngine, A: Handler<M>>(
        &self,
        engine: &E,
        addr: &Addr<A>,
    ) -> Result<Subscriber<M>, LinkError> {
        let rx = engine.subscribe(&self.name)?;
        let addr = addr.clone();
        Ok(Subscriber::new(
            Box::new(rx),
            Box::new(move |m: M| addr.send(m).map_err(|e| e.into_inner())),
        ))
    }
}
