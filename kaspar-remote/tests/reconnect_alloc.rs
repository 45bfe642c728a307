//! Heap allocations of sends through a reconnecting address, after it
//! has reconnected, counted exactly with the suite's counting allocator:
//! the policy adds none to a send (one test function, so nothing else in
//! this binary allocates while it measures).

mod common;

use std::time::Duration;

use common::{eventually, Counter, Seq};
use kaspar::prelude::*;
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{Node, Reconnect, SendPolicy};
use kaspar_suite::alloc::{allocations, warm_parking, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

const PATIENCE: Duration = Duration::from_secs(10);

#[test]
fn a_reconnected_address_sends_without_allocating() {
    let net = Loopback::new(1024);
    let system = System::new();
    let (counter, log) = Counter::new();
    // bounded, so the bridge waits for room rather than the mailbox
    // growing past its ring (as in alloc.rs)
    let counter = system
        .spawn(counter)
        .mailbox(MailboxKind::lock_free(1024))
        .start();
    let server = Node::new(net.clone(), "server").unwrap();
    server.export("counter", &counter).unwrap();
    let client = Node::new(net.clone(), "client").unwrap();
    let remote = client
        .lookup::<Counter>("counter")
        .unwrap()
        .with_policy(SendPolicy::Wait(PATIENCE))
        .unwrap()
        .with_reconnect(
            Reconnect::new().backoff(Duration::from_millis(1), Duration::from_millis(5)),
        );
    net.sever("server");
    assert!(eventually(PATIENCE, || remote.reconnects() == 1 && !remote.is_lost()));
    warm_parking();

    let handled = |n: usize| assert!(eventually(PATIENCE, || log.lock().unwrap().len() == n));
    let mut sent = 0u64;
    for _ in 0..10 {
        for _ in 0..1_000 {
            remote.send(Seq(sent)).unwrap();
            sent += 1;
        }
        handled(sent as usize);
        log.lock().unwrap().clear();
        sent = 0;
    }
    log.lock().unwrap().reserve(20_000);

    let before = allocations();
    for _ in 0..10_000 {
        remote.send(Seq(sent)).unwrap();
        sent += 1;
    }
    handled(sent as usize);
    let after = allocations();
    assert_eq!(
        after - before,
        0,
        "allocations for 10k tells through a reconnected address"
    );
    drop((remote, client, server));
    system.shutdown();
}
