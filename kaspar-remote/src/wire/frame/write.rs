//! Writing frames: the body's length computed first, then the header and
//! body written straight into a buffer the transport lends (never a
//! buffer of our own on the send path).

use serde::Serialize;

use super::{Header, HEADER_LEN};
#[cfg(feature = "tracing")]
use super::{Kind, TRACED, TRACE_LEN};

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
/// [`FrameError::BadMagic`](super::FrameError::BadMagic) instead of reading a garbled message.
pub(crate) fn write<B: Serialize + ?Sized>(buf: &mut [u8], header: &Header, value: &B) {
    let (head, body) = buf.split_at_mut(HEADER_LEN.min(buf.len()));
    let written = postcard::to_slice(value, body).map(|b| b.len());
    if written.ok() == usize::try_from(header.body_len).ok() && header.write_to(head) {
        return;
    }
    head.fill(0);
}

/// The trace context a frame of `kind` sent now carries: the current
/// handler's, for a message frame (tell, ask, reply) sent from inside one.
#[cfg(feature = "tracing")]
pub(crate) fn trace_for(kind: Kind) -> Option<kaspar::TraceContext> {
    match kind {
        Kind::Tell | Kind::Ask | Kind::Reply => kaspar::TraceContext::current(),
        _ => None,
    }
}

/// The bytes `trace` adds to a frame.
#[cfg(feature = "tracing")]
pub(crate) fn trace_len(trace: Option<kaspar::TraceContext>) -> usize {
    trace.map_or(0, |_| TRACE_LEN)
}

/// [`write`], with `trace` (if any) after the header: `buf` is then
/// exactly `HEADER_LEN + TRACE_LEN + header.body_len` long, and the kind
/// byte carries the flag. Without a context, exactly `write`.
#[cfg(feature = "tracing")]
pub(crate) fn write_traced<B: Serialize + ?Sized>(
    buf: &mut [u8],
    header: &Header,
    trace: Option<kaspar::TraceContext>,
    value: &B,
) {
    let Some(trace) = trace else {
        return write(buf, header, value);
    };
    let (head, body) = buf.split_at_mut((HEADER_LEN + TRACE_LEN).min(buf.len()));
    let written = postcard::to_slice(value, body).map(|b| b.len());
    if written.ok() == usize::try_from(header.body_len).ok()
        && head.len() == HEADER_LEN + TRACE_LEN
        && header.write_to(head)
    {
        head[3] |= TRACED;
        head[40..56].copy_from_slice(&trace.trace_id.to_le_bytes());
        head[56..64].copy_from_slice(&trace.span_id.to_le_bytes());
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

#[cfg(all(test, feature = "tracing"))]
mod tests {
    use super::super::tests::{header, trace_bytes, traced_bytes};
    use super::super::{Frame, FrameError};
    use super::*;

    #[test]
    fn the_writer_lays_out_what_the_reader_reads_and_nothing_without_a_context() {
        let value = (7u32, "px");
        let mut h = header(Kind::Reply);
        h.body_len = body_len(&value).unwrap();
        let plain = to_vec(&h, &value).unwrap();
        let mut untraced = vec![0; plain.len()];
        write_traced(&mut untraced, &h, None, &value);
        assert_eq!(
            untraced, plain,
            "no context: the plain frame, byte for byte"
        );

        let context = kaspar::TraceContext {
            trace_id: u128::MAX - 5,
            span_id: 0x0102_0304_0506_0708,
        };
        let mut buf = vec![0; plain.len() + trace_len(Some(context))];
        write_traced(&mut buf, &h, Some(context), &value);
        let frame = Frame::parse(&buf).unwrap();
        assert_eq!(frame.trace, Some(context));
        assert_eq!(frame.header, h);
        assert_eq!(
            buf,
            traced_bytes(
                Kind::Reply,
                trace_bytes(u128::MAX - 5, 0x0102_0304_0506_0708)
            )
        );
        // A buffer of the wrong size is left unreadable, not garbled.
        let mut short = vec![0; buf.len() - 1];
        write_traced(&mut short, &h, Some(context), &value);
        assert_eq!(Frame::parse(&short), Err(FrameError::BadMagic));
    }

    #[test]
    fn only_message_frames_sent_from_a_handler_carry_a_context() {
        // No handler runs on a test thread.
        for kind in [Kind::Tell, Kind::Ask, Kind::Reply, Kind::Hello, Kind::Error] {
            assert_eq!(trace_for(kind), None);
            assert_eq!(trace_len(trace_for(kind)), 0);
        }
    }
}
