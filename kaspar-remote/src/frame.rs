//! Frames: a fixed 40-byte header, then a postcard body.
//!
//! ```text
//! offset size  field
//!      0    2  magic "KR"
//!      2    1  version (1)
//!      3    1  kind: 1 hello, 2 welcome, 3 tell, 4 ask, 5 reply, 6 error, 7 bye
//!      4    4  target: the export's slot in the receiving node
//!      8    4  wire id of the message (0 for control frames)
//!     12    4  body length in bytes
//!     16    8  correlation id (an ask and its reply or error share it)
//!     24    8  session id (one per connection; a reconnect is a new one)
//!     32    8  sequence number within the session, from 0
//!     40    -  body (postcard)
//! ```
//!
//! All integers are little-endian. [`Frame::parse`] checks every field it
//! can without knowing the body's type and never panics; the body is
//! decoded by whoever knows its type, and a body that does not decode, or
//! has bytes left after the value it carries, is an error too
//! ([`Refused::Decode`](crate::Refused::Decode)).
//!
//! Sending never builds a frame in a buffer of its own: the body's size is
//! computed first (postcard's size flavor), then the header and body are
//! written straight into the transport's buffer (`write`, crate-private).

use std::fmt;

use serde::Serialize;

/// Length of the fixed header.
pub const HEADER_LEN: usize = 40;
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
        /// The bytes after the header.
        actual: usize,
    },
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
        let kind = Kind::from_u8(head[3]).ok_or(FrameError::BadKind(head[3]))?;
        let body_len = u32_at(head, 12);
        if usize::try_from(body_len).ok() != Some(body.len()) {
            return Err(FrameError::BadLength {
                declared: body_len,
                actual: body.len(),
            });
        }
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
        })
    }
}

/// Why a value cannot be framed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum EncodeError {
    /// postcard cannot encode it.
    Codec(String),
    /// Its body is longer than a frame's length field holds.
    TooLong(usize),
}

/// The body length of `value`, computed without writing it anywhere.
pub(crate) fn body_len<B: Serialize + ?Sized>(value: &B) -> Result<u32, EncodeError> {
    let n = postcard::serialize_with_flavor(value, postcard::ser_flavors::Size::default())
        .map_err(|e| EncodeError::Codec(e.to_string()))?;
    u32::try_from(n).map_err(|_| EncodeError::TooLong(n))
}

/// Writes `header` and `value` into `buf`, which is exactly
/// `HEADER_LEN + header.body_len` long. Should the body not fit after all
/// (a `Serialize` impl that writes something else the second time), the
/// header's magic is left zeroed, so the receiver rejects the frame as
/// [`FrameError::BadMagic`] instead of reading a garbled message.
pub(crate) fn write<B: Serialize + ?Sized>(buf: &mut [u8], header: &Header, value: &B) {
    let (head, body) = buf.split_at_mut(HEADER_LEN.min(buf.len()));
    let written = postcard::to_slice(value, body).map(|b| b.len());
    if written.ok() == usize::try_from(header.body_len).ok() && header.write_to(head) {
        return;
    }
    head.fill(0);
}

/// `header` and `value` as one owned frame: for tests and tools, never on
/// the send path.
pub fn to_vec<B: Serialize + ?Sized>(header: &Header, value: &B) -> Result<Vec<u8>, String> {
    let mut header = *header;
    header.body_len = body_len(value).map_err(|e| format!("{e:?}"))?;
    let mut buf = vec![0; HEADER_LEN + header.body_len as usize];
    write(&mut buf, &header, value);
    Ok(buf)
}
