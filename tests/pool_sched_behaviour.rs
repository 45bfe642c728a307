//! Pooled actors do everything an actor on its own thread does: every
//! delivery (send, ask, request, the fast_send family, `Recipient`), stop
//! and its hook, watchers, supervision (resume, restart, stop), timers,
//! dead letters, names, latency recording, `prepare`, and shutdown; and a
//! thread-bound actor is refused at spawn.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{DeadLetter, PoolConfig, Supervision, SystemConfig, Terminated};

const WAIT: Duration = Duration::from_secs(20);

fn pool_of(workers: usize) -> System {
    System::with_config(SystemConfig {
        pool: PoolConfig::new().workers(workers),
        ..SystemConfig::default()
    })
}

pub struct Add(pub u64);
pub struct Get;
pub struct Boom;
pub struct StopMe;
pub struct Tick;
pub struct Ticks;
pub struct Later(pub Duration);

#[actor]
pub struct Counter {
    n: u64,
    ticks: u64,
    log: Arc<Mutex<Vec<String>>>,
}

#[actor]
impl Counter {
    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push("started".into());
    }

    #[handler(Add)]
    fn add(&mut self, msg: Add, _ctx: &mut Ctx<Self>) -> u64 {
        self.n += msg.0;
        self.n
    }

    #[handler(Get)]
    fn get(&mut self, _msg: Get, _ctx: &mut Ctx<Self>) -> u64 {
        self.n
    }

    #[handler(Boom)]
    fn boom(&mut self, _msg: Boom, _ctx: &mut Ctx<Self>) {
        self.n = 999;
        panic!("boom");
    }

    #[handler(StopMe)]
    fn stop_me(&mut self, _msg: StopMe, ctx: &mut Ctx<Self>) {
        ctx.stop();
    }

    #[handler(Later)]
    fn later(&mut self, msg: Later, ctx: &mut Ctx<Self>) {
        ctx.schedule_once(msg.0, Tick);
    }

    #[handler(Tick)]
    fn tick(&mut self, _msg: Tick, _ctx: &mut Ctx<Self>) {
        self.ticks += 1;
    }

    #[handler(Ticks)]
    fn ticks(&mut self, _msg: Ticks, _ctx: &mut Ctx<Self>) -> u64 {
        self.ticks
    }

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {
        self.log
            .lock()
            .unwrap()
            .push(format!("stopped at {}", self.n));
    }
}

fn counter(log: &Arc<Mutex<Vec<String>>>) -> Counter {
    Counter {
        n: 0,
        ticks: 0,
        log: Arc::clone(log),
    }
}

/// Collects replies sent with `request`, terminations and dead letters.
#[actor]
pub struct Sink {
    out: Sender<String>,
}

#[actor]
impl Sink {
    #[handler(u64)]
    fn reply(&mut self, n: u64, _ctx: &mut Ctx<Self>) {
        self.out.send(format!("reply {n}")).unwrap();
    }

    #[handler(Terminated)]
    fn terminated(&mut self, t: Terminated, _ctx: &mut Ctx<Self>) {
        self.out.send(format!("terminated {:?}", t.reason)).unwrap();
    }

    #[handler(DeadLetter)]
    fn dead(&mut self, d: DeadLetter, _ctx: &mut Ctx<Self>) {
        self.out
            .send(format!("dead {} {:?}", d.class, d.reason))
            .unwrap();
    }
}

fn sink(system: &System, pooled: bool) -> (Addr<Sink>, Receiver<String>) {
    let (out, rx) = channel();
    let spawn = system.spawn(Sink { out });
    let addr = if pooled {
        spawn.pooled().start()
    } else {
        spawn.start()
    };
    (addr, rx)
}

