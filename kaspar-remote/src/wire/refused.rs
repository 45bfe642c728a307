//! The refusals that travel: why a node did not deliver a message or
//! accept a hello, sent back to the sender in an error frame.

use std::fmt;

use serde::{Deserialize, Serialize};

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
