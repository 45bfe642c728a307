//! One connection between two nodes, from either end, and the bounded
//! tables that hold them: the outbound [`peer`] link with its sequence
//! numbers and acknowledgement count, the inbound [`sessions`] table,
//! authentication ([`auth`]: keys, the challenge-response handshake,
//! per-frame tags), the asks waiting for their replies ([`pending`]), what a sender
//! retains until it is acknowledged ([`acks`]), and the [`counters`] all of
//! it bumps.
//!
//! Above `wire` and `link`; below the actor and node layers. Nothing here
//! knows the node that owns it: what a session needs from the node is
//! passed in.

pub(crate) mod acks;
pub mod auth;
pub(crate) mod counters;
pub(crate) mod idmap;
pub(crate) mod peer;
pub(crate) mod pending;
pub(crate) mod sessions;
