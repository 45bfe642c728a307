//! Feeds sequences of frames to a live node over the loopback transport,
//! through the node's real receiving thread: hellos (naming the node's
//! real client, a forger that reads, endpoints nobody listens on, with
//! previous-session counts at their extremes, asking for acknowledgements
//! or not), tells and asks on the sessions those hellos opened and on
//! guessed ones, replies, errors, byes, acks and stray authentication
//! frames with guessed correlations, and raw bytes.
//!
//! After every input the node must still be itself: a real client's ask
//! is answered within a bound (a receiving thread that stalls on a hello
//! or dies on a frame fails here, issue 27 rows 1 and 2), and its counters
//! stay sane (a gap counted past `u64::MAX` or a panic caught while a
//! frame was handled fails). The hello body mirrors kaspar-remote's
//! private `Hello` (postcard encodes fields in order, so the bytes are the
//! same); when that struct changes, so must `HelloBody`, or the hellos
//! here are refused as undecodable and the session paths go unfuzzed.
#![no_main]

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use arbitrary::Arbitrary;
use kaspar::prelude::*;
use kaspar_remote::frame::{self, Header, Kind};
use kaspar_remote::loopback::{Loopback, LoopbackRx, LoopbackTx};
use kaspar_remote::{LinkRx, LinkTx, Node, RemoteAddr, Transport};
use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
pub struct Seq(pub u64);

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 2)]
pub struct Note {
    pub text: String,
    pub legs: Vec<(u32, i64)>,
}

#[actor]
pub struct Counter {
    seen: u64,
}

#[actor(remote)]
impl Counter {
    #[handler(Seq)]
    fn on_seq(&mut self, s: Seq, _ctx: &mut Ctx<Self>) -> u64 {
        self.seen += 1;
        s.0.wrapping_mul(2)
    }

    #[handler(Note)]
    fn on_note(&mut self, n: Note, _ctx: &mut Ctx<Self>) -> usize {
        self.seen += 1;
        n.text.len() + n.legs.len()
    }
}

/// kaspar-remote's hello body, field for field.
#[derive(Serialize)]
struct HelloBody<'a> {
    from: &'a str,
    export: &'a str,
    actor: &'a str,
    schema: u64,
    previous: Option<(u64, u64)>,
}

struct World {
    _system: System,
    server: Node<Loopback>,
    _client: Node<Loopback>,
    remote: RemoteAddr<Counter>,
    raw: LoopbackTx,
    forger: LoopbackRx,
    schema: u64,
    next: u64,
}

fn world() -> &'static Mutex<World> {
    static WORLD: OnceLock<Mutex<World>> = OnceLock::new();
    WORLD.get_or_init(|| {
        let net = Loopback::new(4096);
        let system = System::new();
        let server = Node::new(net.clone(), "fz-server").expect("server node");
        server
            .export("counter", &system.spawn(Counter { seen: 0 }).start())
            .expect("export");
        let client = Node::new(net.clone(), "fz-client").expect("client node");
        let remote = client.lookup::<Counter>("counter").expect("lookup");
        let raw = net
            .connect("fz-server", Duration::from_secs(1))
            .expect("raw link");
        let forger = net.listen("fz-forger").expect("forger inbox");
        Mutex::new(World {
            _system: system,
            server,
            _client: client,
            remote,
            raw,
            forger,
            schema: <Counter as kaspar_remote::RemoteActor>::SCHEMA_HASH,
            next: 0,
        })
    })
}

#[derive(Arbitrary, Debug)]
enum From {
    Client,
    Forger,
    Absent(u8),
    Server,
}

#[derive(Arbitrary, Debug)]
enum Pick {
    Small(u8),
    Max,
    Any(u64),
}

