//! `kaspar::sim`: a whole system, whatever its placement, on the test's
//! thread under one seeded scheduler; the same seed gives the same trace;
//! faults are injected where the seed says; blocking waits are refused.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::sim::{self, Check, Faults, Sim, SimConfig, Strategy, What};
use kaspar::{AskError, FastSendError, MailboxKind, Placement, SendError, Supervision, Time};

pub struct Add(pub u64);
pub struct Total;
pub struct WhereAmI;

#[actor]
pub struct Sum {
    total: u64,
}

#[actor]
impl Sum {
    #[handler(Add)]
    fn add(&mut self, a: Add, _ctx: &mut Ctx<Self>) {
        self.total += a.0;
    }

    #[handler(Total)]
    fn total(&mut self, _t: Total, _ctx: &mut Ctx<Self>) -> u64 {
        self.total
    }

    #[handler(WhereAmI)]
    fn where_am_i(&mut self, _w: WhereAmI, _ctx: &mut Ctx<Self>) -> ThreadId {
        std::thread::current().id()
    }
}

/// The system every determinism test drives: two adders and a reader.
fn adders(sim: &mut Sim) -> Addr<Sum> {
    let sum = sim.system().spawn(Sum { total: 0 }).start();
    for c in 0..2u64 {
        let sum = sum.clone();
        sim.client(&format!("adder{c}"), async move {
            for i in 0..5 {
                sum.send(Add(c * 100 + i)).unwrap();
                if sim::random() & 1 == 0 {
                    sim::yield_now().await;
                }
            }
        });
    }
    let read = sum.clone();
    sim.client("reader", async move {
        // Whatever the order, the ask is answered.
        read.ask(Total).unwrap().await.unwrap();
    });
    sum
}

#[test]
fn every_message_is_handled_once_and_the_run_settles() {
    let mut sim = Sim::new(SimConfig::seed(1));
    let sum = adders(&mut sim);
    let settled = sim.run();
    assert!(settled.stuck.is_empty(), "{settled:?}");
    assert_eq!(sum.fast_send(Total).unwrap(), 520);
    // 10 adds and the reader's ask, handled as queued messages.
    assert_eq!(sim.handled(), 11);
    assert_eq!(sim.trace().handled(), 11);
}

#[test]
fn the_same_seed_gives_the_same_trace_byte_for_byte() {
    let trace = |seed, strategy| {
        let mut sim = Sim::new(SimConfig::seed(seed).strategy(strategy));
        adders(&mut sim);
        sim.run();
        sim.trace().to_string()
    };
    for strategy in [Strategy::Random, Strategy::PCT] {
        let mut distinct = std::collections::HashSet::new();
        for seed in 0..20 {
            let first = trace(seed, strategy);
            assert_eq!(first, trace(seed, strategy), "seed {seed} {strategy:?}");
            distinct.insert(first);
        }
        // The seeds do choose: twenty seeds give more than one order.
        assert!(distinct.len() > 1, "{strategy:?}: one order for every seed");
    }
}

#[group]
pub struct Pair {
    pub left: Addr<Sum>,
    pub right: Addr<Sum>,
}

#[test]
fn every_placement_runs_on_the_simulators_thread_without_threads() {
    let mut sim = Sim::new(SimConfig::seed(3));
    let system = sim.system();
    let own = system.spawn(Sum { total: 0 }).start();
    let pinned = system
        .spawn(Sum { total: 0 })
        .placement(Placement::new().pin(0))
        .start();
    let pooled = system.spawn(Sum { total: 0 }).pooled().start();
    let group = system
        .spawn_group::<Pair>((Sum { total: 0 }, Sum { total: 0 }))
        .start();
    let me = std::thread::current().id();
    let seen = Arc::new(AtomicU64::new(0));
    for (name, addr) in [
        ("own", own),
        ("pinned", pinned),
        ("pooled", pooled),
        ("left", group.left.clone()),
        ("right", group.right.clone()),
    ] {
        let seen = Arc::clone(&seen);
        sim.client(name, async move {
            addr.send(Add(1)).unwrap();
            let there = addr.ask(WhereAmI).unwrap().await.unwrap();
            assert_eq!(there, me);
            seen.fetch_add(1, Ordering::Relaxed);
        });
    }
    assert!(sim.run().stuck.is_empty());
    assert_eq!(seen.load(Ordering::Relaxed), 5);
    assert_eq!(sim.system().pool_threads(), 0);
}

