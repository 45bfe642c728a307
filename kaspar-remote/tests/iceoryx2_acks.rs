//! No send lost without a report, over iceoryx2 (#27, row 6): the process
//! exporting a `Counter` is killed with SIGKILL while this one streams
//! tells to it; every send that returned `Ok` is either acknowledged by it
//! or reported, and dead-lettered, here. Default liveness (100 ms).
//!
//! Each test re-launches this binary as its peer (see `iceoryx2_peer`).

#![cfg(feature = "iceoryx2")]

mod acks_kill;
mod common;
mod iceoryx2_peer;

use std::time::Duration;

use common::Counter;
use iceoryx2_peer::{fresh_namespace, heard, inherited_namespace, role, tell, transport, Peer};
use kaspar::prelude::*;
use kaspar_remote::transport::iceoryx2::Iceoryx2Config;
use kaspar_remote::{Node, NodeConfig};

const TEST: &str = "a_receiver_killed_mid_stream_leaves_no_send_unreported_over_iceoryx2";

/// Child: exports a `Counter` as "counter" until killed.
fn exporter() {
    let system = System::new();
    let (counter, _log) = Counter::new();
    let counter = system.spawn(counter).start();
    let t = transport(Iceoryx2Config::default().namespace(inherited_namespace()));
    let node = Node::new(t, "acks/server").unwrap();
    node.export("counter", &counter).unwrap();
    tell("EXPORTED");
    let _ = heard();
    drop(node);
    system.shutdown();
}

#[test]
fn a_receiver_killed_mid_stream_leaves_no_send_unreported_over_iceoryx2() {
    if role().is_some() {
        return exporter();
    }
    // Three cuts: early in the stream, later, and later still.
    for cut_ms in [5, 20, 60] {
        let ns = fresh_namespace(&format!("acks{cut_ms}"));
        let mut peer = Peer::spawn(TEST, "exporter", ns.name());
        peer.expect("EXPORTED");
        let system = System::new();
        let (config, letters) = acks_kill::retaining(&system, NodeConfig::default());
        let t = transport(Iceoryx2Config::default().namespace(ns.name()));
        let client = Node::with_config(t, "acks/client", config).unwrap();
        let remote = client.lookup::<Counter>("counter").unwrap();
        acks_kill::stream_and_kill(
            &client,
            &remote,
            &letters,
            "acks/server",
            Duration::from_millis(cut_ms),
            || peer.kill(),
        );
        drop((remote, client));
        system.shutdown();
    }
}
