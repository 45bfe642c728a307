//! No send lost without a report (#27, row 6), over the loopback: what a
//! receiver handled is acknowledged to its sender, and when the link is
//! lost the sender reports the rest, exactly: for every lost link,
//! `sent = acknowledged + unacknowledged` and
//! `unacknowledged = dead_lettered + not_retained`, where `sent` is what
//! the test itself counted (the hello and every send that returned `Ok`)
//! and `acknowledged` never exceeds what the receiver really handled.

mod common;

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::{Counter, Seq};
use kaspar::prelude::*;
use kaspar::{DeadLetter, DeadLetterReason, System};
use kaspar_remote::frame::{self, Frame, Header, Kind};
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{
    LinkLoss, LinkRx, LinkTx, Node, NodeConfig, RemoteAddr, Retain, RetainedSend, Transport,
};
use serde::Serialize;

const PATIENCE: Duration = Duration::from_secs(10);

fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < until, "never: {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

/// The dead letters collected: reason, message number, lost peer.
type Collected = Arc<Mutex<Vec<(DeadLetterReason, u64, String)>>>;

/// What dead letters a system got: the message numbers, in order, and the
/// peer each names.
#[actor]
struct Letters {
    got: Collected,
}

#[actor]
impl Letters {
    #[handler(DeadLetter)]
    fn on_letter(&mut self, mut l: DeadLetter, _ctx: &mut Ctx<Self>) {
        let sent = l
            .message
            .take()
            .and_then(|m| m.downcast::<RetainedSend>().ok())
            .expect("a retained send");
        let seq = sent.decode::<Seq>().expect("a Seq").0;
        assert!(l.class.ends_with("Seq"), "{}", l.class);
        self.got
            .lock()
            .unwrap()
            .push((l.reason, seq, sent.peer().to_owned()));
    }
}

/// A server exporting a `Counter`, a client that looked it up, and the
/// client system's dead letters, collected.
struct World {
    net: Loopback,
    system: System,
    log: Arc<Mutex<Vec<u64>>>,
    letters: Collected,
    server: Node<Loopback>,
    client: Node<Loopback>,
    book: RemoteAddr<Counter>,
}

fn world(retain: Option<usize>) -> World {
    let net = Loopback::new(1 << 16);
    let system = System::new();
    let letters = Arc::new(Mutex::new(Vec::new()));
    let sub = system
        .spawn(Letters {
            got: letters.clone(),
        })
        .start();
    system.dead_letters().subscribe(&sub);
    let (counter, log) = Counter::new();
    let server = Node::new(net.clone(), "book-process").unwrap();
    server
        .export("book", &system.spawn(counter).start())
        .unwrap();
    let config = NodeConfig {
        retain: retain.map(|n| Retain::new(n, system.dead_letters())),
        ..NodeConfig::default()
    };
    let client = Node::with_config(net.clone(), "feed-process", config).unwrap();
    let book = client.lookup::<Counter>("book").unwrap();
    World {
        net,
        system,
        log,
        letters,
        server,
        client,
        book,
    }
}

