//! The synthetic exchange: clustered event arrivals from a self-exciting
//! Hawkes process, turned into book and trade messages against a reference
//! book, coalesced into packets, sent as redundant feeds A and B over UDP
//! on loopback, and optionally written to a capture file.
//!
//! Deterministic for a seed: the same seed gives the same events, in the
//! same order, with the same payloads. Only the packet boundaries depend on
//! when the sender gets to run (live), or on the caller's clock (offline).
//!
//! One file per job:
//!
//! * `hawkes.rs`: the Hawkes process (arrival times), drawing on the
//!   suite's [`XorShift`](crate::rng::XorShift);
//! * `exchange.rs`: the matching engine and packetizer, [`Generator`];
//! * `packet_log.rs`: every packet's entries, [`PacketLog`], from which the
//!   reference book is rebuilt;
//! * `sender.rs`: the live UDP sender of feeds A and B, and offline
//!   packetization;
//! * `capture_file.rs`: the capture file.
//!
//! Everything is re-exported here, so users name it
//! `generator::Generator` and so on.

mod capture_file;
mod exchange;
mod hawkes;
mod packet_log;
mod sender;

pub use self::{
    capture_file::{read_capture, CaptureWriter, CAPTURE_MAGIC},
    exchange::{
        instrument_name, security_ids, GenConfig, Generator, INSTRUMENTS, INSTRUMENT_NAMES,
    },
    hawkes::{Hawkes, Release},
    packet_log::PacketLog,
    sender::{offline_packets, run_sender, FeedId, SendPlan, SendProgress, SendReport},
};
