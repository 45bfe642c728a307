//! Shutdowns in fresh processes: a pipeline of relays and sinks, on
//! threads of their own and pooled, mixed, with a backlog, ended by
//! `shutdown`, by dropping the `System`, or by dropping it while a panic
//! unwinds. Each run is its own process (this test binary, run again with
//! the run's number in an environment variable; `harness = false`), so
//! what a process does once (its first pool, its threads' start, its exit)
//! is exercised every time. A run that hangs is killed after a deadline
//! and fails the test; every forward must be handled, none refused.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaspar::prelude::*;

#[path = "support/pipeline.rs"]
mod pipeline;
use pipeline::{Relay, Sink};

const CHILD: &str = "KASPAR_SHUTDOWN_CHILD";
const RUNS: u32 = 45;
const MESSAGES: u64 = 5_000;
const PAIRS: usize = 6;

/// One process's run; `mode` picks how the system ends.
fn scenario(mode: u32) {
    let got = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let system = System::new();
    let mut relays = Vec::new();
    for i in 0..PAIRS {
        let sink = system.spawn(Sink {
            got: Arc::clone(&got),
        });
        let sink = if i % 2 == 0 {
            sink.pooled().start()
        } else {
            sink.start()
        };
        assert_eq!(sink.ask(0).unwrap().wait().unwrap(), i as u64);
        let relay = system.spawn(Relay {
            to: sink,
            refused: Arc::clone(&refused),
            work: Duration::ZERO,
        });
        relays.push(if i % 3 == 0 {
            relay.start()
        } else {
            relay.pooled().start()
        });
    }
    for n in 0..MESSAGES {
        relays[n as usize % PAIRS].send(n).unwrap();
    }
    match mode % 3 {
        0 => {
            let report = system.shutdown();
            assert_eq!(report.stopped.len(), 2 * PAIRS, "{report:?}");
        }
        1 => drop(system),
        _ => {
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let _system = system;
                std::panic::panic_any("the system is dropped while this unwinds");
            }));
            assert!(unwound.is_err());
        }
    }
    assert_eq!(refused.load(Ordering::Relaxed), 0, "forwards refused");
    assert_eq!(
        got.load(Ordering::Relaxed),
        MESSAGES as usize + PAIRS,
        "messages handled"
    );
}

fn main() {
    match std::env::var(CHILD) {
        Ok(mode) => scenario(mode.parse().expect("a mode")),
        Err(_) => shutdowns_in_fresh_processes_end_and_lose_nothing(),
    }
}

fn shutdowns_in_fresh_processes_end_and_lose_nothing() {
    let exe = std::env::current_exe().unwrap();
    for run in 0..RUNS {
        let mut child = Command::new(&exe)
            .env(CHILD, run.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("run {run} (mode {}) did not end within 60 s", run % 3);
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let out = child.wait_with_output().unwrap();
        assert!(
            status.success(),
            "run {run} (mode {}) failed: {status}\n{}\n{}",
            run % 3,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    println!("shutdown_processes: {RUNS} fresh processes ended, nothing lost");
}
