//! Hand-made frames for the tests that attack a node from a raw link
//! (`hostile.rs`, and the authentication tests through `auth_support`):
//! a hello's body as a node writes it, frames with every header field as
//! given, and a raw link's send and receive.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use kaspar_remote::frame::{self, Header, Kind};
use kaspar_remote::{LinkRx, LinkTx};
use serde::Serialize;

/// A hello's body as a node writes it (postcard, the crate's field order).
#[derive(Serialize)]
pub struct Hello<'a> {
    pub from: &'a str,
    pub export: &'a str,
    pub actor: &'a str,
    pub schema: u64,
    /// The session this one replaces, and how many frames it sent.
    pub previous: Option<(u64, u64)>,
}

/// A hello from `from` for the export "counter" of an actor named
/// "Counter" whose schema hash is `schema`, replacing no session.
pub fn hello_counter(from: &str, schema: u64) -> Hello<'_> {
    Hello {
        from,
        export: "counter",
        actor: "Counter",
        schema,
        previous: None,
    }
}

/// One frame, every header field as given (the body length excepted).
#[allow(clippy::too_many_arguments)]
pub fn forge<B: Serialize + ?Sized>(
    kind: Kind,
    target: u32,
    wire_id: u32,
    correlation: u64,
    session: u64,
    seq: u64,
    body: &B,
) -> Vec<u8> {
    let h = Header {
        kind,
        target,
        wire_id,
        body_len: 0,
        correlation,
        session,
        seq,
    };
    frame::to_vec(&h, body).unwrap()
}

/// One frame whose body is `body` as it is.
#[allow(clippy::too_many_arguments)]
pub fn forge_bytes(
    kind: Kind,
    target: u32,
    wire_id: u32,
    correlation: u64,
    session: u64,
    seq: u64,
    body: &[u8],
) -> Vec<u8> {
    let mut bytes = forge(kind, target, wire_id, correlation, session, seq, &());
    bytes.extend_from_slice(body);
    bytes[12..16].copy_from_slice(&u32::try_from(body.len()).unwrap().to_le_bytes());
    bytes
}

/// Sends `bytes` as one frame.
pub fn push(tx: &mut impl LinkTx, bytes: &[u8]) {
    tx.send_frame(bytes.len(), &mut |buf| buf.copy_from_slice(bytes))
        .unwrap();
}

/// The frames `rx` receives within `patience`, until `enough` of them
/// (`usize::MAX`: all that come within it).
pub fn receive(rx: &mut impl LinkRx, enough: usize, patience: Duration) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let until = Instant::now() + patience;
    while got.len() < enough && Instant::now() < until {
        if rx.poll(64, &mut |b| got.push(b.to_vec())).unwrap() == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    got
}
