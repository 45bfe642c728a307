//! A relay and its sink, the pipeline the shutdown tests drain: the relay
//! forwards each number to the sink with `send` and counts the forwards
//! refused; the sink counts what it handles.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaspar::prelude::*;

#[actor]
pub struct Sink {
    pub got: Arc<AtomicUsize>,
}

#[actor]
impl Sink {
    #[handler(u64)]
    fn take(&mut self, _n: u64, _c: &mut Ctx<Self>) -> u64 {
        self.got.fetch_add(1, Ordering::Relaxed) as u64
    }
}

#[actor]
pub struct Relay {
    pub to: Addr<Sink>,
    pub refused: Arc<AtomicUsize>,
    /// Spun before each forward, so that a shutdown finds a backlog.
    pub work: Duration,
}

#[actor]
impl Relay {
    #[handler(u64)]
    fn relay(&mut self, n: u64, _c: &mut Ctx<Self>) {
        let until = Instant::now() + self.work;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        if self.to.send(n).is_err() {
            self.refused.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// What a pipeline counts: the sink's messages handled, and the relay's
/// forwards refused.
#[derive(Clone, Default)]
pub struct Counts {
    pub got: Arc<AtomicUsize>,
    pub refused: Arc<AtomicUsize>,
}

// Each test that includes this file uses a part of it.
#[allow(dead_code)]
impl Counts {
    /// A sink counting into these counts.
    pub fn sink(&self) -> Sink {
        Sink {
            got: Arc::clone(&self.got),
        }
    }

    /// A relay into `to`, counting its refused forwards here.
    pub fn relay(&self, to: Addr<Sink>, work: Duration) -> Relay {
        Relay {
            to,
            refused: Arc::clone(&self.refused),
            work,
        }
    }

    /// `(refused, got)` now.
    pub fn now(&self) -> (usize, usize) {
        (
            self.refused.load(Ordering::Relaxed),
            self.got.load(Ordering::Relaxed),
        )
    }

    /// A pooled sink named `sink`, then a pooled relay named `relay` into
    /// it (started after it, so a shutdown stops it first).
    pub fn pooled(&self, system: &System, work: Duration) -> Addr<Relay> {
        let sink = system.spawn(self.sink()).name("sink").pooled().start();
        system
            .spawn(self.relay(sink, work))
            .name("relay")
            .pooled()
            .start()
    }
}

/// The instance names of a shutdown report's actors ("?" for none).
#[allow(dead_code)]
pub fn names(targets: &[kaspar::Target]) -> Vec<String> {
    targets
        .iter()
        .map(|t| t.instance.as_deref().unwrap_or("?").to_owned())
        .collect()
}
