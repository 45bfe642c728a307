//! A hostile or broken peer against a node, over the loopback: frames
//! forged byte by byte onto a raw link, through the node's real decode and
//! session path. Whatever a frame says, the node's receiving thread keeps
//! reading (a normal ask after it is answered) and its counters stay sane:
//!
//! - a hello naming an endpoint nobody listens on does not make the
//!   receiving thread wait out the connect timeout (the connect back runs
//!   off it, bounded and rate limited);
//! - every header field a peer chooses, at 0, 1, MAX-1 and MAX, and the
//!   counts a hello carries;
//! - a panic while one frame is handled is caught and counted;
//! - a body with bytes left after its message is refused and counted.

mod common;
mod forge;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use forge::*;
use kaspar::prelude::*;
use kaspar::AskError;
use kaspar_remote::frame::{self, Frame, Kind};
use kaspar_remote::link::Announcement;
use kaspar_remote::loopback::{Loopback, LoopbackRx, LoopbackTx};
use kaspar_remote::{
    Export, LinkError, LookupError, Node, NodeConfig, NodeStats, Refused, RemoteActor, RemoteAddr,
    Transport,
};
use serde::Serialize;

/// The counters this suite added to `NodeStats`: hellos dropped, panics
/// caught, bodies with trailing bytes. (One place to read them, so the
/// suite can be run against a build without them.)
fn added(s: &NodeStats) -> (u64, u64, u64) {
    (s.hellos_dropped, s.panics, s.trailing)
}

/// The loopback, except that a connect to an endpoint nobody listens on
/// waits for it to appear until its timeout, as iceoryx2's and Aeron's
/// do, where the loopback's fails at once. Counts the connects it starts
/// and finishes, and can hold up connects to chosen endpoints.
#[derive(Clone)]
struct Slow {
    net: Loopback,
    started: Arc<AtomicUsize>,
    finished: Arc<AtomicUsize>,
    delays: Arc<Mutex<HashMap<String, Duration>>>,
}

impl Slow {
    fn new(net: Loopback) -> Self {
        Slow {
            net,
            started: Arc::new(AtomicUsize::new(0)),
            finished: Arc::new(AtomicUsize::new(0)),
            delays: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Connects started and finished so far.
    fn counts(&self) -> (usize, usize) {
        (
            self.started.load(Ordering::SeqCst),
            self.finished.load(Ordering::SeqCst),
        )
    }

    fn delay(&self, endpoint: &str, by: Duration) {
        self.delays.lock().unwrap().insert(endpoint.into(), by);
    }
}

impl Transport for Slow {
    type Tx = LoopbackTx;
    type Rx = LoopbackRx;
    fn listen(&self, endpoint: &str) -> Result<LoopbackRx, LinkError> {
        self.net.listen(endpoint)
    }
    fn connect(&self, endpoint: &str, timeout: Duration) -> Result<LoopbackTx, LinkError> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let delay = self.delays.lock().unwrap().get(endpoint).copied();
        if let Some(d) = delay {
            std::thread::sleep(d);
        }
        let deadline = Instant::now() + timeout;
        let connected = loop {
            match self.net.connect(endpoint, timeout) {
                Err(LinkError::PeerLost) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                other => break other,
            }
        };
        self.finished.fetch_add(1, Ordering::SeqCst);
        connected
    }
    fn announce(&self, name: &str, record: &[u8]) -> Result<Announcement, LinkError> {
        self.net.announce(name, record)
    }
    fn discover(&self, name: &str) -> Result<Option<Vec<u8>>, LinkError> {
        self.net.discover(name)
    }
    fn liveness_timeout(&self) -> Duration {
        self.net.liveness_timeout()
    }
}

fn hello(from: &str) -> Hello<'_> {
    hello_counter(from, Counter::SCHEMA_HASH)
}

/// An announced export record (postcard, the crate's field order).
#[derive(Serialize)]
struct Record<'a> {
    endpoint: &'a str,
    slot: u32,
    actor: &'a str,
    schema: u64,
}

