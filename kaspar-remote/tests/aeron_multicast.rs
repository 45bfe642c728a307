//! One publisher process, two subscriber processes, Aeron multicast UDP:
//! each subscriber gets every frame once, in order.
//!
//! Multicast traffic never touches a real interface: the test creates a
//! network namespace of its own, brings its loopback up with multicast on
//! and a 224.0.0.0/4 route on it, and runs the three processes inside it
//! (`ip netns exec`); the namespace is deleted at the end. Where that cannot
//! be set up (not root, no `ip`), the test says why and passes without
//! running.

#![cfg(feature = "aeron")]

mod aeron_support;

use std::net::{IpAddr, Ipv4Addr};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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

/// A network namespace that is deleted when dropped.
struct Namespace(String);

impl Namespace {
    /// Creates a namespace with multicast on its loopback, or says why not.
    fn create() -> Result<Namespace, String> {
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("kaspar-aeron-{}-{stamp}", std::process::id());
        ip(&["netns", "add", &name])?;
        let ns = Namespace(name);
        ns.exec(&["ip", "link", "set", "lo", "up"])?;
        ns.exec(&["ip", "link", "set", "lo", "multicast", "on"])?;
        ns.exec(&["ip", "route", "add", "224.0.0.0/4", "dev", "lo"])?;
        Ok(ns)
    }

    fn exec(&self, command: &[&str]) -> Result<(), String> {
        let mut args = vec!["netns", "exec", &self.0];
        args.extend_from_slice(command);
        ip(&args)
    }

    /// `ip netns exec <ns> <this test binary>`, for [`Peer::spawn_with`].
    fn command(&self) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.0])
            .arg(std::env::current_exe().unwrap());
        command
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = ip(&["netns", "delete", &self.0]);
    }
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `ip`: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
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
