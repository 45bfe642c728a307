//! Deterministic simulation, timers, and journal replay.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::journal::{Entry, JournalErrorKind, JournalReader, Journaled};
use kaspar::prelude::*;
use kaspar::{Clock, Simulation, Solo, Time};
use kaspar_suite::backtest::*;
use proptest::prelude::*;

fn simulate(input: &[(Time, Tick)], heartbeat: Option<Duration>) -> Trace {
    let mut sim = Simulation::<Trading>::new(members(heartbeat));
    let (orders, sent, log) = orders_actor();
    let orders = sim.spawn(orders);
    wire(sim.group(), &orders);
    sim.settle();
    let md = sim.group().md.clone();
    for (at, tick) in input {
        sim.deliver(*at, &md, tick.clone()).unwrap();
    }
    let end = input.last().map_or(Time::from_nanos(0), |(t, _)| *t);
    sim.advance_to(end.saturating_add(Duration::from_millis(5)));
    sim.finish();
    let sent = sent.lock().unwrap().clone();
    let log = log.lock().unwrap().clone();
    (sent, log)
}

#[test]
fn the_same_input_simulated_twice_gives_the_same_trace() {
    let input = ticks(2_000, 42);
    let a = simulate(&input, Some(Duration::from_micros(2_500)));
    let b = simulate(&input, Some(Duration::from_micros(2_500)));
    assert!(a.0.len() > 10, "the strategy trades: {}", a.0.len());
    assert!(a.1.iter().any(|l| l.contains("Status")), "heartbeats fire");
    assert!(a == b, "two runs of one input diverged");
    // and a different input gives a different trace (the test can fail)
    let c = simulate(&ticks(2_000, 1001), Some(Duration::from_micros(2_500)));
    assert!(a != c, "the trace does not depend on the input");
}

// ---- timers -------------------------------------------------------------

