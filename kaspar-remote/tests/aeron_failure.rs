//! What a sender sees when the receiving process dies or stops reading.
//!
//! - Killed mid-stream (SIGKILL, no clean-up of its own): the sender gets
//!   `PeerLost` and `peer() == Lost` within the liveness timeout (1 s here)
//!   plus the driver's timer tick, and no send call blocks meanwhile. Over
//!   IPC the shared driver drops the dead client when its keepalives stop;
//!   over UDP the sender's driver disconnects the publication when the
//!   receiver's status messages stop.
//! - Stalled (alive, not polling): the sender gets `Full`. Aeron lets a
//!   publication run a window ahead of its slowest receiver, and takes a
//!   frame whenever its position is below that limit, so what a stalled
//!   receiver lets through is exact: the window divided by the frame's
//!   aligned size (payload + 32-byte header, rounded up to 32). *When* the
//!   first `Full` comes is not exact (the driver raises the limit on its own
//!   duty cycle), so the tests count everything accepted until the limit has
//!   settled.

#![cfg(feature = "aeron")]

mod aeron_support;

use std::net::SocketAddr;
use std::thread;
use std::time::{Duration, Instant};

use aeron_support::*;
use kaspar_remote::transport::aeron::{AeronConfig, AeronLinkTx, AeronTransport, Endpoint};
use kaspar_remote::{LinkError, LinkRx, LinkTx, PeerState, Transport};

/// The peer of the kill tests: reads as fast as it can until killed.
fn read_forever(transport: &AeronTransport) {
    let mut rx = transport.listen("victim").unwrap();
    say("ready");
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        rx.poll(256, &mut |frame| {
            read_frame(frame);
        })
        .unwrap();
    }
}

/// Streams to the peer, kills it after 20k frames, and checks that the loss
/// is reported in time and that no send blocked.
fn kill_mid_stream(tx: &mut AeronLinkTx, peer: &mut Peer) {
    assert_eq!(tx.peer(), PeerState::Alive);
    let mut seq = 0u64;
    let give_up = Instant::now() + Duration::from_secs(30);
    while seq < 20_000 {
        match tx.send_frame(64, &mut |buf| write_frame(buf, seq)) {
            Ok(()) => seq += 1,
            Err(LinkError::Full) => thread::yield_now(),
            Err(other) => panic!("frame {seq} before the kill: {other}"),
        }
        assert!(Instant::now() < give_up, "20k frames not sent in 30 s");
    }
    peer.kill();
    let killed = Instant::now();
    let bound = LIVENESS + Duration::from_secs(4);
    let mut slowest = Duration::ZERO;
    let mut after_kill = 0u64;
    loop {
        let start = Instant::now();
        let sent = tx.send_frame(64, &mut |buf| write_frame(buf, seq));
        slowest = slowest.max(start.elapsed());
        match sent {
            Ok(()) => {
                seq += 1;
                after_kill += 1;
            }
            Err(LinkError::Full) => thread::yield_now(),
            Err(LinkError::PeerLost) => break,
            Err(other) => panic!("after the kill: {other}"),
        }
        assert!(
            killed.elapsed() < bound,
            "no PeerLost within {bound:?} of the kill (peer() = {:?}, {after_kill} frames taken since)",
            tx.peer()
        );
    }
    let noticed = killed.elapsed();
    assert_eq!(tx.peer(), PeerState::Lost);
    // Lost for good: the next send fails at once, without calling `fill`.
    let refused = tx.send_frame(64, &mut |_| panic!("fill called on a lost link"));
    assert_eq!(refused, Err(LinkError::PeerLost));
    // Not a timing claim: only that no call waited (Aeron's calls return at
    // once; a blocking call would take the whole liveness timeout).
    assert!(slowest < LIVENESS / 2, "one send took {slowest:?}");
    eprintln!(
        "PeerLost {noticed:?} after the kill (liveness {LIVENESS:?}); \
         {after_kill} frames accepted after it; slowest send {slowest:?}"
    );
}

#[test]
fn killed_receiver_over_ipc_is_reported_within_liveness() {
    if role().as_deref() == Some("reader") {
        return read_forever(&AeronTransport::launch(parents_driver()).unwrap());
    }
    let _serial = serial();
    let transport = AeronTransport::launch(embedded()).unwrap();
    let dir = dir_of(&transport);
    let mut peer = Peer::spawn(
        "killed_receiver_over_ipc_is_reported_within_liveness",
        "reader",
        &[(DIR, &dir)],
    );
    peer.expect_line("ready", Duration::from_secs(20));
    let mut tx = transport
        .connect("victim", Duration::from_secs(10))
        .unwrap();
    kill_mid_stream(&mut tx, &mut peer);
}

fn udp(config: AeronConfig, name: &str, port: u16) -> AeronConfig {
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    config.endpoint(name, Endpoint::udp(addr, 11))
}

#[test]
fn killed_receiver_over_udp_is_reported_within_liveness() {
    if role().as_deref() == Some("reader") {
        let port = arg().parse().unwrap();
        let config = udp(embedded(), "victim", port);
        return read_forever(&AeronTransport::launch(config).unwrap());
    }
    let _serial = serial();
    let port = free_udp_port();
    let transport = AeronTransport::launch(udp(embedded(), "victim", port)).unwrap();
    let mut peer = Peer::spawn(
        "killed_receiver_over_udp_is_reported_within_liveness",
        "reader",
        &[(ARG, &port.to_string())],
    );
    peer.expect_line("ready", Duration::from_secs(20));
    let mut tx = transport
        .connect("victim", Duration::from_secs(10))
        .unwrap();
    kill_mid_stream(&mut tx, &mut peer);
}