#[derive(Clone)]
pub struct Tick;

#[actor]
pub struct Ticker {
    at: Arc<parking_lot::Mutex<Vec<Time>>>,
}

#[actor]
impl Ticker {
    #[started]
    fn up(&mut self, ctx: &mut Ctx<Self>) {
        self.at.lock().push(ctx.now());
        ctx.schedule_every(Duration::from_millis(10), Tick);
    }

    #[handler(Tick)]
    fn tick(&mut self, _t: Tick, ctx: &mut Ctx<Self>) {
        let mut at = self.at.lock();
        at.push(ctx.now());
        if at.len() == 6 {
            ctx.stop();
        }
    }
}

#[test]
fn timers_fire_on_virtual_time_and_jitter_makes_them_late() {
    // How late each of five ticks is, after the start, against 10 ms apart.
    let lateness = |faults: Faults| {
        let mut sim = Sim::new(SimConfig::seed(9).faults(faults));
        let at = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let t = sim
            .system()
            .spawn(Ticker {
                at: Arc::clone(&at),
            })
            .start();
        sim.run();
        assert!(t.is_stopped(), "the ticker stops after five ticks");
        let at = at.lock();
        assert_eq!(at.len(), 6);
        (1..6)
            .map(|i| {
                let nominal = at[0].saturating_add(Duration::from_millis(10 * i as u64));
                at[i].saturating_duration_since(nominal)
            })
            .collect::<Vec<_>>()
    };
    // On time: each tick is handled within a few steps (a microsecond of
    // virtual time each) of its due time.
    for late in lateness(Faults::none()) {
        assert!(late < Duration::from_micros(10), "{late:?}");
    }
    let jittered = lateness(Faults::none().timer_jitter(Duration::from_millis(2)));
    assert!(
        jittered.iter().any(|&l| l > Duration::from_micros(10)),
        "{jittered:?}"
    );
    assert!(
        jittered.iter().all(|&l| l < Duration::from_millis(12)),
        "{jittered:?}"
    );
}

pub struct Boom;

#[actor]
pub struct Counter {
    n: u64,
}

#[actor]
impl Counter {
    #[handler(Add)]
    fn add(&mut self, a: Add, _ctx: &mut Ctx<Self>) {
        self.n += a.0;
    }

    #[handler(Total)]
    fn total(&mut self, _t: Total, _ctx: &mut Ctx<Self>) -> u64 {
        self.n
    }
}

#[test]
fn an_injected_panic_is_supervised_as_a_live_one() {
    let mut sim = Sim::new(SimConfig::seed(5).faults(Faults::none().panic_at(2)));
    let c = sim
        .system()
        .spawn(Counter { n: 0 })
        .supervise(Supervision::restart(|| Counter { n: 1000 }))
        .start();
    let c2 = c.clone();
    sim.client("sender", async move {
        for _ in 0..5 {
            c2.send(Add(1)).unwrap();
        }
    });
    sim.run();
    // The third message panicked: the state was rebuilt (1000) and the two
    // after it were handled.
    assert_eq!(c.fast_send(Total).unwrap(), 1002);
    assert_eq!(c.stats().panics, 1);
    assert_eq!(sim.injected(), 1);
    let trace = sim.trace();
    let panics: Vec<_> = trace
        .events()
        .iter()
        .filter(|e| matches!(e.what, What::InjectedPanic { .. }))
        .collect();
    assert_eq!(panics.len(), 1);
}

#[test]
fn an_injected_full_mailbox_hands_the_message_back() {
    let mut sim = Sim::new(SimConfig::seed(2).faults(Faults::none().full(1_000_000)));
    let bounded = sim
        .system()
        .spawn(Counter { n: 0 })
        .mailbox(MailboxKind::lock_free(8))
        .start();
    let unbounded = sim.system().spawn(Counter { n: 0 }).start();
    let (b, u) = (bounded.clone(), unbounded.clone());
    sim.client("sender", async move {
        match b.send(Add(7)) {
            Err(SendError::Full { msg, .. }) => assert_eq!(msg.0, 7),
            other => panic!("expected Full, got {other:?}"),
        }
        // An unbounded mailbox cannot be full: no fault there.
        u.send(Add(1)).unwrap();
    });
    assert!(sim.run().stuck.is_empty());
    assert_eq!(bounded.fast_send(Total).unwrap(), 0);
    assert_eq!(unbounded.fast_send(Total).unwrap(), 1);
}

