//! Loom model of a hosted pool's seats (`delivery/sched/seats.rs`): the
//! runners of a pool on a tokio runtime wait in seats, and a schedule
//! wakes one, or none when a runner its own thread woke is still on its
//! way and the queue holds nothing else. The property: no push is left
//! with every runner waiting and none woken. The queue is a counter and
//! a runner's waker a flag; the seats are the shipped code.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_host_seats --target-dir target/loom`
//!
//! Drop the fence in `Seats::sit` and loom finds a push that no runner
//! sees (checked). A fence of its own in `Seats::arrive`, after clearing
//! `coming`, is not needed (loom finds nothing without it): the sitting
//! fence later in the same poll orders the clearing.
#![cfg(loom)]

use kaspar::__loom::Seats;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

/// The queue, the seats and one wake-up flag per runner.
struct Pool {
    queued: AtomicUsize,
    seats: Seats,
    woken: Vec<AtomicBool>,
}

impl Pool {
    fn new(runners: usize) -> Self {
        let pool = Pool {
            queued: AtomicUsize::new(0),
            seats: Seats::new(runners),
            woken: (0..runners).map(|_| AtomicBool::new(false)).collect(),
        };
        // Every runner starts out waiting, as after its first empty poll.
        for seat in 0..runners {
            pool.seats.sit(seat);
        }
        pool
    }

    /// A schedule by the thread `me`: push, then wake whom the seats say.
    fn schedule(&self, me: usize) {
        self.queued.fetch_add(1, Ordering::SeqCst);
        if let Some(seat) = self
            .seats
            .wake_one(me, || self.queued.load(Ordering::SeqCst))
        {
            assert!(
                !self.woken[seat].swap(true, Ordering::SeqCst),
                "woken twice"
            );
        }
    }

    /// Runner `seat`'s polls while it is woken, `polls` at most: arrive,
    /// take one, sit, look again (`Runner::poll`). Returns what it took.
    fn run(&self, seat: usize, polls: usize) -> usize {
        let mut took = 0;
        for _ in 0..polls {
            if !self.woken[seat].swap(false, Ordering::SeqCst) {
                thread::yield_now();
                continue;
            }
            self.seats.arrive(seat);
            if self
                .queued
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                took += 1;
            }
            self.seats.sit(seat);
            if self.queued.load(Ordering::SeqCst) > 0 && self.seats.rise(seat) {
                // Still its own seat: runs again (its own wake-up).
                self.woken[seat].store(true, Ordering::SeqCst);
            }
        }
        took
    }

    /// After every thread is done: each push taken, or a runner woken to
    /// take it.
    fn nothing_stranded(&self) {
        let left = self.queued.load(Ordering::SeqCst);
        let woken = self.woken.iter().any(|w| w.load(Ordering::SeqCst));
        assert!(
            left == 0 || woken,
            "{left} queued, every runner waiting, none woken"
        );
    }
}

/// One thread schedules twice; one runner serves. The second schedule
/// may find the runner its first woke still on its way, and skip.
#[test]
fn two_schedules_from_one_thread_and_one_runner() {
    model(|| {
        let pool = Arc::new(Pool::new(1));
        let p = Arc::clone(&pool);
        let runner = thread::spawn(move || p.run(0, 3));
        pool.schedule(1);
        pool.schedule(1);
        let took = runner.join().unwrap();
        assert!(took <= 2);
        pool.nothing_stranded();
    });
}

/// Two threads schedule once each into two runners' seats.
#[test]
fn schedules_from_two_threads_and_two_runners() {
    model(|| {
        let pool = Arc::new(Pool::new(2));
        let p = Arc::clone(&pool);
        let runner = thread::spawn(move || p.run(0, 2));
        let p = Arc::clone(&pool);
        let other = thread::spawn(move || p.schedule(2));
        pool.schedule(1);
        other.join().unwrap();
        runner.join().unwrap();
        pool.nothing_stranded();
    });
}
