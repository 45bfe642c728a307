//! Authenticated peers ([`NodeConfig::auth`]), over the loopback: frames
//! forged byte by byte, hellos forged, replayed or answered by an
//! impostor, through the node's real decode, session and handshake path.
//!
//! Each test that guards a hole runs the same attack against a node
//! without authentication too, and asserts that it gets through there:
//! the hole is real, and the test would fail without the fix.

mod auth_support;

use auth_support::*;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar_remote::frame::{self, Frame, Kind};
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{
    Auth, AuthError, Export, ExportError, LookupError, Node, Refused, RemoteActor, Transport,
};
use serde::Serialize;

/// 100 tells forged onto a raw link into the server's inbox, slot 0 and
/// `Seq`'s wire id guessed right, each on a session of its own.
fn forge_hundred_sends(w: &mut World) {
    for i in 0..100u64 {
        push(
            &mut w.raw,
            &forge(Kind::Tell, 0, 1, 0, 5000 + i, 0, &Seq(1000 + i)),
        );
    }
}

#[test]
fn a_hundred_forged_sends_run_no_handler_and_are_counted() {
    let mut w = world(true);
    w.still_answers(1);
    assert_eq!(
        w.server.stats().unauthenticated,
        0,
        "the handshake is clean"
    );
    forge_hundred_sends(&mut w);
    // one forged ask too: refused, and nothing sent in answer
    push(&mut w.raw, &forge(Kind::Ask, 0, 1, 9, 6000, 0, &Seq(2000)));
    w.still_answers(2);
    // The raw link is not the client's: its frames may be read after the
    // client's ask was answered. Once all 101 are counted, none can run.
    assert!(eventually(Duration::from_secs(5), || w
        .server
        .stats()
        .unauthenticated
        == 101));
    assert!(
        (1000..1100).chain([2000]).all(|n| !w.ran(n)),
        "a forged send ran"
    );
    let s = w.server.stats();
    assert_eq!((s.unauthenticated, s.replayed), (101, 0), "{s:?}");
    w.finish();

    // The hole, without authentication: every forged send runs.
    let mut w = world(false);
    forge_hundred_sends(&mut w);
    w.still_answers(2);
    assert!(eventually(Duration::from_secs(5), || (1000..1100).all(|n| w.ran(n))));
    assert_eq!(w.server.stats().unauthenticated, 0);
    w.finish();
}

#[test]
fn a_forged_hello_opens_no_session_and_sends_nothing_to_the_endpoint_it_names() {
    let mut w = world(true);
    let mut victim = w.net.net.listen("victim").unwrap();
    let connects = w.net.connects.load(Ordering::SeqCst);
    push(&mut w.raw, &forged_hello("victim", 77));
    // and one without any authentication, as a node without it sends
    push(
        &mut w.raw,
        &forge(Kind::Hello, 0, 0, 2, 78, 0, &hello("victim")),
    );
    // then the forger's tells on those sessions
    push(&mut w.raw, &forge(Kind::Tell, 0, 1, 0, 77, 1, &Seq(3000)));
    push(&mut w.raw, &forge(Kind::Tell, 0, 1, 0, 78, 1, &Seq(3001)));
    w.still_answers(1);
    assert!(
        receive(&mut victim, Duration::from_millis(300)).is_empty(),
        "something went to the victim"
    );
    assert_eq!(
        w.net.connects.load(Ordering::SeqCst),
        connects,
        "a link was opened to the victim"
    );
    assert!(!w.ran(3000) && !w.ran(3001));
    assert_eq!(w.server.stats().unauthenticated, 4);

    // A node with the wrong key: its lookup gets no answer at all.
    let intruder = Node::with_config(w.net.clone(), "intruder", keyed("client", WRONG)).unwrap();
    assert_eq!(
        intruder.lookup::<Counter>("counter").err(),
        Some(LookupError::Timeout)
    );
    assert_eq!(
        intruder.stats().frames_in,
        0,
        "the server sent the intruder something"
    );
    assert_eq!(w.server.stats().unauthenticated, 5);
    drop(intruder);
    w.finish();

    // The hole, without authentication: the hello is welcomed at the
    // endpoint it names.
    let mut w = world(false);
    let mut victim = w.net.net.listen("victim").unwrap();
    push(
        &mut w.raw,
        &forge(Kind::Hello, 0, 0, 2, 78, 0, &hello("victim")),
    );
    let got = receive(&mut victim, Duration::from_millis(300));
    assert_eq!(got.len(), 1);
    assert_eq!(Frame::parse(&got[0]).unwrap().header.kind, Kind::Welcome);
    w.finish();
}