pub struct AskOther(pub Addr<Counter>);

#[actor]
pub struct Waiter;

#[actor]
impl Waiter {
    #[handler(AskOther)]
    fn ask_other(&mut self, a: AskOther, _ctx: &mut Ctx<Self>) -> bool {
        matches!(
            a.0.ask(Total).unwrap().wait(),
            Err(AskError::Deadlock { .. })
        )
    }
}

#[test]
fn a_blocking_wait_is_refused_on_the_simulators_thread() {
    let mut sim = Sim::new(SimConfig::seed(4));
    let c = sim.system().spawn(Counter { n: 0 }).start();
    let w = sim.system().spawn(Waiter).start();
    let refused = Arc::new(AtomicU64::new(0));
    let r = Arc::clone(&refused);
    sim.client("asker", async move {
        if w.ask(AskOther(c.clone())).unwrap().await.unwrap() {
            r.fetch_add(1, Ordering::Relaxed);
        }
        // From a client too: a wait would hold up the only thread.
        assert!(matches!(
            c.ask(Total).unwrap().wait(),
            Err(AskError::Deadlock { .. })
        ));
    });
    assert!(sim.run().stuck.is_empty());
    assert_eq!(refused.load(Ordering::Relaxed), 1);
}

/// Has a `started` hook, so `start` hands its lock over to its first step.
#[actor]
pub struct Hooked {
    started: bool,
}

#[actor]
impl Hooked {
    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {
        self.started = true;
    }

    #[handler(Total)]
    fn started_yet(&mut self, _t: Total, _ctx: &mut Ctx<Self>) -> bool {
        self.started
    }
}

/// A `fast_send` from the test's own thread, outside any step, to an actor
/// whose first step (its `started` hook) has not run: only a step the
/// simulator chooses can run it, so the wait is refused with the message
/// back. It hung before (under a watchdog here, so a hang fails).
#[test]
fn a_fast_send_before_the_first_step_is_refused_not_hung() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sim = Sim::new(SimConfig::seed(1));
        let h = sim.system().spawn(Hooked { started: false }).start();
        let before = matches!(
            h.fast_send(Total),
            Err(FastSendError::Deadlock { msg: Total, .. })
        );
        let settled = sim.run().stuck.is_empty();
        let _ = done.send((before, settled, h.fast_send(Total).ok()));
    });
    let got = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the fast_send hung");
    assert_eq!(got, (true, true, Some(true)));
}

#[test]
fn check_passes_a_correct_system_over_many_seeds() {
    let passed = sim::check(Check::seeds(0..200).strategy(Strategy::PCT), |sim| {
        let sum = adders(sim);
        assert!(sim.run().stuck.is_empty());
        assert_eq!(sum.fast_send(Total).unwrap(), 520);
    });
    assert_eq!(passed.seeds, 200);
    assert_eq!(passed.handled, 200 * 11);
}

pub struct Quote(pub u64);
pub struct Depth;

/// State that is not `Send`: lives on the thread that built it.
#[actor(thread_bound)]
pub struct RcBook {
    levels: std::rc::Rc<std::cell::RefCell<Vec<u64>>>,
}

#[actor]
impl RcBook {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) {
        self.levels.borrow_mut().push(q.0);
    }

    #[handler(Depth)]
    fn depth(&mut self, _d: Depth, _ctx: &mut Ctx<Self>) -> usize {
        self.levels.borrow().len()
    }
}

#[test]
fn a_thread_bound_actor_runs_on_the_simulators_thread() {
    let mut sim = Sim::new(SimConfig::seed(6));
    let book = sim
        .system()
        .spawn_with(|| RcBook {
            levels: Default::default(),
        })
        .start();
    let b = book.clone();
    sim.client("feed", async move {
        for q in 0..4 {
            b.send(Quote(q)).unwrap();
        }
        assert_eq!(b.ask(Depth).unwrap().await.unwrap(), 4);
    });
    assert!(sim.run().stuck.is_empty());
    assert_eq!(book.fast_send(Depth).unwrap(), 4);
}

pub struct SpawnChild;
pub struct Echo(pub u64);
pub struct Echoed(pub u64);

#[actor]
pub struct Parent {
    heard: Arc<AtomicU64>,
}

