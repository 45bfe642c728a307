//! No send lost without a report, over Aeron IPC (#27, row 6): the
//! process exporting a `Counter` on this process's media driver is killed
//! with SIGKILL while this one streams tells to it; every send that
//! returned `Ok` is either acknowledged by it or reported, and
//! dead-lettered, here. Liveness 1 s (the Aeron tests' setting), three
//! cuts at different moments of the stream.

#![cfg(feature = "aeron")]

mod acks_kill;
mod aeron_support;
mod common;

use std::time::Duration;

use aeron_support::*;
use common::Counter;
use kaspar::prelude::*;
use kaspar_remote::transport::aeron::AeronTransport;
use kaspar_remote::{Node, NodeConfig};

const TEST: &str = "a_receiver_killed_mid_stream_leaves_no_send_unreported_over_aeron_ipc";

/// The child: exports a `Counter` as "counter" until killed.
fn exporter() {
    let system = System::new();
    let (counter, _log) = Counter::new();
    let counter = system.spawn(counter).start();
    let transport = AeronTransport::launch(parents_driver()).unwrap();
    let node = Node::new(transport, "acks-server").unwrap();
    node.export("counter", &counter).unwrap();
    say("exported");
    parent_says();
    drop(node);
    system.shutdown();
}

#[test]
fn a_receiver_killed_mid_stream_leaves_no_send_unreported_over_aeron_ipc() {
    if role().as_deref() == Some("exporter") {
        return exporter();
    }
    let _serial = serial();
    for cut_ms in [5, 20, 60] {
        let system = System::new();
        let transport = AeronTransport::launch(embedded()).unwrap();
        let dir = dir_of(&transport);
        let mut peer = Peer::spawn(TEST, "exporter", &[(DIR, &dir)]);
        peer.expect_line("exported", Duration::from_secs(30));
        let (config, letters) = acks_kill::retaining(&system, NodeConfig::default());
        let client = Node::with_config(transport, "acks-client", config).unwrap();
        let remote = client.lookup::<Counter>("counter").unwrap();
        acks_kill::stream_and_kill(
            &client,
            &remote,
            &letters,
            "acks-server",
            Duration::from_millis(cut_ms),
            || peer.kill(),
        );
        drop((remote, client));
        system.shutdown();
    }
}