impl World {
    fn handled(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// Sends `range` as tells, each `Ok`.
    fn tell(&self, range: std::ops::Range<u64>) {
        for i in range {
            self.book.send(Seq(i)).unwrap();
        }
    }

    /// Kills the server and waits for the client's report of the loss.
    fn kill(&self) -> LinkLoss {
        self.net.kill("book-process");
        let mut losses = Vec::new();
        eventually("the loss is reported", || {
            losses = self.client.losses();
            !losses.is_empty()
        });
        assert_eq!(losses.len(), 1, "{losses:?}");
        losses.remove(0)
    }

    fn letters(&self, n: usize) -> Vec<(DeadLetterReason, u64, String)> {
        eventually("the dead letters arrive", || {
            self.letters.lock().unwrap().len() >= n
        });
        self.letters.lock().unwrap().clone()
    }

    fn finish(self) {
        drop((self.client, self.server));
        self.system.shutdown();
    }
}

/// The numbers the retained letters carry, with every letter checked to
/// name the lost peer.
fn numbers(letters: &[(DeadLetterReason, u64, String)]) -> Vec<u64> {
    for (reason, _, peer) in letters {
        assert_eq!(
            (*reason, peer.as_str()),
            (DeadLetterReason::PeerLost, "book-process")
        );
    }
    letters.iter().map(|l| l.1).collect()
}

#[test]
fn sends_a_killed_receiver_never_handled_are_reported_exactly() {
    let w = world(None);
    w.tell(0..100);
    eventually("all handled", || w.handled() == 100);
    eventually("all acknowledged", || w.book.unacknowledged() == 0);
    // A receiver that stops reading, then dies: what it never took is
    // never acknowledged.
    w.net.pause("book-process", true);
    w.tell(100..105);
    thread::sleep(Duration::from_millis(20));
    assert_eq!(w.book.unacknowledged(), 5);
    let loss = w.kill();
    assert_eq!(
        (loss.peer.as_str(), loss.sent, loss.acknowledged),
        ("book-process", 1 + 105, 1 + 100),
        "the hello and 105 sends; the hello and 100 handled"
    );
    assert_eq!(
        (loss.unacknowledged, loss.dead_lettered, loss.not_retained),
        (5, 0, 5)
    );
    let stats = w.client.stats();
    assert_eq!(
        (
            stats.peers_lost,
            stats.unacknowledged,
            stats.unacknowledged_dead_lettered,
            stats.unacknowledged_not_retained
        ),
        (1, 5, 0, 5)
    );
    assert_eq!(w.handled(), 100);
    w.finish();
}

#[test]
fn retained_sends_go_to_dead_letters_naming_the_lost_peer() {
    let w = world(Some(8));
    w.tell(0..3);
    eventually("all acknowledged", || w.book.unacknowledged() == 0);
    w.net.pause("book-process", true);
    w.tell(3..8);
    let loss = w.kill();
    assert_eq!(
        (loss.sent, loss.acknowledged, loss.unacknowledged),
        (9, 4, 5)
    );
    assert_eq!((loss.dead_lettered, loss.not_retained), (5, 0));
    assert_eq!(numbers(&w.letters(5)), [3, 4, 5, 6, 7]);
    assert_eq!(w.system.dead_letters().counts().peer_lost, 5);
    w.finish();
}

#[test]
fn a_retain_buffer_smaller_than_the_backlog_keeps_the_newest_and_counts_the_rest() {
    let w = world(Some(2));
    w.tell(0..10);
    eventually("all acknowledged", || w.book.unacknowledged() == 0);
    w.net.pause("book-process", true);
    w.tell(10..16);
    let loss = w.kill();
    assert_eq!(
        (loss.sent, loss.acknowledged, loss.unacknowledged),
        (17, 11, 6)
    );
    assert_eq!((loss.dead_lettered, loss.not_retained), (2, 4));
    assert_eq!(numbers(&w.letters(2)), [14, 15]);
    thread::sleep(Duration::from_millis(20));
    assert_eq!(w.letters.lock().unwrap().len(), 2, "no more than held");
    w.finish();
}

#[test]
fn a_stream_cut_at_any_moment_adds_up_exactly() {
    for round in 0..12u64 {
        let w = world(Some(1 << 20));
        let book = w.book.clone();
        let sender = thread::spawn(move || {
            let mut ok = 0u64;
            loop {
                match book.send(Seq(ok)) {
                    Ok(()) => ok += 1,
                    Err(SendError::Full { .. }) => thread::yield_now(),
                    Err(_) => return ok,
                }
            }
        });
        // Cut after a different moment each round, from at once to 22 ms.
        thread::sleep(Duration::from_micros(round * round * 150));
        let loss = w.kill();
        let ok = sender.join().unwrap();
        assert_eq!(loss.sent, 1 + ok, "round {round}: the hello and each Ok");
        assert_eq!(loss.sent, loss.acknowledged + loss.unacknowledged);
        assert_eq!(loss.unacknowledged, loss.dead_lettered + loss.not_retained);
        // Never more acknowledged than handled: delivered (in order, each
        // once) or refused and counted (a mailbox full past the inbound
        // wait). An acknowledged message may still be queued for the
        // counter's thread: wait for the counts to reach it (a fixed 5 ms
        // failed once with 0 handled of 2,561 acknowledged, the machine
        // busy with a full test run and a browser).
        eventually("what was acknowledged is handled or refused", || {
            1 + w.handled() as u64 + w.server.stats().refused >= loss.acknowledged
        });
        let log = w.log.lock().unwrap().clone();
        assert!(log.windows(2).all(|p| p[0] < p[1]), "round {round}");
        let refused = w.server.stats().refused;
        assert!(
            loss.acknowledged <= 1 + log.len() as u64 + refused,
            "round {round}: {loss:?}, {} handled, {refused} refused",
            log.len()
        );
        // The retained ones are exactly the messages after the last one
        // acknowledged (only the hello can be unacknowledged and not
        // held).
        let first = loss.acknowledged.max(1) - 1;
        let held = numbers(&w.letters(loss.dead_lettered as usize));
        assert!(
            held.iter().copied().eq(first..ok),
            "round {round}: {loss:?}"
        );
        assert_eq!(loss.not_retained, u64::from(loss.acknowledged == 0));
        w.finish();
    }
}

/// A hello's body as a node writes it (postcard, the crate's field order).
#[derive(Serialize)]
struct Hello<'a> {
    from: &'a str,
    export: &'a str,
    actor: &'a str,
    schema: u64,
    previous: Option<(u64, u64)>,
}

