//! The frame codec: round trips, and a decoder that rejects anything else
//! with an error, never a panic, wherever the bytes come from.

mod common;

use std::time::Duration;

use common::*;
use kaspar::prelude::*;
use kaspar_remote::frame::{self, Frame, FrameError, Header, Kind, HEADER_LEN};
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{deliver_input, LinkTx, Node, RemoteInput, Transport};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Clone, Debug, PartialEq)]
#[wire(id = 77)]
enum Order {
    New {
        id: u64,
        px: i64,
        qty: u32,
        tag: String,
    },
    Cancel(u64),
    Mass(Vec<u64>),
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Hello),
        Just(Kind::Welcome),
        Just(Kind::Tell),
        Just(Kind::Ask),
        Just(Kind::Reply),
        Just(Kind::Error),
        Just(Kind::Bye),
    ]
}

fn header() -> impl Strategy<Value = Header> {
    (kind(), any::<u32>(), any::<u32>(), any::<[u64; 3]>()).prop_map(
        |(kind, target, wire_id, [c, s, q])| Header {
            kind,
            target,
            wire_id,
            body_len: 0,
            correlation: c,
            session: s,
            seq: q,
        },
    )
}

fn order() -> impl Strategy<Value = Order> {
    prop_oneof![
        (any::<u64>(), any::<i64>(), any::<u32>(), ".{0,40}")
            .prop_map(|(id, px, qty, tag)| Order::New { id, px, qty, tag }),
        any::<u64>().prop_map(Order::Cancel),
        prop::collection::vec(any::<u64>(), 0..50).prop_map(Order::Mass),
    ]
}

proptest! {
    #[test]
    fn a_message_round_trips_through_a_frame(h in header(), o in order()) {
        let bytes = frame::to_vec(&h, &o).unwrap();
        let f = Frame::parse(&bytes).unwrap();
        prop_assert_eq!(f.header, Header { body_len: (bytes.len() - HEADER_LEN) as u32, ..h });
        prop_assert_eq!(postcard::from_bytes::<Order>(f.body).unwrap(), o);
    }

    #[test]
    fn random_bytes_are_rejected_or_read_back_exactly(bytes in prop::collection::vec(any::<u8>(), 0..120)) {
        match Frame::parse(&bytes) {
            Ok(f) => {
                prop_assert_eq!(f.body.len(), bytes.len() - HEADER_LEN);
                let mut head = [0u8; HEADER_LEN];
                prop_assert!(f.header.write_to(&mut head));
                prop_assert_eq!(&head[..], &bytes[..HEADER_LEN]);
            }
            Err(FrameError::TooShort { len }) => prop_assert!(len < HEADER_LEN),
            Err(_) => prop_assert!(bytes.len() >= HEADER_LEN),
        }
        let _ = kaspar_remote::__private::decode_control(&bytes);
        let _ = kaspar_remote::__private::decode_record(&bytes);
    }

    #[test]
    fn a_valid_header_with_a_random_body_is_refused_cleanly(
        h in header(),
        body in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut bytes = vec![0; HEADER_LEN + body.len()];
        let h = Header { body_len: body.len() as u32, ..h };
        prop_assert!(h.write_to(&mut bytes));
        bytes[HEADER_LEN..].copy_from_slice(&body);
        prop_assert!(Frame::parse(&bytes).is_ok());
        let _ = kaspar_remote::__private::decode_control(&bytes);
    }

    #[test]
    fn damage_to_the_checked_header_fields_is_an_error(
        h in header(),
        o in order(),
        at in prop::sample::select(vec![0usize, 1, 2, 12, 13, 14, 15]),
        flip in 1u8..,
    ) {
        // magic, version and body length are checked; the other fields
        // are the sender's to choose (a kind byte may turn into another
        // kind), and the body is checked by whoever decodes it
        let mut bytes = frame::to_vec(&h, &o).unwrap();
        bytes[at] ^= flip;
        prop_assert!(Frame::parse(&bytes).is_err(), "damage at byte {} went unnoticed", at);
    }
}

