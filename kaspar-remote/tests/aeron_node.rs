//! End to end across two processes over Aeron IPC: a `Counter` exported by
//! this process's [`Node`], looked up and driven by a node in a child
//! process through the announcement stream and hashed IPC endpoints on one
//! shared media driver: 10k tells in order, each once, then asks answered.

#![cfg(feature = "aeron")]

mod aeron_support;
mod common;

use std::time::Duration;

use aeron_support::*;
use common::*;
use kaspar::prelude::*;
use kaspar_remote::transport::aeron::AeronTransport;
use kaspar_remote::{Node, SendPolicy};

const TELLS: u64 = 10_000;
const TEST: &str = "a_counter_in_another_process_over_aeron_ipc";

/// The child: looks the counter up, tells it `TELLS` numbers, asks.
fn client() {
    let transport = AeronTransport::launch(parents_driver()).unwrap();
    let node = Node::new(transport, &format!("client-{}", std::process::id())).unwrap();
    let counter = node
        .lookup::<Counter>("counter")
        .expect("the parent's export is announced")
        .with_policy(SendPolicy::Wait(Duration::from_secs(5)))
        .unwrap();
    for i in 0..TELLS {
        counter.send(Seq(i)).unwrap();
    }
    // The ask comes after every tell this sender made before it.
    let tally = counter.ask(Report).unwrap().wait().unwrap();
    assert_eq!(
        tally,
        Tally {
            seen: TELLS,
            out_of_order: 0,
            last: Some(TELLS - 1)
        }
    );
    assert_eq!(counter.ask(Seq(TELLS)).unwrap().wait().unwrap(), TELLS * 2);
    say(&format!("seen {}", tally.seen));
    parent_says();
}

#[test]
fn a_counter_in_another_process_over_aeron_ipc() {
    if role().as_deref() == Some("client") {
        return client();
    }
    let system = System::new();
    let (counter, log) = Counter::new();
    let counter = system.spawn(counter).start();
    let transport = AeronTransport::launch(embedded()).unwrap();
    let dir = dir_of(&transport);
    let server = Node::new(transport, "server").unwrap();
    server.export("counter", &counter).unwrap();

    let mut peer = Peer::spawn(TEST, "client", &[(DIR, &dir)]);
    let seen = peer.expect_line("seen ", Duration::from_secs(60));
    assert_eq!(seen, TELLS.to_string());
    let log = log.lock().unwrap().clone();
    assert!(log.iter().copied().eq(0..=TELLS), "the counter's log");
    let stats = server.stats();
    assert_eq!((stats.missed, stats.duplicates, stats.refused), (0, 0, 0));
    peer.tell("done");
    assert!(peer.wait(Duration::from_secs(20)).success());
    drop(server);
    system.shutdown();
}