/// A lookup's frames, captured on their way to the server, replayed: to
/// the same server (the hello is refused as seen before), and, whole, to
/// a server started afresh under the same name (its challenge goes to the
/// genuine client, which ignores it, and nothing after it is handled).
#[test]
fn a_replayed_hello_opens_no_session() {
    let mut w = world(true);
    w.remote.send(Seq(0)).unwrap();
    w.still_answers(1);
    let captured = w.net.captured();
    let kinds: Vec<Kind> = captured
        .iter()
        .map(|b| Frame::parse(b).unwrap().header.kind)
        .collect();
    assert_eq!(kinds, [Kind::Hello, Kind::Proof, Kind::Tell, Kind::Ask]);
    push(&mut w.raw, &captured[0]);
    w.still_answers(2);
    // (the raw link's frame may be read after the client's ask)
    assert!(eventually(Duration::from_secs(5), || w
        .server
        .stats()
        .unauthenticated
        == 1));
    let s = w.server.stats();
    assert_eq!((s.unauthenticated, s.replayed), (1, 1), "{s:?}");

    // The whole lookup, replayed to a fresh server.
    let net = w.net.clone();
    let before_goodbye = w.client.stats().frames_in;
    drop(w.server);
    // (its goodbye reaches the client)
    assert!(eventually(Duration::from_secs(5), || w
        .client
        .stats()
        .frames_in
        > before_goodbye));
    let client_in = w.client.stats().frames_in;
    let (c, log) = Counter::new();
    let fresh = Node::with_config(net.clone(), "server", keyed("server", KEY)).unwrap();
    fresh.export("counter", &w.system.spawn(c).start()).unwrap();
    let mut raw = net.connect("server", Duration::from_secs(1)).unwrap();
    for frame in &captured {
        push(&mut raw, frame);
    }
    assert!(eventually(Duration::from_secs(5), || fresh
        .stats()
        .unauthenticated
        == 3));
    std::thread::sleep(Duration::from_millis(50));
    assert!(log.lock().unwrap().is_empty(), "a replayed send ran");
    let s = fresh.stats();
    // the hello is new to this node: challenged (its genuine sender
    // drops the challenge, unasked for); the proof answers another
    // challenge; the tell and ask are on no authenticated session
    assert_eq!((s.unauthenticated, s.replayed), (3, 0), "{s:?}");
    assert!(eventually(Duration::from_secs(5), || w
        .client
        .stats()
        .unauthenticated
        == 1));
    assert_eq!(
        w.client.stats().frames_in,
        client_in + 1,
        "the challenge, dropped"
    );
    drop(fresh);
    drop(w.client);
    w.system.shutdown();

    // The hole, without authentication: the replay runs its sends again.
    let w = world(false);
    w.remote.send(Seq(0)).unwrap();
    w.still_answers(1);
    let captured = w.net.captured();
    drop(w.server);
    let (c, log) = Counter::new();
    let fresh = Node::with_config(w.net.clone(), "server", config(None)).unwrap();
    fresh.export("counter", &w.system.spawn(c).start()).unwrap();
    let mut raw = w.net.connect("server", Duration::from_secs(1)).unwrap();
    for frame in &captured {
        push(&mut raw, frame);
    }
    // (the tell; the ask comes before the link back is open, and is
    // refused for want of a route, as any early ask)
    assert!(eventually(Duration::from_secs(5), || log
        .lock()
        .unwrap()
        .contains(&0)));
    drop(fresh);
    drop(w.client);
    w.system.shutdown();
}

