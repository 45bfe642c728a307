//! The remote layer's semantics over the in-process loopback transport:
//! ordering, back-pressure, lookups, lost peers, reconnects, drop-oldest.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use kaspar::prelude::*;
use kaspar::{AskError, ExitReason};
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{
    ActorRef, Export, Gap, LookupError, Node, NodeConfig, PolicyError, RemoteAddr, SendPolicy,
};

struct World {
    net: Loopback,
    system: System,
    counter: Addr<Counter>,
    log: Arc<Mutex<Vec<u64>>>,
    server: Node<Loopback>,
    client: Node<Loopback>,
}

fn world(capacity: usize, export: Export) -> World {
    let net = Loopback::new(capacity);
    let system = System::new();
    let (c, log) = Counter::new();
    let counter = system.spawn(c).start();
    let server = Node::new(net.clone(), "server").unwrap();
    server.export_with("counter", &counter, export).unwrap();
    let client = Node::new(net.clone(), "client").unwrap();
    World {
        net,
        system,
        counter,
        log,
        server,
        client,
    }
}

impl World {
    fn remote(&self) -> RemoteAddr<Counter> {
        self.client.lookup::<Counter>("counter").unwrap()
    }

    fn finish(self) {
        drop(self.client);
        drop(self.server);
        self.system.shutdown();
    }
}

#[test]
fn a_hundred_thousand_tells_arrive_in_order_each_once() {
    let w = world(256, Export::new());
    let remote = w
        .remote()
        .with_policy(SendPolicy::Wait(Duration::from_secs(5)))
        .unwrap();
    for i in 0..100_000 {
        remote.send(Seq(i)).unwrap();
    }
    // an ask from the same sender comes after every tell before it
    let tally = remote.ask(Report).unwrap().wait().unwrap();
    assert_eq!(
        tally,
        Tally {
            seen: 100_000,
            out_of_order: 0,
            last: Some(99_999)
        }
    );
    let log = w.log.lock().unwrap().clone();
    assert!(log.iter().copied().eq(0..100_000));
    let stats = w.server.stats();
    assert_eq!((stats.missed, stats.duplicates, stats.refused), (0, 0, 0));
    w.finish();
}

#[test]
fn a_stalled_receiver_gives_full_after_exactly_its_capacity() {
    let w = world(8, Export::new());
    let remote = w.remote();
    assert!(w.net.pause("server", true));
    for i in 0..8 {
        remote.send(Seq(i)).unwrap();
    }
    match remote.send(Seq(8)) {
        Err(SendError::Full { msg: Seq(8), .. }) => {}
        other => panic!("expected Full with the message back, got {other:?}"),
    }
    // waiting a bounded time does not help a receiver that stays stalled
    let patient = remote
        .with_policy(SendPolicy::Wait(Duration::from_millis(20)))
        .unwrap();
    assert!(matches!(
        patient.send(Seq(8)),
        Err(SendError::Full { msg: Seq(8), .. })
    ));
    assert!(matches!(
        patient.ask(Seq(8)),
        Err(SendError::Full { msg: Seq(8), .. })
    ));
    assert_eq!(
        w.client.stats().pending,
        0,
        "a refused ask leaves nothing pending"
    );
    // resumed, the eight arrive and the ninth goes through
    w.net.pause("server", false);
    assert_eq!(patient.ask(Seq(8)).unwrap().wait().unwrap(), 16);
    assert_eq!(*w.log.lock().unwrap(), (0..9).collect::<Vec<_>>());
    w.finish();
}

#[test]
fn lookups_check_the_actor_type_and_its_schema() {
    let w = world(16, Export::new());
    match w.client.lookup::<Other>("counter") {
        Err(LookupError::WrongActor { expected, found }) => {
            assert_eq!((expected, found.as_str()), ("Other", "Counter"));
        }
        other => panic!("expected WrongActor, got {other:?}"),
    }
    // same name, other handlers: another build of the actor
    match w.client.lookup::<CounterV2>("counter") {
        Err(LookupError::SchemaMismatch {
            actor,
            expected,
            found,
        }) => {
            use kaspar_remote::RemoteActor;
            assert_eq!(actor, "Counter");
            assert_eq!(expected, CounterV2::SCHEMA_HASH);
            assert_eq!(found, Counter::SCHEMA_HASH);
        }
        other => panic!("expected SchemaMismatch, got {other:?}"),
    }
    assert!(matches!(
        w.client.lookup::<Counter>("nobody"),
        Err(LookupError::NotFound(n)) if n == "nobody"
    ));
    // nothing garbled reached the actor
    assert_eq!(w.server.stats().frames_in, 0);
    w.finish();
}

