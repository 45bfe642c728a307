//! `Ask`'s unit tests: the reply slot's reuse and cache, how a slot ends
//! (answered from another thread, dropped, panicked), and the first
//! poll's spin.

use std::task::Waker;

use super::*;
use crate::base::sync::Ordering;
use crate::reply::ReplyTo;

/// A reply type of this test alone, so other tests on the same thread
/// cannot touch its cache entry.
#[derive(Debug, PartialEq)]
struct Reply(u32);

fn ask() -> (Ask<Reply>, ReplyTo<Reply>) {
    let slot = slot::<Reply>();
    (Ask::new(Arc::clone(&slot), None), ReplyTo::ask(slot))
}

#[test]
fn an_answered_slot_is_reused_by_the_next_ask_on_the_thread() {
    let (asked, reply_to) = ask();
    let first = Arc::as_ptr(asked.slot.as_ref().unwrap());
    reply_to.deliver(Reply(1));
    assert_eq!(asked.wait(), Ok(Reply(1)));

    let (asked, reply_to) = ask();
    assert_eq!(Arc::as_ptr(asked.slot.as_ref().unwrap()), first, "recycled");
    // A recycled slot starts empty: no stale value from the last ask.
    let mut asked = asked;
    assert_eq!(asked.try_take(), None);
    reply_to.deliver(Reply(2));
    assert_eq!(asked.wait(), Ok(Reply(2)));
}

#[test]
fn an_unanswered_slot_the_replier_still_holds_is_not_reused() {
    let (asked, reply_to) = ask();
    let first = Arc::as_ptr(asked.slot.as_ref().unwrap());
    drop(asked);
    let (next, next_reply) = ask();
    assert_ne!(Arc::as_ptr(next.slot.as_ref().unwrap()), first);
    // The late reply lands in the abandoned slot and is dropped with it.
    reply_to.deliver(Reply(9));
    next_reply.deliver(Reply(3));
    assert_eq!(next.wait(), Ok(Reply(3)));
}

#[test]
fn a_dropped_reply_route_answers_dropped_and_a_panicking_one_panicked() {
    let (asked, reply_to) = ask();
    drop(reply_to);
    assert_eq!(asked.wait(), Err(AskError::Dropped(None)));

    let (asked, reply_to) = ask();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _route = reply_to;
        panic!("handler failed");
    }));
    assert!(unwound.is_err());
    assert_eq!(asked.wait(), Err(AskError::Panicked(None)));
}

#[test]
fn a_reply_from_another_thread_wakes_a_waiter_and_the_slot_comes_back() {
    for round in 0..100 {
        let (asked, reply_to) = ask();
        let first = Arc::as_ptr(asked.slot.as_ref().unwrap());
        let t = std::thread::spawn(move || reply_to.deliver(Reply(round)));
        assert_eq!(asked.wait(), Ok(Reply(round)));
        t.join().unwrap();
        let (again, reply_to) = ask();
        assert_eq!(Arc::as_ptr(again.slot.as_ref().unwrap()), first);
        drop(reply_to);
        let _ = again.wait();
    }
}