#[test]
fn every_delivery_reaches_a_pooled_actor_and_its_hooks_run_once() {
    let system = pool_of(2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let c = system.spawn(counter(&log)).pooled().start();
    let (s, replies) = sink(&system, true);
    c.send(Add(1)).unwrap();
    assert_eq!(c.ask(Add(2)).unwrap().wait().unwrap(), 3);
    assert_eq!(c.fast_send(Add(3)).unwrap(), 6);
    assert_eq!(c.fast_send_spin(Add(4)).unwrap(), 10);
    assert_eq!(c.fast_send_x(Add(5)).unwrap(), 15);
    assert_eq!(c.fast_send_adaptive(Add(6)).unwrap(), 21);
    let _ = c.fast_send_void(Add(7));
    c.request(Add(8), &s).unwrap();
    assert_eq!(replies.recv_timeout(WAIT).unwrap(), "reply 36");
    let r: Recipient<Add, u64> = c.recipient();
    assert_eq!(r.ask(Add(9)).unwrap().wait().unwrap(), 45);
    assert_eq!(system.pooled_actors(), 2);
    let report = system.shutdown();
    assert!(report.unfinished.is_empty() && report.failed.is_empty());
    assert_eq!(*log.lock().unwrap(), ["started", "stopped at 45"]);
    assert!(c.is_stopped());
    assert_eq!(system.pooled_actors(), 0);
    assert_eq!(system.pool_threads(), 0, "the workers left with the pool");
}

#[test]
fn stop_drains_what_was_accepted_tells_watchers_and_refuses_the_rest() {
    let system = pool_of(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let c = system.spawn(counter(&log)).pooled().start();
    let (w, told) = sink(&system, true);
    c.watch(&w);
    for _ in 0..100 {
        c.send(Add(1)).unwrap();
    }
    c.send(StopMe).unwrap();
    assert_eq!(told.recv_timeout(WAIT).unwrap(), "terminated Stopped");
    assert!(c.is_stopped());
    assert!(c.send(Add(1)).unwrap_err().is_closed());
    assert_eq!(*log.lock().unwrap(), ["started", "stopped at 100"]);
    assert_eq!(system.pooled_actors(), 1, "the watcher is still there");
    system.shutdown();
}

#[test]
fn supervision_restarts_a_pooled_actor_and_keeps_its_mailbox() {
    let system = pool_of(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let fresh = Arc::clone(&log);
    let c = system
        .spawn(counter(&log))
        .restart_with(move || counter(&fresh))
        .pooled()
        .start();
    c.send(Add(5)).unwrap();
    c.send(Boom).unwrap();
    c.send(Add(1)).unwrap();
    assert_eq!(
        c.ask(Get).unwrap().wait().unwrap(),
        1,
        "restarted from the factory"
    );
    assert_eq!(c.stats().panics, 1);
    system.shutdown();
}

#[test]
fn a_pooled_actor_halted_by_supervision_sends_the_rest_to_dead_letters() {
    let system = pool_of(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let (s, letters) = sink(&system, false);
    system.dead_letters().subscribe(&s);
    let c = system
        .spawn(counter(&log))
        .supervise(Supervision::stop())
        .name("doomed")
        .pooled()
        .start();
    c.send(Boom).unwrap();
    c.send(Add(1)).unwrap();
    let mut got = Vec::new();
    while got.len() < 2 {
        got.push(letters.recv_timeout(WAIT).unwrap());
    }
    got.sort();
    assert_eq!(got, ["dead Add Stopped", "dead Boom Panicked"]);
    let err = c.fast_send(Add(1)).unwrap_err();
    assert!(err.to_string().starts_with("doomed(Counter"), "{err}");
    system.shutdown();
}

#[test]
fn timers_fire_into_a_pooled_actor() {
    let system = pool_of(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let c = system.spawn(counter(&log)).pooled().start();
    c.send(Later(Duration::from_millis(5))).unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    while c.ask(Ticks).unwrap().wait().unwrap() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the timer never fired"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(c.ask(Ticks).unwrap().wait().unwrap(), 1, "fired once");
    system.shutdown();
}

#[test]
fn latency_is_recorded_for_a_pooled_actor() {
    let system = pool_of(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let c = system
        .spawn(counter(&log))
        .record_latency(true)
        .pooled()
        .start();
    for _ in 0..10 {
        c.send(Add(1)).unwrap();
    }
    assert_eq!(c.ask(Get).unwrap().wait().unwrap(), 10);
    // Every `Add` was recorded before `Get` ran; `Get`'s own time is
    // recorded after its handler returned, so after its reply may have
    // woken this thread: wait for it (bounded).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let stats = loop {
        let stats = c.latency().expect("recording");
        if stats.class("Get").unwrap().count > 0 || std::time::Instant::now() > deadline {
            break stats;
        }
        std::thread::yield_now();
    };
    assert_eq!(stats.class("Add").unwrap().count, 10);
    assert_eq!(stats.class("Get").unwrap().count, 1);
    system.shutdown();
}

#[test]
fn a_prepared_actor_can_be_pooled_and_handles_what_was_queued_first() {
    let system = pool_of(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let prepared = system.prepare::<Counter>();
    let addr = prepared.addr();
    addr.send(Add(7)).unwrap();
    let c = prepared.spawn(counter(&log)).pooled().start();
    assert_eq!(c.ask(Get).unwrap().wait().unwrap(), 7);
    assert_eq!(addr.ask(Add(1)).unwrap().wait().unwrap(), 8);
    system.shutdown();
}

#[test]
fn pooled_and_threaded_actors_mix_in_one_system() {
    let system = pool_of(2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let (threaded, out) = sink(&system, false);
    let pooled = system.spawn(counter(&log)).pooled().start();
    pooled.request(Add(2), &threaded).unwrap();
    assert_eq!(out.recv_timeout(WAIT).unwrap(), "reply 2");
    let other = system.spawn(counter(&log)).start();
    assert_eq!(other.ask(Add(3)).unwrap().wait().unwrap(), 3);
    system.shutdown();
    assert!(pooled.is_stopped() && other.is_stopped());
}

#[test]
fn a_pooled_actor_spawned_after_shutdown_starts_closed_and_runs_its_hooks() {
    let system = pool_of(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let first = system.spawn(counter(&log)).pooled().start();
    system.shutdown();
    assert!(first.is_stopped());
    let late = system.spawn(counter(&log)).pooled().start();
    assert!(late.send(Add(1)).unwrap_err().is_closed());
    system.shutdown();
    assert!(late.is_stopped());
    assert_eq!(
        *log.lock().unwrap(),
        ["started", "stopped at 0", "started", "stopped at 0"]
    );
}

#[actor(thread_bound)]
pub struct Local {
    _not_send: std::rc::Rc<()>,
}

#[actor]
impl Local {
    #[handler(u8)]
    fn on(&mut self, _m: u8, _ctx: &mut Ctx<Self>) {}
}

#[test]
fn a_thread_bound_actor_is_refused_by_the_pool_at_spawn() {
    let system = pool_of(1);
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = system
            .spawn_with(|| Local {
                _not_send: std::rc::Rc::new(()),
            })
            .pooled();
    }))
    .unwrap_err();
    let msg = refused.downcast_ref::<String>().unwrap();
    assert!(
        msg.contains("thread_bound") && msg.contains("cannot run on the pool"),
        "{msg}"
    );
    assert_eq!(system.pool_threads(), 0, "nothing started");
    system.shutdown();
}

#[test]
fn exits_name_the_reason_for_a_pooled_actor_that_panics_in_started() {
    #[actor]
    pub struct BadStart;
    #[actor]
    impl BadStart {
        #[started]
        fn started(&mut self, _ctx: &mut Ctx<Self>) {
            panic!("no start");
        }
        #[handler(u8)]
        fn on(&mut self, m: u8, _ctx: &mut Ctx<Self>) -> u8 {
            m
        }
    }
    let system = pool_of(1);
    let b = system.spawn(BadStart).pooled().start();
    // A panicking `started` is resumed by default, as on a thread.
    assert_eq!(b.ask(3u8).unwrap().wait().unwrap(), 3);
    assert_eq!(b.stats().panics, 1);
    system.shutdown();
}
