//! The timer queue's order, retries and cancellation, fired by hand.

use super::*;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};

const Q1: QueueKey = QueueKey(1);
const Q2: QueueKey = QueueKey(2);
const MS: u64 = 1_000_000;

type Log = Arc<parking_lot::Mutex<Vec<&'static str>>>;

/// A firing that logs `name` each time it is tried and answers from
/// `script` (then `Delivered`); it owns `kept`, which drops with it.
fn scripted(log: &Log, name: &'static str, script: &[Fired], kept: Arc<()>) -> Fire {
    let log = Arc::clone(log);
    let mut script: VecDeque<Fired> = script.iter().copied().collect();
    Box::new(move || {
        let _ = &kept;
        log.lock().push(name);
        script.pop_front().unwrap_or(Fired::Delivered)
    })
}

fn at(nanos: u64) -> Time {
    Time::from_nanos(nanos)
}

#[test]
fn a_periodic_timer_cancelled_while_it_fires_does_not_rearm() {
    let q = Arc::new(TimerQueue::default());
    let fired = Arc::new(AtomicU32::new(0));
    let id = Arc::new(parking_lot::Mutex::new(None::<TimerId>));
    let (q2, fired2, id2) = (Arc::clone(&q), Arc::clone(&fired), Arc::clone(&id));
    // the firing closure cancels its own timer, as a handler would
    // while the queue is between firing and re-arming
    let t = q.schedule(
        at(10),
        Some(Duration::from_nanos(10)),
        Q1,
        Box::new(move || {
            fired2.fetch_add(1, Ordering::Relaxed);
            let id = id2.lock().expect("scheduled before firing");
            assert!(q2.cancel(id), "cancel reports the firing timer");
            Fired::Delivered
        }),
    );
    *id.lock() = Some(t);
    assert!(q.fire_next(at(10)));
    assert!(!q.fire_next(at(1_000)), "it did not re-arm");
    assert_eq!(fired.load(Ordering::Relaxed), 1);
    assert!(!q.cancel(t));
}

#[test]
fn due_order_is_time_then_scheduling_order() {
    let q = TimerQueue::default();
    let log = Log::default();
    for (due, name) in [(20, "c"), (10, "a"), (20, "d"), (10, "b")] {
        q.schedule(at(due), None, Q1, scripted(&log, name, &[], Arc::new(())));
    }
    while q.fire_next(at(100)) {}
    assert_eq!(*log.lock(), ["a", "b", "c", "d"]);
}

#[test]
fn a_full_target_waits_while_other_queues_fire_on_time() {
    let q = TimerQueue::with_backoff();
    let log = Log::default();
    let full = [Fired::Full, Fired::Full];
    q.schedule(at(10), None, Q1, scripted(&log, "x", &full, Arc::new(())));
    q.schedule(at(20), None, Q2, scripted(&log, "y", &[], Arc::new(())));
    assert!(q.fire_next(at(10)), "x tried, found no room");
    assert_eq!(q.next_due(), Some(at(20)), "y is next, x's retry later");
    assert!(q.fire_next(at(20)));
    assert!(!q.fire_next(at(20)), "x waits for its retry");
    assert_eq!(*log.lock(), ["x", "y"]);
    // retried after 1 ms, then 2 ms: the backoff grows
    assert_eq!(q.next_due(), Some(at(10 + MS)));
    assert!(q.fire_next(at(10 + MS)));
    assert_eq!(q.next_due(), Some(at(10 + 3 * MS)));
    assert!(q.fire_next(at(10 + 3 * MS)));
    assert_eq!(*log.lock(), ["x", "y", "x", "x"]);
    assert_eq!(q.next_due(), None, "delivered on the third try, once");
}

