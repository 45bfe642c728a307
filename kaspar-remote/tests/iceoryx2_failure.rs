//! The iceoryx2 back end when things go wrong, between two processes: a
//! receiver killed mid-stream, a receiver that stops reading (fail and
//! drop-oldest), and names that nobody (or a dead process) announces.
//!
//! Each test re-launches this binary as its peer (see `iceoryx2_peer`).

#![cfg(feature = "iceoryx2")]

mod iceoryx2_peer;

use std::time::{Duration, Instant};

use iceoryx2::node::NodeView;
use iceoryx2::prelude::{CallbackProgression, Node, NodeState};
use iceoryx2_peer::{
    eventually, heard, inherited_namespace, role, tell, transport, Peer, PATIENCE,
};
use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport, Overflow};
use kaspar_remote::{LinkError, LinkRx, LinkTx, PeerState, Transport};

type Ipc = iceoryx2::service::ipc::Service;

const LIVENESS: Duration = Duration::from_millis(500);
const DEPTH: usize = 64;

/// A frame carrying `seq`.
fn send_seq(tx: &mut impl LinkTx, seq: u64) -> Result<(), LinkError> {
    tx.send_frame(8, &mut |buf| buf.copy_from_slice(&seq.to_le_bytes()))
}

fn seq_of(frame: &[u8]) -> u64 {
    u64::from_le_bytes(frame.try_into().expect("an 8-byte frame"))
}

/// Child: an inbox that reads until killed (or [`PATIENCE`] runs out).
fn reader(endpoint: &str) {
    let t = transport(Iceoryx2Config::default().namespace(inherited_namespace()));
    let mut rx = t.listen(endpoint).unwrap();
    tell(&format!("NODE {}", t.node_id()));
    let (mut got, mut said) = (0u64, false);
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        got += rx.poll(256, &mut |_| {}).unwrap() as u64;
        if got >= 1000 && !said {
            tell(&format!("GOT {got}"));
            said = true;
        }
    }
}

/// The ids of the live and dead iceoryx2 nodes in `t`'s namespace.
fn nodes(t: &Iceoryx2Transport) -> Vec<(u128, bool)> {
    let mut all = Vec::new();
    Node::<Ipc>::list(t.iceoryx2_config(), |state| {
        match &state {
            NodeState::Alive(v) => all.push((v.id().value(), true)),
            NodeState::Dead(v) => all.push((v.id().value(), false)),
            _ => {}
        }
        CallbackProgression::Continue
    })
    .unwrap();
    all
}

/// The files of the namespace (shared memory and iceoryx2's own folder)
/// whose name holds `needle`.
fn files_naming(ns: &str, needle: &str) -> Vec<String> {
    let prefix = format!("kaspar_{ns}_");
    let mut found = Vec::new();
    let mut stack = vec![std::path::PathBuf::from("/dev/shm"), "/tmp/iceoryx2".into()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.contains(&prefix) && name.contains(needle) {
                    found.push(path.display().to_string());
                }
            }
        }
    }
    found
}

