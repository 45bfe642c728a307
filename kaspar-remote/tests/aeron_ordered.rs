//! 100k frames from another process, over Aeron IPC (one shared media
//! driver) and over UDP on 127.0.0.1 (a media driver in each process, as on
//! two hosts): every frame arrives once, in order, byte for byte. Every
//! 997th frame is longer than one claim (1376 bytes) and travels in
//! fragments.

#![cfg(feature = "aeron")]

mod aeron_support;

use std::net::SocketAddr;
use std::thread;
use std::time::{Duration, Instant};

use aeron_support::*;
use kaspar_remote::transport::aeron::{AeronConfig, AeronLinkRx, AeronTransport, Endpoint};
use kaspar_remote::{LinkError, LinkRx, LinkTx, Transport};

const FRAMES: u64 = 100_000;
const DEADLINE: Duration = Duration::from_secs(60);

fn frame_len(seq: u64) -> usize {
    if seq.is_multiple_of(997) {
        3000
    } else {
        64
    }
}

/// The peer: connects, sends every frame (retrying on `Full` only), then
/// waits for the parent's word so that its driver outlives the stream.
fn send_all(transport: &AeronTransport) {
    let mut tx = transport
        .connect("ordered", Duration::from_secs(10))
        .expect("connect to the parent's inbox");
    assert!(frame_len(0) > tx.max_claim_len() && frame_len(1) <= tx.max_claim_len());
    let deadline = Instant::now() + DEADLINE;
    let mut full = 0u64;
    for seq in 0..FRAMES {
        loop {
            match tx.send_frame(frame_len(seq), &mut |buf| write_frame(buf, seq)) {
                Ok(()) => break,
                Err(LinkError::Full) => {
                    full += 1;
                    assert!(
                        Instant::now() < deadline,
                        "frame {seq} still Full after 60 s"
                    );
                    thread::yield_now();
                }
                Err(other) => panic!("frame {seq}: {other}"),
            }
        }
    }
    say(&format!("sent {FRAMES} (Full {full} times)"));
    parent_says();
}

/// The parent: receives until all frames are in, checking each.
fn receive_all(rx: &mut AeronLinkRx, peer: &mut Peer) {
    let deadline = Instant::now() + DEADLINE;
    let mut next = 0u64;
    while next < FRAMES {
        rx.poll(256, &mut |frame| {
            let seq = read_frame(frame);
            assert_eq!(seq, next, "frame {seq} arrived when {next} was due");
            assert_eq!(frame.len(), frame_len(seq), "frame {seq}'s length");
            next += 1;
        })
        .expect("poll");
        assert!(
            Instant::now() < deadline,
            "{next} of {FRAMES} frames within {DEADLINE:?}"
        );
    }
    peer.expect_line("sent ", Duration::from_secs(10));
    // Nothing after the last frame: no duplicates trailing behind.
    let settle = Instant::now() + Duration::from_millis(200);
    while Instant::now() < settle {
        let extra = rx.poll(256, &mut |frame| {
            panic!("extra frame {}", read_frame(frame))
        });
        assert_eq!(extra, Ok(0));
    }
    peer.tell("done");
    assert!(
        peer.wait(Duration::from_secs(20)).success(),
        "the sender failed"
    );
}

#[test]
fn hundred_thousand_frames_over_ipc() {
    if role().as_deref() == Some("sender") {
        return send_all(&AeronTransport::launch(parents_driver()).unwrap());
    }
    let transport = AeronTransport::launch(embedded()).unwrap();
    let mut rx = transport.listen("ordered").unwrap();
    let dir = dir_of(&transport);
    let mut peer = Peer::spawn("hundred_thousand_frames_over_ipc", "sender", &[(DIR, &dir)]);
    receive_all(&mut rx, &mut peer);
}

fn udp(config: AeronConfig, port: u16) -> AeronConfig {
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    config.endpoint("ordered", Endpoint::udp(addr, 7))
}

#[test]
fn hundred_thousand_frames_over_udp_loopback() {
    if role().as_deref() == Some("sender") {
        let port = arg().parse().unwrap();
        return send_all(&AeronTransport::launch(udp(embedded(), port)).unwrap());
    }
    let port = free_udp_port();
    let transport = AeronTransport::launch(udp(embedded(), port)).unwrap();
    let mut rx = transport.listen("ordered").unwrap();
    let port = port.to_string();
    let mut peer = Peer::spawn(
        "hundred_thousand_frames_over_udp_loopback",
        "sender",
        &[(ARG, &port)],
    );
    receive_all(&mut rx, &mut peer);
}
