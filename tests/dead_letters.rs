//! Dead letters: what could not be handled reaches the sink, with its
//! target, class and reason, and the payload where the runtime had it.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{DeadLetter, DeadLetterReason, Supervision};

const WAIT: Duration = Duration::from_secs(20);

pub struct Job(pub u32);
pub struct Gate(pub Mutex<Receiver<()>>);
pub struct Fail(pub u32);

#[actor]
pub struct Worker;

#[actor]
impl Worker {
    #[handler(Job)]
    fn job(&mut self, msg: Job, _ctx: &mut Ctx<Self>) -> u32 {
        msg.0
    }

    #[handler(Gate)]
    fn gate(&mut self, msg: Gate, _ctx: &mut Ctx<Self>) {
        msg.0.lock().unwrap().recv().expect("test opens the gate");
    }

    #[handler(Fail)]
    fn fail(&mut self, msg: Fail, _ctx: &mut Ctx<Self>) {
        std::panic::panic_any(msg.0);
    }
}

/// Subscribes to a sink and forwards what it gets.
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

/// A collector in a system of its own, so it outlives the observed one.
fn collector() -> (System, Addr<Collector>, Receiver<DeadLetter>) {
    let system = System::new();
    let (out, rx) = channel();
    let addr = system.spawn(Collector { out }).start();
    (system, addr, rx)
}

fn job_id(letter: &DeadLetter) -> Option<u32> {
    match letter.message.as_ref()?.downcast_ref::<WorkerMsg>()? {
        WorkerMsg::Job(Job(n), _) => Some(*n),
        _ => None,
    }
}

#[test]
fn a_panicked_message_arrives_with_its_class_target_and_panic() {
    let (_cs, c, letters) = collector();
    let system = System::new();
    system.dead_letters().subscribe(&c);
    let w = system.spawn(Worker).start();
    assert!(w.fast_send(Fail(41)).unwrap_err().is_panicked());
    w.send(Fail(42)).unwrap();
    for want in [41, 42] {
        let l = letters.recv_timeout(WAIT).unwrap();
        assert_eq!(l.reason, DeadLetterReason::Panicked);
        assert_eq!(l.target, w.target());
        assert_eq!(l.class, "Fail");
        assert!(l.message.is_none());
        assert_eq!(l.panic.unwrap().downcast_ref::<u32>(), Some(&want));
    }
    assert_eq!(system.dead_letters().counts().unobserved, 0);
}

#[test]
fn the_queue_of_a_stopped_actor_arrives_whole() {
    let (_cs, c, letters) = collector();
    let system = System::new();
    system.dead_letters().subscribe(&c);
    let w = system.spawn(Worker).supervise(Supervision::stop()).start();
    let (open, rx) = channel();
    w.send(Gate(Mutex::new(rx))).unwrap();
    w.send(Fail(0)).unwrap();
    for n in 1..=5 {
        w.send(Job(n)).unwrap();
    }
    open.send(()).unwrap();
    assert_eq!(
        letters.recv_timeout(WAIT).unwrap().reason,
        DeadLetterReason::Panicked
    );
    let ids: Vec<u32> = (0..5)
        .map(|_| {
            let l = letters.recv_timeout(WAIT).unwrap();
            assert_eq!((l.reason, l.class), (DeadLetterReason::Stopped, "Job"));
            job_id(&l).unwrap()
        })
        .collect();
    assert_eq!(ids, [1, 2, 3, 4, 5], "in queue order");
}

// ---- request replies that cannot be delivered ----------------------------

pub struct Quit;

#[actor]
pub struct Sink;

#[actor]
impl Sink {
    #[handler(u32)]
    fn reply(&mut self, _msg: u32, _ctx: &mut Ctx<Self>) {}

    #[handler(Quit)]
    fn quit(&mut self, _msg: Quit, ctx: &mut Ctx<Self>) {
        ctx.stop();
    }
}

#[actor]
pub struct Watch {
    out: Sender<()>,
}

#[actor]
impl Watch {
    #[handler(kaspar::Terminated)]
    fn terminated(&mut self, _msg: kaspar::Terminated, _ctx: &mut Ctx<Self>) {
        self.out.send(()).unwrap();
    }
}

#[test]
fn an_undeliverable_reply_is_a_dead_letter() {
    let (_cs, c, letters) = collector();
    let system = System::new();
    system.dead_letters().subscribe(&c);
    let (open, rx) = channel();
    let w = system.spawn(Worker).start();
    let sink = system.spawn(Sink).start();
    let (stopped, sink_stopped) = channel();
    sink.watch(&system.spawn(Watch { out: stopped }).start());
    w.send(Gate(Mutex::new(rx))).unwrap();
    w.request(Job(9), &sink).unwrap();
    // the reply's receiver stops while the request waits behind the gate
    sink.send(Quit).unwrap();
    sink_stopped.recv_timeout(WAIT).unwrap();
    open.send(()).unwrap();
    let l = letters.recv_timeout(WAIT).unwrap();
    assert_eq!(l.reason, DeadLetterReason::Undeliverable);
    assert_eq!(l.target, sink.target());
    assert_eq!(l.class, "u32");
    assert_eq!(l.message.unwrap().downcast_ref::<u32>(), Some(&9));
    assert_eq!(sink.stats().dead_letters, 1);
}

#[test]
fn shutdown_timeout_reports_the_stuck_and_dead_letters_their_queue() {
    let (_cs, c, letters) = collector();
    let system = System::new();
    system.dead_letters().subscribe(&c);
    let w = system.spawn(Worker).start();
    let (open, rx) = channel();
    w.send(Gate(Mutex::new(rx))).unwrap();
    for n in 1..=3 {
        w.send(Job(n)).unwrap();
    }
    let report = system.shutdown_timeout(Duration::from_millis(20));
    assert_eq!(report.unfinished, vec![w.target()]);
    assert!(w.send(Job(4)).unwrap_err().is_closed(), "handed back");
    open.send(()).unwrap();
    let report = system.shutdown();
    assert_eq!(report.stopped, vec![w.target()]);
    let mut ids: Vec<u32> = (0..3)
        .map(|_| {
            let l = letters.recv_timeout(WAIT).unwrap();
            assert_eq!(l.reason, DeadLetterReason::ShutdownTimeout);
            job_id(&l).unwrap()
        })
        .collect();
    ids.sort();
    assert_eq!(ids, [1, 2, 3]);
    assert_eq!(system.dead_letters().counts().shutdown_timeout, 3);
}

#[test]
fn without_a_subscriber_letters_are_counted_as_unobserved() {
    let system = System::new();
    let w = system.spawn(Worker).start();
    let _ = w.fast_send(Fail(1));
    let d = system.dead_letters().counts();
    assert_eq!((d.panicked, d.unobserved, d.total()), (1, 1, 1));
}
