//! `<transport>/kaspar`: the round trip through the actor layer, over any
//! transport (a [`Medium`] says how each side opens it). The echo process
//! exports an actor with `fast_send` (its handler runs on the node's
//! bridge thread and encodes the reply straight back); its bridge polls as
//! [`Medium::IDLE`] says (busy, [`IdleStrategy::Spin`], where the raw case
//! of that transport spins). The ping process asks it with
//! `Node::ask_polling`: the asking thread sends and then polls the inbox
//! itself, as the raw case's ping thread polls for its reply, while the
//! ping node's bridge keeps the default idle strategy. So each process has
//! one busy thread, as in the raw case.
//!
//! Two messages of 64 bytes, each its own case: [`Ping`] (`kaspar`), an
//! order's numeric fields, which postcard writes field by field as
//! varints, and [`Blob`] (`kaspar_bytes`), a number and 48 opaque bytes,
//! which postcard copies whole. The raw cases move 64 opaque bytes; the
//! difference between the two kaspar rows is the codec's share.
//!
//! Also `idle_cpu`: what a node costs while nothing arrives, per idle
//! strategy; and `idle_pair_cpu`: what two linked nodes cost while
//! nothing arrives, per liveness timeout (the transport's keepalives and
//! loss checks are what a shorter timeout makes more frequent).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar_remote::{Auth, Export, IdleStrategy, Node, NodeConfig, Transport};
use serde::{Deserialize, Serialize};

use super::{Plan, Session, PATIENCE};

/// How the two sides of a `kaspar` case open their transport.
pub(super) trait Medium {
    type T: Transport;
    /// How both nodes' bridges wait while their inbox is empty.
    const IDLE: IdleStrategy;

    /// The ping side's transport, opened before the echo process starts,
    /// and the environment the echo process needs to reach it.
    fn ping_side(session: &str) -> (Self::T, Vec<(&'static str, String)>);

    /// The echo side's transport, in the echo process (which sees the
    /// environment `ping_side` returned).
    fn echo_side(session: &str) -> Self::T;
}

/// The endpoint the node of `side` ("ping" or "echo") listens on.
pub(super) fn endpoint(session: &str, side: &str) -> String {
    format!("{session}/kaspar_{side}")
}

/// A 64-byte message (as the raw cases' frame), shaped like an order:
/// numeric fields with the magnitudes real ones have (a nanosecond
/// timestamp, a fixed-point price, ids), which postcard writes as
/// varints (about 45 bytes here). A byte array would be the slow way to
/// fill 64 bytes: serde hands postcard an array element by element, about
/// nine instructions a byte each way (callgrind: 530 to decode 56 bytes).
#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
pub struct Ping {
    n: u64,
    ts_ns: u64,
    px: i64,
    qty: u64,
    order_id: u64,
    client_tag: u64,
    instrument: u32,
    account: u32,
    venue: u16,
    side: u8,
    stop: bool,
}

const _: () = assert!(std::mem::size_of::<Ping>() == 64);

/// A message of a case: made from its round trip's number, answered with
/// it.
pub(super) trait Probe: kaspar_remote::Wire + Send + 'static
where
    Echo: kaspar_remote::RemoteHandler<Self, Reply = u64>,
{
    fn make(n: u64, stop: bool) -> Self;
}

impl Probe for Ping {
    fn make(n: u64, stop: bool) -> Ping {
        Ping::order(n, stop)
    }
}

/// 64 bytes as the raw cases send them: the round trip's number and 48
/// opaque bytes (postcard: a varint length, then one copy), and the stop
/// flag.
#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 2)]
pub struct Blob {
    n: u64,
    stop: bool,
    payload: Opaque,
}

const _: () = assert!(std::mem::size_of::<Blob>() <= 64);

/// Bytes that serde hands the codec as one slice (`serialize_bytes`), as
/// `serde_bytes` would, rather than element by element.
pub struct Opaque([u8; 48]);

impl Serialize for Opaque {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Opaque {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl serde::de::Visitor<'_> for Bytes {
            type Value = Opaque;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("48 bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Opaque, E> {
                v.try_into()
                    .map(Opaque)
                    .map_err(|_| E::invalid_length(v.len(), &self))
            }
        }
        d.deserialize_bytes(Bytes)
    }
}

/// Its encoding is 48 bytes; hashed as the array it holds.
impl kaspar_remote::Schema for Opaque {
    const HASH: u64 = <[u8; 48] as kaspar_remote::Schema>::HASH;
}

impl Probe for Blob {
    fn make(n: u64, stop: bool) -> Blob {
        Blob {
            n,
            stop,
            payload: Opaque([0xa5; 48]),
        }
    }
}

impl Ping {
    fn order(n: u64, stop: bool) -> Ping {
        Ping {
            n,
            ts_ns: 1_764_560_000_000_000_000 + n * 1_000,
            px: 5_012_345_000 + (n % 100) as i64,
            qty: 100,
            order_id: 1_000_000_000_000 + n,
            client_tag: 0x5eed_0000_0000_0000 ^ n,
            instrument: 4_127,
            account: 77,
            venue: 3,
            side: (n % 2) as u8,
            stop,
        }
    }
}

/// Answers every ping with its number; a stop ping ends the echo process.
#[actor]
pub struct Echo {
    stop: Arc<AtomicBool>,
}

#[actor(remote)]
impl Echo {
    #[handler(Ping)]
    fn on_ping(&mut self, p: Ping, _ctx: &mut Ctx<Self>) -> u64 {
        if p.stop {
            self.stop.store(true, Ordering::Release);
        }
        p.n
    }