/// The client checks the server too: an impostor exporting "counter"
/// without the key, answering the hello with a challenge it cannot make
/// and a welcome, gets no lookup through.
#[test]
fn a_server_without_the_key_is_not_believed() {
    for auth in [true, false] {
        let net = Loopback::new(256);
        let record = (("impostor", 0u32, "Counter", Counter::SCHEMA_HASH),);
        let _ann = net
            .announce("counter", &postcard::to_stdvec(&record.0).unwrap())
            .unwrap();
        let mut rx = net.listen("impostor").unwrap();
        let client_config = if auth {
            keyed("client", KEY)
        } else {
            config(None)
        };
        let client = Node::with_config(net.clone(), "client", client_config).unwrap();
        let impostor = std::thread::spawn(move || {
            let got = receive(&mut rx, Duration::from_millis(200));
            let h = Frame::parse(&got[0]).unwrap().header;
            let mut back = net.connect("client", Duration::from_secs(1)).unwrap();
            #[derive(Serialize)]
            struct Challenge {
                nonce: [u8; 16],
                sign: bool,
                mac: [u8; 32],
            }
            let ch = Challenge {
                nonce: [1; 16],
                sign: false,
                mac: [2; 32],
            };
            push(
                &mut back,
                &forge(Kind::Challenge, 0, 0, h.correlation, 99, 0, &ch),
            );
            push(
                &mut back,
                &forge(Kind::Welcome, 0, 0, h.correlation, 99, 1, &()),
            );
            // kept until the lookup is over: a listener gone is a lost peer
            rx
        });
        let looked_up = client.lookup::<Counter>("counter");
        let _rx = impostor.join().unwrap();
        if auth {
            assert_eq!(looked_up.err(), Some(LookupError::Timeout));
            assert_eq!(client.stats().unauthenticated, 2);
        } else {
            // the hole: the welcome alone is believed
            assert!(looked_up.is_ok());
        }
    }
}

#[test]
fn an_allow_list_refuses_other_peers_with_a_clear_error() {
    let net = Tap::new(4096);
    let system = System::new();
    let (c, log) = Counter::new();
    let server_auth = Auth::new("server", KEY)
        .unwrap()
        .peer("alice", b"alice's own key, 32 bytes long!!")
        .unwrap()
        .peer("bob", b"bob's own key, also 32 bytes....")
        .unwrap();
    let server = Node::with_config(net.clone(), "server", config(Some(server_auth))).unwrap();
    let counter = system.spawn(c).start();
    server
        .export_with("counter", &counter, Export::new().allow(["alice"]))
        .unwrap();
    let alice = Node::with_config(
        net.clone(),
        "alice",
        keyed("alice", b"alice's own key, 32 bytes long!!"),
    )
    .unwrap();
    let bob = Node::with_config(
        net.clone(),
        "bob",
        keyed("bob", b"bob's own key, also 32 bytes...."),
    )
    .unwrap();
    let a = alice.lookup::<Counter>("counter").unwrap();
    assert_eq!(
        a.ask(Seq(4)).unwrap().wait_timeout(Duration::from_secs(10)),
        Ok(8)
    );
    let refused = bob.lookup::<Counter>("counter").err().unwrap();
    assert_eq!(
        refused,
        LookupError::Refused(Refused::NotAllowed {
            export: "counter".into(),
            peer: "bob".into()
        })
    );
    assert_eq!(
        refused.to_string(),
        "the exporting node refused: the export \"counter\" does not admit the peer \"bob\""
    );
    // Bob claiming Alice's id with his own key: not believed at all.
    let mallory = Node::with_config(
        net.clone(),
        "mallory",
        keyed("alice", b"bob's own key, also 32 bytes...."),
    )
    .unwrap();
    assert_eq!(
        mallory.lookup::<Counter>("counter").err(),
        Some(LookupError::Timeout)
    );
    assert_eq!(*log.lock().unwrap(), [4]);

    // An allow list needs authentication to mean anything.
    let plain = Node::new(net.clone(), "plain").unwrap();
    assert_eq!(
        plain
            .export_with("x", &counter, Export::new().allow(["alice"]))
            .err(),
        Some(ExportError::NeedsAuth("x".into()))
    );
    drop((plain, mallory, alice, bob, server));
    system.shutdown();
}

#[test]
fn keys_and_ids_are_checked() {
    assert_eq!(Auth::new("a", b"short").err(), Some(AuthError::ShortKey(5)));
    assert_eq!(Auth::new("", KEY).err(), Some(AuthError::BadId(0)));
    let long = "x".repeat(256);
    assert_eq!(Auth::new(&long, KEY).err(), Some(AuthError::BadId(256)));
    let a = Auth::new("me", KEY).unwrap().peer("you", WRONG).unwrap();
    let shown = format!("{a:?}");
    assert_eq!(
        shown,
        "Auth { id: \"me\", peers: [\"you\"], sign_frames: false, .. }"
    );
}

