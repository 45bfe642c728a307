//! What the tests of pools hosted on tokio share: a watchdog that fails a
//! hung scenario instead of stalling the suite, and a system whose pool
//! runs on a given runtime.

use std::sync::mpsc::channel;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{PoolConfig, SystemConfig};
use tokio::runtime::Handle;

/// Runs `scenario` on a thread of its own; panics naming `what` if it
/// has not returned within a minute.
pub fn watchdog<R: Send + 'static>(what: &str, scenario: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, finished) = channel();
    std::thread::spawn(move || {
        let _ = done.send(scenario());
    });
    finished
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("watchdog: {what} hung"))
}

/// A system whose pooled actors run as tasks of `handle`'s runtime.
pub fn hosted_on(handle: Handle) -> System {
    System::with_config(SystemConfig {
        pool: PoolConfig::tokio(handle),
        ..SystemConfig::default()
    })
}