    #[handler(Blob)]
    fn on_blob(&mut self, b: Blob, _ctx: &mut Ctx<Self>) -> u64 {
        if b.stop {
            self.stop.store(true, Ordering::Release);
        }
        b.n
    }
}

/// Peer authentication in a case: none (`NONE`), the handshake only
/// (`HANDSHAKE`), or the handshake and a tag on every frame (`SIGNED`).
pub(super) const NONE: u8 = 0;
pub(super) const HANDSHAKE: u8 = 1;
pub(super) const SIGNED: u8 = 2;

fn node<T: Transport>(t: T, session: &str, side: &str, idle: IdleStrategy, auth: u8) -> Node<T> {
    let auth = (auth != NONE).then(|| {
        Auth::new(side, b"the round-trip bench's shared key")
            .expect("a valid key")
            .sign_frames(auth == SIGNED)
    });
    let config = NodeConfig {
        idle,
        auth,
        ..NodeConfig::default()
    };
    Node::with_config(t, &endpoint(session, side), config).expect("a node")
}

pub(super) fn ping<M: Medium, P: Probe, const AUTH: u8>(session: &Session, plan: Plan) -> Vec<u64>
where
    Echo: kaspar_remote::RemoteHandler<P, Reply = u64>,
{
    let (t, env) = M::ping_side(session.name());
    // The asking thread polls (`wait_polling`); the bridge need not spin.
    let node = node(t, session.name(), "ping", IdleStrategy::DEFAULT, AUTH);
    session.spawn_echo(&env);
    let name = format!("{}/echo_actor", session.name());
    let deadline = Instant::now() + PATIENCE;
    let echo = loop {
        match node.lookup::<Echo>(&name) {
            Ok(r) => break r,
            Err(e) => {
                assert!(Instant::now() < deadline, "no echo actor: {e}");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    };
    let mut rt = Vec::with_capacity(plan.samples);
    for i in 0..(plan.warmup + plan.samples) as u64 {
        let p = P::make(i, false);
        let start = Instant::now();
        let back = node
            .ask_polling(&echo, p, PATIENCE)
            .unwrap_or_else(|e| panic!("ask: {e}"))
            .unwrap_or_else(|e| panic!("ask {i}: {e:?}, stats {:?}", node.stats()));
        let took = start.elapsed().as_nanos() as u64;
        assert_eq!(back, i, "the echo answered another ping");
        if i as usize >= plan.warmup {
            rt.push(took);
        }
    }
    let stop = P::make(0, true);
    echo.send(stop).unwrap_or_else(|e| panic!("stop: {e}"));
    // The node (and its transport, which may hold the media driver the
    // echo process uses) stays until the echo process has exited.
    session.finish_echo();
    drop(node);
    rt
}

pub(super) fn echo<M: Medium, const AUTH: u8>(session: &str) {
    let system = System::new();
    let stop = Arc::new(AtomicBool::new(false));
    let actor = system.spawn(Echo { stop: stop.clone() }).start();
    let node = node(M::echo_side(session), session, "echo", M::IDLE, AUTH);
    node.export_with(
        &format!("{session}/echo_actor"),
        &actor,
        Export::new().fast_send(),
    )
    .expect("export the echo actor");
    let deadline = Instant::now() + PATIENCE * 6;
    while !stop.load(Ordering::Acquire) {
        assert!(
            Instant::now() < deadline,
            "the ping process never stopped us"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(node);
    system.shutdown();
}

/// The process's CPU time (user and system) so far, from `/proc`.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on every Linux this runs on.
    Some(Duration::from_millis(ticks * 10))
}

/// The share of one core (in percent) an idle node with `idle` costs over
/// `span`, the transport's liveness thread included; `None` off Linux.
#[cfg(feature = "iceoryx2")]
pub(super) fn idle_cpu<M: Medium>(idle: IdleStrategy, span: Duration) -> Option<f64> {
    let session = format!("{}_idle", std::process::id());
    let n = node(M::ping_side(&session).0, &session, "idle", idle, NONE);
    // Let the node settle into its idle wait.
    std::thread::sleep(Duration::from_millis(20));
    let before = cpu_time()?;
    let t = Instant::now();
    std::thread::sleep(span);
    let used = cpu_time()? - before;
    let pct = used.as_secs_f64() / t.elapsed().as_secs_f64() * 100.0;
    drop(n);
    Some(pct)
}

/// The share of one core (in percent) that two nodes cost over `span`
/// while idle, the second having looked up an export of the first, so a
/// link runs each way: both bridges (default idle strategy), and the
/// transport's own threads and timers (iceoryx2's liveness monitor;
/// Aeron's embedded media driver, its client conductors and their
/// keepalives). `first` and `second` make the two transports, with the
/// liveness timeout under test. `None` off Linux.
pub(super) fn idle_pair_cpu<T: Transport>(first: T, second: T, span: Duration) -> Option<f64> {
    let session = format!("{}_liveness", std::process::id());
    let system = System::new();
    let a = node(first, &session, "a", IdleStrategy::DEFAULT, NONE);
    let echo = system
        .spawn(Echo {
            stop: Arc::new(AtomicBool::new(false)),
        })
        .start();
    a.export("echo", &echo).expect("an export");
    let b = node(second, &session, "b", IdleStrategy::DEFAULT, NONE);
    let remote = b.lookup::<Echo>("echo").expect("a lookup");
    // Let both settle into their idle waits.
    std::thread::sleep(Duration::from_millis(50));
    let before = cpu_time()?;
    let t = Instant::now();
    std::thread::sleep(span);
    let used = cpu_time()? - before;
    let pct = used.as_secs_f64() / t.elapsed().as_secs_f64() * 100.0;
    drop((remote, b, a));
    system.shutdown();
    Some(pct)
}
