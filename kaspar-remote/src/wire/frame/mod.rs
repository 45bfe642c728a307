//! Frames: a fixed 40-byte header, then a postcard body.
//!
//! ```text
//! offset size  field
//!      0    2  magic "KR"
//!      2    1  version (1)
//!      3    1  kind: 1 hello, 2 welcome, 3 tell, 4 ask, 5 reply, 6 error, 7 bye,
//!                8 challenge, 9 proof (authentication: see `auth`),
//!                10 ack (what a session's receiver has handled: see `acks`)
//!      4    4  target: the export's slot in the receiving node
//!      8    4  wire id of the message (0 for control frames)
//!     12    4  body length in bytes
//!     16    8  correlation id (an ask and its reply or error share it)
//!     24    8  session id (one per connection; a reconnect is a new one)
//!     32    8  sequence number within the session, from 0
//!     40    -  body (postcard)
//! ```
//!
//! A message frame (tell, ask, reply) may carry the trace context of the
//! handler that sent it (kaspar's `TraceContext`, with this crate's
//! feature `tracing`). It then has the high bit (0x80) of its kind byte
//! set, and 24 more bytes between the header and the body, which the body
//! length does not count:
//!
//! ```text
//!     40   16  trace id (never 0)
//!     56    8  the sending span's id (never 0)
//!     64    -  body (postcard)
//! ```
//!
//! A node writes the context only with the feature on, and only from
//! inside a handler; every other frame is the plain layout above, byte for
//! byte. Every node reads both layouts, with the feature or without, so
//! that turning tracing on in one process never cuts it off from its
//! peers; without the feature the context is checked and skipped.
//!
//! All integers are little-endian. [`Frame::parse`] checks every field it
//! can without knowing the body's type and never panics; the body is
//! decoded by whoever knows its type, and a body that does not decode, or
//! has bytes left after the value it carries, is an error too
//! ([`Refused::Decode`](crate::Refused::Decode)).
//!
//! Sending never builds a frame in a buffer of its own: the body's size is
//! computed first (postcard's size flavor), then the header and body are
//! written straight into the transport's buffer (`write`, crate-private,
//! in the writer module).

use std::fmt;

/// Length of the fixed header.
pub const HEADER_LEN: usize = 40;
/// Length of the trace context a traced message frame carries after its
/// header.
pub const TRACE_LEN: usize = 24;
/// The kind byte's flag for a frame that carries a trace context.
const TRACED: u8 = 0x80;
const MAGIC: [u8; 2] = *b"KR";
const VERSION: u8 = 1;

/// What a frame is for.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum Kind {
    /// Opens a session with an export: the sender's endpoint and the
    /// schema hash it expects.
    Hello = 1,
    /// The export accepted a hello.
    Welcome = 2,
    /// A message whose reply nobody waits for (`send`).
    Tell = 3,
    /// A message whose reply goes back (`ask`, `request`).
    Ask = 4,
    /// The reply to an ask.
    Reply = 5,
    /// An ask or hello that was refused; the body says why.
    Error = 6,
    /// The sender closes its session in order: no gap to report.
    Bye = 7,
    /// The answer to an authenticated hello: the server's nonce and its
    /// proof of the key.
    Challenge = 8,
    /// The client's answer to a challenge.
    Proof = 9,
    /// What the receiver of a session has handled: sent back on its link
    /// to the sender, the acknowledged session's id in the correlation
    /// field, the count of its frames handled in the body (see
    /// [`LinkLoss`](crate::LinkLoss)).
    Ack = 10,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Hello,
            2 => Kind::Welcome,
            3 => Kind::Tell,
            4 => Kind::Ask,
            5 => Kind::Reply,
            6 => Kind::Error,
            7 => Kind::Bye,
            8 => Kind::Challenge,
            9 => Kind::Proof,
            10 => Kind::Ack,
            _ => return None,
        })
    }
}

/// A frame's fixed header.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Header {
    /// What the frame is for.
    pub kind: Kind,
    /// The export's slot in the receiving node.
    pub target: u32,
    /// The message's [`Wire::WIRE_ID`](crate::Wire::WIRE_ID).
    pub wire_id: u32,
    /// The body's length.
    pub body_len: u32,
    /// Ties a reply or error to its ask (or hello).
    pub correlation: u64,
    /// The sending connection's session.
    pub session: u64,
    /// The frame's number within its session.
    pub seq: u64,
}