#[test]
fn killed_receiver_is_lost_within_the_liveness_timeout_and_cleaned_up() {
    if role().is_some() {
        return reader("kill");
    }
    let ns = iceoryx2_peer::fresh_namespace("kill");
    let t = transport(
        Iceoryx2Config::default()
            .namespace(ns.name())
            .liveness_timeout(LIVENESS),
    );
    let mut peer = Peer::spawn(
        "killed_receiver_is_lost_within_the_liveness_timeout_and_cleaned_up",
        "reader",
        ns.name(),
    );
    let node: u128 = peer.expect("NODE").parse().unwrap();
    let mut tx = t.connect("kill", PATIENCE).unwrap();
    assert_eq!(tx.peer(), PeerState::Alive);
    assert!(
        !files_naming(ns.name(), &node.to_string()).is_empty(),
        "the reader's node has files"
    );
    for seq in 0..5000 {
        // The reader keeps up; Full only means "retry".
        let deadline = Instant::now() + PATIENCE;
        while let Err(e) = send_seq(&mut tx, seq) {
            assert_eq!(e, LinkError::Full);
            assert!(Instant::now() < deadline, "the reader stopped reading");
            std::thread::yield_now();
        }
    }
    peer.expect("GOT");
    peer.kill();
    let killed = Instant::now();
    let mut seq = 5000;
    let lost_after = loop {
        match send_seq(&mut tx, seq) {
            Ok(()) | Err(LinkError::Full) => seq += 1,
            Err(LinkError::PeerLost) => break killed.elapsed(),
            Err(e) => panic!("unexpected {e:?}"),
        }
        assert!(
            killed.elapsed() < PATIENCE,
            "the dead reader was never reported"
        );
        std::thread::sleep(Duration::from_micros(50));
    };
    println!("PeerLost {lost_after:?} after the kill ({seq} sends tried)");
    assert!(
        lost_after <= LIVENESS,
        "PeerLost came {lost_after:?} after the kill, past the {LIVENESS:?} liveness timeout"
    );
    assert_eq!(tx.peer(), PeerState::Lost);
    let mut called = false;
    let again = tx.send_frame(8, &mut |_| called = true);
    assert_eq!(again, Err(LinkError::PeerLost));
    assert!(!called, "fill must not run for a lost peer");

    // The dead node and every file naming it are removed.
    let gone = eventually(Duration::from_secs(5), || {
        nodes(&t).iter().all(|&(id, _)| id != node)
            && files_naming(ns.name(), &node.to_string()).is_empty()
    });
    assert!(
        gone,
        "left behind: nodes {:?}, files {:?}",
        nodes(&t),
        files_naming(ns.name(), &node.to_string())
    );
    assert!(
        nodes(&t).contains(&(t.node_id(), true)),
        "the sender's own node lives on"
    );
}

/// Child: an inbox of [`DEPTH`] frames with `overflow`, read only when the
/// parent says GO; then reports what it drained and waits for the end.
fn staller(overflow: Overflow) {
    let config = Iceoryx2Config::default()
        .namespace(inherited_namespace())
        .inbox_depth(DEPTH)
        .overflow(overflow);
    let t = transport(config);
    let mut rx = t.listen("stall").unwrap();
    tell("READY");
    assert_eq!(heard().as_deref(), Some("GO"));
    let mut seqs = Vec::new();
    while rx.poll(usize::MAX, &mut |f| seqs.push(seq_of(f))).unwrap() > 0 {}
    let first = seqs.first().copied().unwrap_or(u64::MAX);
    // Consecutive, in order: nothing lost in the middle, nothing repeated.
    assert!(
        seqs.iter().zip(first..).all(|(&s, want)| s == want),
        "{seqs:?}"
    );
    tell(&format!("DRAINED {} {first}", seqs.len()));
    let _ = heard();
}

#[test]
fn stalled_receiver_makes_the_sender_full_after_exactly_the_inbox_depth() {
    if role().is_some() {
        return staller(Overflow::Fail);
    }
    let ns = iceoryx2_peer::fresh_namespace("stall");
    // The sender's own depth differs: the inbox's is the one that counts.
    let t = transport(
        Iceoryx2Config::default()
            .namespace(ns.name())
            .inbox_depth(1024),
    );
    let mut peer = Peer::spawn(
        "stalled_receiver_makes_the_sender_full_after_exactly_the_inbox_depth",
        "staller",
        ns.name(),
    );
    peer.expect("READY");
    let mut tx = t.connect("stall", PATIENCE).unwrap();
    assert!(!tx.can_drop_oldest(), "the inbox fails when full");
    assert!(matches!(
        tx.send_frame_dropping_oldest(8, &mut |_| panic!("nothing is written")),
        Err(LinkError::Transport(_))
    ));
    let mut sent = 0u64;
    while send_seq(&mut tx, sent).is_ok() {
        sent += 1;
        assert!(sent <= 4 * DEPTH as u64, "never became full");
    }
    assert_eq!(sent, DEPTH as u64, "Full after exactly the inbox depth");
    let mut called = false;
    assert_eq!(
        tx.send_frame(8, &mut |_| called = true),
        Err(LinkError::Full)
    );
    assert!(!called, "fill must not run when the inbox is full");
    assert_eq!(
        tx.peer(),
        PeerState::Alive,
        "a slow reader is not a lost one"
    );

    peer.say("GO");
    assert_eq!(peer.expect("DRAINED"), format!("{DEPTH} 0"));
    // The drained samples are back with the sender: room again.
    assert!(eventually(PATIENCE, || send_seq(&mut tx, sent).is_ok()));
    peer.finish();
}

