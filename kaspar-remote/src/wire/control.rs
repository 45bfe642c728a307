//! The bodies of control frames and of the announced export record.

use serde::{Deserialize, Serialize};

use crate::wire::{decode_exact, DecodeError};

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
    /// The sender's proof of its key, when it authenticates: encoded
    /// after the fields above (see [`decode_hello`]), so a hello without
    /// one is what nodes without authentication send and read.
    #[serde(skip)]
    pub(crate) auth: Option<HelloAuth>,
}

/// A hello's authentication (the first step of the handshake in
/// [`auth`](crate::auth)).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub(crate) struct HelloAuth {
    /// Whose key the MAC is keyed with.
    pub(crate) key_id: String,
    /// Fresh from the OS for every hello.
    pub(crate) nonce: [u8; 16],
    /// The sender asks for tagged frames.
    pub(crate) sign: bool,
    /// HMAC-SHA256 over the hello, its session and the fields above.
    pub(crate) mac: [u8; 32],
}

/// The server's answer to an authenticated hello, on its link back: its
/// own nonce and its proof of the key.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub(crate) struct Challenge {
    pub(crate) nonce: [u8; 16],
    /// Whether the session's frames are tagged (either end asked).
    pub(crate) sign: bool,
    pub(crate) mac: [u8; 32],
}

/// The client's answer to a challenge.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub(crate) struct Proof {
    pub(crate) mac: [u8; 32],
}

/// Decodes a hello's body: the hello, then, if bytes follow, exactly one
/// [`HelloAuth`]; bytes after the hello that are not one are bytes left
/// over ([`DecodeError::Trailing`]), as after any other body.
pub(crate) fn decode_hello(body: &[u8]) -> Result<Hello, DecodeError> {
    let (mut hello, rest) = postcard::take_from_bytes::<Hello>(body).map_err(DecodeError::Codec)?;
    if !rest.is_empty() {
        let auth = decode_exact(rest).map_err(|_| DecodeError::Trailing(rest.len()))?;
        hello.auth = Some(auth);
    }
    Ok(hello)
}

/// A session the sender lost, and how many frames it had sent on it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub(crate) struct PreviousSession {
    pub(crate) session: u64,
    pub(crate) sent: u64,
}