/// Send, ask and request, with and without tagged frames (either end
/// asking for them is enough).
#[test]
fn authenticated_peers_send_ask_and_request() {
    for (server_signs, client_signs) in [(false, false), (true, false), (false, true), (true, true)]
    {
        let net = Tap::new(4096);
        let system = System::new();
        let (c, log) = Counter::new();
        let auth =
            |id: &str, sign: bool| config(Some(Auth::new(id, KEY).unwrap().sign_frames(sign)));
        let server =
            Node::with_config(net.clone(), "server", auth("server", server_signs)).unwrap();
        server.export("counter", &system.spawn(c).start()).unwrap();
        let client =
            Node::with_config(net.clone(), "client", auth("client", client_signs)).unwrap();
        let remote = client.lookup::<Counter>("counter").unwrap();
        for i in 0..10 {
            remote.send(Seq(i)).unwrap();
        }
        assert_eq!(
            remote
                .ask(Seq(10))
                .unwrap()
                .wait_timeout(Duration::from_secs(10)),
            Ok(20)
        );
        let got = Arc::new(Mutex::new(Vec::new()));
        let inbox = system.spawn(Replies { got: got.clone() }).start();
        remote.request(Seq(11), &inbox).unwrap();
        assert!(eventually(Duration::from_secs(5), || got
            .lock()
            .unwrap()
            .contains(&22)));
        assert_eq!(*log.lock().unwrap(), (0..12).collect::<Vec<_>>());
        let signed = server_signs || client_signs;
        let tell = net
            .captured()
            .into_iter()
            .find(|b| b[3] == Kind::Tell as u8)
            .unwrap();
        let plain_len = frame::HEADER_LEN + postcard::to_stdvec(&Seq(0)).unwrap().len();
        assert_eq!(tell.len(), plain_len + if signed { 16 } else { 0 });
        for n in [server.stats(), client.stats()] {
            assert_eq!(n.unauthenticated, 0, "{n:?}");
        }
        drop((client, server));
        system.shutdown();
    }
}

/// With tagged frames, a captured frame altered (its number and body)
/// is refused; without them, the same alteration is handled.
#[test]
fn tagged_frames_refuse_an_altered_frame() {
    for sign in [true, false] {
        let net = Tap::new(4096);
        let system = System::new();
        let (c, log) = Counter::new();
        let auth = |id: &str| config(Some(Auth::new(id, KEY).unwrap().sign_frames(sign)));
        let server = Node::with_config(net.clone(), "server", auth("server")).unwrap();
        server.export("counter", &system.spawn(c).start()).unwrap();
        let client = Node::with_config(net.clone(), "client", auth("client")).unwrap();
        let remote = client.lookup::<Counter>("counter").unwrap();
        remote.send(Seq(5)).unwrap();
        assert_eq!(
            remote
                .ask(Seq(6))
                .unwrap()
                .wait_timeout(Duration::from_secs(10)),
            Ok(12)
        );
        let mut tell = net
            .captured()
            .into_iter()
            .find(|b| b[3] == Kind::Tell as u8)
            .unwrap();
        // the next sequence numbers, and a message of the attacker's
        tell[32..40].copy_from_slice(&10u64.to_le_bytes());
        tell[frame::HEADER_LEN] = 99;
        let mut raw = net.connect("server", Duration::from_secs(1)).unwrap();
        push(&mut raw, &tell);
        if sign {
            assert_eq!(
                remote
                    .ask(Seq(7))
                    .unwrap()
                    .wait_timeout(Duration::from_secs(10)),
                Ok(14)
            );
            std::thread::sleep(Duration::from_millis(50));
            assert!(!log.lock().unwrap().contains(&99));
            assert_eq!(server.stats().unauthenticated, 1);
        } else {
            // the hole: handled (and the genuine client's next frames,
            // numbered below the forged one, are now dropped as old)
            assert!(eventually(Duration::from_secs(5), || log
                .lock()
                .unwrap()
                .contains(&99)));
        }
        drop((client, server));
        system.shutdown();
    }
}
