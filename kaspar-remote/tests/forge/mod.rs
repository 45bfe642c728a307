//! Hand-made frames for the tests that attack a node from a raw link
//! (`hostile.rs`, and the authentication tests through `auth_support`):
//! a hello's body as a node writes it, frames with every header field as
//! given, and a raw link's send and receive.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use kaspar_remote::frame::{self, Frame, Header, Kind};
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

/// A forged peer with an inbox of its own, introduced to a node by a
/// hello naming that inbox: the node's answers come back to `rx`.
pub struct Forger<R> {
    pub rx: R,
    pub session: u64,
    pub seq: u64,
    /// Frames received but not yet taken by [`answer`](Self::answer): a
    /// poll may bring several.
    early: std::collections::VecDeque<Vec<u8>>,
}

impl<R: LinkRx> Forger<R> {
    /// Says `hello` on `raw` as `session` and waits for the node's welcome
    /// on `rx`, the inbox the hello names.
    pub fn welcomed<H: Serialize>(rx: R, raw: &mut impl LinkTx, session: u64, hello: &H) -> Self {
        let mut f = Forger {
            rx,
            session,
            seq: 0,
            early: Default::default(),
        };
        let welcome = f.send(raw, Kind::Hello, 0, 0, 1, hello);
        let (answer, _) = f.answer();
        assert_eq!((answer.kind, answer.correlation), (Kind::Welcome, welcome));
        f
    }

    /// Sends one frame on the forger's session; returns its correlation.
    pub fn send<B: Serialize + ?Sized>(
        &mut self,
        tx: &mut impl LinkTx,
        kind: Kind,
        target: u32,
        wire_id: u32,
        correlation: u64,
        body: &B,
    ) -> u64 {
        let body = postcard::to_allocvec(body).unwrap();
        self.send_bytes(tx, kind, target, wire_id, correlation, &body);
        correlation
    }

    /// Sends one frame whose body is `body` as it is.
    pub fn send_bytes(
        &mut self,
        tx: &mut impl LinkTx,
        kind: Kind,
        target: u32,
        wire_id: u32,
        correlation: u64,
        body: &[u8],
    ) {
        let bytes = forge_bytes(
            kind,
            target,
            wire_id,
            correlation,
            self.session,
            self.seq,
            body,
        );
        self.seq += 1;
        push(tx, &bytes);
    }

    /// The next frame the node sends the forger.
    pub fn answer(&mut self) -> (Header, Vec<u8>) {
        if self.early.is_empty() {
            self.early
                .extend(receive(&mut self.rx, 1, Duration::from_secs(10)));
        }
        let bytes = self.early.pop_front().expect("no answer from the node");
        let f = Frame::parse(&bytes).unwrap();
        (f.header, f.body.to_vec())
    }

    /// How many frames the node has sent the forger that it has not taken
    /// yet, counting those that arrive within `patience`.
    pub fn unread(&mut self, patience: Duration) -> usize {
        self.early
            .extend(receive(&mut self.rx, usize::MAX, patience));
        self.early.len()
    }
}