#[test]
fn drop_oldest_inbox_never_fails_the_sender_and_keeps_the_newest() {
    if role().is_some() {
        return staller(Overflow::DropOldest);
    }
    let ns = iceoryx2_peer::fresh_namespace("drop");
    let t = transport(Iceoryx2Config::default().namespace(ns.name()));
    let mut peer = Peer::spawn(
        "drop_oldest_inbox_never_fails_the_sender_and_keeps_the_newest",
        "staller",
        ns.name(),
    );
    peer.expect("READY");
    let mut tx = t.connect("stall", PATIENCE).unwrap();
    assert!(tx.can_drop_oldest(), "the inbox overflows");
    const SENT: u64 = 1000;
    for seq in 0..SENT {
        // Both ways of sending drop the oldest on this inbox.
        let sent = if seq % 2 == 0 {
            send_seq(&mut tx, seq)
        } else {
            tx.send_frame_dropping_oldest(8, &mut |b| b.copy_from_slice(&seq.to_le_bytes()))
                .map(|dropped| assert_eq!(dropped, 0, "iceoryx2 does not count"))
        };
        assert_eq!(sent, Ok(()), "frame {seq}");
    }
    peer.say("GO");
    assert_eq!(
        peer.expect("DRAINED"),
        format!("{DEPTH} {}", SENT - DEPTH as u64)
    );
    peer.finish();
}

#[test]
fn discover_of_a_name_nobody_announces_is_none() {
    let ns = iceoryx2_peer::fresh_namespace("none");
    let t = transport(Iceoryx2Config::default().namespace(ns.name()));
    assert_eq!(t.discover("nobody/here"), Ok(None));
    let guard = t.announce("somebody", b"record").unwrap();
    assert_eq!(t.discover("somebody"), Ok(Some(b"record".to_vec())));
    assert_eq!(t.discover("nobody/here"), Ok(None));
    drop(guard);
    assert_eq!(t.discover("somebody"), Ok(None), "withdrawn with its guard");
}

/// Child: announces "desk", drops the guard when told, then waits.
fn announcer() {
    let t = transport(Iceoryx2Config::default().namespace(inherited_namespace()));
    let record: Vec<u8> = (0..=255).collect();
    let guard = t.announce("desk", &record).unwrap();
    tell("ANNOUNCED");
    if heard().as_deref() == Some("DROP") {
        drop(guard);
        tell("DROPPED");
        let _ = heard();
    }
}

#[test]
fn announced_name_is_withdrawn_with_its_guard_or_its_process() {
    if role().is_some() {
        return announcer();
    }
    let test = "announced_name_is_withdrawn_with_its_guard_or_its_process";
    let ns = iceoryx2_peer::fresh_namespace("announce");
    let t = transport(Iceoryx2Config::default().namespace(ns.name()));
    let record: Vec<u8> = (0..=255).collect();

    let mut peer = Peer::spawn(test, "announcer", ns.name());
    peer.expect("ANNOUNCED");
    assert_eq!(t.discover("desk"), Ok(Some(record.clone())));
    match t.announce("desk", b"mine") {
        Err(LinkError::Transport(why)) => assert!(why.contains("already announced"), "{why}"),
        other => panic!("a live name was taken over: {other:?}"),
    }
    peer.say("DROP");
    peer.expect("DROPPED");
    assert_eq!(t.discover("desk"), Ok(None));
    peer.finish();

    let mut peer = Peer::spawn(test, "announcer", ns.name());
    peer.expect("ANNOUNCED");
    assert_eq!(t.discover("desk"), Ok(Some(record)));
    peer.kill();
    assert_eq!(
        t.discover("desk"),
        Ok(None),
        "a dead process announces nothing"
    );
    // Its stale service is gone: the name can be taken again.
    let _mine = t.announce("desk", b"mine").unwrap();
    assert_eq!(t.discover("desk"), Ok(Some(b"mine".to_vec())));
}
