//! A reconnecting address over iceoryx2 (#27, deliverable 5): the process
//! exporting a `Counter` is killed with SIGKILL and started again at the
//! same endpoint; the old address works again once it is back, the sends
//! in the gap fail with the message handed back, and the new process
//! handles exactly what was sent after the gap.
//!
//! The test re-launches this binary as its peer (see `iceoryx2_peer`).

#![cfg(feature = "iceoryx2")]

mod common;
mod iceoryx2_peer;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Counter, Inbox, Seq};
use iceoryx2_peer::{
    eventually, fresh_namespace, heard, inherited_namespace, role, tell, transport, Peer, PATIENCE,
};
use kaspar::prelude::*;
use kaspar::ExitReason;
use kaspar_remote::transport::iceoryx2::Iceoryx2Config;
use kaspar_remote::{Node, Reconnect};

const TEST: &str = "a_killed_and_restarted_exporter_is_reached_again_through_the_old_address";

/// Child: exports a `Counter` as "counter" at "reconnect/server"; on
/// "LOG", tells what the counter handled; ends when its stdin closes.
fn exporter() {
    let system = System::new();
    let (counter, log) = Counter::new();
    let counter = system.spawn(counter).start();
    let t = transport(Iceoryx2Config::default().namespace(inherited_namespace()));
    let node = Node::new(t, "reconnect/server").unwrap();
    node.export("counter", &counter).unwrap();
    tell("EXPORTED");
    while let Some(line) = heard() {
        if line == "LOG" {
            tell(&format!("LOG {:?}", log.lock().unwrap()));
        }
    }
    drop(node);
    system.shutdown();
}

#[test]
fn a_killed_and_restarted_exporter_is_reached_again_through_the_old_address() {
    if role().is_some() {
        return exporter();
    }
    let ns = fresh_namespace("reconnect");
    let mut first = Peer::spawn(TEST, "exporter", ns.name());
    first.expect("EXPORTED");
    let system = System::new();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let inbox = system
        .spawn(Inbox {
            terminated: heard.clone(),
            replies: Arc::new(Mutex::new(Vec::new())),
        })
        .start();
    let t = transport(Iceoryx2Config::default().namespace(ns.name()));
    let client = Node::new(t, "reconnect/client").unwrap();
    let policy = Reconnect::new().backoff(Duration::from_millis(5), Duration::from_millis(50));
    let remote = client
        .lookup::<Counter>("counter")
        .unwrap()
        .with_reconnect(policy);
    remote.watch(&inbox);
    assert_eq!(remote.ask(Seq(0)).unwrap().wait_timeout(PATIENCE), Ok(0));
    first.say("LOG");
    assert_eq!(first.expect("LOG"), "[0]");

    first.kill();
    let killed = Instant::now();
    assert!(eventually(PATIENCE, || remote.is_lost()));
    println!("lost {:?} after the kill", killed.elapsed());
    match remote.send(Seq(1)) {
        Err(SendError::Closed { msg, .. }) => assert_eq!(msg, Seq(1), "handed back"),
        other => panic!("a send in the gap gave {other:?}"),
    }
    assert!(eventually(PATIENCE, || heard.lock().unwrap().len() == 1));
    assert_eq!(heard.lock().unwrap()[0].reason, ExitReason::PeerLost);

    let mut second = Peer::spawn(TEST, "exporter", ns.name());
    second.expect("EXPORTED");
    let exported = Instant::now();
    assert!(
        eventually(PATIENCE, || !remote.is_lost()),
        "never came back: {:?}",
        remote.reconnect_error()
    );
    println!(
        "back {:?} after the new process exported",
        exported.elapsed()
    );
    assert_eq!(remote.ask(Seq(2)).unwrap().wait_timeout(PATIENCE), Ok(4));
    remote.send(Seq(3)).unwrap();
    assert_eq!(remote.ask(Seq(4)).unwrap().wait_timeout(PATIENCE), Ok(8));
    second.say("LOG");
    assert_eq!(
        second.expect("LOG"),
        "[2, 3, 4]",
        "nothing twice, nothing of the gap"
    );
    assert_eq!(remote.reconnects(), 1);
    assert_eq!(heard.lock().unwrap().len(), 1, "one loss, one notice");
    second.finish();
    drop((remote, client));
    system.shutdown();
}
