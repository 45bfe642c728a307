//! The pool's monitor: a thread that frees an actor waiting in the
//! next-to-run slot of a worker stuck in one long activation.
//!
//! A handler that sends to a pooled actor puts it in its worker's
//! next-to-run slot, betting that the handler returns soon and the actor
//! runs next, right there. When the handler goes on computing instead, the
//! actor waits for it, however long it takes, while other workers may be
//! idle: nobody else looks in that slot, and the sleeping workers are not
//! woken for it (waking one per send would cost every hop of a chain of
//! sends a wake-up check). Measured on the 2-core VM before the monitor:
//! an actor sent to at the start of a 20 ms handler started 20 ms later,
//! with the pool's other worker asleep. tokio has the same gap (its issue
//! #4941, open since 2022); Go's runtime closes it with `sysmon`, a thread
//! that watches the others, which is the shape taken here.
//!
//! While any thread of the pool is awake, the monitor looks every
//! [`EVERY`] (by default: [`PoolConfig::monitor`] sets it, or turns the
//! monitor off) at each worker's activation count (`Shared::progress`, which
//! a worker stores as it begins each activation) and next-to-run slot. A
//! worker whose count has not moved since the monitor's last look has
//! been inside one activation for at least `EVERY`; if its slot holds an
//! actor, the monitor takes it (`NextSlot::steal`) and puts it in the
//! injector, which wakes a sleeping worker to run it. So such an actor
//! waits between `EVERY` and twice that, not for the handler.
//!
//! A chain of sends (a ping-pong, a ring) begins an activation per hop, so
//! its worker's count moves between any two looks, and the monitor leaves
//! it alone unless one hop's handler outlasts `EVERY`. When every thread of the pool is asleep, the monitor parks
//! for [`ASLEEP_RECHECK`] at a time (ten wake-ups a second of an idle
//! pool; the timeout is a safety net for the pool's exit, whose word is
//! not part of the handshake below), and the first thread to wake takes
//! it out of that park ([`Monitor::poke`]). The handshake is
//! the usual pair of `SeqCst` accesses on each side (the monitor's flag,
//! then the sleepers' count; a waking thread's count, then the flag), so
//! one of the two always sees the other; a poke that comes before the park
//! leaves `unpark`'s token behind.

use std::sync::Arc;
use std::thread::{self, Thread};
use std::time::Duration;

use super::Shared;
use crate::base::sync::{AtomicBool, Mutex, Ordering};
#[cfg(doc)]
use crate::PoolConfig;

/// How often the monitor looks while any thread of the pool is awake, by
/// default ([`PoolConfig::DEFAULT_MONITOR`]): the shortest stall it acts
/// on, and half the longest wait it leaves an actor in a stuck worker's
/// slot. About 1,000 looks a second while the
/// pool works, each a few loads and a timed park. At 250 µs (4,000 looks
/// a second) the slotted actor of a 20 ms handler started after 0.33 ms
/// (median of 20 on the 2-core VM), against 1.2–1.3 ms at 1 ms, but the
/// pooled ping-pong of `benches/sched` looked 5–10% slower, within a noise
/// that hid 1 ms's cost entirely.
pub(crate) const EVERY: Duration = Duration::from_millis(1);

/// How long the monitor's park lasts while every thread of the pool is
/// asleep (a poke ends it sooner): ten wake-ups a second of an idle pool.
const ASLEEP_RECHECK: Duration = Duration::from_millis(100);

/// The pool's side of its monitor thread.
#[derive(Default)]
pub(super) struct Monitor {
    /// The monitor is in its long park (every thread of the pool
    /// was asleep): the next thread to wake unparks it.
    parked: AtomicBool,
    /// The monitor's thread, once started.
    thread: Mutex<Option<Thread>>,
}

impl Monitor {
    /// A thread of the pool woke from its sleep (or is leaving the pool):
    /// takes the monitor out of an untimed park. A load when it is not in
    /// one.
    pub(super) fn poke(&self) {
        if self.parked.load(Ordering::SeqCst) && self.parked.swap(false, Ordering::SeqCst) {
            if let Some(t) = &*self.thread.lock() {
                t.unpark();
            }
        }
    }
}

