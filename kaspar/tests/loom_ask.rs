//! Loom model of `ask`'s reply slot: a reply racing the asker's wait or
//! drop, and the recycling of answered slots into the asker's per-thread
//! cache; and of the reply ports a sink keeps (`reply::Ports`): two first
//! routes to one sink racing to push its port.
//!
//! Run with its own target dir (see `.ci/steps/loom.sh`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_ask --target-dir target/loom
//! ```
//!
//! The slot's state byte and cells, its `Arc`, the park/unpark of the
//! waiting thread and the per-thread cache all come from `kaspar`'s `sync`
//! shim, so loom sees every step (and every access to the slot's cells,
//! which it checks for races). The models check that a waiter is always
//! woken (loom reports a thread parked forever as a deadlock), that an
//! awaiting task is woken exactly when its poll did not find the reply,
//! through the waker it left last, that a reply is delivered or dropped
//! exactly once (a second fill of the same slot included), and that a slot
//! is recycled only when answered and only once the replier has let go of
//! it.
#![cfg(loom)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};

use kaspar::__loom::{ask, cached_slots};
use kaspar::__private::{ask_slot, AskSlot};
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

/// A waker that counts its wakes.
#[derive(Default)]
struct Wakes(AtomicUsize);

impl Wake for Wakes {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

fn waker() -> (std::sync::Arc<Wakes>, Waker) {
    let wakes = std::sync::Arc::new(Wakes::default());
    (std::sync::Arc::clone(&wakes), Waker::from(wakes))
}

fn poll<R: Send + 'static>(asked: &mut kaspar::Ask<R>, waker: &Waker) -> Poll<Result<R, AskError>> {
    Pin::new(asked).poll(&mut Context::from_waker(waker))
}

#[test]
fn loom_ask_an_awaiting_task_is_woken_unless_its_poll_found_the_reply() {
    model(|| {
        let (mut asked, reply_to) = ask::<u32>();
        let (wakes, w) = waker();
        let replier = thread::spawn(move || reply_to.deliver(7));
        let first = poll(&mut asked, &w);
        replier.join().unwrap();
        match first {
            Poll::Ready(v) => {
                assert_eq!(v, Ok(7));
                assert_eq!(wakes.0.load(Ordering::Relaxed), 0, "found, not woken");
            }
            Poll::Pending => {
                assert_eq!(wakes.0.load(Ordering::Relaxed), 1, "the reply woke it");
                assert_eq!(poll(&mut asked, &w), Poll::Ready(Ok(7)));
            }
        }
        drop(asked);
        assert_eq!(cached_slots::<u32>(), 1, "the answered slot came home");
    });
}

#[test]
fn loom_ask_a_poll_with_a_new_waker_races_the_reply_safely() {
    model(|| {
        let (mut asked, reply_to) = ask::<u32>();
        let (old_wakes, old) = waker();
        let (new_wakes, new) = waker();
        assert_eq!(poll(&mut asked, &old), Poll::Pending);
        let replier = thread::spawn(move || reply_to.deliver(7));
        let second = poll(&mut asked, &new);
        replier.join().unwrap();
        let (old_wakes, new_wakes) = (
            old_wakes.0.load(Ordering::Relaxed),
            new_wakes.0.load(Ordering::Relaxed),
        );
        match second {
            // The reply came before the new waker was left: the old one
            // was woken (or none, if the reply came between the two).
            Poll::Ready(v) => {
                assert_eq!(v, Ok(7));
                assert!(old_wakes <= 1 && new_wakes == 0);
            }
            // The new waker was left first: it alone is woken.
            Poll::Pending => {
                assert_eq!((old_wakes, new_wakes), (0, 1));
                assert_eq!(poll(&mut asked, &new), Poll::Ready(Ok(7)));
            }
        }
    });
}

#[test]
fn loom_ask_a_second_fill_of_a_slot_is_dropped_not_raced() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (asked, slot) = ask_slot::<Reply>();
        let again = Arc::clone(&slot);
        let d = Arc::clone(&drops);
        let first = thread::spawn(move || AskSlot::fill(slot, Ok(Reply { drops: d })));
        let d = Arc::clone(&drops);
        let second = thread::spawn(move || AskSlot::fill(again, Ok(Reply { drops: d })));
        let reply = asked.wait().expect("one reply");
        first.join().unwrap();
        second.join().unwrap();
        assert_eq!(
            drops.load(Ordering::Relaxed),
            1,
            "the other fill's reply was dropped"
        );
        drop(reply);
        assert_eq!(drops.load(Ordering::Relaxed), 2);
    });
}

/// Two threads route their first replies to one sink at once (two
/// `request`s naming the same actor for its reply): both may find no port
/// and push one; the loser of the push must use the winner's. Both
/// replies arrive, the sink keeps one port, and both routes let go of it.
#[test]
fn loom_ask_two_first_routes_to_a_sink_share_one_port() {
    use kaspar::__loom::{route_to, PortSink};
    model(|| {
        let sink = std::sync::Arc::new(PortSink::default());
        let other = std::sync::Arc::clone(&sink);
        let t = thread::spawn(move || route_to(&other).deliver(1));
        route_to(&sink).deliver(2);
        t.join().unwrap();
        assert_eq!(sink.heard(), (2, 3));
        assert_eq!(sink.ports(), 1, "one port per reply type");
        assert_eq!(std::sync::Arc::strong_count(&sink), 1);
    });
}
