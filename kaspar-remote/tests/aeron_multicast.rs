//! One publisher process, two subscriber processes, Aeron multicast UDP:
//! each subscriber gets every frame once, in order.
//!
//! Multicast traffic never touches a real interface: the test creates a
//! network namespace of its own ([`Namespace`]) and runs the three
//! processes inside it (`ip netns exec`); the namespace is deleted at the
//! end. Where that cannot be set up (not root, no `ip`), the test says why
//! and passes without running.

#![cfg(feature = "aeron")]

mod aeron_support;

use std::net::{IpAddr, Ipv4Addr};
use std::thread;
use std::time::{Duration, Instant};

use aeron_support::*;
use kaspar_remote::transport::aeron::{AeronTransport, MulticastFlow, MulticastGroup};
use kaspar_remote::{LinkError, LinkRx, LinkTx};

const FRAMES: u64 = 20_000;
const TEST: &str = "two_subscriber_processes_get_every_frame_in_order";

fn group() -> MulticastGroup {
    MulticastGroup::new(Ipv4Addr::new(224, 20, 30, 41), 40456, 21)
        .interface(IpAddr::V4(Ipv4Addr::LOCALHOST))
        .flow(MulticastFlow::Slowest {
            min_receivers: Some(2),
        })
}

fn subscribe() {
    let transport = AeronTransport::launch(embedded()).unwrap();
    let mut sub = transport.subscribe_multicast(&group()).unwrap();
    say("ready");
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut next = 0u64;
    while next < FRAMES {
        sub.poll(256, &mut |frame| {
            assert_eq!(read_frame(frame), next, "frame out of order, lost or twice");
            next += 1;
        })
        .unwrap();
        assert!(
            Instant::now() < deadline,
            "{next} of {FRAMES} frames in 60 s"
        );
    }
    say(&format!("received {next}"));
    // Stay joined until the parent has heard from both subscribers, so the
    // publisher's slowest-receiver flow control never loses one early.
    parent_says();
}

fn publish() {
    let transport = AeronTransport::launch(embedded()).unwrap();
    let mut publisher = transport.publish_multicast(&group()).unwrap();
    // Connected once both receivers have joined (`g:/2`).
    let joined = within(Duration::from_secs(30), || {
        publisher.is_connected().then_some(())
    });
    assert!(joined.is_some(), "two receivers did not join within 30 s");
    let deadline = Instant::now() + Duration::from_secs(60);
    for seq in 0..FRAMES {
        loop {
            match publisher.send_frame(64, &mut |buf| write_frame(buf, seq)) {
                Ok(()) => break,
                Err(LinkError::Full) => thread::yield_now(),
                Err(other) => panic!("frame {seq}: {other}"),
            }
            assert!(Instant::now() < deadline, "frame {seq} not sent in 60 s");
        }
    }
    say(&format!("sent {FRAMES}"));
    parent_says();
}

#[test]
fn two_subscriber_processes_get_every_frame_in_order() {
    match role().as_deref() {
        Some("subscriber") => return subscribe(),
        Some("publisher") => return publish(),
        _ => {}
    }
    let ns = match Namespace::create() {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("skipped: cannot set up a network namespace for multicast: {why}");
            return;
        }
    };
    let mut subscribers: Vec<Peer> = (0..2)
        .map(|_| Peer::spawn_with(ns.command(), TEST, "subscriber", &[]))
        .collect();
    for sub in &mut subscribers {
        sub.expect_line("ready", Duration::from_secs(20));
    }
    let mut publisher = Peer::spawn_with(ns.command(), TEST, "publisher", &[]);
    for sub in &mut subscribers {
        let received: u64 = sub
            .expect_line("received ", Duration::from_secs(60))
            .parse()
            .unwrap();
        assert_eq!(received, FRAMES);
    }
    assert_eq!(
        publisher.expect_line("sent ", Duration::from_secs(10)),
        FRAMES.to_string()
    );
    for peer in subscribers.iter_mut().chain([&mut publisher]) {
        peer.tell("done");
        assert!(peer.wait(Duration::from_secs(20)).success());
    }
}
