//! The iceoryx2 back end doing its job: frames between two processes in
//! order, and the seam's contract (sizes, names, senders, a dropped inbox)
//! inside one.

#![cfg(feature = "iceoryx2")]

mod iceoryx2_peer;

use std::time::{Duration, Instant};

use iceoryx2_peer::{
    fresh_namespace, heard, inherited_namespace, role, tell, transport, Peer, PATIENCE,
};
use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport};
use kaspar_remote::{LinkError, LinkRx, LinkTx, PeerState, Transport};

const SENDERS: u8 = 2;
const PER_SENDER: u64 = 100_000;

/// Frame `seq` of `sender`: its id, its sequence number, and a length and
/// filler that both depend on `seq`, so a torn or misplaced frame shows.
fn frame_len(seq: u64) -> usize {
    9 + (seq % 56) as usize
}

fn write_frame(sender: u8, seq: u64, buf: &mut [u8]) {
    buf[0] = sender;
    buf[1..9].copy_from_slice(&seq.to_le_bytes());
    for (i, b) in buf[9..].iter_mut().enumerate() {
        *b = (seq as u8).wrapping_add(i as u8);
    }
}

/// Checks one frame against what `sender` must send next; returns the
/// sender.
fn check_frame(frame: &[u8], next: &[u64]) -> u8 {
    let sender = frame[0];
    let seq = u64::from_le_bytes(frame[1..9].try_into().unwrap());
    let want = next[usize::from(sender)];
    assert_eq!(
        seq, want,
        "sender {sender}: frame {seq} where {want} was due"
    );
    assert_eq!(
        frame.len(),
        frame_len(seq),
        "sender {sender}: frame {seq}'s length"
    );
    let mut expected = vec![0; frame.len()];
    write_frame(sender, seq, &mut expected);
    assert_eq!(frame, &expected[..], "sender {sender}: frame {seq}'s bytes");
    sender
}

/// Child: [`SENDERS`] threads, each with its own link to "ordered",
/// sending [`PER_SENDER`] frames, retrying while the inbox is full.
fn senders() {
    let t = transport(Iceoryx2Config::default().namespace(inherited_namespace()));
    std::thread::scope(|s| {
        for sender in 0..SENDERS {
            let t = &t;
            s.spawn(move || {
                let mut tx = t.connect("ordered", PATIENCE).unwrap();
                let deadline = Instant::now() + PATIENCE;
                for seq in 0..PER_SENDER {
                    loop {
                        match tx.send_frame(frame_len(seq), &mut |b| write_frame(sender, seq, b)) {
                            Ok(()) => break,
                            Err(LinkError::Full) => std::thread::yield_now(),
                            Err(e) => panic!("sender {sender}, frame {seq}: {e:?}"),
                        }
                        assert!(Instant::now() < deadline, "the reader stopped reading");
                    }
                }
            });
        }
    });
    tell("SENT");
    let _ = heard();
}

#[test]
fn frames_from_another_process_arrive_in_order_without_loss_or_duplicates() {
    if role().is_some() {
        return senders();
    }
    let ns = fresh_namespace("ordered");
    let t = transport(
        Iceoryx2Config::default()
            .namespace(ns.name())
            .inbox_depth(256),
    );
    let mut rx = t.listen("ordered").unwrap();
    let mut peer = Peer::spawn(
        "frames_from_another_process_arrive_in_order_without_loss_or_duplicates",
        "senders",
        ns.name(),
    );
    let mut next = vec![0u64; usize::from(SENDERS)];
    let total = u64::from(SENDERS) * PER_SENDER;
    let mut got = 0u64;
    let deadline = Instant::now() + PATIENCE;
    while got < total {
        assert!(
            Instant::now() < deadline,
            "only {got} of {total} frames arrived"
        );
        got += rx
            .poll(512, &mut |f| {
                let sender = check_frame(f, &next);
                next[usize::from(sender)] += 1;
            })
            .unwrap() as u64;
    }
    peer.expect("SENT");
    // Nothing more comes: no duplicates trail the last frame.
    let quiet = Instant::now() + Duration::from_millis(50);
    while Instant::now() < quiet {
        assert_eq!(
            rx.poll(usize::MAX, &mut |f| panic!("an extra frame: {f:?}")),
            Ok(0)
        );
    }
    assert_eq!(next, vec![PER_SENDER; usize::from(SENDERS)]);
    peer.finish();
}

fn local(tag: &str) -> (iceoryx2_peer::Namespace, Iceoryx2Transport) {
    let ns = fresh_namespace(tag);
    let t = transport(
        Iceoryx2Config::default()
            .namespace(ns.name())
            .max_frame_len(100),
    );
    (ns, t)
}

