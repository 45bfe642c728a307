//! A shutdown stops pooled actors as it stops actors on threads of their
//! own: newest first, one at a time, in one start order shared by both,
//! each named in the report. So a pooled pipeline's upstream drains into
//! a downstream that is still open: nothing it forwards is refused.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{PoolConfig, SystemConfig};

#[path = "support/pipeline.rs"]
mod pipeline;
use pipeline::{names, Counts};

fn pool_of(workers: usize) -> System {
    System::with_config(SystemConfig {
        pool: PoolConfig::new().workers(workers),
        ..SystemConfig::default()
    })
}

#[test]
fn a_pooled_upstream_drains_into_its_pooled_downstream_at_shutdown() {
    const N: u64 = 2_000;
    let system = pool_of(2);
    let counts = Counts::default();
    let relay = counts.pooled(&system, Duration::from_micros(20));
    for i in 0..N {
        relay.send(i).unwrap();
    }
    let report = system.shutdown();
    // Closing both at once refused 1,988 of 2,000 here.
    assert_eq!(counts.now(), (0, N as usize), "(forwards refused, handled)");
    assert_eq!(names(&report.stopped), ["relay", "sink"]);
    assert!(report.unfinished.is_empty() && report.failed.is_empty());
    assert_eq!(system.dead_letters().total(), 0);
}

#[actor]
pub struct Step {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    /// Stopped by this one's `stopped` hook.
    takes_down: Option<Addr<Step>>,
}

#[actor]
impl Step {
    #[handler(u8)]
    fn on(&mut self, _m: u8, _c: &mut Ctx<Self>) {}

    #[stopped]
    fn stopped(&mut self, _c: &mut Ctx<Self>) {
        self.log.lock().unwrap().push(self.name.to_owned());
        if let Some(other) = self.takes_down.take() {
            other.stop();
        }
    }
}

fn step(
    system: &System,
    log: &Arc<Mutex<Vec<String>>>,
    name: &'static str,
    pooled: bool,
) -> Addr<Step> {
    step_taking_down(system, log, name, pooled, None)
}

fn step_taking_down(
    system: &System,
    log: &Arc<Mutex<Vec<String>>>,
    name: &'static str,
    pooled: bool,
    takes_down: Option<Addr<Step>>,
) -> Addr<Step> {
    let spawn = system
        .spawn(Step {
            name,
            log: Arc::clone(log),
            takes_down,
        })
        .name(name);
    if pooled {
        spawn.pooled().start()
    } else {
        spawn.start()
    }
}

