//! What crosses a process boundary, and nothing that holds state: the
//! messages that opt in with [`Wire`] and the schema hash checked on
//! connect ([`schema`], [`RemoteMessage`], [`schema_hash`]), [`frame`]s,
//! the codec's exact decoding, the bodies of control frames ([`control`])
//! and the refusals that travel back to a sender ([`Refused`]). The bottom
//! layer beside `link`: it uses no other module of the crate.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::de::DeserializeOwned;
use serde::Serialize;

pub(crate) mod control;
pub mod frame;
mod refused;
pub(crate) mod schema;

pub use refused::Refused;
use schema::Schema;

/// A message that may cross a process boundary.
///
/// Derive it, beside serde's derives, with a wire id that is stable across
/// builds and unique among the messages one remote actor handles:
///
/// ```
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, kaspar_remote::Wire)]
/// #[wire(id = 7)]
/// pub struct Order {
///     pub px: i64,
///     pub qty: u32,
/// }
///
/// use kaspar_remote::Wire;
/// assert_eq!(Order::WIRE_ID, 7);
/// ```
///
/// The id, never a `TypeId` (which differs between builds), names the
/// message in every frame. The body is the message encoded with postcard.
///
/// The derive also implements [`Schema`] for the message, whose hash
/// covers every type inside it; each of those must be [`Schema`] too
/// (`#[derive(kaspar_remote::Schema)]`), or the derive does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a wire message",
    label = "a handler of an `#[actor(remote)]` impl block can be reached from other processes, so its message must be `Wire`",
    note = "derive it: `#[derive(Serialize, Deserialize, kaspar_remote::Wire)] #[wire(id = N)]`, or keep the handler in this process: `#[handler(Msg, local)]`"
)]
pub trait Wire: Schema + Serialize + DeserializeOwned + Send + 'static {
    /// The message's id on the wire, from `#[wire(id = N)]`.
    const WIRE_ID: u32;
}

/// What a handler's reply must be to go back over the wire: serde, with a
/// [`Schema`] hash (part of the actor's schema hash), and sendable.
#[diagnostic::on_unimplemented(
    message = "the reply `{Self}` cannot go back over the wire",
    label = "the reply of a remote handler must be serde and `Schema`",
    note = "derive `Serialize`, `Deserialize` and `kaspar_remote::Schema` for `{Self}`, or keep the handler in this process: `#[handler(Msg, local)]`"
)]
pub trait WireReply: Schema + Serialize + DeserializeOwned + Send + 'static {}

impl<R: Schema + Serialize + DeserializeOwned + Send + 'static> WireReply for R {}

/// One remotely reachable handler of an actor, in its schema.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RemoteMessage {
    /// The message's [`Wire::WIRE_ID`].
    pub wire_id: u32,
    /// The message's [`Schema::HASH`]: its whole definition, nested
    /// types included.
    pub shape: u64,
    /// The message type, as written in `#[handler(..)]`.
    pub message: &'static str,
    /// The reply type, as written in the handler's signature (`()` for
    /// none).
    pub reply: &'static str,
    /// The reply type's [`Schema::HASH`].
    pub reply_shape: u64,
}

/// Why a body did not decode as the type its frame names.
#[derive(Debug)]
pub(crate) enum DecodeError {
    /// postcard refused the bytes.
    Codec(postcard::Error),
    /// The value decoded with this many bytes left after it: not the
    /// sender's encoding of one value (a valid message followed by
    /// garbage), so refused whole.
    Trailing(usize),
}

impl DecodeError {
    /// Whether bytes were left after the value.
    pub(crate) fn is_trailing(&self) -> bool {
        matches!(self, DecodeError::Trailing(_))
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Codec(e) => write!(f, "{e}"),
            DecodeError::Trailing(n) => write!(f, "{n} bytes left over after the value"),
        }
    }
}

