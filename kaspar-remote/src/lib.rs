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
//!   multicast across hosts.
//!
//! Every engine plugs in below one seam, [`link`]: a [`Transport`] opens
//! inboxes ([`LinkRx`]) and connections to them ([`LinkTx`]). Everything
//! above the seam (wire format, addresses, names, the bridge thread,
//! failure semantics) is written once.

pub mod link;
pub mod transport;

pub use link::{LinkError, LinkRx, LinkTx, PeerState, Transport};
