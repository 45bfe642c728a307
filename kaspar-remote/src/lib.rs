//! kaspar actors beyond one process.
//!
//! `fast_send` needs one address space. Across processes and hosts a sender
//! falls back to asynchronous delivery, and receiver transparency makes that
//! fallback free: the handler that serves a local `send` serves a remote one
//! unchanged. This crate carries frames over existing engines, never over a
//! protocol of its own:
//!
//! - iceoryx2 (feature `iceoryx2`): shared memory between processes on one
//!   host;
//! - Aeron through rusteron (feature `aeron`): IPC, UDP unicast and
//!   multicast across hosts;
//! - [`loopback`]: in one process, for tests.
//!
//! Besides actor addresses, [`topic`]s carry one message type from a
//! publisher to many subscribing actors (market data), over iceoryx2
//! publish-subscribe on one host or Aeron (UDP multicast across hosts, IPC
//! on one).
//!
//! Every engine plugs in below one seam, [`link`]: a [`Transport`] opens
//! inboxes ([`LinkRx`]) and connections to them ([`LinkTx`]). Everything
//! above the seam is written once:
//!
//! - messages opt in with [`Wire`] (serde plus a stable wire id), actors
//!   with `#[actor(remote)]` on their impl block ([`RemoteActor`]);
//! - [`frame`]s: a fixed header and a postcard body, encoded on the
//!   caller's thread straight into the transport's buffer;
//! - a [`Node`] per process and transport: [`Node::export`] and
//!   [`Node::lookup`], with the actor's type and schema hash checked on
//!   connect, and one bridge thread that delivers inbound messages;
//! - [`RemoteAddr`] (`send`, `ask`, `request`; never `fast_send`) and
//!   [`ActorRef`], local or remote; for a plain thread that waits for its
//!   reply at once, [`Node::ask_polling`] (and [`Node::wait_polling`] for
//!   an ask already sent) poll the inbox on that thread instead of
//!   sleeping until the bridge hands the reply over;
//! - failure semantics: back-pressure is [`SendError::Full`](kaspar::SendError::Full)
//!   with the message handed back, under a [`SendPolicy`]; a lost link
//!   fails pending asks ([`AskError::PeerLost`](kaspar::AskError::PeerLost))
//!   and reaches watchers ([`ExitReason::PeerLost`](kaspar::ExitReason::PeerLost));
//!   delivery is at most once, and a reconnect reports the frames the old
//!   session lost ([`Node::gaps`]). Nothing waits forever.
//!
//! # Layout
//!
//! The sources are in folders by layer, as the runtime's are: each uses
//! only the layers listed before it, and CI fails on an import cycle
//! between them (`.ci/steps/layers.sh`).
//!
//! - `link/`: the seam ([`link`]) and the policies for waiting on it
//!   ([`SendPolicy`], [`IdleStrategy`]). Uses nothing else of the crate.
//! - `wire/`: what crosses the boundary and holds no state: [`Wire`] and
//!   [`Schema`] with the schema hash, [`frame`]s (parsing, and writing
//!   into a lent buffer), exact decoding, the bodies of control frames,
//!   and [`Refused`], which travels back. Uses nothing else of the crate.
//! - `session/`: one connection from either end and the bounded tables
//!   that hold them: the outbound peer link, the inbound session table,
//!   authentication's keys and handshake ([`auth`]), pending asks, the
//!   retain buffer and loss accounting of acknowledgements, the node's
//!   counters.
//!   Uses `link`, `wire`.
//! - `actor/`: [`RemoteActor`] and [`RemoteHandler`], which
//!   `#[actor(remote)]` implements, and delivery of an inbound message
//!   into a local actor, with the session's route back for a reply
//!   ([`deliver_input`] for a replay). Uses `session`, `link`, `wire`.
//! - `node/`: the [`Node`] and its shared state; the bridge thread and
//!   what it does with each frame (the hello gate, connect-back off the
//!   receiving thread, acks); lookup; the addresses it hands out
//!   ([`RemoteAddr`], [`ActorRef`], [`Reconnect`]); the polling waits;
//!   [`NodeConfig`], [`NodeStats`] and the node's errors. Uses every layer
//!   above.
//! - `topic/`: one-to-many [`topic`]s; uses `link`, `wire`.
//! - `transport/`: the engines behind the seam ([`loopback`], and
//!   iceoryx2 and Aeron behind their features); uses `link`, `topic`.
//!   The simulated network (feature `sim`), which steps its nodes in a
//!   `kaspar::sim` run, also uses `node` and `wire`.
//!
//! ```
//! use kaspar::prelude::*;
//! use kaspar_remote::{loopback::Loopback, Node, RemoteAddr};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, kaspar_remote::Wire)]
//! #[wire(id = 1)]
//! pub struct Quote {
//!     pub bid: i64,
//!     pub ask: i64,
//! }
//!
//! #[actor]
//! pub struct Book {
//!     mid: i64,
//! }
//!
//! #[actor(remote)]
//! impl Book {
//!     #[handler(Quote)]
//!     fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
//!         self.mid = (q.bid + q.ask) / 2;
//!         self.mid
//!     }
//! }
//!
//! let net = Loopback::new(1024);
//! let system = System::new();
//! let book = system.spawn(Book { mid: 0 }).start();
//! let feed_side = Node::new(net.clone(), "book-process").unwrap();
//! feed_side.export("book", &book).unwrap();
//!
//! let strategy_side = Node::new(net, "strategy-process").unwrap();
//! let remote: RemoteAddr<Book> = strategy_side.lookup("book").unwrap();
//! let mid = remote.ask(Quote { bid: 100, ask: 102 }).unwrap().wait().unwrap();
//! assert_eq!(mid, 101);
//! # drop((strategy_side, feed_side));
//! # system.shutdown();
//! ```
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    missing_docs,
    missing_debug_implementations
)]

