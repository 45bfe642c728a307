//! Loom model of the pool's sleep protocol (`delivery/sched/idle.rs`): a
//! worker that runs out of work searches, then sleeps, while a scheduler
//! pushes a task and notifies. No wake-up may be lost: a lost one leaves
//! the worker asleep with the task queued, which loom reports as a
//! deadlock.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_sched_idle --target-dir target/loom`
//!
//! Take out the sleeper's second look at the queues (after its fence in
//! `Idle::sleep`) and the model deadlocks (checked).
#![cfg(loom)]

use kaspar::__loom::{IdleModel, SleepToken};
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

/// Takes one task from `queue` if there is one.
fn take(queue: &AtomicUsize) -> bool {
    let mut n = queue.load(Ordering::Acquire);
    while n > 0 {
        match queue.compare_exchange(n, n - 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(now) => n = now,
        }
    }
    false
}

/// A worker's search: look, then sleep (with the protocol's re-check),
/// until it has taken `want` tasks.
fn work(idle: &IdleModel, queue: &AtomicUsize, me: &SleepToken, want: usize) {
    let mut taken = 0;
    while taken < want {
        idle.start_searching();
        loop {
            if take(queue) {
                idle.found_work();
                taken += 1;
                break;
            }
            idle.sleep(me, || queue.load(Ordering::Acquire) > 0);
        }
    }
}

#[test]
fn a_schedule_racing_a_worker_going_to_sleep_always_wakes_it() {
    model(|| {
        let idle = Arc::new(IdleModel::default());
        let queue = Arc::new(AtomicUsize::new(0));
        let scheduler = {
            let (idle, queue) = (Arc::clone(&idle), Arc::clone(&queue));
            thread::spawn(move || {
                queue.fetch_add(1, Ordering::Release);
                idle.notify_one();
            })
        };
        work(&idle, &queue, &SleepToken::default(), 1);
        scheduler.join().unwrap();
    });
}

#[test]
fn two_schedules_and_two_sleepy_workers_each_get_theirs() {
    model(|| {
        let idle = Arc::new(IdleModel::default());
        let queue = Arc::new(AtomicUsize::new(0));
        let other = {
            let (idle, queue) = (Arc::clone(&idle), Arc::clone(&queue));
            thread::spawn(move || work(&idle, &queue, &SleepToken::default(), 1))
        };
        let scheduler = {
            let (idle, queue) = (Arc::clone(&idle), Arc::clone(&queue));
            thread::spawn(move || {
                for _ in 0..2 {
                    queue.fetch_add(1, Ordering::Release);
                    idle.notify_one();
                }
            })
        };
        work(&idle, &queue, &SleepToken::default(), 1);
        scheduler.join().unwrap();
        other.join().unwrap();
    });
}