/// Starts `shared`'s monitor thread, looking `every` so often while the
/// pool works, placed like a spare (the pool's placement, unpinned); its
/// handle goes with the spares, which the first worker to leave joins.
/// Without a thread (the OS refused one) the pool runs as before.
pub(super) fn start(shared: &Arc<Shared>, every: Duration) {
    let watched = Arc::clone(shared);
    let started = thread::Builder::new()
        .name("kaspar:pool-monitor".into())
        .spawn(move || {
            *watched.monitor.thread.lock() = Some(thread::current());
            (watched.place_spare)();
            watch(&watched, every);
        });
    if let Ok(handle) = started {
        shared.spares.lock().push(handle);
    }
}

/// The monitor's loop, looking `every` so often, until the pool has
/// exited.
fn watch(shared: &Shared, every: Duration) {
    let mut seen: Vec<u32> = shared
        .progress
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .collect();
    while !shared.exited() {
        if all_asleep(shared) {
            shared.monitor.parked.store(true, Ordering::SeqCst);
            // Looked at again after the flag is up (module docs).
            if all_asleep(shared) && !shared.exited() {
                // Timed only as a safety net: the pool's exit pokes the
                // monitor too, but its `live` word is not one of the
                // handshake's `SeqCst` pair.
                thread::park_timeout(ASLEEP_RECHECK);
            }
            shared.monitor.parked.store(false, Ordering::SeqCst);
            // Counts may have moved while it slept: start afresh.
            for (s, c) in seen.iter_mut().zip(shared.progress.iter()) {
                *s = c.load(Ordering::Relaxed);
            }
            continue;
        }
        thread::park_timeout(every);
        free_stuck(shared, &mut seen);
    }
}

/// Every thread of the pool (workers and spares) is asleep.
fn all_asleep(shared: &Shared) -> bool {
    shared.idle.sleepers() >= shared.threads.load(Ordering::SeqCst)
}

/// One look: takes the slotted actor of each worker whose count has not
/// moved since `seen`, and injects it; updates `seen`.
fn free_stuck(shared: &Shared, seen: &mut [u32]) {
    for ((count, slot), last) in shared
        .progress
        .iter()
        .zip(shared.next.iter())
        .zip(seen.iter_mut())
    {
        let now = count.load(Ordering::Relaxed);
        if now == *last && slot.is_full() {
            if let Some(task) = slot.steal() {
                shared.inject(task);
            }
        }
        *last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Named, SchedConfig, Task};
    use super::*;

    fn pool_of_two() -> Shared {
        Shared::threadless(SchedConfig {
            workers: 2,
            budget: 64,
            lifo_limit: 8,
            monitor: Some(EVERY),
        })
    }

    #[test]
    fn a_slotted_actor_behind_a_still_count_is_injected_and_one_behind_a_moving_count_is_not() {
        let shared = pool_of_two();
        let mut seen = vec![0, 0];
        for slot in shared.next.iter() {
            assert!(slot.put(Arc::new(Named) as Task).is_ok());
        }
        // Worker 0 began an activation since the last look; worker 1 did
        // not.
        shared.progress[0].store(1, Ordering::Relaxed);
        free_stuck(&shared, &mut seen);
        assert!(shared.next[0].is_full(), "a moving worker keeps its slot");
        assert!(!shared.next[1].is_full(), "a still one's actor is taken");
        assert!(
            !shared.injector.is_empty(),
            "and injected, to run elsewhere"
        );
        assert_eq!(seen, [1, 0]);
        // At the next look worker 0 is still too.
        free_stuck(&shared, &mut seen);
        assert!(!shared.next[0].is_full());
        let mut injected = 0;
        loop {
            match shared.injector.steal() {
                crossbeam_deque::Steal::Success(_) => injected += 1,
                crossbeam_deque::Steal::Empty => break,
                // A weak compare-and-swap may fail spuriously (Miri does).
                crossbeam_deque::Steal::Retry => {}
            }
        }
        assert_eq!(injected, 2, "each actor injected once");
    }

    #[test]
    fn the_monitor_sees_an_all_asleep_pool_and_a_poke_unparks_it_once() {
        let shared = pool_of_two();
        shared.threads.store(2, Ordering::SeqCst);
        assert!(!all_asleep(&shared));
        assert!(all_asleep(&pool_of_two()), "a pool of no threads");
        let monitor = &shared.monitor;
        *monitor.thread.lock() = Some(thread::current());
        monitor.poke();
        monitor.parked.store(true, Ordering::SeqCst);
        monitor.poke();
        assert!(
            !monitor.parked.load(Ordering::SeqCst),
            "the poke took the flag"
        );
        // The poke left an unpark token: this park returns at once.
        thread::park();
    }
}