/// A raw sender (session `session`, inbox "raw") that said hello with
/// `wire_id` in the hello's header, and sent three tells: the frames the
/// server sends back within 50 ms.
fn raw_session(wire_id: u32, session: u64) -> Vec<(Header, Vec<u8>)> {
    let w = world(None);
    let mut rx = w.net.listen("raw").unwrap();
    let mut tx = w.net.connect("book-process", PATIENCE).unwrap();
    let hello = Hello {
        from: "raw",
        export: "book",
        actor: "Counter",
        schema: <Counter as kaspar_remote::RemoteActor>::SCHEMA_HASH,
        previous: None,
    };
    let mut seq = 0;
    let mut push = |kind, wire, body: &dyn erased::Body| {
        let h = Header {
            kind,
            target: 0,
            wire_id: wire,
            body_len: 0,
            correlation: 7,
            session,
            seq,
        };
        seq += 1;
        let bytes = body.frame(&h);
        tx.send_frame(bytes.len(), &mut |b| b.copy_from_slice(&bytes))
            .unwrap();
    };
    push(Kind::Hello, wire_id, &hello);
    for i in 0..3u64 {
        push(Kind::Tell, 1, &Seq(i));
    }
    eventually("the tells are handled", || w.handled() == 3);
    let mut got = Vec::new();
    let until = Instant::now() + Duration::from_millis(50);
    while Instant::now() < until {
        rx.poll(64, &mut |b| {
            let f = Frame::parse(b).unwrap();
            got.push((f.header, f.body.to_vec()));
        })
        .unwrap();
        thread::sleep(Duration::from_millis(1));
    }
    drop((rx, tx));
    w.finish();
    got
}

mod erased {
    use super::*;
    /// A body of any serializable type, framed.
    pub trait Body {
        fn frame(&self, h: &Header) -> Vec<u8>;
    }
    impl<T: Serialize> Body for T {
        fn frame(&self, h: &Header) -> Vec<u8> {
            frame::to_vec(h, self).unwrap()
        }
    }
}

#[test]
fn a_sender_that_reads_acks_gets_them_and_an_older_one_gets_none() {
    let session = 0x5e55_1011;
    let got = raw_session(1, session);
    assert_eq!(got[0].0.kind, Kind::Welcome, "{got:?}");
    let acks: Vec<u64> = got
        .iter()
        .filter(|(h, _)| h.kind == Kind::Ack)
        .map(|(h, body)| {
            assert_eq!(h.correlation, session, "names the acknowledged session");
            postcard::from_bytes(body).unwrap()
        })
        .collect();
    assert_eq!(acks.last(), Some(&4), "the hello and three tells: {acks:?}");
    assert!(acks.windows(2).all(|w| w[0] < w[1]), "{acks:?}");

    // A hello without the bit: the way an older build says hello.
    let got = raw_session(0, session);
    assert_eq!(got.len(), 1, "a welcome and no acks: {got:?}");
    assert_eq!(got[0].0.kind, Kind::Welcome);
}

#[test]
fn two_nodes_that_look_each_other_up_do_not_trade_acks_forever() {
    let w = world(None);
    let (counter, log) = Counter::new();
    w.client
        .export("back", &w.system.spawn(counter).start())
        .unwrap();
    let back = w.server.lookup::<Counter>("back").unwrap();
    for i in 0..10 {
        w.book.send(Seq(i)).unwrap();
        back.send(Seq(i)).unwrap();
    }
    eventually("both handled", || {
        w.handled() == 10 && log.lock().unwrap().len() == 10
    });
    // Each side's acks of the other's tells, and of the acks those
    // prompted, settle within a few ticks: an ack that is the only news
    // on its session prompts none. So the frame counts come to rest: two
    // looks 50 ms apart agree. Acks traded forever never let them (the
    // test then fails at `PATIENCE`); a slow machine only takes longer to
    // settle, where a fixed wait before one pair of looks could fail it.
    let frames = || (w.client.stats().frames_in, w.server.stats().frames_in);
    let mut before = frames();
    eventually("the idle links' frame counts come to rest", || {
        thread::sleep(Duration::from_millis(50));
        let now = frames();
        std::mem::replace(&mut before, now) == now
    });
    drop(back);
    w.finish();
}

#[test]
fn a_link_closed_in_order_reports_no_loss() {
    let w = world(Some(4));
    w.tell(0..10);
    eventually("all handled", || w.handled() == 10);
    let (client, server) = (w.client, w.server);
    drop(client);
    drop(server);
    thread::sleep(Duration::from_millis(10));
    assert!(w.letters.lock().unwrap().is_empty());
    w.system.shutdown();
}