#[test]
fn the_retry_interval_grows_to_ten_milliseconds() {
    let q = TimerQueue::with_backoff();
    let log = Log::default();
    let t = q.schedule(
        at(0),
        None,
        Q1,
        scripted(&log, "x", &[Fired::Full; 8], Arc::new(())),
    );
    let mut now = 0;
    let mut gaps = Vec::new();
    for _ in 0..7 {
        assert!(q.fire_next(at(now)));
        let next = q.next_due().expect("still waiting").as_nanos();
        gaps.push((next - now) / MS);
        now = next;
    }
    assert_eq!(gaps, [1, 2, 4, 8, 10, 10, 10]);
    assert!(q.cancel(t));
}

#[test]
fn one_queues_timers_keep_their_order_while_they_wait() {
    let q = TimerQueue::with_backoff();
    let log = Log::default();
    q.schedule(
        at(10),
        None,
        Q1,
        scripted(&log, "a", &[Fired::Full], Arc::new(())),
    );
    q.schedule(at(12), None, Q2, scripted(&log, "other", &[], Arc::new(())));
    q.schedule(at(15), None, Q1, scripted(&log, "b", &[], Arc::new(())));
    while q.fire_next(at(20)) {}
    // `b` came due while `a` waited: it joined the wait untried
    assert_eq!(*log.lock(), ["a", "other"]);
    while q.fire_next(at(20 + MS)) {}
    assert_eq!(*log.lock(), ["a", "other", "a", "b"]);
    assert_eq!(q.next_due(), None);
}

#[test]
fn a_periodic_timer_keeps_one_message_waiting_and_coalesces_missed_ticks() {
    let q = TimerQueue::with_backoff();
    let log = Log::default();
    q.schedule(
        at(10 * MS),
        Some(Duration::from_millis(10)),
        Q1,
        scripted(&log, "tick", &[Fired::Full; 3], Arc::new(())),
    );
    // due at 10 ms, no room until its third retry (at 17 ms): it does
    // not re-arm meanwhile, so one message waits, not one per period
    let mut now = 10 * MS;
    while let Some(next) = q.next_due() {
        now = next.as_nanos();
        q.fire_next(next);
        if log.lock().len() == 4 {
            break;
        }
    }
    assert_eq!(now, 17 * MS);
    assert_eq!(q.next_due(), Some(at(20 * MS)), "re-armed on its schedule");
    // a long wait: the ticks missed are not delivered late
    let q = TimerQueue::with_backoff();
    let log = Log::default();
    q.schedule(
        at(10 * MS),
        Some(Duration::from_millis(10)),
        Q1,
        scripted(&log, "tick", &[Fired::Full], Arc::new(())),
    );
    assert!(q.fire_next(at(10 * MS)));
    assert!(q.fire_next(at(55 * MS)), "retried late, delivered");
    assert_eq!(
        q.next_due(),
        Some(at(60 * MS)),
        "the ticks of 20..50 ms coalesced"
    );
    assert!(!q.fire_next(at(59 * MS)));
    assert_eq!(log.lock().len(), 2);
}

#[test]
fn cancelling_a_waiting_timer_drops_its_message() {
    let q = TimerQueue::with_backoff();
    let log = Log::default();
    let kept = Arc::new(());
    let t = q.schedule(
        at(10),
        None,
        Q1,
        scripted(&log, "x", &[Fired::Full], Arc::clone(&kept)),
    );
    q.schedule(at(20), None, Q1, scripted(&log, "later", &[], Arc::new(())));
    assert!(q.fire_next(at(10)));
    assert_eq!(Arc::strong_count(&kept), 2, "the message waits");
    assert!(q.cancel(t), "a waiting timer is pending");
    assert_eq!(Arc::strong_count(&kept), 1, "cancel dropped it");
    assert!(!q.cancel(t));
    // the queue is no longer blocked: the later timer fires on time
    assert!(q.fire_next(at(20)));
    assert_eq!(*log.lock(), ["x", "later"]);
    assert_eq!(q.next_due(), None);
}

