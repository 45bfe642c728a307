//! Actors across two processes over iceoryx2, end to end: an actor
//! exported in a re-launched copy of this binary, looked up, told and
//! asked from this one; then its process is killed mid-conversation.

#![cfg(feature = "iceoryx2")]

mod common;
mod iceoryx2_peer;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Counter, Inbox, Other, Report, Seq, Tally};
use iceoryx2_peer::{fresh_namespace, heard, inherited_namespace, role, tell, transport, Peer};
use kaspar::prelude::*;
use kaspar::{AskError, ExitReason};
use kaspar_remote::transport::iceoryx2::Iceoryx2Config;
use kaspar_remote::{LookupError, Node, SendPolicy};

const LIVENESS: Duration = Duration::from_millis(500);

/// Child: exports a `Counter` as "counter" and serves it until the parent
/// hangs up (or kills it).
fn exporter() {
    let system = System::new();
    let (counter, _log) = Counter::new();
    let counter = system.spawn(counter).start();
    let t = transport(Iceoryx2Config::default().namespace(inherited_namespace()));
    let node = Node::new(t, "e2e/server").unwrap();
    node.export("counter", &counter).unwrap();
    tell("EXPORTED");
    let _ = heard();
    drop(node);
    system.shutdown();
}

#[test]
fn an_actor_exported_in_another_process_is_told_and_asked_over_iceoryx2() {
    if role().is_some() {
        return exporter();
    }
    let ns = fresh_namespace("e2e");
    let mut peer = Peer::spawn(
        "an_actor_exported_in_another_process_is_told_and_asked_over_iceoryx2",
        "exporter",
        ns.name(),
    );
    peer.expect("EXPORTED");
    let system = System::new();
    let config = Iceoryx2Config::default()
        .namespace(ns.name())
        .liveness_timeout(LIVENESS);
    let client = Node::new(transport(config), "e2e/client").unwrap();

    match client.lookup::<Other>("counter") {
        Err(LookupError::WrongActor { expected, found }) => {
            assert_eq!((expected, found.as_str()), ("Other", "Counter"));
        }
        other => panic!("expected WrongActor, got {other:?}"),
    }
    let remote = client
        .lookup::<Counter>("counter")
        .unwrap()
        .with_policy(SendPolicy::Wait(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(remote.ask(Seq(0)).unwrap().wait().unwrap(), 0);
    const TELLS: u64 = 20_000;
    for i in 1..TELLS {
        remote.send(Seq(i)).unwrap();
    }
    // An ask from the same sender comes after every tell before it.
    assert_eq!(
        remote.ask(Report).unwrap().wait().unwrap(),
        Tally {
            seen: TELLS,
            out_of_order: 0,
            last: Some(TELLS - 1)
        }
    );

    // The exporting process dies: watchers hear PeerLost, asks fail.
    let terminated = Arc::new(Mutex::new(Vec::new()));
    let inbox = system
        .spawn(Inbox {
            terminated: terminated.clone(),
            replies: Arc::new(Mutex::new(Vec::new())),
        })
        .start();
    remote.watch(&inbox);
    peer.kill();
    let lost = iceoryx2_peer::eventually(Duration::from_secs(5), || {
        terminated.lock().unwrap().len() == 1
    });
    assert!(lost, "the watcher never heard of the dead process");
    assert_eq!(terminated.lock().unwrap()[0].reason, ExitReason::PeerLost);
    assert!(remote.is_lost());
    match remote.ask(Seq(1)) {
        Err(SendError::Closed { msg: Seq(1), .. }) => {}
        Ok(mut pending) => assert_eq!(
            pending.wait_timeout(Duration::from_secs(5)),
            Err(AskError::PeerLost)
        ),
        Err(e) => panic!("unexpected {e:?}"),
    }
    drop(client);
    system.shutdown();
}