#[test]
fn frame_sizes_up_to_the_maximum_pass_and_longer_ones_are_refused_whole() {
    let (_ns, t) = local("sizes");
    let mut rx = t.listen("sizes").unwrap();
    let mut tx = t.connect("sizes", PATIENCE).unwrap();
    assert_eq!(tx.max_frame_len(), 100);
    let mut called = false;
    assert_eq!(
        tx.send_frame(101, &mut |_| called = true),
        Err(LinkError::TooLarge { len: 101, max: 100 })
    );
    assert!(!called, "fill must not run for a frame that is too long");
    for len in [0, 1, 100] {
        tx.send_frame(len, &mut |b| {
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0), "a fresh frame is zeroed");
            b.fill(7);
        })
        .unwrap();
    }
    let mut seen = Vec::new();
    assert_eq!(rx.poll(10, &mut |f| seen.push(f.to_vec())), Ok(3));
    assert_eq!(seen, vec![vec![], vec![7], vec![7; 100]]);
    // Slots are reused: the next frame is zeroed again, not the last one.
    tx.send_frame(100, &mut |b| assert!(b.iter().all(|&x| x == 0)))
        .unwrap();
}

#[test]
fn poll_hands_over_at_most_its_limit() {
    let (_ns, t) = local("limit");
    let mut rx = t.listen("limit").unwrap();
    let mut tx = t.connect("limit", PATIENCE).unwrap();
    for i in 0..5u8 {
        tx.send_frame(1, &mut |b| b[0] = i).unwrap();
    }
    let mut seen = Vec::new();
    assert_eq!(rx.poll(3, &mut |f| seen.push(f[0])), Ok(3));
    assert_eq!(rx.poll(3, &mut |f| seen.push(f[0])), Ok(2));
    assert_eq!(rx.poll(3, &mut |f| seen.push(f[0])), Ok(0));
    assert_eq!(seen, vec![0, 1, 2, 3, 4]);
}

#[test]
fn an_endpoint_has_one_live_listener() {
    let (_ns, t) = local("twice");
    let _rx = t.listen("twice").unwrap();
    match t.listen("twice") {
        Err(LinkError::Transport(why)) => {
            assert!(why.contains("already has a live listener"), "{why}")
        }
        other => panic!("a second listener was admitted: {other:?}"),
    }
}

#[test]
fn connect_with_nobody_listening_is_peer_lost_after_the_timeout() {
    let (_ns, t) = local("nobody");
    let start = Instant::now();
    assert_eq!(
        t.connect("nobody", Duration::from_millis(30)).map(|_| ()),
        Err(LinkError::PeerLost)
    );
    assert!(start.elapsed() >= Duration::from_millis(30));
}

#[test]
fn an_inbox_admits_at_most_max_senders() {
    let ns = fresh_namespace("senders");
    let t = transport(
        Iceoryx2Config::default()
            .namespace(ns.name())
            .max_senders(1),
    );
    let _rx = t.listen("one").unwrap();
    let _tx = t.connect("one", PATIENCE).unwrap();
    match t.connect("one", PATIENCE) {
        Err(LinkError::Transport(why)) => assert!(why.contains("no more senders"), "{why}"),
        other => panic!("a second sender was admitted: {other:?}"),
    }
}

#[test]
fn a_dropped_inbox_is_peer_lost_for_its_senders() {
    let (_ns, t) = local("dropped");
    let rx = t.listen("dropped").unwrap();
    let mut tx = t.connect("dropped", PATIENCE).unwrap();
    tx.send_frame(1, &mut |b| b[0] = 1).unwrap();
    drop(rx);
    assert_eq!(
        tx.send_frame(1, &mut |b| b[0] = 2),
        Err(LinkError::PeerLost)
    );
    assert_eq!(tx.peer(), PeerState::Lost);
    // A new inbox on the same endpoint is a new session: this link stays
    // lost.
    let _rx = t.listen("dropped").unwrap();
    let mut called = false;
    assert_eq!(
        tx.send_frame(1, &mut |_| called = true),
        Err(LinkError::PeerLost)
    );
    assert!(!called);
}

#[test]
fn bad_names_and_settings_are_clear_errors() {
    let (_ns, t) = local("names");
    let err = |r: Result<(), LinkError>| match r {
        Err(LinkError::Transport(why)) => why,
        other => panic!("expected an error, got {other:?}"),
    };
    assert!(err(t.listen("").map(|_| ())).contains("empty"));
    assert!(err(t.connect("", PATIENCE).map(|_| ())).contains("empty"));
    assert!(err(t.announce("", b"x").map(|_| ())).contains("empty"));
    let long = vec![0u8; 7 * 128 + 1];
    assert!(err(t.announce("long", &long).map(|_| ())).contains("longer than"));
    let bad = Iceoryx2Transport::new(Iceoryx2Config::default().inbox_depth(0));
    assert!(err(bad.map(|_| ())).contains("inbox_depth"));
}
