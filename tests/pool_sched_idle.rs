//! An idle pool sleeps: after a burst of work, a pool whose thousand actors
//! are all idle burns (next to) no CPU. Its own test binary, so that no
//! other test's threads run while the process's CPU time is read.

use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{PoolConfig, SystemConfig};

#[actor]
pub struct Quiet {
    n: u64,
}

#[actor]
impl Quiet {
    #[handler(u64)]
    fn add(&mut self, k: u64, _ctx: &mut Ctx<Self>) -> u64 {
        self.n += k;
        self.n
    }
}

/// CPU time this process has used so far (user + system).
fn cpu_time() -> Duration {
    // SAFETY: `getrusage` fills the struct we pass; all zeroes is a valid
    // `rusage` to start from.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

#[test]
fn an_idle_pool_of_a_thousand_actors_burns_no_cpu() {
    let system = System::with_config(SystemConfig {
        pool: PoolConfig::new().workers(2),
        ..SystemConfig::default()
    });
    let actors: Vec<Addr<Quiet>> = (0..1000)
        .map(|_| system.spawn(Quiet { n: 0 }).pooled().start())
        .collect();
    for a in &actors {
        a.send(1).unwrap();
    }
    assert_eq!(actors[999].ask(1).unwrap().wait().unwrap(), 2);
    // Past the workers' spin-and-yield budget (microseconds).
    std::thread::sleep(Duration::from_millis(50));
    let before = cpu_time();
    std::thread::sleep(Duration::from_millis(500));
    let used = cpu_time() - before;
    // A worker that kept spinning or yielding would use most of the 500 ms.
    assert!(
        used < Duration::from_millis(25),
        "an idle pool used {used:?} of CPU in 500 ms"
    );
    system.shutdown();
}