/// A node exporting a `Counter` as "counter" (slot 0), a client node
/// that looked it up, and a raw link into the server's inbox.
struct World<T: Transport> {
    system: System,
    log: Arc<Mutex<Vec<u64>>>,
    server: Node<T>,
    client: Node<T>,
    remote: RemoteAddr<Counter>,
    raw: T::Tx,
}

fn world<T: Transport + Clone>(net: T, config: NodeConfig) -> World<T> {
    let system = System::new();
    let (c, log) = Counter::new();
    let server = Node::with_config(net.clone(), "server", config).unwrap();
    server.export("counter", &system.spawn(c).start()).unwrap();
    let client = Node::new(net.clone(), "client").unwrap();
    let remote = client.lookup::<Counter>("counter").unwrap();
    let raw = net.connect("server", Duration::from_secs(1)).unwrap();
    World {
        system,
        log,
        server,
        client,
        remote,
        raw,
    }
}

impl<T: Transport> World<T> {
    /// A normal ask, answered: the node is still reading.
    fn still_answers(&self, n: u64) {
        let got = self
            .remote
            .ask(Seq(n))
            .unwrap()
            .wait_timeout(Duration::from_secs(10));
        assert_eq!(got, Ok(n * 2), "the node stopped answering");
    }

    fn finish(self) {
        drop(self.client);
        drop(self.server);
        self.system.shutdown();
    }
}

/// The forger, introduced to `w`'s server by a hello naming its inbox.
fn forger(net: &Loopback, w: &mut World<Loopback>, session: u64) -> Forger<LoopbackRx> {
    let rx = net.listen("forger").unwrap();
    Forger::welcomed(rx, &mut w.raw, session, &hello("forger"))
}

fn refusal(body: &[u8]) -> Refused {
    postcard::from_bytes(body).unwrap()
}

// ---------------------------------------------------------------------
// Row 1: a hello does not stall the node.
// ---------------------------------------------------------------------

/// Three hellos naming endpoints nobody listens on, then a normal ask:
/// before, the receiving thread connected back to each in turn, waiting
/// out the 2 s connect timeout for each, and the ask took about 6 s. Then
/// a flood, a forged hello every millisecond for a second, each naming
/// another absent endpoint, with an ask after each; the same asks without
/// the hellos, before, for comparison (printed with `--nocapture`).
#[test]
fn hellos_naming_absent_endpoints_do_not_stall_the_node() {
    let slow = Slow::new(Loopback::new(4096));
    let mut w = world(slow.clone(), NodeConfig::default());
    // Asks at one a millisecond, without hellos; then three hellos naming
    // absent endpoints and an ask; then the asks again, each after a hello
    // naming another absent endpoint. (All of it well within the 2 s
    // every connect back to an absent endpoint waits.)
    let mut i = 3u64;
    let pace = |w: &mut World<Slow>, i: &mut u64, flood: bool| {
        let mut latencies = Vec::new();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(1) {
            if flood {
                let bytes = forge(
                    Kind::Hello,
                    0,
                    0,
                    1,
                    1000 + *i,
                    0,
                    &hello(&format!("absent/{i}")),
                );
                push(&mut w.raw, &bytes);
            }
            let t = Instant::now();
            w.still_answers(*i);
            latencies.push(t.elapsed());
            *i += 1;
            std::thread::sleep(Duration::from_millis(1));
        }
        latencies.sort();
        let at = |q: usize| latencies[(latencies.len() - 1) * q / 100];
        (latencies.len(), at(50), at(99), at(100))
    };
    let quiet = pace(&mut w, &mut i, false);
    let (started, finished) = slow.counts();
    for i in 0..3 {
        let bytes = forge(
            Kind::Hello,
            0,
            0,
            1,
            1000 + i,
            0,
            &hello(&format!("absent/{i}")),
        );
        push(&mut w.raw, &bytes);
    }
    let t = Instant::now();
    w.still_answers(1);
    let first = t.elapsed();
    assert_eq!(
        slow.finished.load(Ordering::SeqCst) - finished,
        0,
        "the ask was answered only after a connect back gave up ({first:?})"
    );
    assert!(first < Duration::from_millis(200), "{first:?}");

    let before_flood = i;
    let (n, p50, p99, max) = pace(&mut w, &mut i, true);
    println!(
        "ask after 3 absent hellos: {first:?}; 1 ask/ms without hellos: {} asks, p50 {:?}, p99 {:?}, max {:?}; \
         with a hello naming an absent endpoint before each: {n} asks, p50 {p50:?}, p99 {p99:?}, max {max:?}",
        quiet.0, quiet.1, quiet.2, quiet.3
    );
    let i = i - before_flood + 3;
    assert!(max < Duration::from_millis(200), "max {max:?}");
    let s = w.server.stats();
    // a connect back at most per endpoint queued or running: the rest of
    // the flood was dropped and counted
    assert!(
        slow.started.load(Ordering::SeqCst) - started <= 4 + 16,
        "{s:?}"
    );
    assert!(added(&s).0 >= i - 20, "{s:?}");
    w.finish();
}