std::thread_local! {
    /// Steps this thread's awaited asks spent polling for their reply.
    pub(super) static SPINS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// An actor as an `ask` sees it, on a thread of its own or hosted.
struct Target(Arc<ActorLock>, bool);

impl Asked for Target {
    fn lock(&self) -> &Arc<ActorLock> {
        &self.0
    }
    fn target(&self) -> crate::base::ids::Target {
        unreachable!("a poll registers no wait")
    }
    fn hosted(&self) -> bool {
        self.1
    }
    fn dedicated(&self) -> bool {
        !self.1
    }
}

/// Counts its wake-ups.
#[derive(Default)]
struct Woken(std::sync::atomic::AtomicUsize);

impl std::task::Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// An ask to `target`, awaited by hand: the steps its polls spun, and
/// what each poll returned.
fn poll_twice_then_reply(target: Option<Target>) -> (u32, Vec<Poll<Reply>>, usize) {
    let slot = slot::<Reply>();
    let target = target.map(|t| Arc::new(t) as AskTarget);
    let mut asked = Ask::new(Arc::clone(&slot), target);
    let reply_to = ReplyTo::ask(slot);
    let woken = Arc::new(Woken::default());
    let waker = Waker::from(Arc::clone(&woken));
    let mut cx = Context::from_waker(&waker);
    let mut poll = || Pin::new(&mut asked).poll(&mut cx).map(Result::unwrap);
    SPINS.with(|n| n.set(0));
    let mut polls = vec![poll(), poll()];
    let spun = SPINS.with(|n| n.get());
    reply_to.deliver(Reply(7));
    polls.push(poll());
    (spun, polls, woken.0.load(Ordering::Relaxed))
}

#[test]
fn an_awaited_ask_polls_for_its_reply_once_then_leaves_a_waker() {
    let lock = Arc::new(ActorLock::new(false));
    let (spun, polls, woken) = poll_twice_then_reply(Some(Target(lock, false)));
    assert_eq!(polls, [Poll::Pending, Poll::Pending, Poll::Ready(Reply(7))]);
    let steps = (0..)
        .scan(Backoff::new(), |b, _| b.is_spinning().then(|| b.snooze()))
        .count();
    assert_eq!(
        spun as usize, steps,
        "the spin phase, on the first poll only"
    );
    assert_eq!(woken, 1, "the reply woke the waker the poll left");
}

#[test]
fn an_ask_to_a_hosted_actor_or_to_none_does_not_poll_for_its_reply() {
    let lock = Arc::new(ActorLock::new(false));
    for target in [Some(Target(lock, true)), None] {
        let (spun, polls, woken) = poll_twice_then_reply(target);
        assert_eq!(polls, [Poll::Pending, Poll::Pending, Poll::Ready(Reply(7))]);
        assert_eq!((spun, woken), (0, 1));
    }
}

#[test]
fn the_cache_keeps_at_most_slot_cache_slots_per_type() {
    let pending: Vec<_> = (0..SLOT_CACHE + 8).map(|_| ask()).collect();
    for (asked, reply_to) in pending {
        reply_to.deliver(Reply(0));
        let _ = asked.wait();
    }
    let cached = with_cached::<Reply, _>(|list| list.len()).unwrap();
    assert_eq!(cached, SLOT_CACHE);
}

#[test]
fn a_second_fill_of_a_slot_drops_its_value_and_the_first_one_counts() {
    let slot = slot::<Reply>();
    let asked = Ask::new(Arc::clone(&slot), None);
    let again = Arc::clone(&slot);
    let before = answered();
    Slot::fill(slot, Ok(Reply(1)));
    Slot::fill(again, Ok(Reply(2)));
    assert_eq!(answered().wrapping_sub(before), 1, "one reply stored");
    assert_eq!(asked.wait(), Ok(Reply(1)));
}

#[test]
fn a_poll_with_a_new_waker_leaves_it_in_place_of_the_old_one() {
    let (mut asked, reply_to) = ask();
    let (old, new) = (Arc::new(Woken::default()), Arc::new(Woken::default()));
    let old_waker = Waker::from(Arc::clone(&old));
    let new_waker = Waker::from(Arc::clone(&new));
    let mut poll = |w: &Waker| Pin::new(&mut asked).poll(&mut Context::from_waker(w));
    assert!(poll(&old_waker).is_pending());
    assert!(poll(&old_waker).is_pending(), "the same waker again: kept");
    assert!(poll(&new_waker).is_pending());
    reply_to.deliver(Reply(5));
    let wakes = |w: &Arc<Woken>| w.0.load(Ordering::Relaxed);
    assert_eq!((wakes(&old), wakes(&new)), (0, 1), "only the last waker");
    assert_eq!(poll(&new_waker), Poll::Ready(Ok(Reply(5))));
}

#[test]
fn a_timed_out_wait_takes_its_thread_back_and_the_handle_still_answers() {
    let (mut asked, reply_to) = ask();
    let waited = asked.wait_timeout(Duration::from_millis(1));
    assert_eq!(waited, Err(AskError::Timeout(None)));
    assert!(!asked.slot().has_waiter(), "no waiter left behind");
    reply_to.deliver(Reply(3));
    assert_eq!(asked.wait_timeout(Duration::from_secs(5)), Ok(Reply(3)));
}

#[test]
#[cfg_attr(miri, ignore = "Miri's budget has no shorter spin phase to switch to")]
fn a_wait_that_outlasts_its_budget_makes_the_threads_next_ask_spin_briefly() {
    use crate::base::backoff::{pretend_yields_take, Backoff, Wait};
    // A thread of its own: the habit is per thread.
    std::thread::spawn(|| {
        pretend_yields_take(Some(std::time::Duration::ZERO));
        let full = || !Backoff::habitual(Wait::Reply).is_brief();
        assert!(full(), "a fresh thread spins fully");
        // A reply that is in before the wait: still a full spin.
        let (asked, reply_to) = ask();
        reply_to.deliver(Reply(1));
        assert_eq!(asked.wait(), Ok(Reply(1)));
        assert!(full());
        // A reply that comes only after the whole budget (the waiter
        // sleeps for it): the next wait spins briefly.
        let (asked, reply_to) = ask();
        let late = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            reply_to.deliver(Reply(2));
        });
        assert_eq!(asked.wait(), Ok(Reply(2)));
        late.join().unwrap();
        assert!(!full(), "after a wait that outlasted the budget");
        // One in at the first look of that brief budget: full again.
        let (asked, reply_to) = ask();
        reply_to.deliver(Reply(3));
        assert_eq!(asked.wait(), Ok(Reply(3)));
        assert!(full(), "caught up within a full spin's time");
    })
    .join()
    .unwrap();
}
