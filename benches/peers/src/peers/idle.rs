//! What idle actors cost: the process's CPU time while 100 actors, spawned
//! the default way, have nothing to do.

use std::time::{Duration, Instant};

use kaspar::prelude::*;

pub struct Nudge;

#[actor]
pub struct Sleeper {
    nudged: u64,
}

#[actor]
impl Sleeper {
    #[handler(Nudge)]
    fn nudge(&mut self, _msg: Nudge, _ctx: &mut Ctx<Self>) -> u64 {
        self.nudged += 1;
        self.nudged
    }
}

/// User plus system CPU time of the whole process so far.
fn process_cpu() -> Duration {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct,
    // and `getrusage` only writes into the one we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF is a valid `who`, and `usage` is a live, writable
    // `rusage` for the duration of the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(rc, 0, "getrusage failed");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Spawns `actors` actors, lets each handle one message (so every thread
/// has run and gone idle), waits `settle`, then measures the process's CPU
/// time over `window` of wall time. Percent of one core.
pub fn cpu_pct(actors: usize, settle: Duration, window: Duration) -> f64 {
    let system = System::new();
    let addrs: Vec<_> = (0..actors)
        .map(|_| system.spawn(Sleeper { nudged: 0 }).start())
        .collect();
    for a in &addrs {
        assert_eq!(a.ask(Nudge).unwrap().wait().unwrap(), 1);
    }
    std::thread::sleep(settle);
    let (cpu0, t0) = (process_cpu(), Instant::now());
    std::thread::sleep(window);
    let (cpu1, wall) = (process_cpu(), t0.elapsed());
    system.shutdown();
    100.0 * (cpu1 - cpu0).as_secs_f64() / wall.as_secs_f64()
}
