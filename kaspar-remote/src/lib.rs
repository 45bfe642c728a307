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

mod acks;
mod addr;
pub mod auth;
mod bridge;
mod config;
mod connect_back;
mod control;
mod error;
pub mod frame;
mod idmap;
mod inbound;
mod inbox;
pub mod link;
mod lookup;
pub mod loopback;
mod no_fast_send;
mod node;
mod peer;
mod pending;
mod policy;
mod polling;
mod reconnect;
mod schema;
mod sessions;
mod shared;
pub mod topic;
pub mod transport;
mod wire;

pub use acks::{LinkLoss, Retain, RetainedSend};
pub use addr::{ActorRef, RemoteAddr};
pub use auth::{Auth, AuthError};
pub use config::{Export, Gap, NodeConfig, NodeStats};
pub use error::{ExportError, LookupError, PolicyError, Refused};
pub use inbound::{deliver_input, RemoteInput};
pub use link::{LinkError, LinkRx, LinkTx, PeerState, Transport};
pub use no_fast_send::InThisProcess;
pub use node::Node;
pub use policy::{IdleStrategy, SendPolicy};
pub use reconnect::Reconnect;
pub use schema::Schema;
pub use wire::{RemoteActor, RemoteHandler, RemoteMessage, Wire, WireReply};

/// `#[derive(Wire)]`: see [`Wire`](trait@Wire).
pub use kaspar_macros::Wire;

/// `#[derive(Schema)]`: see [`Schema`](trait@Schema).
pub use kaspar_macros::Schema;

/// What `#[actor(remote)]` and `#[derive(Wire)]` expansions name. Not
/// part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::inbound::{deliver, Inbound};
    pub use crate::schema::{field, name, num, tag, Schema};
    pub use crate::wire::{schema_hash, RemoteActor, RemoteHandler, RemoteMessage, Wire};
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
        use crate::frame::{Frame, Kind};
        use crate::wire::decode_exact;
        let Ok(frame) = Frame::parse(bytes) else {
            return false;
        };
        if frame.header.seq == u64::MAX {
            return false;
        }
        match frame.header.kind {
            Kind::Hello => crate::control::decode_hello(frame.body).is_ok(),
            Kind::Challenge => decode_exact::<crate::control::Challenge>(frame.body).is_ok(),
            Kind::Proof => decode_exact::<crate::control::Proof>(frame.body).is_ok(),
            Kind::Error => decode_exact::<Refused>(frame.body).is_ok(),
            Kind::Welcome | Kind::Bye => decode_exact::<()>(frame.body).is_ok(),
            Kind::Ack => decode_exact::<u64>(frame.body).is_ok(),
            Kind::Tell | Kind::Ask | Kind::Reply => true,
        }
    }

    /// Decodes `bytes` as an announced export record; `true` if it is one
    /// (and nothing after it).
    pub fn decode_record(bytes: &[u8]) -> bool {
        crate::wire::decode_exact::<crate::control::ExportRecord>(bytes).is_ok()
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
