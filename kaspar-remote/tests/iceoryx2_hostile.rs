//! A hostile peer against a node over iceoryx2, where a connect to an
//! endpoint nobody listens on waits for it to appear, up to the connect
//! timeout (2 s by default): hellos naming such endpoints do not hold up
//! the node's answers. Before, the node's receiving thread connected back
//! to each in turn, and an ask after three of them took about 6 s.

#![cfg(feature = "iceoryx2")]

mod common;
mod iceoryx2_peer;

use std::time::{Duration, Instant};

use common::{Counter, Seq};
use iceoryx2_peer::{fresh_namespace, transport};
use kaspar::prelude::*;
use kaspar_remote::frame::{self, Header, Kind};
use kaspar_remote::transport::iceoryx2::Iceoryx2Config;
use kaspar_remote::{LinkTx, Node, RemoteActor, Transport};
use serde::Serialize;

/// A hello's body as a node writes it (postcard, the crate's field order).
#[derive(Serialize)]
struct Hello<'a> {
    from: &'a str,
    export: &'a str,
    actor: &'a str,
    schema: u64,
    previous: Option<(u64, u64)>,
}

fn forged_hello(session: u64, from: &str) -> Vec<u8> {
    let h = Header {
        kind: Kind::Hello,
        target: 0,
        wire_id: 0,
        body_len: 0,
        correlation: 1,
        session,
        seq: 0,
    };
    let body = Hello {
        from,
        export: "counter",
        actor: "Counter",
        schema: Counter::SCHEMA_HASH,
        previous: None,
    };
    frame::to_vec(&h, &body).unwrap()
}

#[test]
fn hellos_naming_absent_endpoints_do_not_stall_a_node_over_iceoryx2() {
    let ns = fresh_namespace("hostile");
    let config = || Iceoryx2Config::default().namespace(ns.name());
    let system = System::new();
    let (c, _) = Counter::new();
    let server = Node::new(transport(config()), "hostile/server").unwrap();
    server.export("counter", &system.spawn(c).start()).unwrap();
    let client = Node::new(transport(config()), "hostile/client").unwrap();
    let remote = client.lookup::<Counter>("counter").unwrap();
    let forger = transport(config());
    let mut raw = forger
        .connect("hostile/server", Duration::from_secs(5))
        .unwrap();
    let ask = |n: u64| {
        let t = Instant::now();
        let got = remote
            .ask(Seq(n))
            .unwrap()
            .wait_timeout(Duration::from_secs(20));
        assert_eq!(got, Ok(2 * n), "the node stopped answering");
        t.elapsed()
    };
    let quiet = ask(1);
    let mut send = |i: u64| {
        let bytes = forged_hello(1000 + i, &format!("hostile/absent-{i}"));
        raw.send_frame(bytes.len(), &mut |buf| buf.copy_from_slice(&bytes))
            .unwrap();
    };
    for i in 0..3 {
        send(i);
    }
    // iceoryx2 keeps a queue per sender, and the ask comes on another
    // sender's: let the node take the hellos first.
    std::thread::sleep(Duration::from_millis(50));
    let after_three = ask(2);
    let mut worst = Duration::ZERO;
    for i in 3..50 {
        send(i);
        worst = worst.max(ask(i));
    }
    println!(
        "iceoryx2: ask {quiet:?} before; {after_three:?} after three hellos naming absent endpoints; \
         at most {worst:?} with one more before each of 47 asks"
    );
    assert!(after_three < Duration::from_millis(200), "{after_three:?}");
    assert!(worst < Duration::from_millis(200), "{worst:?}");
    let s = server.stats();
    assert!(s.hellos_dropped >= 50 - 20, "{s:?}");
    drop((client, server));
    system.shutdown();
}
