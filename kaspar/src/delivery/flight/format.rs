//! The journal's byte layout, as written: one definition shared by the
//! journal of a live group (`group::journal`, which also reads it) and the
//! flight recorder's dumps.
//!
//! A header, `KSPRJNL` and a version byte, then records: payload length
//! (`u32`, little-endian), time in nanoseconds (`u64`, little-endian), kind
//! (`u8`), payload. Version 1 has no kind byte (inputs only); version 2 has
//! inputs and timer firings; version 3 adds the lost record, an input a
//! flight recorder could not keep, which only a dump that holds one is
//! written with (so a dump without one stays readable as version 2).
//! Version 4, a live group's journal, names the timer of each timer
//! record: its payload is the timer's tag (`u64`, little-endian), where
//! before it was empty.

use crate::base::clock::Time;

/// The first seven bytes of every journal.
pub(crate) const MAGIC: &[u8; 7] = b"KSPRJNL";
/// Inputs only, no kind byte: read, never written.
pub(crate) const VERSION_INPUTS_ONLY: u8 = 1;
/// Inputs and timer firings.
pub(crate) const VERSION_TIMERS: u8 = 2;
/// Inputs, timer firings and lost inputs.
pub(crate) const VERSION_LOST: u8 = 3;
/// As version 3, with each timer firing's tag as its payload.
pub(crate) const VERSION_TIMER_TAGS: u8 = 4;

/// An input; the payload is its postcard encoding.
pub(crate) const KIND_INPUT: u8 = 0;
/// A timer fired into the group; no payload, or from version 4 the
/// timer's tag.
pub(crate) const KIND_TIMER: u8 = 1;
/// An input was handled here but not kept (too large for its slot, or its
/// encoding failed); no payload. Version 3 on.
pub(crate) const KIND_LOST: u8 = 2;

/// Larger records are taken for corruption rather than allocated.
pub(crate) const MAX_RECORD: u32 = 64 << 20;

/// Length of a record's head from version 2 on.
pub(crate) const HEAD_LEN: usize = 13;

/// The file header for `version`.
pub(crate) fn header(version: u8) -> [u8; 8] {
    let mut h = [0u8; 8];
    h[..7].copy_from_slice(MAGIC);
    h[7] = version;
    h
}

/// A record's head (the layout from version 2 on): what precedes its
/// payload.
pub(crate) fn record_head(len: u32, at: Time, kind: u8) -> [u8; HEAD_LEN] {
    let mut h = [0u8; HEAD_LEN];
    h[..4].copy_from_slice(&len.to_le_bytes());
    h[4..12].copy_from_slice(&at.as_nanos().to_le_bytes());
    h[12] = kind;
    h
}