/// More hellos at once than the connect-back queue holds: the excess is
/// dropped and counted, the node answers at once.
#[test]
fn hellos_past_the_queue_are_dropped_and_counted() {
    let slow = Slow::new(Loopback::new(4096));
    let mut w = world(slow.clone(), NodeConfig::default());
    let (started, finished) = slow.counts();
    for i in 0..200 {
        let bytes = forge(
            Kind::Hello,
            0,
            0,
            1,
            1000 + i,
            0,
            &hello(&format!("absent/{i}")),
        );
        push(&mut w.raw, &bytes);
    }
    w.still_answers(1);
    assert_eq!(slow.finished.load(Ordering::SeqCst) - finished, 0);
    let s = w.server.stats();
    // four connecting, sixteen queued; every connect waits 2 s
    assert!(added(&s).0 >= 180, "{s:?}");
    assert!(slow.started.load(Ordering::SeqCst) - started <= 4, "{s:?}");
    w.finish();
}

/// Hellos naming one absent endpoint share one connect back; once it has
/// failed, hellos naming it are dropped for a second without another.
#[test]
fn hellos_naming_one_endpoint_connect_once_and_are_rate_limited() {
    let slow = Slow::new(Loopback::new(4096));
    let config = NodeConfig {
        connect_timeout: Duration::from_millis(100),
        ..NodeConfig::default()
    };
    let mut w = world(slow.clone(), config);
    let (before, _) = slow.counts();
    let send = |w: &mut World<Slow>, n: u64, base: u64| {
        for i in 0..n {
            push(
                &mut w.raw,
                &forge(Kind::Hello, 0, 0, 1, base + i, 0, &hello("absent/x")),
            );
        }
    };
    send(&mut w, 10, 1000);
    w.still_answers(1);
    // the ten waited for one connect back, which gave up: refused, as
    // any hello whose sender cannot be reached
    assert!(eventually(Duration::from_secs(10), || w
        .server
        .stats()
        .refused
        == 10));
    assert_eq!(slow.started.load(Ordering::SeqCst) - before, 1);
    send(&mut w, 10, 2000);
    w.still_answers(2);
    let s = w.server.stats();
    assert_eq!(added(&s).0, 10, "rate limited: {s:?}");
    assert_eq!(slow.started.load(Ordering::SeqCst) - before, 1);
    std::thread::sleep(Duration::from_millis(1100));
    send(&mut w, 1, 3000);
    w.still_answers(3);
    assert!(eventually(Duration::from_secs(10), || {
        slow.started.load(Ordering::SeqCst) - before == 2
    }));
    w.finish();
}