#[test]
fn a_lost_peer_fails_pending_asks_and_tells_watchers() {
    let w = world(16, Export::new());
    let remote = w.remote();
    let terminated = Arc::new(Mutex::new(Vec::new()));
    let replies = Arc::new(Mutex::new(Vec::new()));
    let inbox = w
        .system
        .spawn(Inbox {
            terminated: terminated.clone(),
            replies,
        })
        .start();
    remote.watch(&inbox);
    w.net.pause("server", true);
    let mut pending = remote.ask(Seq(1)).unwrap();
    assert_eq!(w.client.stats().pending, 1);
    w.net.kill("server");
    assert_eq!(
        pending.wait_timeout(Duration::from_secs(5)),
        Err(AskError::PeerLost)
    );
    assert!(eventually(Duration::from_secs(5), || {
        terminated.lock().unwrap().len() == 1
    }));
    let t = terminated.lock().unwrap()[0].clone();
    assert_eq!(t.reason, ExitReason::PeerLost);
    assert_eq!(t.target, remote.target());
    assert_eq!(t.target.instance.as_deref(), Some("counter"));
    assert!(remote.is_lost());
    assert!(matches!(
        remote.send(Seq(2)),
        Err(SendError::Closed { msg: Seq(2), .. })
    ));
    // a watcher that comes late hears at once
    remote.watch(&inbox);
    assert!(eventually(Duration::from_secs(5), || {
        terminated.lock().unwrap().len() == 2
    }));
    assert_eq!(w.client.stats().peers_lost, 1);
    assert_eq!(w.client.stats().pending, 0);
    w.finish();
}

#[test]
fn a_reconnect_starts_a_new_session_and_reports_the_gap() {
    let w = world(16, Export::new());
    let remote = w.remote();
    let terminated = Arc::new(Mutex::new(Vec::new()));
    let inbox = w
        .system
        .spawn(Inbox {
            terminated: terminated.clone(),
            replies: Arc::new(Mutex::new(Vec::new())),
        })
        .start();
    remote.watch(&inbox);
    assert_eq!(remote.ask(Seq(0)).unwrap().wait().unwrap(), 0);
    w.net.pause("server", true);
    for i in 1..=5 {
        remote.send(Seq(i)).unwrap();
    }
    // the connection breaks with five frames in flight
    assert_eq!(w.net.sever("server"), 5);
    w.net.pause("server", false);
    assert!(matches!(
        remote.send(Seq(6)),
        Err(SendError::Closed { msg: Seq(6), .. })
    ));
    assert!(w.server.gaps().is_empty());

    let again = w.remote();
    assert_eq!(again.ask(Seq(6)).unwrap().wait().unwrap(), 12);
    let gaps = w.server.gaps();
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    let Gap {
        peer,
        missed,
        reconnected,
        ..
    } = gaps[0].clone();
    assert_eq!(
        (peer.as_deref(), missed, reconnected),
        (Some("client"), 5, true)
    );
    assert_eq!(w.server.stats().missed, 5);
    // at most once: the lost five are not redelivered
    assert_eq!(*w.log.lock().unwrap(), vec![0, 6]);
    // the old link's loss was reported once, whether the bridge's check or
    // the reconnect found it first
    assert!(eventually(Duration::from_secs(5), || {
        terminated.lock().unwrap().len() == 1
    }));
    assert_eq!(w.client.stats().peers_lost, 1);
    assert!(!again.is_lost() && remote.is_lost());
    w.finish();
}