/// 64 KiB terms: a publication may run half a term (32 KiB) ahead.
const TERM: usize = 64 * 1024;
/// 96 bytes of payload + 32 of header: 128-byte frames, 256 to a window.
const PAYLOAD: usize = 96;
const ALIGNED: usize = 128;

/// The stalled peer: listens, reads nothing until told, then drains and
/// reports how many frames it got (all in order).
fn stall_then_drain(transport: &AeronTransport) {
    let mut rx = transport.listen("stalled").unwrap();
    say("ready");
    if parent_says().as_deref() != Some("drain") {
        return;
    }
    let mut next = 0u64;
    let mut quiet_since = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(20);
    // Drain until nothing came for 300 ms.
    while quiet_since.elapsed() < Duration::from_millis(300) && Instant::now() < deadline {
        let read = rx
            .poll(256, &mut |frame| {
                assert_eq!(read_frame(frame), next, "frames out of order");
                next += 1;
            })
            .unwrap();
        if read > 0 {
            quiet_since = Instant::now();
        }
    }
    say(&format!("received {next}"));
    parent_says();
}

/// Sends until `Full`, waits for the driver to settle the limit, repeats
/// until nothing more is taken; returns how many frames were accepted.
fn fill_until_settled(tx: &mut AeronLinkTx) -> u64 {
    let mut accepted = 0u64;
    let mut full_rounds = 0;
    let give_up = Instant::now() + Duration::from_secs(20);
    while full_rounds < 3 {
        match tx.send_frame(PAYLOAD, &mut |buf| write_frame(buf, accepted)) {
            Ok(()) => {
                accepted += 1;
                full_rounds = 0;
            }
            Err(LinkError::Full) => {
                full_rounds += 1;
                thread::sleep(Duration::from_millis(100));
            }
            Err(other) => panic!("while filling: {other}"),
        }
        assert!(Instant::now() < give_up, "the window never filled");
    }
    accepted
}

/// After the stalled peer drains, sending works again.
fn drain_and_resume(tx: &mut AeronLinkTx, peer: &mut Peer, accepted: u64) {
    peer.tell("drain");
    let received: u64 = peer
        .expect_line("received ", Duration::from_secs(30))
        .parse()
        .unwrap();
    assert_eq!(received, accepted, "the peer got every accepted frame");
    let resumed = within(Duration::from_secs(10), || {
        tx.send_frame(PAYLOAD, &mut |buf| write_frame(buf, accepted))
            .ok()
    });
    assert!(resumed.is_some(), "still Full after the peer drained");
    peer.tell("done");
    assert!(peer.wait(Duration::from_secs(20)).success());
}

#[test]
fn stalled_receiver_over_ipc_fills_exactly_one_window() {
    if role().as_deref() == Some("stalled") {
        return stall_then_drain(&AeronTransport::launch(parents_driver()).unwrap());
    }
    let _serial = serial();
    let transport = AeronTransport::launch(embedded().term_length(TERM)).unwrap();
    let dir = dir_of(&transport);
    let mut peer = Peer::spawn(
        "stalled_receiver_over_ipc_fills_exactly_one_window",
        "stalled",
        &[(DIR, &dir)],
    );
    peer.expect_line("ready", Duration::from_secs(20));
    let mut tx = transport
        .connect("stalled", Duration::from_secs(10))
        .unwrap();
    let accepted = fill_until_settled(&mut tx);
    // IPC: the publication's window (half a term) over the stalled reader.
    assert_eq!(accepted, (TERM / 2 / ALIGNED) as u64);
    assert_eq!(
        tx.peer(),
        PeerState::Alive,
        "a slow reader is not a lost one"
    );
    drain_and_resume(&mut tx, &mut peer, accepted);
}

#[test]
fn stalled_receiver_over_udp_fills_exactly_two_windows() {
    if role().as_deref() == Some("stalled") {
        let port = arg().parse().unwrap();
        let config = udp(embedded().term_length(TERM), "stalled", port);
        return stall_then_drain(&AeronTransport::launch(config).unwrap());
    }
    let _serial = serial();
    let port = free_udp_port();
    let config = udp(embedded().term_length(TERM), "stalled", port);
    let transport = AeronTransport::launch(config).unwrap();
    let mut peer = Peer::spawn(
        "stalled_receiver_over_udp_fills_exactly_two_windows",
        "stalled",
        &[(ARG, &port.to_string())],
    );
    peer.expect_line("ready", Duration::from_secs(20));
    let mut tx = transport
        .connect("stalled", Duration::from_secs(10))
        .unwrap();
    let accepted = fill_until_settled(&mut tx);
    // UDP: the receiver's driver buffers its window (half a term) unread,
    // and the publication runs its own window (half a term) ahead of what
    // the sender has sent.
    assert_eq!(accepted, (2 * (TERM / 2) / ALIGNED) as u64);
    assert_eq!(
        tx.peer(),
        PeerState::Alive,
        "a slow reader is not a lost one"
    );
    drain_and_resume(&mut tx, &mut peer, accepted);
}