/// The protocol: a sender sends no ask on a session before the answer to
/// its hello, and the answer goes out only once the route back is in
/// place. So an ask that arrives while its session's connect back is
/// still running is refused (counted), and a tell is delivered; once
/// welcomed, asks are answered.
#[test]
fn an_ask_before_the_welcome_is_refused_and_a_tell_delivered() {
    let net = Loopback::new(4096);
    let slow = Slow::new(net.clone());
    let mut w = world(slow.clone(), NodeConfig::default());
    let mut rx = net.listen("forger").unwrap();
    slow.delay("forger", Duration::from_millis(300));
    let session = 77;
    push(
        &mut w.raw,
        &forge(Kind::Hello, 0, 0, 5, session, 0, &hello("forger")),
    );
    push(&mut w.raw, &forge(Kind::Ask, 0, 1, 6, session, 1, &Seq(3)));
    push(&mut w.raw, &forge(Kind::Tell, 0, 1, 0, session, 2, &Seq(4)));
    w.still_answers(0);
    assert_eq!(w.server.stats().refused, 1);
    assert!(eventually(Duration::from_secs(5), || w
        .log
        .lock()
        .unwrap()
        .contains(&4)));
    let got = receive(&mut rx, 1, Duration::from_secs(10));
    assert_eq!(got.len(), 1);
    let welcome = Frame::parse(&got[0]).unwrap().header;
    assert_eq!((welcome.kind, welcome.correlation), (Kind::Welcome, 5));
    push(&mut w.raw, &forge(Kind::Ask, 0, 1, 7, session, 3, &Seq(5)));
    let got = receive(&mut rx, 1, Duration::from_secs(10));
    let reply = Frame::parse(&got[0]).unwrap();
    assert_eq!(
        (reply.header.kind, reply.header.correlation),
        (Kind::Reply, 7)
    );
    assert_eq!(postcard::from_bytes::<u64>(reply.body).unwrap(), 10);
    assert!(
        !w.log.lock().unwrap().contains(&3),
        "the early ask was not run"
    );
    w.finish();
}

// ---------------------------------------------------------------------
// Row 2: every field a peer chooses, at its extremes.
// ---------------------------------------------------------------------

const EXTREMES: [u64; 4] = [0, 1, u64::MAX - 1, u64::MAX];
const EXTREMES_32: [u32; 4] = [0, 1, u32::MAX - 1, u32::MAX];

/// Sequence numbers 0, 1, MAX-1 and MAX, each opening a session and sent
/// twice; then jumps inside a session. Before, MAX killed the receiving
/// thread ("attempt to add with overflow"), and in release wrapped the
/// session's next number to 0 and the missed count around.
#[test]
fn sequence_numbers_at_their_extremes() {
    let mut w = world(Loopback::new(4096), NodeConfig::default());
    let tell = |session: u64, seq: u64| forge(Kind::Tell, 0, 2, 0, session, seq, &Report);
    for (i, &seq) in EXTREMES.iter().enumerate() {
        let session = 100 + i as u64;
        push(&mut w.raw, &tell(session, seq));
        push(&mut w.raw, &tell(session, seq));
        w.still_answers(i as u64);
    }
    let s = w.server.stats();
    // MAX is a number no sender reaches (it would leave no next one):
    // both frames rejected. The others: the second is a duplicate, and a
    // session's first frame at n reports the n before it as missed.
    assert_eq!((s.rejected, s.duplicates), (2, 3), "{s:?}");
    assert_eq!(s.missed, u64::MAX, "1 + (MAX-1): {s:?}");
    // the session at MAX-1 expects MAX next, which is rejected; earlier
    // numbers stay duplicates (the check does not start over)
    push(&mut w.raw, &tell(102, 0));
    push(&mut w.raw, &tell(102, u64::MAX));
    w.still_answers(9);
    let s = w.server.stats();
    assert_eq!((s.rejected, s.duplicates), (3, 4), "{s:?}");
    // a jump inside a live session saturates the count, never wraps it
    push(&mut w.raw, &tell(200, 0));
    push(&mut w.raw, &tell(200, u64::MAX - 1));
    w.still_answers(10);
    let s = w.server.stats();
    assert_eq!(s.missed, u64::MAX, "saturated: {s:?}");
    let gaps: Vec<(u64, u64)> = w
        .server
        .gaps()
        .iter()
        .map(|g| (g.session, g.missed))
        .collect();
    assert_eq!(
        gaps,
        [(101, 1), (102, u64::MAX - 1), (200, u64::MAX - 2)],
        "each gap as its frames say"
    );
    assert_eq!(added(&w.server.stats()).1, 0, "no panic caught");
    w.finish();
}