#[test]
fn drop_oldest_keeps_the_newest_frames_and_reports_the_rest_as_a_gap() {
    let w = world(4, Export::new());
    let remote = w.remote().with_policy(SendPolicy::DropOldest).unwrap();
    assert_eq!(remote.policy(), SendPolicy::DropOldest);
    w.net.pause("server", true);
    for i in 0..10 {
        remote.send(Seq(i)).unwrap();
    }
    assert_eq!(w.net.queued("server"), 4);
    w.net.pause("server", false);
    // (asked without drop-oldest: with it, the ask could itself push out
    // the oldest of the four while the ring is still full)
    let patient = remote
        .with_policy(SendPolicy::Wait(Duration::from_secs(5)))
        .unwrap();
    let tally = patient.ask(Report).unwrap().wait().unwrap();
    assert_eq!(tally.seen, 4);
    assert_eq!(*w.log.lock().unwrap(), vec![6, 7, 8, 9]);
    let gaps = w.server.gaps();
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert_eq!((gaps[0].missed, gaps[0].reconnected), (6, false));
    w.finish();
}

#[test]
fn an_ask_whose_handler_panics_fails_with_panicked_and_the_actor_serves_on() {
    for export in [Export::new(), Export::new().fast_send()] {
        let w = world(16, export);
        let remote = w.remote();
        assert_eq!(
            remote
                .ask(Boom)
                .unwrap()
                .wait_timeout(Duration::from_secs(5)),
            Err(AskError::Panicked(None))
        );
        assert_eq!(remote.ask(Seq(0)).unwrap().wait().unwrap(), 0);
        w.finish();
    }
}

#[test]
fn a_request_delivers_the_reply_to_a_local_actor() {
    let w = world(16, Export::new());
    let remote = w.remote();
    let replies = Arc::new(Mutex::new(Vec::new()));
    let inbox = w
        .system
        .spawn(Inbox {
            terminated: Arc::new(Mutex::new(Vec::new())),
            replies: replies.clone(),
        })
        .start();
    for i in 0..3 {
        remote.request(Seq(i), &inbox).unwrap();
    }
    assert!(eventually(Duration::from_secs(5), || {
        replies.lock().unwrap().len() == 3
    }));
    assert_eq!(*replies.lock().unwrap(), vec![0, 2, 4]);
    w.finish();
}

#[test]
fn an_actor_ref_works_both_ways_and_names_the_fallback() {
    let w = world(16, Export::new());
    let local: ActorRef<Counter> = w.counter.clone().into();
    let remote: ActorRef<Counter> = w.remote().into();
    assert!(local.is_local() && !remote.is_local());
    assert_eq!(local.fast_send_or_send(Seq(0)).unwrap(), Delivered::Inline);
    assert_eq!(remote.fast_send_or_send(Seq(1)).unwrap(), Delivered::Queued);
    local.send(Seq(2)).unwrap();
    remote.send(Seq(3)).unwrap();
    assert_eq!(local.ask(Seq(4)).unwrap().wait().unwrap(), 8);
    assert_eq!(remote.ask(Seq(5)).unwrap().wait().unwrap(), 10);
    // each sender's messages in its order; the two senders interleave
    assert_eq!(remote.ask(Report).unwrap().wait().unwrap().seen, 6);
    let log = w.log.lock().unwrap().clone();
    let from = |mine: &[u64]| {
        log.iter()
            .copied()
            .filter(|n| mine.contains(n))
            .collect::<Vec<_>>()
    };
    assert_eq!(from(&[0, 2, 4]), vec![0, 2, 4]);
    assert_eq!(from(&[1, 3, 5]), vec![1, 3, 5]);
    w.finish();
}

#[test]
fn frames_that_are_not_frames_are_counted_and_harm_nothing() {
    use kaspar_remote::{LinkTx, Transport};
    let w = world(16, Export::new());
    let remote = w.remote();
    let mut raw = w.net.connect("server", Duration::from_secs(1)).unwrap();
    let junk: [&[u8]; 3] = [b"", b"not a frame at all", &[0x4b, 0x52, 1, 9, 0, 0, 0, 0]];
    for bytes in junk {
        raw.send_frame(bytes.len(), &mut |buf| buf.copy_from_slice(bytes))
            .unwrap();
    }
    assert_eq!(remote.ask(Seq(0)).unwrap().wait().unwrap(), 0);
    assert_eq!(w.server.stats().rejected, 3);
    w.finish();
}