#[test]
fn a_waiting_timer_whose_target_is_gone_ends() {
    let q = TimerQueue::with_backoff();
    let log = Log::default();
    let kept = Arc::new(());
    let script = [Fired::Full, Fired::Gone];
    let t = q.schedule(
        at(10),
        Some(Duration::from_nanos(10)),
        Q1,
        scripted(&log, "x", &script, Arc::clone(&kept)),
    );
    let also = [Fired::Gone];
    q.schedule(at(12), None, Q1, scripted(&log, "y", &also, Arc::new(())));
    while q.fire_next(at(12)) {}
    while q.fire_next(at(12 + MS)) {}
    assert_eq!(
        *log.lock(),
        ["x", "x", "y"],
        "both tried in order, both gone"
    );
    assert_eq!(Arc::strong_count(&kept), 1, "the periodic timer ended");
    assert!(!q.cancel(t));
    assert_eq!(q.next_due(), None);
}

#[test]
fn a_periodic_timer_cancelled_while_it_finds_no_room_drops_its_message() {
    let q = Arc::new(TimerQueue::with_backoff());
    let kept = Arc::new(());
    let id = Arc::new(parking_lot::Mutex::new(None::<TimerId>));
    let (q2, id2, kept2) = (Arc::clone(&q), Arc::clone(&id), Arc::clone(&kept));
    let t = q.schedule(
        at(10),
        Some(Duration::from_nanos(10)),
        Q1,
        Box::new(move || {
            let _ = &kept2;
            assert!(q2.cancel(id2.lock().expect("scheduled")));
            Fired::Full
        }),
    );
    *id.lock() = Some(t);
    assert!(q.fire_next(at(10)));
    assert_eq!(Arc::strong_count(&kept), 1, "dropped, not kept waiting");
    assert_eq!(q.next_due(), None);
}

#[test]
fn without_backoff_a_waiting_timer_is_retried_at_once_in_order() {
    // the simulation's queue: retried at the same (virtual) time
    let q = TimerQueue::default();
    let log = Log::default();
    q.schedule(
        at(10),
        None,
        Q1,
        scripted(&log, "a", &[Fired::Full], Arc::new(())),
    );
    q.schedule(at(10), None, Q2, scripted(&log, "b", &[], Arc::new(())));
    assert!(q.fire_next(at(10)));
    assert_eq!(q.next_due(), Some(at(10)));
    assert!(q.fire_next(at(10)), "a's retry comes first: (due, id)");
    assert!(q.fire_next(at(10)));
    assert!(!q.fire_next(at(10)));
    assert_eq!(*log.lock(), ["a", "a", "b"]);
}

/// A replay fires the timer a record names, out of due order: the one
/// it names fires, a periodic one re-arms once (its old place in the
/// heap is gone), and the others keep theirs.
#[cfg(feature = "journal")]
#[test]
fn a_recorded_firing_fires_the_timer_it_names() {
    let q = TimerQueue::default();
    let log = Log::default();
    let tagged = |tag: u64, due: u64, period: Option<u64>, name: &'static str| {
        let period = period.map(Duration::from_nanos);
        let fire = scripted(&log, name, &[], Arc::new(()));
        q.schedule_tagged(at(due), period, Q1, Some(tag), fire);
    };
    tagged(0, 10, None, "early");
    tagged(1, 30, Some(100), "beat");
    q.schedule(
        at(5),
        None,
        Q2,
        scripted(&log, "outside", &[], Arc::new(())),
    );
    assert!(q.fire_recorded(Q1, Some(1), at(0)), "named, not yet due");
    assert!(!q.fire_recorded(Q1, Some(7), at(0)), "no such timer");
    assert!(
        !q.fire_recorded(QueueKey(3), None, at(0)),
        "none in that queue"
    );
    // Without a tag: the queue's first in due order, not Q2's.
    assert!(q.fire_recorded(Q1, None, at(0)));
    assert_eq!(*log.lock(), ["beat", "early"]);
    // Left: the outside one at 5 and the beat re-armed at 130, once.
    while q.fire_next(at(200)) {}
    assert_eq!(*log.lock(), ["beat", "early", "outside", "beat"]);
    assert_eq!(q.next_due(), Some(at(230)));
}
