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
