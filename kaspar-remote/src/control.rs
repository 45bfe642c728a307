//! The bodies of control frames and of the announced export record.

use serde::{Deserialize, Serialize};

/// What [`Transport::announce`](crate::Transport::announce) publishes for
/// an export.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub(crate) struct ExportRecord {
    /// The endpoint of the node that exports it.
    pub(crate) endpoint: String,
    /// Its slot in that node.
    pub(crate) slot: u32,
    /// The actor's name (`ActorConfig::NAME`).
    pub(crate) actor: String,
    /// The actor's schema hash.
    pub(crate) schema: u64,
}

/// A hello: who is asking, for which export, expecting which schema, and
/// how the previous session on this link ended (for the gap report).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub(crate) struct Hello {
    /// The asking node's endpoint: replies go there.
    pub(crate) from: String,
    /// The export's name.
    pub(crate) export: String,
    pub(crate) actor: String,
    pub(crate) schema: u64,
    pub(crate) previous: Option<PreviousSession>,
}

/// A session the sender lost, and how many frames it had sent on it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub(crate) struct PreviousSession {
    pub(crate) session: u64,
    pub(crate) sent: u64,
}