/// Session ids at their extremes: each a session of its own.
#[test]
fn session_ids_at_their_extremes() {
    let mut w = world(Loopback::new(4096), NodeConfig::default());
    for &session in &EXTREMES {
        for _ in 0..2 {
            push(
                &mut w.raw,
                &forge(Kind::Tell, 0, 1, 0, session, 0, &Seq(session % 7)),
            );
        }
    }
    w.still_answers(1);
    let s = w.server.stats();
    assert_eq!(
        (s.duplicates, s.missed, s.rejected, s.refused),
        (4, 0, 0, 0),
        "{s:?}"
    );
    w.finish();
}

/// Correlation ids at their extremes: an ask's comes back on its reply;
/// replies and errors nobody waits for are dropped.
#[test]
fn correlation_ids_at_their_extremes() {
    let net = Loopback::new(4096);
    let mut w = world(net.clone(), NodeConfig::default());
    let mut f = forger(&net, &mut w, 9);
    for &c in &EXTREMES {
        f.send(&mut w.raw, Kind::Ask, 0, 1, c, &Seq(21));
        let (h, body) = f.answer();
        assert_eq!((h.kind, h.correlation), (Kind::Reply, c));
        assert_eq!(postcard::from_bytes::<u64>(&body).unwrap(), 42);
        f.send(&mut w.raw, Kind::Reply, 0, 0, c, &7u64);
        f.send(&mut w.raw, Kind::Error, 0, 0, c, &Refused::Dropped);
        f.send(&mut w.raw, Kind::Welcome, 0, 0, c, &());
    }
    w.still_answers(2);
    let s = w.server.stats();
    assert_eq!(
        (s.rejected, s.refused, s.duplicates, s.missed),
        (0, 0, 0, 0),
        "{s:?}"
    );
    w.finish();
}

/// Export slots at their extremes: slot 0 is the counter, the others
/// name nothing and are refused, to the asker too.
#[test]
fn targets_at_their_extremes() {
    let net = Loopback::new(4096);
    let mut w = world(net.clone(), NodeConfig::default());
    let mut f = forger(&net, &mut w, 9);
    for &target in &EXTREMES_32 {
        f.send(&mut w.raw, Kind::Ask, target, 1, 50, &Seq(1));
        let (h, body) = f.answer();
        if target == 0 {
            assert_eq!(h.kind, Kind::Reply);
        } else {
            assert_eq!(h.kind, Kind::Error);
            assert_eq!(refusal(&body), Refused::UnknownTarget(target));
        }
        f.send(&mut w.raw, Kind::Tell, target, 1, 0, &Seq(1));
        // a hello for that slot: the counter, or no such export
        f.send(&mut w.raw, Kind::Hello, target, 0, 51, &hello("forger"));
        let (h, body) = f.answer();
        if target == 0 {
            assert_eq!(h.kind, Kind::Welcome);
        } else {
            assert_eq!(refusal(&body), Refused::NoSuchExport("counter".into()));
        }
    }
    w.still_answers(3);
    assert_eq!(w.server.stats().refused, 6, "three asks, three tells");
    w.finish();
}

/// Wire ids at their extremes: 1 is `Seq`, 0 and the top two are no
/// message of the counter's.
#[test]
fn wire_ids_at_their_extremes() {
    let net = Loopback::new(4096);
    let mut w = world(net.clone(), NodeConfig::default());
    let mut f = forger(&net, &mut w, 9);
    for &wire_id in &EXTREMES_32 {
        f.send(&mut w.raw, Kind::Ask, 0, wire_id, 60, &Seq(4));
        let (h, body) = f.answer();
        if wire_id == 1 {
            assert_eq!(
                (h.kind, postcard::from_bytes::<u64>(&body).unwrap()),
                (Kind::Reply, 8)
            );
        } else {
            assert_eq!(refusal(&body), Refused::UnknownMessage(wire_id));
        }
    }
    w.still_answers(4);
    w.finish();
}