#[actor]
impl Parent {
    #[handler(SpawnChild)]
    fn spawn_child(&mut self, _s: SpawnChild, ctx: &mut Ctx<Self>) {
        // Spawned from a handler into the simulated system, and asked
        // with a reply route: the answer comes back as a message.
        let child = ctx.spawn(Child).start();
        child.request(Echo(41), &ctx.myself()).unwrap();
    }

    #[handler(Echoed)]
    fn echoed(&mut self, e: Echoed, _ctx: &mut Ctx<Self>) {
        self.heard.store(e.0, Ordering::Relaxed);
    }
}

#[actor]
pub struct Child;

#[actor]
impl Child {
    #[handler(Echo)]
    fn echo(&mut self, e: Echo, _ctx: &mut Ctx<Self>) -> Echoed {
        Echoed(e.0 + 1)
    }
}

#[actor]
pub struct Quitter {
    stopped: Arc<AtomicU64>,
}

#[actor]
impl Quitter {
    #[handler(Add)]
    fn add(&mut self, _a: Add, _ctx: &mut Ctx<Self>) {}

    #[stopped]
    fn down(&mut self, _ctx: &mut Ctx<Self>) {
        self.stopped.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn spawns_from_handlers_requests_and_shutdown_run_in_the_simulation() {
    let heard = Arc::new(AtomicU64::new(0));
    let stopped = Arc::new(AtomicU64::new(0));
    let mut sim = Sim::new(SimConfig::seed(8));
    let parent = sim
        .system()
        .spawn(Parent {
            heard: Arc::clone(&heard),
        })
        .start();
    let quitters: Vec<_> = (0..3)
        .map(|_| {
            sim.system()
                .spawn(Quitter {
                    stopped: Arc::clone(&stopped),
                })
                .start()
        })
        .collect();
    parent.send(SpawnChild).unwrap();
    for q in &quitters {
        q.send(Add(1)).unwrap();
    }
    assert!(sim.run().stuck.is_empty());
    assert_eq!(heard.load(Ordering::Relaxed), 42);
    assert_eq!(sim.system().pooled_actors(), 5);
    // A shutdown stops every actor on the simulator's thread: `stopped`
    // hooks run, and nothing is left in the pool.
    sim.shutdown();
    assert_eq!(stopped.load(Ordering::Relaxed), 3);
    assert!(quitters.iter().all(|q| q.is_stopped()));
    assert_eq!(sim.system().pooled_actors(), 0);
}

pub struct Note;

/// Counts what its handler really ran for.
#[actor]
pub struct Tally {
    ran: Arc<AtomicU64>,
}

#[actor]
impl Tally {
    #[handler(Note)]
    fn note(&mut self, _n: Note, _ctx: &mut Ctx<Self>) {
        self.ran.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn nothing_is_lost_or_run_twice_under_faults() {
    const SENDS: u64 = 40;
    let faults = Faults::none().panics(20_000).full(100_000);
    for strategy in [Strategy::Random, Strategy::PCT] {
        sim::check(
            Check::seeds(0..150)
                .strategy(strategy)
                .faults(faults.clone()),
            |sim| {
                let mut tallies = Vec::new();
                for (name, mailbox) in [
                    ("unbounded", MailboxKind::DEFAULT),
                    ("bounded", MailboxKind::lock_free(4)),
                ] {
                    let ran = Arc::new(AtomicU64::new(0));
                    let addr = sim
                        .system()
                        .spawn(Tally {
                            ran: Arc::clone(&ran),
                        })
                        .mailbox(mailbox)
                        .name(name)
                        .start();
                    tallies.push((name, addr, ran));
                }
                for c in 0..3 {
                    let addrs: Vec<Addr<Tally>> = tallies.iter().map(|t| t.1.clone()).collect();
                    sim.client(&format!("sender{c}"), async move {
                        for i in 0..SENDS {
                            for addr in &addrs {
                                if i % 4 == 0 {
                                    // Inline: run now, or fail with the panic
                                    // that consumed it.
                                    match addr.fast_send(Note) {
                                        Ok(()) | Err(kaspar::FastSendError::Panicked { .. }) => {}
                                        Err(e) => panic!("{e:?}"),
                                    }
                                    continue;
                                }
                                // Queued: a full mailbox hands the note back,
                                // and it is sent again after a yield.
                                let mut note = Note;
                                while let Err(e) = addr.send(note) {
                                    match e {
                                        SendError::Full { msg, .. } => note = msg,
                                        e => panic!("{e:?}"),
                                    }
                                    sim::yield_now().await;
                                }
                            }
                            sim::yield_now().await;
                        }
                    });
                }
                assert!(sim.run().stuck.is_empty());
                // Every note was handed to its handler exactly once: it ran, or
                // an injected panic took its place.
                let trace = sim.trace();
                assert_eq!(trace.dropped(), 0);
                for (name, _, ran) in &tallies {
                    let number = trace
                        .actors()
                        .iter()
                        .position(|(_, instance)| instance.as_deref() == Some(*name))
                        .expect("the actor is in the trace")
                        as u32;
                    let panicked = trace
                    .events()
                    .iter()
                    .filter(|e| matches!(e.what, What::InjectedPanic { actor, .. } if actor == number))
                    .count() as u64;
                    assert_eq!(
                        ran.load(Ordering::Relaxed) + panicked,
                        3 * SENDS,
                        "{name}: ran {} + panicked {panicked}",
                        ran.load(Ordering::Relaxed)
                    );
                }
            },
        );
    }
}

#[test]
fn an_invariant_checked_after_every_step_fails_at_the_step_that_broke_it() {
    // The invariant: the sum never passes 3. The fourth add breaks it;
    // checked at the end only, the run would go on to the twentieth.
    let body = |sim: &mut Sim| {
        let sum = sim.system().spawn(Sum { total: 0 }).start();
        let adder = sum.clone();
        sim.client("adder", async move {
            for _ in 0..20 {
                adder.send(Add(1)).unwrap();
                sim::yield_now().await;
            }
        });
        sim.run_checking(|_| {
            let total = sum.fast_send(Total).unwrap();
            assert!(total <= 3, "the sum reached {total}");
        });
    };
    let failure = sim::explore(&Check::seeds(0..1), body).unwrap_err();
    assert!(
        failure.message.contains("the sum reached 4"),
        "{}",
        failure.message
    );
    // The trace ends at the fourth add: the step that broke it.
    let trace = failure.trace;
    assert_eq!(trace.handled(), 4, "{trace}");
    let last = trace.events().last().expect("events");
    assert!(
        matches!(last.what, What::Handled { class: "Add", .. }),
        "{trace}"
    );
    // The invariant's own fast_sends are not steps of the run.
    assert!(trace
        .events()
        .iter()
        .all(|e| !matches!(e.what, What::Handled { inline: true, .. })));
}

pub struct Filler;

/// Stops after three of its own timer's ticks; fillers keep its mailbox
/// busy meanwhile.
#[actor]
pub struct Metronome {
    ticks: u32,
}

#[actor]
impl Metronome {
    #[started]
    fn up(&mut self, ctx: &mut Ctx<Self>) {
        ctx.schedule_every(Duration::from_micros(5), Tick);
    }

    #[handler(Tick)]
    fn tick(&mut self, _t: Tick, ctx: &mut Ctx<Self>) {
        self.ticks += 1;
        if self.ticks == 3 {
            ctx.stop();
        }
    }

    #[handler(Filler)]
    fn filler(&mut self, _f: Filler, _ctx: &mut Ctx<Self>) {}
}

#[test]
fn a_timer_that_finds_its_target_full_waits_for_room_under_every_strategy() {
    // A periodic tick into a mailbox of 2 that a client keeps full: the
    // firing that finds it full is retried at the same virtual time, and
    // must let the actor drain before it tries again (under PCT the timers
    // would otherwise keep the top priority and retry forever).
    for strategy in [Strategy::Random, Strategy::PCT] {
        let mut config = SimConfig::default().strategy(strategy);
        config.max_steps = 20_000;
        sim::check(Check::seeds(0..40).config(config), |sim| {
            let m = sim
                .system()
                .spawn(Metronome { ticks: 0 })
                .mailbox(MailboxKind::lock_free(2))
                .start();
            let filler = m.clone();
            sim.client("filler", async move {
                while !filler.is_stopped() {
                    // Two at a time: the mailbox is full when it yields.
                    let _ = filler.send(Filler);
                    let _ = filler.send(Filler);
                    sim::yield_now().await;
                }
            });
            sim.run();
            assert!(m.is_stopped(), "three ticks stop the metronome");
        });
    }
}