pub struct Arm(pub Vec<(u64, &'static str)>);
#[derive(Clone)]
pub struct Ring(pub &'static str);
pub struct Every(pub u64);
pub struct Cancel;

#[actor]
pub struct Alarm {
    rang: Arc<Mutex<Vec<(u64, &'static str)>>>,
    periodic: Option<kaspar::TimerId>,
}

#[actor]
impl Alarm {
    #[handler(Arm)]
    fn arm(&mut self, msg: Arm, ctx: &mut Ctx<Self>) {
        for (ms, name) in msg.0 {
            ctx.schedule_once(Duration::from_millis(ms), Ring(name));
        }
    }

    #[handler(Every)]
    fn every(&mut self, msg: Every, ctx: &mut Ctx<Self>) {
        self.periodic = Some(ctx.schedule_every(Duration::from_millis(msg.0), Ring("tick")));
    }

    #[handler(Cancel)]
    fn cancel(&mut self, _msg: Cancel, ctx: &mut Ctx<Self>) -> bool {
        ctx.cancel(self.periodic.take().expect("armed"))
    }

    #[handler(Ring)]
    fn ring(&mut self, msg: Ring, ctx: &mut Ctx<Self>) {
        let ms = ctx.now().as_nanos() / 1_000_000;
        self.rang.lock().unwrap().push((ms, msg.0));
    }
}

#[test]
fn timers_fire_by_time_then_scheduling_order() {
    let rang = Arc::new(Mutex::new(Vec::new()));
    // One actor, simulated without declaring a group for it.
    let mut sim = Simulation::<Solo<Alarm>>::new((Alarm {
        rang: rang.clone(),
        periodic: None,
    },));
    let alarm = sim.group().actor.clone();
    let ms = |n: u64| Time::from_nanos(n * 1_000_000);
    sim.deliver(
        ms(0),
        &alarm,
        Arm(vec![(30, "c"), (10, "a"), (30, "d"), (20, "b")]),
    )
    .unwrap();
    sim.deliver(ms(0), &alarm, Every(15)).unwrap();
    sim.advance_to(ms(25));
    assert_eq!(*rang.lock().unwrap(), [(10, "a"), (15, "tick"), (20, "b")]);
    sim.advance_to(ms(50));
    assert_eq!(
        rang.lock().unwrap()[3..],
        [(30, "c"), (30, "d"), (30, "tick"), (45, "tick")]
    );
    sim.advance_to(ms(50));
    assert!(
        alarm.fast_send(Cancel).unwrap(),
        "the periodic timer was pending"
    );
    sim.advance_to(ms(100));
    assert_eq!(
        rang.lock().unwrap().len(),
        7,
        "a cancelled timer stays quiet"
    );
}

#[test]
fn live_timers_arrive_as_messages() {
    let rang = Arc::new(Mutex::new(Vec::new()));
    let system = System::new();
    let alarm = system
        .spawn(Alarm {
            rang: rang.clone(),
            periodic: None,
        })
        .start();
    alarm.send(Arm(vec![(20, "second"), (1, "first")])).unwrap();
    while rang.lock().unwrap().len() < 2 {
        std::thread::yield_now();
    }
    let names: Vec<_> = rang.lock().unwrap().iter().map(|r| r.1).collect();
    assert_eq!(names, ["first", "second"]);
}

// ---- journal and replay ---------------------------------------------------

#[test]
fn a_journaled_live_run_replays_to_the_same_orders() {
    journaled_live_run_replays(false);
}

/// The same, with the group and the orders actor on the worker pool
/// (`pooled`): the pool changes which thread serves the group's queue, not
/// its order, so the journal it writes replays in `Simulation` exactly.
#[test]
fn a_pooled_groups_journal_replays_to_the_same_orders() {
    journaled_live_run_replays(true);
}

fn journaled_live_run_replays(pooled: bool) {
    let dir = std::env::temp_dir().join(format!(
        "kaspar-journal-{}-{}",
        std::process::id(),
        if pooled { "pooled" } else { "threads" }
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("live.journal");

    // live: its own thread (or the pool), the system clock, fed from this
    // thread
    let system = System::new();
    let (orders, live_sent, _) = orders_actor();
    let (orders, g) = if pooled {
        (
            system.spawn(orders).pooled().start(),
            system
                .spawn_group::<Trading>(members(None))
                .pooled()
                .start(),
        )
    } else {
        (
            system.spawn(orders).start(),
            system.spawn_group::<Trading>(members(None)).start(),
        )
    };
    wire(&g, &orders);
    let journal = Journaled::create(&path, &g, Clock::System, route).unwrap();
    for (_, tick) in ticks(3_000, 7) {
        assert!(journal.feed(Input::Tick(tick)).unwrap());
    }
    // every tick handled, every order queued, before the shutdown
    assert_eq!(g.md.ask(Flush).unwrap().wait().unwrap(), 3_000);
    journal.flush().unwrap();
    drop(journal);
    system.shutdown();
    let live = live_sent.lock().unwrap().clone();
    assert!(live.len() > 10);

    // replay in simulation from the file
    let mut sim = Simulation::<Trading>::new(members(None));
    let (orders, sim_sent, _) = orders_actor();
    let orders = sim.spawn(orders);
    wire(sim.group(), &orders);
    let n = sim
        .replay(JournalReader::<Input>::open(&path).unwrap(), route)
        .unwrap();
    sim.finish();
    assert_eq!(n, 3_000);
    assert!(
        *sim_sent.lock().unwrap() == live,
        "replay diverged from the live run"
    );

    // a truncated journal is an error naming the offset, never a panic
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.join("cut.journal");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let err = JournalReader::<Input>::open(&cut)
        .unwrap()
        .find_map(|r| r.err())
        .expect("the cut record is reported");
    assert!(matches!(err.kind, JournalErrorKind::Truncated), "{err}");
    assert!(err.offset > 8 && err.offset < bytes.len() as u64);
    assert!(err.to_string().contains(&format!("byte {}", err.offset)));
    // a corrupt length, and a file that is not a journal
    let mut bad = bytes.clone();
    bad[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&cut, &bad).unwrap();
    let err = JournalReader::<Input>::open(&cut)
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(matches!(err.kind, JournalErrorKind::BadLength(_)) && err.offset == 8);
    std::fs::write(&cut, b"hello").unwrap();
    assert!(JournalReader::<Input>::open(&cut).is_err());
    std::fs::remove_dir_all(&dir).ok();
}

/// The heartbeats' tick counts from the orders actor's log: which ticks
/// each heartbeat came after. (Their `at` is wall time live and virtual
/// time in replay, so it is left out.)
fn heartbeat_ticks(log: &[String]) -> Vec<u64> {
    log.iter()
        .filter_map(|line| line.split("ticks: ").nth(1))
        .map(|n| n.trim_end_matches(" }").parse().unwrap())
        .collect()
}

#[test]
fn a_journaled_live_run_with_periodic_timers_replays_identically() {
    let dir = std::env::temp_dir().join(format!("kaspar-journal-timers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("live.journal");
    let heartbeat = Some(Duration::from_micros(300));

    // live: a heartbeat every 300 µs, fed slowly enough that heartbeats
    // land between ticks at moments only the live run decides
    let system = System::new();
    let (orders, live_sent, live_log) = orders_actor();
    let orders = system.spawn(orders).start();
    let g = system.spawn_group::<Trading>(members(heartbeat)).start();
    let journal = Journaled::create(&path, &g, Clock::System, route).unwrap();
    wire(&g, &orders);
    for (i, (_, tick)) in ticks(2_000, 11).into_iter().enumerate() {
        assert!(journal.feed(Input::Tick(tick)).unwrap());
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_micros(400));
        }
    }
    assert_eq!(g.md.ask(Flush).unwrap().wait().unwrap(), 2_000);
    drop(journal); // flushes; timers fired after this are not recorded
                   // Every heartbeat the journal recorded is queued before this Flush, so
                   // each has sent its line to the orders actor once it is answered; wait
                   // until the orders actor has them all before shutting down (a shutdown
                   // may stop it first).
    assert_eq!(g.md.ask(Flush).unwrap().wait().unwrap(), 2_000);
    let mut reader = JournalReader::<Input>::open(&path).unwrap();
    assert!(reader.records_timers());
    let mut recorded_beats = 0;
    while let Some(entry) = reader.next_entry().unwrap() {
        recorded_beats += usize::from(matches!(entry, Entry::Timer { .. }));
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while heartbeat_ticks(&live_log.lock().unwrap()).len() < recorded_beats {
        assert!(
            std::time::Instant::now() < deadline,
            "the orders actor missed heartbeats"
        );
        std::thread::yield_now();
    }
    system.shutdown();
    let live_beats = heartbeat_ticks(&live_log.lock().unwrap());
    let live = live_sent.lock().unwrap().clone();

    // replay: the timer records fire the heartbeats where they fired live
    let mut sim = Simulation::<Trading>::new(members(heartbeat));
    let (orders, sim_sent, sim_log) = orders_actor();
    let orders = sim.spawn(orders);
    wire(sim.group(), &orders);
    let n = sim
        .replay(JournalReader::<Input>::open(&path).unwrap(), route)
        .unwrap();
    assert_eq!(n, 2_000);
    let sim_beats = heartbeat_ticks(&sim_log.lock().unwrap());
    sim.finish();
    assert!(
        sim_beats.len() >= 3 && sim_beats.iter().any(|&t| t > 0 && t < 2_000),
        "the run was meant to replay heartbeats between ticks: {sim_beats:?}"
    );
    // The live log also holds the heartbeats that fired after the journal
    // was dropped; everything the journal recorded replays exactly.
    assert_eq!(sim_beats.len(), recorded_beats);
    assert!(
        live_beats.len() >= sim_beats.len(),
        "{live_beats:?} / {sim_beats:?}"
    );
    assert_eq!(
        sim_beats[..],
        live_beats[..sim_beats.len()],
        "heartbeats fell between different ticks in replay"
    );
    assert!(
        *sim_sent.lock().unwrap() == live,
        "replay diverged from the live run"
    );
    std::fs::remove_dir_all(&dir).ok();
}

// ---- property: any interleaving, simulated twice, gives one trace --------

#[derive(Clone, Debug)]
enum Step {
    Tick(i64),
    Arm(u64),
    Advance(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (-50i64..50).prop_map(Step::Tick),
        (0u64..40).prop_map(Step::Arm),
        (0u64..30).prop_map(Step::Advance),
    ]
}

#[group]
pub struct Mixed {
    pub md: Addr<MarketData>,
    pub signal: Addr<Signal>,
    pub alarm: Addr<Alarm>,
}

fn run_steps(steps: &[Step]) -> (Vec<Order>, Vec<String>, Vec<(u64, &'static str)>) {
    let rang = Arc::new(Mutex::new(Vec::new()));
    let (md, signal) = members(Some(Duration::from_millis(7)));
    let mut sim = Simulation::<Mixed>::new((
        md,
        signal,
        Alarm {
            rang: rang.clone(),
            periodic: None,
        },
    ));
    let (orders, sent, log) = orders_actor();
    let orders = sim.spawn(orders);
    let g = sim.group();
    g.signal.send(SignalWire(orders.clone())).unwrap();
    g.md.send(Wire {
        signal: g.signal.clone(),
        orders,
    })
    .unwrap();
    let (md, alarm) = (g.md.clone(), g.alarm.clone());
    let mut now = 0u64;
    let mut price = 1_000;
    for (seq, s) in steps.iter().enumerate() {
        match s {
            Step::Tick(d) => {
                price += d;
                let t = Tick {
                    seq: seq as u64,
                    price,
                };
                sim.deliver(Time::from_nanos(now), &md, t).unwrap();
            }
            Step::Arm(ms) => sim
                .deliver(Time::from_nanos(now), &alarm, Arm(vec![(*ms, "armed")]))
                .unwrap(),
            Step::Advance(ms) => {
                now += ms * 1_000_000;
                sim.advance_to(Time::from_nanos(now));
            }
        }
    }
    sim.finish();
    let out = (
        sent.lock().unwrap().clone(),
        log.lock().unwrap().clone(),
        rang.lock().unwrap().clone(),
    );
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_interleavings_replay_identically(steps in prop::collection::vec(step(), 0..60)) {
        prop_assert_eq!(run_steps(&steps), run_steps(&steps));
    }
}
