//! Loom model of `ask`'s reply slot: a reply racing the asker's wait or
//! drop, and the recycling of answered slots into the asker's per-thread
//! cache.
//!
//! Run with its own target dir (see `.ci/steps/loom.sh`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_ask --target-dir target/loom
//! ```
//!
//! The slot's mutex, its `Arc`, the park/unpark of the waiting thread and
//! the per-thread cache all come from `kaspar`'s `sync` shim, so loom sees
//! every step. The models check that a waiter is always woken (loom reports
//! a thread parked forever as a deadlock), that a reply is delivered or
//! dropped exactly once, and that a slot is recycled only when answered and
//! only once the replier has let go of it.
#![cfg(loom)]

use kaspar::__loom::{ask, cached_slots};
use kaspar::AskError;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// A reply that counts its drops.
struct Reply {
    drops: Arc<AtomicUsize>,
}

impl Drop for Reply {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn loom_ask_a_waiter_is_woken_by_a_reply_from_another_thread() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (asked, reply_to) = ask::<Reply>();
        let d = Arc::clone(&drops);
        let replier = thread::spawn(move || reply_to.deliver(Reply { drops: d }));
        let reply = asked.wait().expect("the reply, not an error");
        replier.join().unwrap();
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        drop(reply);
        assert_eq!(drops.load(Ordering::Relaxed), 1, "one reply, dropped once");
        assert_eq!(cached_slots::<Reply>(), 1, "the answered slot came home");
    });
}

#[test]
fn loom_ask_dropping_an_unanswered_ask_races_the_reply_safely() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (asked, reply_to) = ask::<Reply>();
        let d = Arc::clone(&drops);
        let replier = thread::spawn(move || reply_to.deliver(Reply { drops: d }));
        drop(asked);
        replier.join().unwrap();
        // Whoever let go last freed the slot, and the reply with it.
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        assert_eq!(cached_slots::<Reply>(), 0, "never answered, never recycled");
    });
}

#[test]
fn loom_ask_a_recycled_slot_carries_nothing_into_the_next_ask() {
    model(|| {
        let (asked, reply_to) = ask::<u32>();
        let replier = thread::spawn(move || reply_to.deliver(7));
        assert_eq!(asked.wait(), Ok(7));
        replier.join().unwrap();

        let (mut again, reply_to) = ask::<u32>();
        assert_eq!(
            cached_slots::<u32>(),
            0,
            "the next ask took the cached slot"
        );
        assert_eq!(again.try_take(), None, "no stale reply");
        let replier = thread::spawn(move || drop(reply_to));
        assert_eq!(again.wait(), Err(AskError::Dropped(None)));
        replier.join().unwrap();
    });
}
