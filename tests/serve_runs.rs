//! A drained batch is served in runs under one entry (`run_loop::serve`):
//! what each handler sees and what supervision hears must be what it
//! would be with an entry per message. Each test queues a batch behind a
//! gate, so that the messages reach the run loop together, and runs on
//! the actor's own thread and on the pool.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{CallChain, DeadLetter, DeadLetterReason};

const WAIT: Duration = Duration::from_secs(20);

/// Blocks the actor until the test sends on the channel, so that what is
/// sent meanwhile queues up behind it.
pub struct Gate(pub Mutex<Receiver<()>>);
pub struct First;
pub struct Second;
pub struct Look;
pub struct Add(pub u64);
pub struct Boom;
pub struct Log;

/// Each `First` and `Second` tries a `fast_send` to itself, which the
/// cycle check refuses with the call chain as it stands: the log keeps
/// the chain each handler ran under.
#[actor]
pub struct Probe {
    log: Vec<String>,
    total: u64,
}

#[actor]
impl Probe {
    #[handler(Gate)]
    fn gate(&mut self, msg: Gate, _ctx: &mut Ctx<Self>) {
        msg.0.lock().unwrap().recv().expect("test opens the gate");
    }

    #[handler(First)]
    fn first(&mut self, _msg: First, ctx: &mut Ctx<Self>) {
        self.log.push(chain_seen(ctx));
    }

    #[handler(Second)]
    fn second(&mut self, _msg: Second, ctx: &mut Ctx<Self>) {
        self.log.push(chain_seen(ctx));
    }

    #[handler(Look)]
    fn look(&mut self, _msg: Look, _ctx: &mut Ctx<Self>) {}

    #[handler(Add)]
    fn add(&mut self, msg: Add, _ctx: &mut Ctx<Self>) -> u64 {
        self.total += msg.0;
        self.total
    }

    #[handler(Boom)]
    fn boom(&mut self, _msg: Boom, _ctx: &mut Ctx<Self>) {
        self.total += 100;
        panic!("boom");
    }

    #[handler(Log)]
    fn log(&mut self, _msg: Log, _ctx: &mut Ctx<Self>) -> Vec<String> {
        std::mem::take(&mut self.log)
    }
}

fn chain_seen(ctx: &mut Ctx<Probe>) -> String {
    match ctx.myself().fast_send(Look) {
        Err(FastSendError::Cycle { chain, .. }) => frames(&chain),
        other => format!("not refused: {}", other.is_ok()),
    }
}

/// A call chain as `Actor/Message` frames, outermost first.
fn frames(chain: &CallChain) -> String {
    chain
        .frames()
        .iter()
        .map(|f| format!("{}/{}", f.actor_name(), f.class_name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs `test` with a `Probe` on its own thread, then with one on the pool.
fn on_both(test: impl Fn(&System, Addr<Probe>)) {
    for pooled in [false, true] {
        let system = System::new();
        let spawn = system.spawn(Probe {
            log: Vec::new(),
            total: 0,
        });
        let probe = if pooled {
            spawn.pooled().start()
        } else {
            spawn.start()
        };
        test(&system, probe);
        system.shutdown();
    }
}

/// Closes the actor behind a gate; returns the key that opens it.
fn close_gate(probe: &Addr<Probe>) -> Sender<()> {
    let (open, rx) = channel();
    probe.send(Gate(Mutex::new(rx))).unwrap();
    open
}

#[test]
fn each_message_of_a_batch_runs_under_its_own_frame() {
    on_both(|_, probe| {
        let open = close_gate(&probe);
        for _ in 0..3 {
            probe.send(First).unwrap();
            probe.send(Second).unwrap();
        }
        open.send(()).unwrap();
        let log = probe.ask(Log).unwrap().wait_timeout(WAIT).unwrap();
        let want: Vec<_> = ["Probe/First", "Probe/Second"]
            .into_iter()
            .cycle()
            .take(6)
            .collect();
        assert_eq!(log, want);
        // Every message counted once, as it started: the gate, six, the
        // log's ask (the refused self-sends are not handled).
        assert_eq!(probe.stats().handled, 8);
        assert_eq!(probe.stats().cycles, 6);
    });
}

/// Receives dead letters.
#[actor]
pub struct Collector {
    out: Sender<DeadLetter>,
}

#[actor]
impl Collector {
    #[handler(DeadLetter)]
    fn letter(&mut self, msg: DeadLetter, _ctx: &mut Ctx<Self>) {
        self.out.send(msg).unwrap();
    }
}

#[test]
fn a_panic_mid_batch_is_the_panicking_messages_and_the_rest_is_served() {
    on_both(|system, probe| {
        let (out, letters) = channel();
        let collector = system.spawn(Collector { out }).start();
        system.dead_letters().subscribe(&collector);
        let open = close_gate(&probe);
        probe.send(Add(1)).unwrap();
        probe.send(Add(2)).unwrap();
        probe.send(Boom).unwrap();
        probe.send(Add(3)).unwrap();
        probe.send(Add(4)).unwrap();
        open.send(()).unwrap();
        // Resumed (the default): the state as the panicking handler left
        // it, and the messages after it served in order.
        let total = probe.ask(Add(0)).unwrap().wait_timeout(WAIT).unwrap();
        assert_eq!(total, 110);
        let letter = letters.recv_timeout(WAIT).unwrap();
        assert_eq!(letter.reason, DeadLetterReason::Panicked);
        assert_eq!(letter.class, "Boom");
        assert_eq!(letter.target, probe.target());
        assert_eq!(letter.panic_message(), Some("boom"));
        let stats = probe.stats();
        assert_eq!((stats.panics, stats.handled), (1, 7));
        assert!(letters.try_recv().is_err(), "one letter");
    });
}