impl Header {
    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf`.
    /// Returns `false`, writing nothing, if `buf` is shorter.
    pub fn write_to(&self, buf: &mut [u8]) -> bool {
        let Some(out) = buf.get_mut(..HEADER_LEN) else {
            return false;
        };
        out[0..2].copy_from_slice(&MAGIC);
        out[2] = VERSION;
        out[3] = self.kind as u8;
        out[4..8].copy_from_slice(&self.target.to_le_bytes());
        out[8..12].copy_from_slice(&self.wire_id.to_le_bytes());
        out[12..16].copy_from_slice(&self.body_len.to_le_bytes());
        out[16..24].copy_from_slice(&self.correlation.to_le_bytes());
        out[24..32].copy_from_slice(&self.session.to_le_bytes());
        out[32..40].copy_from_slice(&self.seq.to_le_bytes());
        true
    }
}

/// A frame read from a transport: its header and its still-encoded body.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Frame<'a> {
    /// The header.
    pub header: Header,
    /// The postcard body, exactly `header.body_len` bytes.
    pub body: &'a [u8],
    /// The trace context of the handler that sent it, if the frame
    /// carries one (feature `tracing`).
    #[cfg(feature = "tracing")]
    pub trace: Option<kaspar::TraceContext>,
}

/// Why bytes are not a frame.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum FrameError {
    /// Shorter than the header.
    TooShort {
        /// The bytes there were.
        len: usize,
    },
    /// Does not start with the magic bytes: not a kaspar-remote frame.
    BadMagic,
    /// A version this build does not read.
    BadVersion(u8),
    /// A kind byte that names no kind.
    BadKind(u8),
    /// The header's body length disagrees with the bytes that follow it.
    BadLength {
        /// What the header says.
        declared: u32,
        /// The bytes after the header (and its trace context).
        actual: usize,
    },
    /// The kind byte announces a trace context, but the frame is too short
    /// to hold one, one of its ids is zero, or the kind is not a message
    /// (tell, ask, reply).
    BadTrace,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooShort { len } => {
                write!(
                    f,
                    "a frame of {len} bytes is shorter than its {HEADER_LEN}-byte header"
                )
            }
            FrameError::BadMagic => f.write_str("not a kaspar-remote frame (bad magic)"),
            FrameError::BadVersion(v) => {
                write!(f, "frame version {v} is not readable by this build")
            }
            FrameError::BadKind(k) => write!(f, "frame kind {k} is unknown"),
            FrameError::BadLength { declared, actual } => write!(
                f,
                "the header declares a {declared}-byte body but {actual} bytes follow"
            ),
            FrameError::BadTrace => f.write_str(
                "the kind byte announces a trace context that is missing, zero, \
                 or on a frame that is no message",
            ),
        }
    }
}

impl std::error::Error for FrameError {}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

impl<'a> Frame<'a> {
    /// Reads a frame; never panics, whatever `bytes` holds.
    pub fn parse(bytes: &'a [u8]) -> Result<Frame<'a>, FrameError> {
        let (head, body) = match bytes.split_at_checked(HEADER_LEN) {
            Some(parts) => parts,
            None => return Err(FrameError::TooShort { len: bytes.len() }),
        };
        if head[0..2] != MAGIC {
            return Err(FrameError::BadMagic);
        }
        if head[2] != VERSION {
            return Err(FrameError::BadVersion(head[2]));
        }
        let kind = Kind::from_u8(head[3] & !TRACED).ok_or(FrameError::BadKind(head[3]))?;
        let (trace, body) = match head[3] & TRACED {
            0 => (None, body),
            _ => split_trace(kind, body)?,
        };
        let body_len = u32_at(head, 12);
        if usize::try_from(body_len).ok() != Some(body.len()) {
            return Err(FrameError::BadLength {
                declared: body_len,
                actual: body.len(),
            });
        }
        // Without the feature a context is checked, then dropped.
        #[cfg(not(feature = "tracing"))]
        let _ = trace;
        Ok(Frame {
            header: Header {
                kind,
                target: u32_at(head, 4),
                wire_id: u32_at(head, 8),
                body_len,
                correlation: u64_at(head, 16),
                session: u64_at(head, 24),
                seq: u64_at(head, 32),
            },
            body,
            #[cfg(feature = "tracing")]
            trace: trace.map(|(trace_id, span_id)| kaspar::TraceContext { trace_id, span_id }),
        })
    }
}

/// The trace context at the front of what follows a traced frame's header,
/// and the body after it: `(trace id, sending span id)`, both nonzero.
#[cold]
#[allow(clippy::type_complexity)]
fn split_trace(kind: Kind, rest: &[u8]) -> Result<(Option<(u128, u64)>, &[u8]), FrameError> {
    if !matches!(kind, Kind::Tell | Kind::Ask | Kind::Reply) {
        return Err(FrameError::BadTrace);
    }
    let (trace, body) = rest
        .split_at_checked(TRACE_LEN)
        .ok_or(FrameError::BadTrace)?;
    let mut id = [0; 16];
    id.copy_from_slice(&trace[..16]);
    let trace_id = u128::from_le_bytes(id);
    let span_id = u64_at(trace, 16);
    if trace_id == 0 || span_id == 0 {
        return Err(FrameError::BadTrace);
    }
    Ok((Some((trace_id, span_id)), body))
}

mod write;

pub use write::to_vec;
pub(crate) use write::{body_len, write};
#[cfg(feature = "tracing")]
pub(crate) use write::{trace_for, trace_len, write_traced};

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn header(kind: Kind) -> Header {
        Header {
            kind,
            target: 3,
            wire_id: 77,
            body_len: 0,
            correlation: 9,
            session: 11,
            seq: 5,
        }
    }

    /// A frame of `kind` with body `(7u32, "px")` and, after its header,
    /// the trace bytes `trace` (the flag set), as a traced sender writes it.
    pub(super) fn traced_bytes(kind: Kind, trace: [u8; TRACE_LEN]) -> Vec<u8> {
        let plain = to_vec(&header(kind), &(7u32, "px")).unwrap();
        let mut bytes = plain[..HEADER_LEN].to_vec();
        bytes[3] |= TRACED;
        bytes.extend_from_slice(&trace);
        bytes.extend_from_slice(&plain[HEADER_LEN..]);
        bytes
    }

    pub(super) fn trace_bytes(trace_id: u128, span_id: u64) -> [u8; TRACE_LEN] {
        let mut t = [0; TRACE_LEN];
        t[..16].copy_from_slice(&trace_id.to_le_bytes());
        t[16..].copy_from_slice(&span_id.to_le_bytes());
        t
    }

    #[test]
    fn a_traced_message_frame_reads_as_the_plain_one_with_its_context() {
        let plain_bytes = to_vec(&header(Kind::Tell), &(7u32, "px")).unwrap();
        let plain = Frame::parse(&plain_bytes).unwrap();
        let bytes = traced_bytes(Kind::Tell, trace_bytes(0xabc << 64 | 0xdef, 42));
        let traced = Frame::parse(&bytes).unwrap();
        assert_eq!(traced.header, plain.header);
        assert_eq!(traced.body, plain.body);
        #[cfg(feature = "tracing")]
        {
            assert_eq!(plain.trace, None);
            let context = kaspar::TraceContext {
                trace_id: 0xabc << 64 | 0xdef,
                span_id: 42,
            };
            assert_eq!(traced.trace, Some(context));
        }
    }

    #[test]
    fn a_trace_context_that_is_short_zero_or_on_a_control_frame_is_refused() {
        let good = trace_bytes(1, 1);
        for kind in [Kind::Hello, Kind::Welcome, Kind::Error, Kind::Bye] {
            assert_eq!(
                Frame::parse(&traced_bytes(kind, good)),
                Err(FrameError::BadTrace),
                "{kind:?}"
            );
        }
        for kind in [Kind::Tell, Kind::Ask, Kind::Reply] {
            assert!(Frame::parse(&traced_bytes(kind, good)).is_ok(), "{kind:?}");
        }
        assert_eq!(
            Frame::parse(&traced_bytes(Kind::Ask, trace_bytes(0, 1))),
            Err(FrameError::BadTrace)
        );
        assert_eq!(
            Frame::parse(&traced_bytes(Kind::Ask, trace_bytes(1, 0))),
            Err(FrameError::BadTrace)
        );
        // Cut inside the context: no body is read from its bytes.
        let bytes = traced_bytes(Kind::Tell, good);
        for cut in HEADER_LEN..HEADER_LEN + TRACE_LEN {
            assert_eq!(Frame::parse(&bytes[..cut]), Err(FrameError::BadTrace));
        }
        // The body length counts the body only.
        assert!(matches!(
            Frame::parse(&bytes[..bytes.len() - 1]),
            Err(FrameError::BadLength { .. })
        ));
    }
}
