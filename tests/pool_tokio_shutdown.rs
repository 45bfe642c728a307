//! A shutdown stops actors hosted on a tokio runtime (`PoolConfig::tokio`)
//! as it stops every other actor: newest first, one at a time, so a hosted
//! pipeline's upstream drains into a downstream that is still open. On
//! both kinds of runtime, with the shutdown called from outside the
//! runtime (where nothing may be driving a current-thread one), inside
//! `block_on` on its only thread, and as the system is dropped inside a
//! task on a worker of a multi-thread one. And `shutdown_timeout` stops
//! waiting for a hosted handler at its deadline.
//!
//! Every scenario runs on a helper thread under a watchdog, so a hang
//! fails the test instead of stalling the suite.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar::ShutdownReport;
use tokio::runtime::Builder;

#[path = "support/hosted.rs"]
mod hosted;
#[path = "support/pipeline.rs"]
mod pipeline;
use hosted::{hosted_on, watchdog};
use pipeline::{names, Counts, Relay};

/// Messages queued at the relay when the shutdown begins.
const N: usize = 2_000;

/// What a pipeline's shutdown left: forwards refused, messages the sink
/// handled, and the report's stopped actors by name.
#[derive(Debug, PartialEq)]
struct Ended {
    refused: usize,
    got: usize,
    stopped: Vec<String>,
}

/// A hosted sink, then a hosted relay spawned after it with `N` messages
/// queued (each forward waits 20 µs first, so the shutdown finds a
/// backlog); `end` shuts the system down and hands back the report, if
/// it has one (a drop has none).
fn pipeline(
    system: System,
    end: impl FnOnce(System) -> Option<ShutdownReport>,
) -> (Ended, Option<ShutdownReport>) {
    let counts = Counts::default();
    let relay = counts.pooled(&system, Duration::from_micros(20));
    for i in 0..N as u64 {
        relay.send(i).unwrap();
    }
    drop(relay);
    let report = end(system);
    let stopped = report
        .as_ref()
        .map(|r| names(&r.stopped))
        .unwrap_or_default();
    (ended(&counts, stopped), report)
}

fn ended(counts: &Counts, stopped: Vec<String>) -> Ended {
    let (refused, got) = counts.now();
    Ended {
        refused,
        got,
        stopped,
    }
}

fn drained(stopped: &[&str]) -> Ended {
    Ended {
        refused: 0,
        got: N,
        stopped: stopped.iter().map(|s| s.to_string()).collect(),
    }
}

fn shut_down(system: System) -> Option<ShutdownReport> {
    Some(system.shutdown())
}

#[test]
fn current_thread_runtime_shut_down_from_outside() {
    // Nothing drives the runtime: the shutdown's thread runs the
    // activations itself.
    let (ended, report) = watchdog("current-thread, outside", || {
        let rt = Builder::new_current_thread().build().unwrap();
        pipeline(hosted_on(rt.handle().clone()), shut_down)
    });
    assert_eq!(ended, drained(&["relay", "sink"]));
    let report = report.unwrap();
    assert!(report.unfinished.is_empty() && report.failed.is_empty());
}

#[test]
fn current_thread_runtime_shut_down_inside_block_on() {
    let (ended, _) = watchdog("current-thread, inside block_on", || {
        let rt = Builder::new_current_thread().build().unwrap();
        let system = hosted_on(rt.handle().clone());
        rt.block_on(async { pipeline(system, shut_down) })
    });
    assert_eq!(ended, drained(&["relay", "sink"]));
}

#[test]
fn multi_thread_runtime_shut_down_from_outside() {
    let (ended, _) = watchdog("multi-thread, outside", || {
        let rt = Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        pipeline(hosted_on(rt.handle().clone()), shut_down)
    });
    assert_eq!(ended, drained(&["relay", "sink"]));
}

#[test]
fn multi_thread_runtime_system_dropped_inside_a_task() {
    let (ended, _) = watchdog("multi-thread, dropped in a task", || {
        let rt = Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let system = hosted_on(rt.handle().clone());
        rt.block_on(async {
            tokio::spawn(async move {
                pipeline(system, |system| {
                    drop(system);
                    None
                })
            })
            .await
            .unwrap()
        })
    });
    assert_eq!(ended, drained(&[]));
}

/// Forwards to a relay (a hosted one, below), counting refusals.
#[actor]
pub struct Front {
    to: Addr<Relay>,
    refused: Arc<AtomicUsize>,
}

#[actor]
impl Front {
    #[handler(u64)]
    fn forward(&mut self, n: u64, _c: &mut Ctx<Self>) {
        if self.to.send(n).is_err() {
            self.refused.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Threads and hosted actors share the system's one start order: a sink
/// on a thread of its own, a hosted relay into it, and a front on a thread
/// into the relay, all three with work queued when the shutdown begins.
#[test]
fn hosted_and_threaded_actors_stop_in_one_order() {
    let ended = watchdog("mixed", || {
        let rt = Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let system = hosted_on(rt.handle().clone());
        let counts = Counts::default();
        let sink = system.spawn(counts.sink()).name("sink").start();
        let relay = system
            .spawn(counts.relay(sink, Duration::from_micros(20)))
            .name("relay")
            .pooled()
            .start();
        let front = system
            .spawn(Front {
                to: relay,
                refused: Arc::clone(&counts.refused),
            })
            .name("front")
            .start();
        for i in 0..N as u64 {
            front.send(i).unwrap();
        }
        drop(front);
        let report = system.shutdown();
        ended(&counts, names(&report.stopped))
    });
    assert_eq!(ended, drained(&["front", "relay", "sink"]));
}

/// Spins for as long as it is told before it returns.
#[actor]
pub struct Stuck;

#[actor]
impl Stuck {
    #[handler(Duration)]
    fn spin(&mut self, d: Duration, _c: &mut Ctx<Self>) {
        let until = Instant::now() + d;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }
}

/// `shutdown_timeout` on a hosted pool stops waiting at its deadline,
/// though a handler on another thread of the runtime has not returned:
/// the actor is listed unfinished, and a later `shutdown` joins it.
#[test]
fn a_hosted_shutdown_timeout_stops_waiting_at_its_deadline() {
    let (waited, unfinished, later) = watchdog("hosted shutdown_timeout", || {
        let rt = Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let system = hosted_on(rt.handle().clone());
        let stuck = system.spawn(Stuck).name("stuck").pooled().start();
        stuck.send(Duration::from_secs(3)).unwrap();
        // Let a runner take it.
        std::thread::sleep(Duration::from_millis(100));
        let t = Instant::now();
        let report = system.shutdown_timeout(Duration::from_millis(200));
        let waited = t.elapsed();
        let later = system.shutdown();
        (waited, names(&report.unfinished), names(&later.stopped))
    });
    assert!(waited < Duration::from_secs(2), "waited {waited:?}");
    assert_eq!(unfinished, ["stuck"]);
    assert_eq!(later, ["stuck"]);
}