/// Declared body lengths at their extremes, with bodies that match and
/// bodies that do not: a mismatch is a rejected frame, never a slice out
/// of bounds.
#[test]
fn body_lengths_at_their_extremes() {
    let mut w = world(Loopback::new(4096), NodeConfig::default());
    let mut seq = 0;
    let mut rejected = 0;
    for &declared in &EXTREMES_32 {
        for actual in [0usize, 1, 2] {
            let mut bytes = forge(Kind::Tell, 0, 2, 0, 300, seq, &Report);
            bytes.resize(frame::HEADER_LEN + actual, 0);
            bytes[12..16].copy_from_slice(&declared.to_le_bytes());
            push(&mut w.raw, &bytes);
            if declared as usize == actual {
                seq += 1;
            } else {
                rejected += 1;
            }
        }
    }
    w.still_answers(5);
    let s = w.server.stats();
    // body 0 is a `Report`; body [0] is a `Report` and a byte left over
    assert_eq!(
        (s.rejected, s.missed, s.duplicates),
        (rejected, 0, 0),
        "{s:?}"
    );
    assert_eq!(s.refused, 1, "{s:?}");
    assert_eq!(added(&s).2, 1, "{s:?}");
    w.finish();
}

/// The count of frames a hello says its previous session sent, at its
/// extremes, against a session that delivered two: the gap is what was
/// sent less what arrived, never below zero, never wrapped.
#[test]
fn previous_session_counts_at_their_extremes() {
    let net = Loopback::new(4096);
    let mut w = world(net.clone(), NodeConfig::default());
    let mut f = forger(&net, &mut w, 9);
    for (i, &sent) in EXTREMES.iter().enumerate() {
        let old = 400 + i as u64;
        push(&mut w.raw, &forge(Kind::Tell, 0, 2, 0, old, 0, &Report));
        push(&mut w.raw, &forge(Kind::Tell, 0, 2, 0, old, 1, &Report));
        let h = Hello {
            previous: Some((old, sent)),
            ..hello("forger")
        };
        f.send(&mut w.raw, Kind::Hello, 0, 0, 70, &h);
        assert_eq!(f.answer().0.kind, Kind::Welcome);
    }
    // and a previous session that never existed, at the extremes too
    for &old in &EXTREMES {
        let h = Hello {
            previous: Some((old, u64::MAX)),
            ..hello("forger")
        };
        f.send(&mut w.raw, Kind::Hello, 0, 0, 71, &h);
        assert_eq!(f.answer().0.kind, Kind::Welcome);
    }
    w.still_answers(6);
    let gaps: Vec<(u64, u64, bool)> = w
        .server
        .gaps()
        .iter()
        .map(|g| (g.session, g.missed, g.reconnected))
        .collect();
    assert_eq!(gaps, [(402, u64::MAX - 3, true), (403, u64::MAX - 2, true)]);
    assert_eq!(w.server.stats().missed, u64::MAX, "saturated, not wrapped");
    w.finish();
}

/// A panic while one frame is handled on the receiving thread (here an
/// export's feed, which runs there) is caught and counted; the frame is
/// dropped and the thread reads on. Before, the thread ended, and the
/// node never read another frame.
#[test]
fn a_panic_on_the_receiving_thread_is_caught_and_counted() {
    let mut w = world(Loopback::new(4096), NodeConfig::default());
    w.server
        .export_with(
            "fragile",
            &w.system.spawn(Other).start(),
            Export::new().fed_by(|_| panic!("a feed that panics (expected by the test)")),
        )
        .unwrap();
    for seq in 0..3 {
        push(&mut w.raw, &forge(Kind::Tell, 1, 1, 0, 500, seq, &Seq(1)));
    }
    w.still_answers(7);
    let s = w.server.stats();
    assert_eq!(added(&s).1, 3, "{s:?}");
    w.finish();
}

// ---------------------------------------------------------------------
// Row 5b: a body with bytes left after its message.
// ---------------------------------------------------------------------