/// Decodes `bytes` as one `T` that uses every byte: a body is the
/// encoding of one value, so bytes left after it make the frame invalid
/// (`postcard::from_bytes` would ignore them).
pub(crate) fn decode_exact<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeError> {
    match postcard::take_from_bytes(bytes) {
        Ok((value, [])) => Ok(value),
        Ok((_, rest)) => Err(DecodeError::Trailing(rest.len())),
        Err(e) => Err(DecodeError::Codec(e)),
    }
}

/// FNV-1a's offset basis.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
/// Bumped when the schema hash's definition changes (2: the reply by its
/// [`Schema::HASH`] rather than its text; `Schema` covers nested types).
const SCHEMA_VERSION: u8 = 2;

/// FNV-1a of `bytes`, continuing from `hash`.
pub const fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        i += 1;
    }
    hash
}

/// The schema hash of an actor named `name` with the remote handlers
/// `messages`: FNV-1a of the name, the version of this definition, and the
/// wrapping sum of one hash per message (so the handlers' order does not
/// matter).
pub const fn schema_hash(name: &str, messages: &[RemoteMessage]) -> u64 {
    let mut sum: u64 = 0;
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        let mut h = fnv1a(FNV_OFFSET, &m.wire_id.to_le_bytes());
        h = fnv1a(h, &m.shape.to_le_bytes());
        h = fnv1a(h, &m.reply_shape.to_le_bytes());
        sum = sum.wrapping_add(h);
        i += 1;
    }
    let h = fnv1a(FNV_OFFSET, &[SCHEMA_VERSION]);
    let h = fnv1a(h, name.as_bytes());
    fnv1a(h, &sum.to_le_bytes())
}

/// A session id no other connection has: 64 bits from the OS's
/// randomness, so another process cannot guess a live session's id; where
/// the OS gives none, a hash of the time, the process and a counter.
pub(crate) fn new_session() -> u64 {
    let mut random = [0; 8];
    if getrandom::fill(&mut random).is_ok() {
        return u64::from_le_bytes(random);
    }
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut h = fnv1a(0xcbf2_9ce4_8422_2325, &t.to_le_bytes());
    h = fnv1a(h, &std::process::id().to_le_bytes());
    fnv1a(h, &n.to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn msg(wire_id: u32, reply: u64) -> RemoteMessage {
        RemoteMessage {
            wire_id,
            shape: 9,
            message: "M",
            reply: "R",
            reply_shape: reply,
        }
    }

    #[test]
    fn a_body_decodes_only_if_the_value_uses_every_byte() {
        let mut bytes = postcard::to_stdvec(&(7u64, String::from("seven"))).unwrap();
        let whole: (u64, String) = decode_exact(&bytes).unwrap();
        assert_eq!(whole, (7, "seven".into()));
        bytes.extend_from_slice(&[0xAB; 3]);
        let left = decode_exact::<(u64, String)>(&bytes).unwrap_err();
        assert!(matches!(left, DecodeError::Trailing(3)), "{left:?}");
        assert!(decode_exact::<()>(&[0]).unwrap_err().is_trailing());
        assert!(!decode_exact::<u64>(&[0xFF]).unwrap_err().is_trailing());
    }

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        // From the FNV reference test suite.
        assert_eq!(fnv1a(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_schema_hash_ignores_order_and_sees_every_part() {
        let base = schema_hash("Desk", &[msg(1, 64), msg(2, 0)]);
        assert_eq!(base, schema_hash("Desk", &[msg(2, 0), msg(1, 64)]));
        assert_ne!(base, schema_hash("Book", &[msg(1, 64), msg(2, 0)]));
        assert_ne!(base, schema_hash("Desk", &[msg(1, 32), msg(2, 0)]));
        assert_ne!(base, schema_hash("Desk", &[msg(1, 64), msg(3, 0)]));
        assert_ne!(base, schema_hash("Desk", &[msg(1, 64)]));
        let mut other_shape = msg(1, 64);
        other_shape.shape = 10;
        assert_ne!(base, schema_hash("Desk", &[other_shape, msg(2, 0)]));
        let mut renamed_reply = msg(1, 64);
        renamed_reply.reply = "u64";
        assert_eq!(base, schema_hash("Desk", &[renamed_reply, msg(2, 0)]));
    }
}
