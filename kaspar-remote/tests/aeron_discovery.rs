//! Names across processes on one media driver: `announce`/`discover` over
//! the announcement stream (a record is seen while its process lives and
//! announces it, and not after it withdrew it or died), and one listener
//! per endpoint.

#![cfg(feature = "aeron")]

mod aeron_support;

use std::time::Duration;

use aeron_support::*;
use kaspar_remote::transport::aeron::AeronTransport;
use kaspar_remote::{LinkError, Transport};

const TEST: &str = "records_live_and_die_with_their_process";

/// The announcer: announces, then withdraws or holds on as told.
fn announcer() {
    let transport = AeronTransport::launch(parents_driver()).unwrap();
    let desk = transport.announce("desk", b"schema 42").unwrap();
    let book = transport.announce("book", b"schema 7").unwrap();
    let _inbox = transport.listen("taken").unwrap();
    say("ready");
    if parent_says().as_deref() == Some("withdraw desk") {
        drop(desk);
        say("withdrawn");
    }
    // Held until the parent kills this process.
    parent_says();
    drop(book);
}

#[test]
fn records_live_and_die_with_their_process() {
    if role().as_deref() == Some("announcer") {
        return announcer();
    }
    let transport = AeronTransport::launch(embedded()).unwrap();
    let dir = dir_of(&transport);
    let mut peer = Peer::spawn(TEST, "announcer", &[(DIR, &dir)]);
    peer.expect_line("ready", Duration::from_secs(20));

    assert_eq!(transport.discover("desk"), Ok(Some(b"schema 42".to_vec())));
    assert_eq!(transport.discover("book"), Ok(Some(b"schema 7".to_vec())));
    assert_eq!(transport.discover("nobody"), Ok(None));

    // One listener per endpoint: the peer's inbox is live.
    match transport.listen("taken") {
        Err(LinkError::Transport(why)) => assert!(why.contains("already listens"), "{why}"),
        other => panic!("a second listener on a live endpoint: {other:?}"),
    }

    // A withdrawal is seen at once, long before the liveness timeout.
    peer.tell("withdraw desk");
    peer.expect_line("withdrawn", Duration::from_secs(10));
    let gone = within(LIVENESS / 2, || {
        (transport.discover("desk") == Ok(None)).then_some(())
    });
    assert!(gone.is_some(), "a withdrawn record is still discovered");
    assert_eq!(transport.discover("book"), Ok(Some(b"schema 7".to_vec())));

    // A killed process's records age out within the liveness timeout, and
    // its endpoint is free again once the driver has dropped it.
    peer.kill();
    let aged = within(LIVENESS * 3, || {
        (transport.discover("book") == Ok(None)).then_some(())
    });
    assert!(
        aged.is_some(),
        "a dead process's record outlived the liveness"
    );
    let freed = within(LIVENESS * 5, || transport.listen("taken").ok());
    assert!(freed.is_some(), "the dead listener's endpoint never freed");
}

#[test]
fn one_process_listens_once_per_endpoint() {
    let transport = AeronTransport::launch(embedded()).unwrap();
    let first = transport.listen("mine").unwrap();
    assert!(matches!(
        transport.listen("mine"),
        Err(LinkError::Transport(why)) if why.contains("already listens")
    ));
    drop(first);
    transport.listen("mine").expect("free again once dropped");
    // No listener: connect gives up after its timeout with PeerLost.
    let started = std::time::Instant::now();
    assert_eq!(
        transport
            .connect("nobody", Duration::from_millis(200))
            .map(drop),
        Err(LinkError::PeerLost)
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[test]
fn a_record_repeated_less_often_than_the_liveness_stays_discoverable() {
    let _serial = serial();
    // Repeated every 2.5 s, while the liveness timeout is 1 s: a record is
    // kept at least three repeat intervals, or it would be forgotten 1 s
    // after each repeat and missing from most lookups in between.
    let interval = LIVENESS * 5 / 2;
    let transport = AeronTransport::launch(embedded().announce_interval(interval)).unwrap();
    let _desk = transport.announce("desk", b"schema 42").unwrap();
    // The first discover waits two intervals, so it has heard a repeat.
    assert_eq!(transport.discover("desk"), Ok(Some(b"schema 42".to_vec())));
    let until = std::time::Instant::now() + interval + LIVENESS;
    let mut looked = 0;
    while std::time::Instant::now() < until {
        assert_eq!(
            transport.discover("desk"),
            Ok(Some(b"schema 42".to_vec())),
            "lookup {looked} after the first"
        );
        looked += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(looked >= 20);
}
