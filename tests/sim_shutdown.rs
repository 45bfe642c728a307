//! A simulated system's shutdown stops its actors as a live shutdown does:
//! newest first, one at a time, so an upstream actor drains what it had
//! accepted into a downstream that is still open. The simulator still
//! chooses, under its seed, which ready activation runs at each step; the
//! same seed gives the same trace.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::sim::{Sim, SimConfig};

#[path = "support/pipeline.rs"]
mod pipeline;
use pipeline::Counts;

/// Messages queued at the relay when the shutdown begins.
const N: usize = 200;

/// A sink, then a relay into it with `N` messages queued, then the
/// shutdown: forwards refused, messages the sink handled, and the trace.
fn pipeline(seed: u64) -> (usize, usize, String) {
    let mut sim = Sim::new(SimConfig::seed(seed));
    let counts = Counts::default();
    // Every actor of a simulated system is the simulator's: `pooled` or
    // not, they run there.
    let relay = counts.pooled(sim.system(), Duration::ZERO);
    for i in 0..N as u64 {
        relay.send(i).unwrap();
    }
    drop(relay);
    sim.shutdown();
    let (refused, got) = counts.now();
    (refused, got, sim.trace().to_string())
}

#[test]
fn a_simulated_upstream_drains_into_its_downstream_at_shutdown() {
    for seed in 0..8 {
        let (refused, got, _) = pipeline(seed);
        // Closing both at once refused all 200 (seed 0): the sink,
        // closed with an empty mailbox, stopped first.
        assert_eq!((refused, got), (0, N), "seed {seed}");
    }
}

#[test]
fn the_same_seed_gives_the_same_shutdown() {
    for seed in [3, 11] {
        assert_eq!(pipeline(seed).2, pipeline(seed).2, "seed {seed}");
    }
}

/// Logs its name when it stops.
#[actor]
pub struct Named {
    name: &'static str,
    log: Arc<Mutex<Vec<&'static str>>>,
}

#[actor]
impl Named {
    #[handler(u8)]
    fn on(&mut self, _m: u8, _c: &mut Ctx<Self>) {}

    #[stopped]
    fn stopped(&mut self, _c: &mut Ctx<Self>) {
        self.log.lock().unwrap().push(self.name);
    }
}

#[test]
fn simulated_actors_stop_newest_first() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut sim = Sim::new(SimConfig::seed(5));
    let names = ["a", "b", "c", "d", "e"];
    let addrs: Vec<_> = names
        .iter()
        .map(|&name| {
            sim.system()
                .spawn(Named {
                    name,
                    log: Arc::clone(&log),
                })
                .start()
        })
        .collect();
    for a in &addrs {
        a.send(1).unwrap();
    }
    sim.shutdown();
    assert_eq!(*log.lock().unwrap(), ["e", "d", "c", "b", "a"]);
    assert!(addrs.iter().all(|a| a.is_stopped()));
    assert_eq!(sim.system().pooled_actors(), 0);
}

/// After `Sim::shutdown`, as after a live one, an actor spawned starts
/// closed: it refuses messages, and has stopped once the simulator has
/// run its steps. (It was open, and handled what it was sent.)
#[test]
fn an_actor_spawned_after_the_shutdown_starts_closed() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut sim = Sim::new(SimConfig::seed(2));
    sim.shutdown();
    let late = sim
        .system()
        .spawn(Named {
            name: "late",
            log: Arc::clone(&log),
        })
        .start();
    assert!(late.send(1).is_err());
    sim.run();
    assert!(late.is_stopped());
    assert_eq!(*log.lock().unwrap(), ["late"]);
}
