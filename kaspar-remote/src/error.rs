//! What the remote layer refuses, and why.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::link::LinkError;

/// Why a node did not deliver an inbound message, or did not accept a
/// hello. Carried back to the sender in an error frame when it asked.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Refused {
    /// No export with that slot (it was withdrawn, or the sender's lookup
    /// is from before a restart).
    UnknownTarget(u32),
    /// The exported actor has no remote handler for that wire id.
    UnknownMessage(u32),
    /// The body did not decode as the message (or reply) type.
    Decode(String),
    /// The exported actor's mailbox stayed full past the node's inbound
    /// wait.
    Full,
    /// The exported actor has stopped.
    Closed,
    /// The handler panicked.
    Panicked,
    /// The message was dropped unhandled, or its reply could not be sent.
    Dropped,
    /// An ask arrived on a session that never said hello, so there is no
    /// route for its reply.
    UnknownSession,
    /// A hello named an export that does not exist here.
    NoSuchExport(String),
    /// A hello expected another actor or schema than the export has.
    WrongActor {
        /// The actor's name the export has.
        actor: String,
        /// The export's schema hash.
        schema: u64,
    },
    /// The export's allow list ([`Export::allow`](crate::Export::allow))
    /// does not name the caller's key id.
    NotAllowed {
        /// The export's name.
        export: String,
        /// The key id the caller authenticated as.
        peer: String,
    },
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::UnknownTarget(slot) => write!(f, "no export in slot {slot}"),
            Refused::UnknownMessage(id) => {
                write!(
                    f,
                    "the exported actor has no remote handler for wire id {id}"
                )
            }
            Refused::Decode(why) => write!(f, "the body does not decode: {why}"),
            Refused::Full => f.write_str("the exported actor's mailbox is full"),
            Refused::Closed => f.write_str("the exported actor has stopped"),
            Refused::Panicked => f.write_str("the handler panicked"),
            Refused::Dropped => f.write_str("the message was dropped unhandled"),
            Refused::UnknownSession => f.write_str("an ask on a session that never said hello"),
            Refused::NoSuchExport(name) => write!(f, "nothing is exported as {name:?}"),
            Refused::WrongActor { actor, schema } => {
                write!(f, "the export is a {actor} with schema {schema:#018x}")
            }
            Refused::NotAllowed { export, peer } => {
                write!(f, "the export {export:?} does not admit the peer {peer:?}")
            }
        }
    }
}

impl std::error::Error for Refused {}

/// Why a [`Node::lookup`](crate::Node::lookup) failed.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum LookupError {
    /// No live process announces the name.
    NotFound(String),
    /// The name is exported for another actor type.
    WrongActor {
        /// The actor type the lookup asked for.
        expected: &'static str,
        /// The actor type exported under the name.
        found: String,
    },
    /// The name is exported for this actor type, but its handlers differ
    /// (another build: a message added, removed, renumbered or reshaped, or
    /// a reply type changed).
    SchemaMismatch {
        /// The actor type.
        actor: &'static str,
        /// This build's schema hash.
        expected: u64,
        /// The exporting build's.
        found: u64,
    },
    /// The announced record does not decode: not a kaspar-remote export.
    BadRecord(String),
    /// The exporting process refused the hello.
    Refused(Refused),
    /// No answer to the hello within the node's connect timeout.
    Timeout,
    /// The transport failed (the exporting process is gone, say).
    Link(LinkError),
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::NotFound(name) => write!(f, "no live process exports {name:?}"),
            LookupError::WrongActor { expected, found } => {
                write!(f, "looked up a {expected}, but the name is exported for a {found}")
            }
            LookupError::SchemaMismatch {
                actor,
                expected,
                found,
            } => write!(
                f,
                "{actor}'s handlers differ between the two builds (schema {expected:#018x} here, {found:#018x} there)"
            ),
            LookupError::BadRecord(why) => write!(f, "the announced record does not decode: {why}"),
            LookupError::Refused(why) => write!(f, "the exporting node refused: {why}"),
            LookupError::Timeout => f.write_str("no answer to the hello within the connect timeout"),
            LookupError::Link(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LookupError {}

impl From<LinkError> for LookupError {
    fn from(e: LinkError) -> Self {
        LookupError::Link(e)
    }
}

/// Why a [`Node::export`](crate::Node::export) failed.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum ExportError {
    /// This node already exports something under the name.
    NameTaken(String),
    /// The transport would not announce the record.
    Link(LinkError),
    /// An allow list ([`Export::allow`](crate::Export::allow)) on a node
    /// that does not authenticate its peers
    /// ([`NodeConfig::auth`](crate::NodeConfig::auth) is `None`).
    NeedsAuth(String),
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::NameTaken(name) => write!(f, "{name:?} is already exported by this node"),
            ExportError::Link(e) => write!(f, "{e}"),
            ExportError::NeedsAuth(name) => write!(
                f,
                "{name:?} has an allow list, but this node does not authenticate its peers (NodeConfig::auth)"
            ),
        }
    }
}

impl std::error::Error for ExportError {}

/// A [`SendPolicy`](crate::SendPolicy) the link cannot carry out.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum PolicyError {
    /// The engine cannot discard a frame it has accepted, so drop-oldest
    /// is impossible on this link (Aeron's log buffer, for one).
    DropOldestUnsupported,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::DropOldestUnsupported => {
                f.write_str("this transport cannot drop a frame it accepted; drop-oldest is not available on this link")
            }
        }
    }
}

impl std::error::Error for PolicyError {}