/// A frame carrying a valid `Seq` and then a MiB of garbage: refused (to
/// the asker too) and counted, never delivered. Before, it was decoded as
/// the `Seq` and the rest ignored.
#[test]
fn a_body_with_bytes_after_its_message_is_refused_and_counted() {
    let net = Loopback::with_max_frame(64, 2 << 20);
    let mut w = world(net.clone(), NodeConfig::default());
    let mut f = forger(&net, &mut w, 9);
    let mut body = postcard::to_stdvec(&Seq(33)).unwrap();
    body.resize(body.len() + (1 << 20), 0xAB);
    f.send_bytes(&mut w.raw, Kind::Ask, 0, 1, 80, &body);
    let (h, reply) = f.answer();
    assert_eq!((h.kind, h.correlation), (Kind::Error, 80));
    assert!(
        matches!(refusal(&reply), Refused::Decode(_)),
        "{:?}",
        refusal(&reply)
    );
    f.send_bytes(&mut w.raw, Kind::Tell, 0, 1, 0, &body);
    // a hello with a byte after it: not a hello
    let mut h = postcard::to_stdvec(&hello("forger")).unwrap();
    h.push(0);
    f.send_bytes(&mut w.raw, Kind::Hello, 0, 0, 81, &h);
    // a goodbye with a body: not a goodbye (the session stays)
    f.send(&mut w.raw, Kind::Bye, 0, 0, 0, &1u8);
    f.send(&mut w.raw, Kind::Ask, 0, 1, 82, &Seq(1));
    assert_eq!(f.answer().0.kind, Kind::Reply, "the session is still there");
    w.still_answers(8);
    assert!(
        !w.log.lock().unwrap().contains(&33),
        "the Seq(33) was never delivered"
    );
    let s = w.server.stats();
    assert_eq!(added(&s).2, 4, "{s:?}");
    assert_eq!((s.refused, s.rejected), (2, 2), "{s:?}");
    w.finish();
}

/// The same on the asking side: a welcome or a reply with bytes after it,
/// from a forged exporting node, fails the lookup or the ask.
#[test]
fn a_reply_or_welcome_with_bytes_after_it_is_refused() {
    let net = Loopback::new(64);
    let system = System::new();
    let client = Node::new(net.clone(), "client").unwrap();
    let mut rx = net.listen("fake").unwrap();
    let record = Record {
        endpoint: "fake",
        slot: 0,
        actor: "Counter",
        schema: Counter::SCHEMA_HASH,
    };
    let _a: Announcement = net
        .announce("counter", &postcard::to_stdvec(&record).unwrap())
        .unwrap();
    // (hands its inbox back, so the client's link to it is not lost
    // before the client has read the last answer)
    let server = std::thread::spawn(move || {
        let mut back = net.connect("client", Duration::from_secs(5)).unwrap();
        let mut seq = 0;
        let mut answer = |kind: Kind, correlation: u64, body: &[u8]| {
            push(
                &mut back,
                &forge_bytes(kind, 0, 0, correlation, 5, seq, body),
            );
            seq += 1;
        };
        let mut asked = 0;
        let until = Instant::now() + Duration::from_secs(30);
        while asked < 3 && Instant::now() < until {
            for bytes in receive(&mut rx, 1, Duration::from_secs(10)) {
                let f = Frame::parse(&bytes).unwrap();
                let c = f.header.correlation;
                match (f.header.kind, asked) {
                    // the first hello: welcomed with a byte too many
                    (Kind::Hello, 0) => answer(Kind::Welcome, c, &[0]),
                    (Kind::Hello, _) => answer(Kind::Welcome, c, &[]),
                    // an ask: 42, then a byte too many
                    (Kind::Ask, _) => answer(Kind::Reply, c, &[42, 7]),
                    _ => continue,
                }
                asked += 1;
            }
        }
        rx
    });
    match client.lookup::<Counter>("counter") {
        Err(LookupError::Refused(Refused::Decode(_))) => {}
        other => panic!("expected the welcome refused, got {other:?}"),
    }
    let remote = client.lookup::<Counter>("counter").unwrap();
    assert_eq!(
        remote
            .ask(Seq(21))
            .unwrap()
            .wait_timeout(Duration::from_secs(10)),
        Err(AskError::Dropped(None))
    );
    let fake = server.join().unwrap();
    assert_eq!(added(&client.stats()).2, 2, "{:?}", client.stats());
    drop((client, fake));
    system.shutdown();
}