#[test]
fn threads_and_pooled_actors_stop_newest_first_in_one_order() {
    let system = pool_of(2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let plan = [
        ("a", false),
        ("b", true),
        ("c", true),
        ("d", false),
        ("e", true),
        ("f", false),
        ("g", true),
    ];
    let _addrs: Vec<_> = plan
        .iter()
        .map(|(name, pooled)| step(&system, &log, name, *pooled))
        .collect();
    let report = system.shutdown();
    let newest_first = ["g", "f", "e", "d", "c", "b", "a"];
    assert_eq!(names(&report.stopped), newest_first);
    assert_eq!(*log.lock().unwrap(), newest_first, "stopped hooks' order");
    assert!(report.unfinished.is_empty() && report.failed.is_empty());
    assert_eq!(system.pooled_actors(), 0);
}

#[test]
fn a_pooled_actor_that_stops_before_its_turn_is_passed_over_and_reported() {
    let system = pool_of(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let _a = step(&system, &log, "a", true);
    let b = step(&system, &log, "b", true);
    // c, stopped first, stops b from its hook: b may have left the pool
    // by the time its turn comes, or not yet.
    let _c = step_taking_down(&system, &log, "c", true, Some(b));
    let report = system.shutdown();
    assert_eq!(names(&report.stopped), ["c", "b", "a"]);
    assert_eq!(*log.lock().unwrap(), ["c", "b", "a"]);
}

#[test]
fn a_pooled_actor_stopped_long_before_the_shutdown_has_left_and_is_not_listed() {
    let system = pool_of(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let _a = step(&system, &log, "a", true);
    let b = step(&system, &log, "b", true);
    b.stop();
    while system.pooled_actors() > 1 {
        std::thread::yield_now();
    }
    let report = system.shutdown();
    assert_eq!(names(&report.stopped), ["a"]);
    assert_eq!(*log.lock().unwrap(), ["b", "a"]);
}

#[actor]
pub struct Stuck {
    gate: Arc<Mutex<Receiver<()>>>,
}

#[actor]
impl Stuck {
    #[handler(u8)]
    fn wait(&mut self, _m: u8, _c: &mut Ctx<Self>) {
        let _ = self.gate.lock().unwrap().recv();
    }
}

#[test]
fn a_deadline_past_a_stuck_pooled_handler_closes_the_rest_and_a_later_shutdown_joins_them() {
    let system = pool_of(2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let older = step(&system, &log, "older", true);
    let (open, gate): (Sender<()>, _) = channel();
    let stuck = system
        .spawn(Stuck {
            gate: Arc::new(Mutex::new(gate)),
        })
        .name("stuck")
        .pooled()
        .start();
    stuck.send(1).unwrap();
    let report = system.shutdown_timeout(Duration::from_millis(100));
    assert!(report.stopped.is_empty(), "{:?}", report.stopped);
    assert_eq!(names(&report.unfinished), ["stuck", "older"]);
    assert!(
        older.send(1).unwrap_err().is_closed(),
        "closed at the deadline"
    );
    open.send(()).unwrap();
    let report = system.shutdown();
    assert!(report.unfinished.is_empty(), "{:?}", report.unfinished);
    assert!(older.is_stopped() && stuck.is_stopped());
    assert_eq!(system.pooled_actors(), 0);
}

#[group]
pub struct Pair {
    pub x: Addr<Step>,
    pub y: Addr<Step>,
}

#[test]
fn a_pooled_group_takes_its_place_in_the_order_as_one_entry() {
    let system = pool_of(2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let member = |name| Step {
        name,
        log: Arc::clone(&log),
        takes_down: None,
    };
    let _a = step(&system, &log, "a", false);
    let _pair = system
        .spawn_group::<Pair>((member("x"), member("y")))
        .name("pair")
        .pooled()
        .start();
    let _c = step(&system, &log, "c", true);
    let report = system.shutdown();
    assert_eq!(names(&report.stopped), ["c", "pair", "a"]);
    // A group's members run their hooks in field order.
    assert_eq!(*log.lock().unwrap(), ["c", "x", "y", "a"]);
}

/// Spawns a pooled `late` from its `stopped` hook: an actor that starts
/// while the shutdown runs.
#[actor]
pub struct Spawner {
    log: Arc<Mutex<Vec<String>>>,
    pooled: bool,
}

#[actor]
impl Spawner {
    #[handler(u8)]
    fn on(&mut self, _m: u8, _c: &mut Ctx<Self>) {}

    #[stopped]
    fn stopped(&mut self, ctx: &mut Ctx<Self>) {
        let late = ctx
            .spawn(Step {
                name: "late",
                log: Arc::clone(&self.log),
                takes_down: None,
            })
            .name("late");
        if self.pooled {
            late.pooled().start();
        } else {
            late.start();
        }
    }
}

/// An actor spawned while the shutdown runs starts closed, and the
/// shutdown reports it once it has stopped, pooled as on a thread (the
/// pooled one left the pool before any run listed it, and was missing).
#[test]
fn an_actor_spawned_during_the_shutdown_is_reported_pooled_or_not() {
    for pooled in [false, true] {
        let system = pool_of(2);
        let log = Arc::new(Mutex::new(Vec::new()));
        let first = step(&system, &log, "first", pooled);
        let spawner = system
            .spawn(Spawner {
                log: Arc::clone(&log),
                pooled,
            })
            .name("spawner");
        let spawner = if pooled {
            spawner.pooled().start()
        } else {
            spawner.start()
        };
        drop((first, spawner));
        let report = system.shutdown();
        let mut stopped = names(&report.stopped);
        stopped.sort();
        assert_eq!(stopped, ["first", "late", "spawner"], "pooled: {pooled}");
        assert!(log.lock().unwrap().contains(&"late".to_owned()));
        assert_eq!(system.pooled_actors(), 0);
    }
}
