//! Watchdogs for tests that reproduce hangs: a scenario that hangs fails
//! its test within a bound instead of hanging CI. Shared by the hardening
//! tests (`tests/hardening_*.rs`).

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// How long one step of a scenario may take before it counts as hung.
pub const STEP: Duration = Duration::from_secs(4);
/// How long a whole scenario may take.
pub const WATCHDOG: Duration = Duration::from_secs(10);

/// Runs `scenario` on a thread of its own and returns its result; fails
/// the test if it has not finished within [`WATCHDOG`], and passes its
/// panic (a failed assertion) on.
pub fn watchdog<T: Send + 'static>(what: &str, scenario: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let runner = thread::spawn(move || {
        let _ = tx.send(scenario());
    });
    match rx.recv_timeout(WATCHDOG) {
        Ok(out) => {
            runner.join().expect("the scenario thread finished");
            out
        }
        Err(RecvTimeoutError::Timeout) => panic!("watchdog: {what} hung for {WATCHDOG:?}"),
        Err(RecvTimeoutError::Disconnected) => match runner.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the scenario sent nothing and did not panic"),
        },
    }
}

/// Polls `done` until it holds or [`STEP`] has passed; returns whether it
/// held.
pub fn eventually(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + STEP;
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
    true
}
