//! Why a node's operations failed: a lookup, an export, a send policy.
//! (What travels back to a sender is [`Refused`], in `wire`.)

use std::fmt;

use crate::link::LinkError;
use crate::wire::Refused;

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
