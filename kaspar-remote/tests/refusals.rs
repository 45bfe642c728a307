//! A queued ask that the exported actor's mailbox refuses is answered
//! once, with the reason: `Full` when the mailbox stayed full for the
//! node's `inbound_wait`, `Closed` once the actor has stopped. Read off
//! the wire by a forged peer, so the reason itself is checked (a remote
//! asker maps both to `AskError::Dropped`).
//!
//! The route such an ask is queued with owns the wire sink
//! (`ReplyTo::to_owned_sink`); on refusal the node takes the sink back
//! untold (`ReplyTo::into_owned_sink`) and sends the reason. Were the sink
//! left in the route, dropping the route would tell the asker `Dropped`
//! instead, and that is what these tests would see.

mod common;
mod forge;

use std::time::Duration;

use common::*;
use forge::*;
use kaspar::prelude::*;
use kaspar::{MailboxKind, WhenFull};
use kaspar_remote::frame::Kind;
use kaspar_remote::loopback::{Loopback, LoopbackRx, LoopbackTx};
use kaspar_remote::{Node, NodeConfig, Refused, RemoteActor, Transport};

/// The wire id of `Seq`, which `Counter` answers with twice its number.
const SEQ: u32 = 1;

/// A node exporting a `Counter` whose mailbox holds two messages and
/// refuses a third, and a forged peer it has welcomed.
struct World {
    system: System,
    counter: Addr<Counter>,
    log: std::sync::Arc<std::sync::Mutex<Vec<u64>>>,
    server: Node<Loopback>,
    raw: LoopbackTx,
    peer: Forger<LoopbackRx>,
}

fn world() -> World {
    let net = Loopback::new(4096);
    let system = System::new();
    let (c, log) = Counter::new();
    let counter = system
        .spawn(c)
        .mailbox(MailboxKind::LockFree {
            capacity: 2,
            when_full: WhenFull::Reject,
        })
        .start();
    // Long enough for the actor to take its first message while the next
    // one waits for room, short enough for a test that waits it out twice.
    let config = NodeConfig {
        inbound_wait: Duration::from_millis(100),
        ..NodeConfig::default()
    };
    let server = Node::with_config(net.clone(), "server", config).unwrap();
    server.export("counter", &counter).unwrap();
    let mut raw = net.connect("server", Duration::from_secs(1)).unwrap();
    let rx = net.listen("forger").unwrap();
    let hello = hello_counter("forger", Counter::SCHEMA_HASH);
    let peer = Forger::welcomed(rx, &mut raw, 7, &hello);
    World {
        system,
        counter,
        log,
        server,
        raw,
        peer,
    }
}

impl World {
    fn ask(&mut self, correlation: u64, n: u64) {
        self.peer
            .send(&mut self.raw, Kind::Ask, 0, SEQ, correlation, &Seq(n));
    }

    fn tell(&mut self, n: u64) {
        self.peer
            .send(&mut self.raw, Kind::Tell, 0, SEQ, 0, &Seq(n));
    }

    /// The next frame the node sends the peer: its kind, correlation and
    /// body.
    fn answer(&mut self) -> (Kind, u64, Vec<u8>) {
        let (h, body) = self.peer.answer();
        (h.kind, h.correlation, body)
    }

    fn finish(self) {
        drop(self.server);
        self.system.shutdown();
    }
}

fn refusal(body: &[u8]) -> Refused {
    postcard::from_bytes(body).unwrap()
}

#[test]
fn an_ask_refused_by_a_full_mailbox_is_answered_full_once() {
    let mut w = world();
    // The handler takes the log's lock: holding it stops the actor in its
    // first message, so the mailbox fills (the run loop may have drained a
    // batch of up to two before it stopped, so up to four get in) and the
    // rest are refused.
    let log = std::sync::Arc::clone(&w.log);
    let held = log.lock().unwrap();
    const TELLS: u64 = 6;
    for n in 0..TELLS {
        w.tell(n);
    }
    w.ask(100, 100);
    let (kind, correlation, body) = w.answer();
    assert_eq!((kind, correlation), (Kind::Error, 100));
    assert_eq!(refusal(&body), Refused::Full);
    drop(held);
    // The next answer is the next ask's reply: nothing else was said
    // about the refused one.
    w.ask(101, 101);
    let (kind, correlation, body) = w.answer();
    assert_eq!((kind, correlation), (Kind::Reply, 101));
    assert_eq!(postcard::from_bytes::<u64>(&body).unwrap(), 202);
    // Every tell was handled in order or refused and counted, and the
    // refused ask was not run.
    let handled = log.lock().unwrap().clone();
    let (last, tells) = handled.split_last().unwrap();
    assert_eq!(*last, 101);
    assert!(
        tells.iter().copied().eq(0..tells.len() as u64),
        "{handled:?}"
    );
    assert!(tells.len() < TELLS as usize, "the mailbox never filled");
    let refused_tells = TELLS - tells.len() as u64;
    assert_eq!(w.server.stats().refused, refused_tells + 1);
    w.finish();
}

#[test]
fn an_ask_to_a_stopped_actor_is_answered_closed_once() {
    let mut w = world();
    w.ask(200, 1);
    let (kind, correlation, body) = w.answer();
    assert_eq!((kind, correlation), (Kind::Reply, 200));
    assert_eq!(postcard::from_bytes::<u64>(&body).unwrap(), 2);
    w.counter.stop();
    w.ask(201, 2);
    w.ask(202, 3);
    for expected in [201, 202] {
        let (kind, correlation, body) = w.answer();
        assert_eq!((kind, correlation), (Kind::Error, expected));
        assert_eq!(refusal(&body), Refused::Closed);
    }
    let late = w.peer.unread(Duration::from_millis(100));
    assert_eq!(late, 0, "frames after the refusals");
    assert_eq!(w.server.stats().refused, 2);
    w.finish();
}