// The crate's own tests declare remote actors, whose expansion names
// `::kaspar_remote::__private`.
#[cfg(test)]
extern crate self as kaspar_remote;

// The layers, each using only those before it (DESIGN §8; CI checks it
// with `.ci/tools/layers.py`). At the bottom, the seam and what crosses
// it; neither uses the other.
pub mod link;
mod wire;

// One connection from either end, and the tables that hold them.
mod session;

// Remote actors, and delivery into them with a route back for replies.
mod actor;

// The node, the addresses it hands out, its threads.
mod node;

// Topics (on link and wire), and the engines behind the seam (on link and
// topic).
pub mod topic;
pub mod transport;

pub use actor::inbound::{deliver_input, RemoteInput};
pub use actor::{RemoteActor, RemoteHandler};
pub use link::policy::{IdleStrategy, SendPolicy};
pub use link::{LinkError, LinkRx, LinkTx, PeerState, Transport};
pub use node::addr::no_fast_send::InThisProcess;
pub use node::addr::{ActorRef, RemoteAddr};
pub use node::config::{Export, Gap, NodeConfig, NodeStats};
pub use node::error::{ExportError, LookupError, PolicyError};
pub use node::reconnect::Reconnect;
pub use node::Node;
pub use session::acks::{LinkLoss, Retain, RetainedSend};
pub use session::auth;
pub use session::auth::{Auth, AuthError};
pub use transport::loopback;
pub use wire::frame;
pub use wire::schema::Schema;
pub use wire::{Refused, RemoteMessage, Wire, WireReply};

/// `#[derive(Wire)]`: see [`Wire`](trait@Wire).
pub use kaspar_macros::Wire;

/// `#[derive(Schema)]`: see [`Schema`](trait@Schema).
pub use kaspar_macros::Schema;

/// What `#[actor(remote)]` and `#[derive(Wire)]` expansions name. Not
/// part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::actor::inbound::{deliver, Inbound};
    pub use crate::actor::{RemoteActor, RemoteHandler};
    pub use crate::wire::schema::{field, name, num, tag, Schema};
    pub use crate::wire::{schema_hash, RemoteMessage, Wire};
    pub use crate::Refused;
    pub use core::result::Result;
    pub use kaspar::__private::ActorConfig;
    pub use kaspar::Addr;
    pub use kaspar::Handler;
    pub use serde;

    /// Decodes `bytes` as a frame and its body as the control message its
    /// kind carries, as a node's bridge would; `true` if all of it is well
    /// formed (no bytes left after the body's value, a sequence number
    /// below `u64::MAX`). For the fuzz target: it must never panic.
    pub fn decode_control(bytes: &[u8]) -> bool {
        use crate::wire::control;
        use crate::wire::decode_exact;
        use crate::wire::frame::{Frame, Kind};
        let Ok(frame) = Frame::parse(bytes) else {
            return false;
        };
        if frame.header.seq == u64::MAX {
            return false;
        }
        match frame.header.kind {
            Kind::Hello => control::decode_hello(frame.body).is_ok(),
            Kind::Challenge => decode_exact::<control::Challenge>(frame.body).is_ok(),
            Kind::Proof => decode_exact::<control::Proof>(frame.body).is_ok(),
            Kind::Error => decode_exact::<Refused>(frame.body).is_ok(),
            Kind::Welcome | Kind::Bye => decode_exact::<()>(frame.body).is_ok(),
            Kind::Ack => decode_exact::<u64>(frame.body).is_ok(),
            Kind::Tell | Kind::Ask | Kind::Reply => true,
        }
    }

    /// Decodes `bytes` as an announced export record; `true` if it is one
    /// (and nothing after it).
    pub fn decode_record(bytes: &[u8]) -> bool {
        crate::wire::decode_exact::<crate::wire::control::ExportRecord>(bytes).is_ok()
    }

    /// The generated `deliver`'s answer to a wire id no handler has.
    pub fn unknown_message(inbound: Inbound<'_>) -> Result<(), Refused> {
        let why = Refused::UnknownMessage(inbound.wire_id);
        if let Some(route) = &inbound.reply {
            route.refuse(&why);
        }
        Err(why)
    }
}