#[test]
fn truncated_and_overlong_frames_name_the_mismatch() {
    let h = Header {
        kind: Kind::Tell,
        target: 0,
        wire_id: 1,
        body_len: 0,
        correlation: 0,
        session: 1,
        seq: 0,
    };
    let bytes = frame::to_vec(&h, &Seq(300)).unwrap();
    assert_eq!(
        Frame::parse(&bytes[..bytes.len() - 1]),
        Err(FrameError::BadLength {
            declared: 2,
            actual: 1
        })
    );
    let mut long = bytes.clone();
    long.push(0);
    assert!(matches!(
        Frame::parse(&long),
        Err(FrameError::BadLength { .. })
    ));
    assert_eq!(
        Frame::parse(&bytes[..10]),
        Err(FrameError::TooShort { len: 10 })
    );
    let mut v2 = bytes;
    v2[2] = 2;
    assert_eq!(Frame::parse(&v2), Err(FrameError::BadVersion(2)));
}

/// Random bodies under a real actor's wire ids, delivered as a replay
/// would: each is refused or handled, never a panic.
#[test]
fn random_bodies_for_an_actors_messages_are_refused_or_handled() {
    let system = System::new();
    let (c, log) = Counter::new();
    let counter = system.spawn(c).start();
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let inputs = (0u32..5, prop::collection::vec(any::<u8>(), 0..24));
    let mut handled = 0;
    for _ in 0..2_000 {
        let (wire_id, body) = inputs.new_tree(&mut runner).unwrap().current();
        {
            let ok = deliver_input(&counter, RemoteInput::new(wire_id, body.clone()));
            // a body is one message and nothing after it
            fn whole<M: serde::de::DeserializeOwned>(body: &[u8]) -> bool {
                postcard::take_from_bytes::<M>(body).is_ok_and(|(_, rest)| rest.is_empty())
            }
            let decodes = match wire_id {
                1 => whole::<Seq>(&body),
                2 => whole::<Report>(&body),
                3 => false, // Boom's handler panics; its decoding is the sender's business
                _ => false,
            };
            if wire_id != 3 {
                assert_eq!(ok, decodes, "wire id {wire_id}, body {body:?}");
            }
            handled += usize::from(ok && wire_id == 1);
        }
    }
    assert_eq!(
        counter.ask(Report).unwrap().wait().unwrap().seen as usize,
        handled
    );
    assert_eq!(log.lock().unwrap().len(), handled);
    system.shutdown();
}

/// Random bytes pushed into a live node's inbox: counted as rejected or
/// refused, and the node serves on.
#[test]
fn random_bytes_into_a_live_node_harm_nothing() {
    let net = Loopback::new(4096);
    let system = System::new();
    let (c, _) = Counter::new();
    let server = Node::new(net.clone(), "server").unwrap();
    server.export("counter", &system.spawn(c).start()).unwrap();
    let client = Node::new(net.clone(), "client").unwrap();
    let remote = client.lookup::<Counter>("counter").unwrap();

    let mut raw = net.connect("server", Duration::from_secs(1)).unwrap();
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let junk = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..100),
        (header(), prop::collection::vec(any::<u8>(), 0..40)).prop_map(|(h, body)| {
            let mut b = vec![0; HEADER_LEN + body.len()];
            Header {
                body_len: body.len() as u32,
                target: h.target % 2,
                wire_id: h.wire_id % 4,
                ..h
            }
            .write_to(&mut b);
            b[HEADER_LEN..].copy_from_slice(&body);
            b
        }),
    ];
    let sent = 1_000;
    for _ in 0..sent {
        let bytes = junk.new_tree(&mut runner).unwrap().current();
        raw.send_frame(bytes.len(), &mut |buf| buf.copy_from_slice(&bytes))
            .unwrap();
    }
    assert_eq!(remote.ask(Seq(0)).unwrap().wait().unwrap(), 0);
    // The server publishes its frame count when a poll's batch ends; the
    // reply can come back before that.
    let expected = 1 + sent + 1;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while server.stats().frames_in < expected && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let stats = server.stats();
    assert_eq!(stats.frames_in, expected, "hello, the junk, the ask");
    drop((client, server));
    system.shutdown();
}