impl Pick {
    fn value(&self) -> u64 {
        match *self {
            Pick::Small(v) => u64::from(v % 4),
            Pick::Max => u64::MAX,
            Pick::Any(v) => v,
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Body {
    Seq(u64),
    Note(String, Vec<(u32, i64)>),
    Bytes(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum Op {
    Hello {
        from: From,
        other_export: bool,
        wrong_schema: bool,
        previous: Option<(Pick, Pick)>,
        session: Pick,
        seq: Pick,
        reads_acks: bool,
        trailing: Option<u8>,
    },
    Frame {
        kind: u8,
        target: Pick,
        wire_id: u8,
        correlation: Pick,
        session: Pick,
        seq: Pick,
        body: Body,
    },
    Raw(Vec<u8>),
}

fn endpoint(from: &From) -> String {
    match from {
        From::Client => "fz-client".into(),
        From::Forger => "fz-forger".into(),
        From::Absent(n) => format!("fz-absent-{}", n % 8),
        From::Server => "fz-server".into(),
    }
}

fn header(
    kind: Kind,
    target: u32,
    wire_id: u32,
    correlation: u64,
    session: u64,
    seq: u64,
) -> Header {
    Header {
        kind,
        target,
        wire_id,
        body_len: 0,
        correlation,
        session,
        seq,
    }
}

fn kind(b: u8) -> Kind {
    match b % 10 {
        0 => Kind::Hello,
        1 => Kind::Welcome,
        2 => Kind::Tell,
        3 => Kind::Ask,
        4 => Kind::Reply,
        5 => Kind::Error,
        6 => Kind::Bye,
        7 => Kind::Challenge,
        8 => Kind::Proof,
        _ => Kind::Ack,
    }
}

fn encode(op: &Op, schema: u64) -> Vec<u8> {
    match op {
        Op::Hello {
            from,
            other_export,
            wrong_schema,
            previous,
            session,
            seq,
            reads_acks,
            trailing,
        } => {
            let from = endpoint(from);
            let body = HelloBody {
                from: &from,
                export: if *other_export { "nothing" } else { "counter" },
                actor: "Counter",
                schema: if *wrong_schema { !schema } else { schema },
                previous: previous.as_ref().map(|(s, n)| (s.value(), n.value())),
            };
            // Bit 0 of a hello's wire id: its sender reads acknowledgements.
            let wire_id = u32::from(*reads_acks);
            let h = header(Kind::Hello, 0, wire_id, 1, session.value(), seq.value());
            let mut bytes = frame::to_vec(&h, &body).expect("hello frame");
            if let Some(b) = trailing {
                bytes.push(*b);
                let len = u32::try_from(bytes.len() - frame::HEADER_LEN).unwrap_or(u32::MAX);
                bytes[12..16].copy_from_slice(&len.to_le_bytes());
            }
            bytes
        }
        Op::Frame {
            kind: k,
            target,
            wire_id,
            correlation,
            session,
            seq,
            body,
        } => {
            let h = header(
                kind(*k),
                target.value() as u32,
                u32::from(*wire_id % 4),
                correlation.value(),
                session.value(),
                seq.value(),
            );
            let encoded = match body {
                Body::Seq(v) => frame::to_vec(&h, &Seq(*v)),
                Body::Note(text, legs) => frame::to_vec(
                    &h,
                    &Note {
                        text: text.clone(),
                        legs: legs.clone(),
                    },
                ),
                Body::Bytes(b) => {
                    let mut bytes = frame::to_vec(&h, &()).expect("empty frame");
                    bytes.extend_from_slice(b);
                    let len = u32::try_from(b.len()).unwrap_or(u32::MAX);
                    bytes[12..16].copy_from_slice(&len.to_le_bytes());
                    Ok(bytes)
                }
            };
            encoded.expect("frame")
        }
        Op::Raw(bytes) => bytes.clone(),
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let mut w = world().lock().unwrap_or_else(|p| p.into_inner());
    for op in ops.iter().take(64) {
        let bytes = encode(op, w.schema);
        if bytes.is_empty() {
            continue;
        }
        // A full inbox refuses the frame; the next input tries again.
        let _ = w
            .raw
            .send_frame(bytes.len(), &mut |buf| buf.copy_from_slice(&bytes));
    }
    // The forger reads what the node sends it.
    let _ = w.forger.poll(4096, &mut |_| {});

    let n = w.next;
    w.next += 1;
    let got = w
        .remote
        .ask(Seq(n))
        .expect("the real client's ask was refused")
        .wait_timeout(Duration::from_secs(2));
    assert_eq!(got, Ok(n.wrapping_mul(2)), "the node stopped answering");

    let stats = w.server.stats();
    assert_eq!(stats.panics, 0, "a frame made a handler path panic");
    assert!(
        stats.frames_in >= stats.rejected,
        "counters out of step: {stats:?}"
    );
});
