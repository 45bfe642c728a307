//! An actor on the worker pool (`Spawn::pooled`), exported: remote
//! senders reach it as they reach an actor on its own thread, through its
//! queue (`Export::new`) or inline on the node's bridge thread
//! (`Export::fast_send`, which takes the actor's lock as any `fast_send`
//! does, whichever thread serves its queue). Every message arrives once
//! and in order; a remote ask whose handler panics fails as `Panicked`
//! and the pooled actor serves on under supervision's default.

mod common;

use std::time::Duration;

use common::{eventually, Boom, Counter, Report, Seq};
use kaspar::prelude::*;
use kaspar::AskError;
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{Export, Node};

fn exported_pooled(export: Export) {
    let net = Loopback::new(1024);
    let system = System::new();
    let (counter, log) = Counter::new();
    let counter = system.spawn(counter).pooled().start();
    let server = Node::new(net.clone(), "pool/server").unwrap();
    server.export_with("counter", &counter, export).unwrap();
    let client = Node::new(net, "pool/client").unwrap();
    let remote = client.lookup::<Counter>("counter").unwrap();

    for n in 0..500 {
        remote.send(Seq(n)).unwrap();
    }
    for n in 500..600 {
        let got = remote
            .ask(Seq(n))
            .unwrap()
            .wait_timeout(Duration::from_secs(10));
        assert_eq!(got, Ok(2 * n));
    }
    let tally = remote
        .ask(Report)
        .unwrap()
        .wait_timeout(Duration::from_secs(10))
        .unwrap();
    assert_eq!((tally.seen, tally.out_of_order), (600, 0), "{tally:?}");
    assert_eq!(*log.lock().unwrap(), (0..600).collect::<Vec<_>>());

    let boom = remote
        .ask(Boom)
        .unwrap()
        .wait_timeout(Duration::from_secs(10));
    assert!(matches!(boom, Err(AskError::Panicked { .. })), "{boom:?}");
    // The default supervision resumes: the pooled actor answers on.
    let got = remote
        .ask(Seq(600))
        .unwrap()
        .wait_timeout(Duration::from_secs(10));
    assert_eq!(got, Ok(1200));
    assert!(eventually(Duration::from_secs(5), || log
        .lock()
        .unwrap()
        .len()
        == 601));

    drop((client, server));
    let report = system.shutdown();
    assert!(
        report.failed.is_empty() && report.unfinished.is_empty(),
        "{report:?}"
    );
}

#[test]
fn a_pooled_actor_exported_through_its_queue_gets_every_message_once_in_order() {
    exported_pooled(Export::new());
}

#[test]
fn a_pooled_actor_exported_with_fast_send_runs_on_the_bridge_thread_in_order() {
    exported_pooled(Export::new().fast_send());
}
