//! A hostile peer against a node over iceoryx2, where a connect to an
//! endpoint nobody listens on waits for it to appear, up to the connect
//! timeout (2 s by default): hellos naming such endpoints do not hold up
//! the node's answers. Before, the node's receiving thread connected back
//! to each in turn, and an ask after three of them took about 6 s.

#![cfg(feature = "iceoryx2")]

mod common;
mod flood;
mod iceoryx2_peer;

use std::time::{Duration, Instant};

use common::{Counter, Seq};
use flood::forged_hello;
use iceoryx2_peer::{fresh_namespace, transport};
use kaspar::prelude::*;
use kaspar_remote::transport::iceoryx2::Iceoryx2Config;
use kaspar_remote::{LinkTx, Node, Transport};

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

/// Issue 27's acceptance: under a flood of forged hellos (each naming an
/// endpoint nobody listens on, each a new session) and frames of random
/// bytes, 50,000 a second, the node keeps answering a genuine client
/// within 2 ms (the median ask, asserted, or twice the quiet median
/// where the machine's own load puts that higher; the tail is printed:
/// on a 2-core machine the flood, the node's bridge and the client share
/// the cores, and a time slice is longer than 2 ms). No ask may stall.
#[test]
fn a_flood_of_forged_hellos_and_random_frames_leaves_a_node_answering_over_iceoryx2() {
    let ns = fresh_namespace("flood");
    let config = || Iceoryx2Config::default().namespace(ns.name());
    let system = System::new();
    let (c, _) = Counter::new();
    let server = Node::new(transport(config()), "flood/server").unwrap();
    server.export("counter", &system.spawn(c).start()).unwrap();
    let client = Node::new(transport(config()), "flood/client").unwrap();
    let remote = client.lookup::<Counter>("counter").unwrap();
    let forger = transport(config());
    let raw = forger
        .connect("flood/server", Duration::from_secs(5))
        .unwrap();
    flood::run(&remote, raw, 400).check("iceoryx2");
    assert_eq!(server.stats().panics, 0, "{:?}", server.stats());
    drop((client, server, forger));
    system.shutdown();
}