#[test]
fn a_withdrawn_export_refuses_and_a_dropped_node_fails_its_asks() {
    let w = world(16, Export::new());
    let remote = w.remote();
    assert!(w.server.withdraw("counter"));
    assert!(!w.server.withdraw("counter"));
    assert_eq!(
        remote
            .ask(Seq(1))
            .unwrap()
            .wait_timeout(Duration::from_secs(5)),
        Err(AskError::Dropped(None))
    );
    assert!(matches!(
        w.client.lookup::<Counter>("counter"),
        Err(LookupError::NotFound(_))
    ));

    // an ask still waiting when its node goes fails, it does not hang
    w.server.export("counter-2", &w.counter).unwrap();
    let remote = w.client.lookup::<Counter>("counter-2").unwrap();
    w.net.pause("server", true);
    let mut pending = remote.ask(Seq(2)).unwrap();
    let World {
        client,
        server,
        system,
        ..
    } = w;
    drop(client);
    assert_eq!(
        pending.wait_timeout(Duration::from_secs(5)),
        Err(AskError::PeerLost)
    );
    drop(server);
    system.shutdown();
}

#[test]
fn drop_oldest_is_refused_where_the_engine_cannot_take_a_frame_back() {
    let net = NoTakeBack(Loopback::new(4));
    let system = System::new();
    let (c, _) = Counter::new();
    let server = Node::new(net.clone(), "server").unwrap();
    server.export("counter", &system.spawn(c).start()).unwrap();
    let client = Node::new(net, "client").unwrap();
    let remote = client.lookup::<Counter>("counter").unwrap();
    assert_eq!(
        remote.with_policy(SendPolicy::DropOldest).unwrap_err(),
        PolicyError::DropOldestUnsupported
    );
    assert!(remote.with_policy(SendPolicy::Wait(Duration::ZERO)).is_ok());
    drop((client, server));
    system.shutdown();
}

#[test]
fn replies_expire_after_the_reply_timeout() {
    let net = Loopback::new(16);
    let system = System::new();
    let (c, _) = Counter::new();
    let server = Node::new(net.clone(), "server").unwrap();
    server.export("counter", &system.spawn(c).start()).unwrap();
    let config = NodeConfig {
        reply_timeout: Duration::from_millis(50),
        ..NodeConfig::default()
    };
    let client = Node::with_config(net.clone(), "client", config).unwrap();
    let remote = client.lookup::<Counter>("counter").unwrap();
    net.pause("server", true);
    let mut pending = remote.ask(Seq(1)).unwrap();
    // the ask fails by itself; the caller's own wait is far longer
    assert_eq!(
        pending.wait_timeout(Duration::from_secs(10)),
        Err(AskError::PeerLost)
    );
    assert_eq!(client.stats().pending, 0);
    drop((client, server));
    system.shutdown();
}

/// A loopback whose links cannot take back a frame (as Aeron's cannot):
/// only the seam's required methods are forwarded.
#[derive(Clone)]
struct NoTakeBack(Loopback);

struct PlainTx(kaspar_remote::loopback::LoopbackTx);

impl kaspar_remote::LinkTx for PlainTx {
    fn send_frame(
        &mut self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), kaspar_remote::LinkError> {
        self.0.send_frame(len, fill)
    }
    fn max_frame_len(&self) -> usize {
        self.0.max_frame_len()
    }
    fn peer(&self) -> kaspar_remote::PeerState {
        self.0.peer()
    }
}

