//! Timers: messages an actor schedules for itself, delivered as ordinary
//! messages through its inbox.
//!
//! Due timers fire in a deterministic order: by due time, then by the order
//! they were scheduled. Live, one process-wide thread sleeps until the next
//! due time of the system clock and fires it. In simulation the timer queue
//! belongs to the [`VirtualClock`](crate::VirtualClock), and the simulator
//! fires timers as it moves virtual time, so a simulated run is repeatable.
//!
//! Scheduling a timer allocates once (the boxed firing closure); firing it
//! is an ordinary `send`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::base::sync::{Condvar, Mutex};

use crate::base::clock::{Clock, Time};

/// Identifies a scheduled timer, for [`Ctx::cancel`](crate::Ctx::cancel).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct TimerId(u64);

/// What a timer does when it fires: queue its message. Returns `false` if
/// the target is gone, which cancels a periodic timer.
pub(crate) type Fire = Box<dyn FnMut() -> bool + Send>;

struct Entry {
    period: Option<u64>,
    fire: Fire,
}

#[derive(Default)]
struct State {
    /// (due, id): ids grow with scheduling order, so ties fire in it.
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    entries: HashMap<u64, Entry>,
    /// Timers whose closure is running outside the lock, and whether they
    /// were cancelled meanwhile (a periodic one must then not re-arm).
    firing: HashMap<u64, bool>,
    next_id: u64,
}

/// A queue of timers ordered by (due time, scheduling order).
#[derive(Default)]
pub(crate) struct TimerQueue {
    state: Mutex<State>,
    changed: Condvar,
}

impl fmt::Debug for TimerQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.state.lock();
        f.debug_struct("TimerQueue")
            .field("pending", &st.entries.len())
            .finish()
    }
}

impl TimerQueue {
    pub(crate) fn schedule(&self, due: Time, period: Option<Duration>, fire: Fire) -> TimerId {
        let mut st = self.state.lock();
        let id = st.next_id;
        st.next_id += 1;
        st.heap.push(Reverse((due.as_nanos(), id)));
        let period = period.map(|p| (p.as_nanos() as u64).max(1));
        st.entries.insert(id, Entry { period, fire });
        drop(st);
        self.changed.notify_all();
        TimerId(id)
    }

    /// Cancels a pending timer; false if it already fired (one-shot) or
    /// was cancelled.
    pub(crate) fn cancel(&self, id: TimerId) -> bool {
        let mut st = self.state.lock();
        if st.entries.remove(&id.0).is_some() {
            return true;
        }
        match st.firing.get_mut(&id.0) {
            // Firing right now: a periodic timer will not re-arm.
            Some(cancelled @ false) => {
                *cancelled = true;
                true
            }
            _ => false,
        }
    }

    /// The earliest due time of a pending timer.
    pub(crate) fn next_due(&self) -> Option<Time> {
        let mut st = self.state.lock();
        Self::peek(&mut st).map(Time::from_nanos)
    }

    /// Drops heap entries of cancelled timers and returns the earliest due.
    fn peek(st: &mut State) -> Option<u64> {
        while let Some(&Reverse((due, id))) = st.heap.peek() {
            if st.entries.contains_key(&id) {
                return Some(due);
            }
            st.heap.pop();
        }
        None
    }

    /// Fires the earliest timer if it is due at `now`. Returns whether one
    /// fired. The firing closure runs outside the queue's lock.
    pub(crate) fn fire_next(&self, now: Time) -> bool {
        let mut st = self.state.lock();
        let Some(due) = Self::peek(&mut st) else {
            return false;
        };
        if due > now.as_nanos() {
            return false;
        }
        let Reverse((_, id)) = st.heap.pop().expect("peeked");
        let mut entry = st.entries.remove(&id).expect("peeked a live entry");
        if entry.period.is_some() {
            st.firing.insert(id, false);
        }
        drop(st);
        let alive = (entry.fire)();
        if let Some(period) = entry.period {
            let mut st = self.state.lock();
            let cancelled = st.firing.remove(&id).unwrap_or(false);
            if alive && !cancelled {
                // Re-armed under the same id, due one period after it was due.
                st.heap.push(Reverse((due.saturating_add(period), id)));
                st.entries.insert(id, entry);
            }
        }
        true
    }

    /// The live timer thread: sleeps until the next due time, fires.
    fn run_live(&self) {
        let clock = Clock::System;
        loop {
            while self.fire_next(clock.now()) {}
            let mut st = self.state.lock();
            match Self::peek(&mut st) {
                None => {
                    drop(self.changed.wait(st));
                }
                Some(due) => {
                    let now = clock.now().as_nanos();
                    if due > now {
                        let wait = Duration::from_nanos(due - now);
                        drop(self.changed.wait_timeout(st, wait));
                    }
                }
            }
        }
    }
}

/// The process-wide queue for actors on the system clock; its thread starts
/// on first use and lives as long as the process.
pub(crate) fn live() -> &'static TimerQueue {
    static LIVE: OnceLock<Arc<TimerQueue>> = OnceLock::new();
    LIVE.get_or_init(|| {
        let q = Arc::new(TimerQueue::default());
        let thread_q = Arc::clone(&q);
        std::thread::Builder::new()
            .name("kaspar:timers".into())
            .spawn(move || thread_q.run_live())
            .expect("kaspar: the OS refused to spawn the timer thread");
        q
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn a_periodic_timer_cancelled_while_it_fires_does_not_rearm() {
        let q = Arc::new(TimerQueue::default());
        let fired = Arc::new(AtomicU32::new(0));
        let id = Arc::new(parking_lot::Mutex::new(None::<TimerId>));
        let (q2, fired2, id2) = (Arc::clone(&q), Arc::clone(&fired), Arc::clone(&id));
        // the firing closure cancels its own timer, as a handler would
        // while the queue is between firing and re-arming
        let t = q.schedule(
            Time::from_nanos(10),
            Some(Duration::from_nanos(10)),
            Box::new(move || {
                fired2.fetch_add(1, Ordering::Relaxed);
                let id = id2.lock().expect("scheduled before firing");
                assert!(q2.cancel(id), "cancel reports the firing timer");
                true
            }),
        );
        *id.lock() = Some(t);
        assert!(q.fire_next(Time::from_nanos(10)));
        assert!(!q.fire_next(Time::from_nanos(1_000)), "it did not re-arm");
        assert_eq!(fired.load(Ordering::Relaxed), 1);
        assert!(!q.cancel(t));
    }

    #[test]
    fn due_order_is_time_then_scheduling_order() {
        let q = TimerQueue::default();
        let order = Arc::new(parking_lot::Mutex::new(Vec::new()));
        for (due, name) in [(20, "c"), (10, "a"), (20, "d"), (10, "b")] {
            let order = Arc::clone(&order);
            q.schedule(
                Time::from_nanos(due),
                None,
                Box::new(move || {
                    order.lock().push(name);
                    true
                }),
            );
        }
        while q.fire_next(Time::from_nanos(100)) {}
        assert_eq!(*order.lock(), ["a", "b", "c", "d"]);
    }
}