impl kaspar_remote::Transport for NoTakeBack {
    type Tx = PlainTx;
    type Rx = kaspar_remote::loopback::LoopbackRx;
    fn listen(&self, endpoint: &str) -> Result<Self::Rx, kaspar_remote::LinkError> {
        self.0.listen(endpoint)
    }
    fn connect(&self, endpoint: &str, t: Duration) -> Result<PlainTx, kaspar_remote::LinkError> {
        self.0.connect(endpoint, t).map(PlainTx)
    }
    fn announce(
        &self,
        name: &str,
        record: &[u8],
    ) -> Result<kaspar_remote::link::Announcement, kaspar_remote::LinkError> {
        self.0.announce(name, record)
    }
    fn discover(&self, name: &str) -> Result<Option<Vec<u8>>, kaspar_remote::LinkError> {
        self.0.discover(name)
    }
    fn liveness_timeout(&self) -> Duration {
        self.0.liveness_timeout()
    }
}

#[test]
fn the_exporting_node_checks_the_hello_against_its_export() {
    use kaspar_remote::{Refused, Transport};
    // A record as an exporting node announces it (postcard, field order as
    // in the crate), here forged to claim what the slot does not hold.
    #[derive(serde::Serialize)]
    struct Record<'a> {
        endpoint: &'a str,
        slot: u32,
        actor: &'a str,
        schema: u64,
    }
    use kaspar_remote::RemoteActor;
    let w = world(16, Export::new());
    w.server
        .export("other", &w.system.spawn(Other).start())
        .unwrap();
    let forge = |name: &str, slot: u32| {
        let record = Record {
            endpoint: "server",
            slot,
            actor: "Counter",
            schema: Counter::SCHEMA_HASH,
        };
        let bytes = postcard::to_stdvec(&record).unwrap();
        w.net.announce(name, &bytes).unwrap()
    };
    // slot 1 holds an `Other`: the hello is refused, nothing garbled flows
    let _a = forge("other", 1);
    match w.client.lookup::<Counter>("other") {
        Err(LookupError::WrongActor { expected, found }) => {
            assert_eq!((expected, found.as_str()), ("Counter", "Other"));
        }
        other => panic!("expected WrongActor from the hello, got {other:?}"),
    }
    // no slot 7, and no export of that name
    let _b = forge("ghost", 7);
    assert_eq!(
        w.client.lookup::<Counter>("ghost").unwrap_err(),
        LookupError::Refused(Refused::NoSuchExport("ghost".into()))
    );
    assert_eq!(w.log.lock().unwrap().len(), 0);
    w.finish();
}

#[test]
fn addresses_and_nodes_cross_threads() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<RemoteAddr<Counter>>();
    shared::<ActorRef<Counter>>();
    shared::<Node<Loopback>>();
    shared::<kaspar_remote::RemoteInput>();
}

/// A counter whose state is not `Send` (an `Rc`): bound to its own thread.
#[actor(thread_bound)]
pub struct RcCounter {
    seen: std::rc::Rc<std::cell::Cell<u64>>,
}

#[actor(remote)]
impl RcCounter {
    #[handler(Seq)]
    fn on_seq(&mut self, s: Seq, _ctx: &mut Ctx<Self>) -> u64 {
        self.seen.set(self.seen.get() + 1);
        s.0 + self.seen.get() * 1_000
    }
}

#[test]
fn a_thread_bound_actor_exported_for_fast_send_queues_its_tells_and_asks() {
    let net = Loopback::new(64);
    let system = System::new();
    let counter = system
        .spawn_with(|| RcCounter {
            seen: Default::default(),
        })
        .start();
    let server = Node::new(net.clone(), "server").unwrap();
    server
        .export_with("rc", &counter, Export::new().fast_send())
        .unwrap();
    let client = Node::new(net.clone(), "client").unwrap();
    let remote = client.lookup::<RcCounter>("rc").unwrap();
    for i in 0..10 {
        remote.send(Seq(i)).unwrap();
    }
    // Served on the actor's own thread, after the ten tells before it: the
    // bridge's `fast_send` used to be refused (`ThreadBound`) for each.
    assert_eq!(
        remote
            .ask(Seq(7))
            .unwrap()
            .wait_timeout(Duration::from_secs(5)),
        Ok(11_007)
    );
    assert_eq!(server.stats().refused, 0);
    drop(client);
    drop(server);
    system.shutdown();
}
