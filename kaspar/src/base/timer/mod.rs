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
//! is an ordinary `send`, except that it never waits for room.
//!
//! # A full mailbox
//!
//! Firing never blocks the thread that fires: a timer whose target's queue
//! is full (a bounded `LockFree` mailbox, whatever its
//! [`WhenFull`](crate::WhenFull)) keeps its message and waits in the queue
//! for room, while every other target's timers go on firing on time. Its
//! message is neither lost nor duplicated:
//!
//! * Live, the queue retries it after 1 ms, then after intervals doubling up
//!   to 10 ms, until the target has room (it is then delivered once) or is
//!   gone. In simulation it is retried as soon as the simulator next fires
//!   a timer, at the same virtual time, after the simulator has drained the
//!   queues, so a simulated run stays repeatable.
//! * While one of a target queue's timers waits for room, that queue is
//!   *blocked*: its other timers that come due join the wait without being
//!   tried, and the waiting ones are retried in (due time, scheduling
//!   order). So the timers one queue receives (one actor's, or all the
//!   members' of one group) still arrive in (due time, scheduling order),
//!   however long some of them waited.
//! * A periodic timer has at most one message waiting: it re-arms only once
//!   that message is delivered, at the first tick of its original schedule
//!   after the delivery. The ticks that came due while it waited are
//!   coalesced into the one delivered, not delivered late one by one.
//! * Cancelling a timer whose message waits drops the message (the cancel
//!   returns `true`). A target that stops meanwhile refuses the retry: the
//!   timer ends and its message is dropped, as for a timer that fires into
//!   a stopped actor.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::base::sync::{Condvar, Mutex};

use crate::base::clock::{Clock, Time};
use crate::base::quiet::{drop_quietly, quietly};

/// Identifies a scheduled timer, for [`Ctx::cancel`](crate::Ctx::cancel).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct TimerId(u64);

/// What one firing of a timer did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Fired {
    /// The message is queued for its target.
    Delivered,
    /// The target's queue is full: the firing kept its message and is to be
    /// retried (it never waits for room itself).
    Full,
    /// The target is gone (stopped, or its queue closed): the timer ends,
    /// and a periodic one does not re-arm.
    Gone,
}

/// What a timer does when it fires: queue its message, without waiting for
/// room. On [`Fired::Full`] it keeps the message for the next try.
pub(crate) type Fire = Box<dyn FnMut() -> Fired + Send>;

/// Names the queue a timer delivers into (for an actor, the address of its
/// lock, which a group's members share with their one queue): the timers
/// of one queue are delivered in (due time, scheduling order), also when
/// some of them wait for room.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct QueueKey(usize);

impl QueueKey {
    /// The key of the queue behind `owner`, an address that lives as long
    /// as the queue (the timer's closure keeps it alive).
    pub(crate) fn of<T>(owner: *const T) -> Self {
        QueueKey(owner as *const () as usize)
    }
}

struct Entry {
    /// When it is (or was) due; with its id, its place in the order.
    due: u64,
    period: Option<u64>,
    queue: QueueKey,
    /// A group member's timer: its place among the timers the group's
    /// members armed (see `fire_recorded`); read by replays only.
    #[cfg_attr(not(feature = "journal"), allow(dead_code))]
    tag: Option<u64>,
    fire: Fire,
}

/// A timer whose closure is running outside the lock.
struct Firing {
    periodic: bool,
    /// Cancelled meanwhile: a periodic timer must then not re-arm, and a
    /// message that found no room is dropped.
    cancelled: bool,
}

/// A queue some of whose timers wait for room.
struct Blocked {
    /// (due, id) of the timers waiting, in the order they are retried.
    waiting: BTreeSet<(u64, u64)>,
    /// When the first of them is next tried.
    retry_at: u64,
    /// The interval before `retry_at`, doubled after each try that found
    /// no room (zero before the first).
    backoff: u64,
}

#[derive(Default)]
struct State {
    /// (due, id): ids grow with scheduling order, so ties fire in it.
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    /// Every live timer: armed (in `heap`) or waiting for room (in a
    /// `blocked` queue), not while it fires.
    entries: HashMap<u64, Entry>,
    firing: HashMap<u64, Firing>,
    /// Queues with timers waiting for room. Which one is retried next is
    /// decided by (due, id), never by this map's order.
    blocked: HashMap<QueueKey, Blocked>,
    next_id: u64,
}

/// How long a timer that found its queue full waits before it is tried
/// again: `first`, doubling up to `max` (nanoseconds). Zero: at the next
/// firing, whatever the time (simulation).
#[derive(Clone, Copy, Default, Debug)]
struct RetryDelay {
    first: u64,
    max: u64,
}

impl RetryDelay {
    /// The live thread's: 1 ms, growing to 10 ms.
    const LIVE: RetryDelay = RetryDelay {
        first: 1_000_000,
        max: 10_000_000,
    };

    fn next(self, backoff: u64) -> u64 {
        if backoff == 0 {
            self.first
        } else {
            backoff.saturating_mul(2).min(self.max)
        }
    }
}

/// What [`TimerQueue::fire_next`] found to fire.
enum Pick {
    /// Nothing due.
    None,
    /// The earliest armed timer.
    Armed(u64, u64),
    /// The first waiting timer of a queue whose retry is due.
    Waiting(u64, u64, QueueKey),
}

/// A queue of timers ordered by (due time, scheduling order).
#[derive(Default)]
pub(crate) struct TimerQueue {
    state: Mutex<State>,
    changed: Condvar,
    retry: RetryDelay,
}

impl fmt::Debug for TimerQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.state.lock();
        let waiting: usize = st.blocked.values().map(|b| b.waiting.len()).sum();
        f.debug_struct("TimerQueue")
            .field("pending", &st.entries.len())
            .field("waiting_for_room", &waiting)
            .finish()
    }
}

impl TimerQueue {
    /// A queue whose full targets are retried after a wall-clock backoff
    /// (the live thread's).
    fn with_backoff() -> Self {
        TimerQueue {
            retry: RetryDelay::LIVE,
            ..TimerQueue::default()
        }
    }

    /// Arms a timer due at `due` (then every `period`) that delivers into
    /// `queue` by running `fire`; one with no tag (the unit tests').
    #[cfg(test)]
    pub(crate) fn schedule(
        &self,
        due: Time,
        period: Option<Duration>,
        queue: QueueKey,
        fire: Fire,
    ) -> TimerId {
        self.schedule_tagged(due, period, queue, None, fire)
    }

    /// Arms a timer due at `due` (then every `period`) that delivers into
    /// `queue` by running `fire`. `tag`, for a group member's timer, is its
    /// place among the timers the group's members armed, which a journal
    /// records when it fires and a replay names it by.
    pub(crate) fn schedule_tagged(
        &self,
        due: Time,
        period: Option<Duration>,
        queue: QueueKey,
        tag: Option<u64>,
        fire: Fire,
    ) -> TimerId {
        let mut st = self.state.lock();
        let id = st.next_id;
        st.next_id += 1;
        let due = due.as_nanos();
        st.heap.push(Reverse((due, id)));
        let period = period.map(|p| (p.as_nanos().min(u64::MAX as u128) as u64).max(1));
        st.entries.insert(
            id,
            Entry {
                due,
                period,
                queue,
                tag,
                fire,
            },
        );
        drop(st);
        self.changed.notify_all();
        TimerId(id)
    }

    /// Cancels a pending timer, dropping a message of it that waits for
    /// room; false if it already fired (one-shot: also while its message
    /// is being queued) or was cancelled.
    pub(crate) fn cancel(&self, id: TimerId) -> bool {
        let mut st = self.state.lock();
        if let Some(entry) = st.entries.remove(&id.0) {
            Self::unwait(&mut st, entry.queue, (entry.due, id.0));
            drop(st);
            // Its closure, and the message it kept, go here, unlocked.
            drop(entry);
            return true;
        }
        match st.firing.get_mut(&id.0) {
            // Firing right now: a periodic timer will not re-arm.
            Some(f) if f.periodic && !f.cancelled => {
                f.cancelled = true;
                true
            }
            _ => false,
        }
    }

    /// Takes `key` off `queue`'s waiting timers, if it is there; a queue
    /// left with none is no longer blocked.
    fn unwait(st: &mut State, queue: QueueKey, key: (u64, u64)) {
        if let Some(b) = st.blocked.get_mut(&queue) {
            if b.waiting.remove(&key) && b.waiting.is_empty() {
                st.blocked.remove(&queue);
            }
        }
    }

    /// When [`fire_next`](Self::fire_next) next has something to do: the
    /// earliest due time of an armed timer, or the earliest retry of a
    /// timer waiting for room.
    pub(crate) fn next_due(&self) -> Option<Time> {
        Self::next_at(&mut self.state.lock()).map(Time::from_nanos)
    }

    /// [`next_due`](Self::next_due), in nanoseconds, under the lock.
    fn next_at(st: &mut State) -> Option<u64> {
        let armed = Self::peek(st).map(|(due, _)| due);
        let retry = st.blocked.values().map(|b| b.retry_at).min();
        match (armed, retry) {
            (Some(a), Some(r)) => Some(a.min(r)),
            (a, r) => a.or(r),
        }
    }

    /// Drops heap entries of cancelled timers and returns the earliest
    /// armed timer's (due, id).
    fn peek(st: &mut State) -> Option<(u64, u64)> {
        while let Some(&Reverse((due, id))) = st.heap.peek() {
            if st.entries.contains_key(&id) {
                return Some((due, id));
            }
            st.heap.pop();
        }
        None
    }

    /// What fires next at `now`: the armed timer or the waiting one whose
    /// retry is due, whichever comes first in (due, id).
    fn pick(st: &mut State, now: u64) -> Pick {
        let armed = Self::peek(st).filter(|&(due, _)| due <= now);
        let waiting = st
            .blocked
            .iter()
            .filter(|(_, b)| b.retry_at <= now)
            .filter_map(|(q, b)| b.waiting.first().map(|&k| (k, *q)))
            .min_by_key(|&(k, _)| k);
        match (armed, waiting) {
            (Some(a), Some((w, q))) if w < a => Pick::Waiting(w.0, w.1, q),
            (Some((due, id)), _) => Pick::Armed(due, id),
            (None, Some(((due, id), q))) => Pick::Waiting(due, id, q),
            (None, None) => Pick::None,
        }
    }

    /// Fires the earliest timer due at `now` (or retries the earliest one
    /// waiting for room whose retry is due). Returns whether there was one.
    /// The firing closure runs outside the queue's lock and never waits.
    pub(crate) fn fire_next(&self, now: Time) -> bool {
        let mut st = self.state.lock();
        let pick = Self::pick(&mut st, now.as_nanos());
        self.fire_picked(st, pick, now.as_nanos(), true)
    }

    /// Fires the timer of `queue` a journal's record names: the one
    /// tagged `tag`, or with no tag (a journal that does not say which)
    /// `queue`'s first in (due time, scheduling order); whatever its due
    /// time, and no other queue's. Returns whether there was one. Linear
    /// in the timers pending: for a replay only.
    #[cfg(feature = "journal")]
    pub(crate) fn fire_recorded(&self, queue: QueueKey, tag: Option<u64>, now: Time) -> bool {
        let st = self.state.lock();
        let found = st
            .entries
            .iter()
            .filter(|(_, e)| e.queue == queue && (tag.is_none() || e.tag == tag))
            .map(|(&id, e)| (e.due, id))
            .min();
        let pick = match found {
            None => Pick::None,
            Some((due, id)) => {
                let waiting = st
                    .blocked
                    .get(&queue)
                    .is_some_and(|b| b.waiting.contains(&(due, id)));
                if waiting {
                    Pick::Waiting(due, id, queue)
                } else {
                    Pick::Armed(due, id)
                }
            }
        };
        self.fire_picked(st, pick, now.as_nanos(), false)
    }

    /// Fires `pick`. `top`: an armed pick is the heap's first (from
    /// [`pick`](Self::pick)); otherwise it is found in the heap and taken
    /// out of it.
    fn fire_picked(
        &self,
        mut st: crate::base::sync::MutexGuard<'_, State>,
        pick: Pick,
        now: u64,
        top: bool,
    ) -> bool {
        let (due, id, retried) = match pick {
            Pick::None => return false,
            Pick::Armed(due, id) => {
                if top {
                    st.heap.pop();
                } else {
                    st.heap.retain(|&Reverse(k)| k != (due, id));
                }
                let queue = st.entries.get(&id).expect("peeked a live entry").queue;
                if let Some(b) = st.blocked.get_mut(&queue) {
                    // Its queue is full, with earlier timers waiting: it
                    // waits behind them, untried, keeping the order.
                    b.waiting.insert((due, id));
                    return true;
                }
                (due, id, false)
            }
            Pick::Waiting(due, id, queue) => {
                // Back in `waiting` below if it still finds no room.
                st.blocked
                    .get_mut(&queue)
                    .expect("picked from it")
                    .waiting
                    .remove(&(due, id));
                (due, id, true)
            }
        };
        let mut entry = st.entries.remove(&id).expect("a picked timer is live");
        st.firing.insert(
            id,
            Firing {
                periodic: entry.period.is_some(),
                cancelled: false,
            },
        );
        drop(st);
        // The closure queues a user message (or drops one for a target
        // that is gone): a panicking destructor must not end the thread
        // that fires every timer of the process. Such a firing counts as
        // gone.
        let fired = quietly(|| (entry.fire)()).unwrap_or(Fired::Gone);
        let mut st = self.state.lock();
        let cancelled = st.firing.remove(&id).is_some_and(|f| f.cancelled);
        let queue = entry.queue;
        let mut ended = None;
        match fired {
            Fired::Full if !cancelled => {
                let retry = self.retry;
                let b = st.blocked.entry(queue).or_insert_with(|| Blocked {
                    waiting: BTreeSet::new(),
                    retry_at: now,
                    backoff: 0,
                });
                b.waiting.insert((due, id));
                b.backoff = retry.next(b.backoff);
                b.retry_at = now.saturating_add(b.backoff);
                st.entries.insert(id, entry);
            }
            Fired::Delivered if !cancelled && entry.period.is_some() => {
                let period = entry.period.expect("periodic");
                // Re-armed under the same id, one period after it was due;
                // after a wait for room, at the first tick of its schedule
                // after now (the ticks missed while it waited are not
                // delivered: the one it delivered stands for them).
                entry.due = if retried && now >= due {
                    let missed = (now - due) / period;
                    due.saturating_add(period.saturating_mul(missed.saturating_add(1)))
                } else {
                    due.saturating_add(period)
                };
                st.heap.push(Reverse((entry.due, id)));
                st.entries.insert(id, entry);
                self.after_retry(&mut st, queue, retried, now);
            }
            // Delivered once and done, gone, or cancelled while it fired
            // (a message it kept for want of room is dropped with it).
            _ => {
                ended = Some(entry);
                if fired != Fired::Full {
                    self.after_retry(&mut st, queue, retried, now);
                } else if let Some(b) = st.blocked.get(&queue) {
                    if b.waiting.is_empty() {
                        st.blocked.remove(&queue);
                    }
                }
            }
        }
        drop(st);
        // Its closure, and any message it kept, are the user's.
        drop_quietly(ended);
        true
    }

    /// After a waiting timer was delivered (or found its target gone): the
    /// queue's next waiting timer is tried at once, or, with none left,
    /// the queue is no longer blocked.
    fn after_retry(&self, st: &mut State, queue: QueueKey, retried: bool, now: u64) {
        if !retried {
            return;
        }
        if let Some(b) = st.blocked.get_mut(&queue) {
            if b.waiting.is_empty() {
                st.blocked.remove(&queue);
            } else {
                b.retry_at = now;
                b.backoff = 0;
            }
        }
    }

    /// The live timer thread: sleeps until the next due time (or retry of
    /// a timer waiting for room), fires.
    fn run_live(&self) {
        let clock = Clock::System;
        loop {
            while self.fire_next(clock.now()) {}
            let mut st = self.state.lock();
            match Self::next_at(&mut st) {
                None => {
                    drop(self.changed.wait(st));
                }
                Some(at) => {
                    let now = clock.now().as_nanos();
                    if at > now {
                        let wait = Duration::from_nanos(at - now);
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
        let q = Arc::new(TimerQueue::with_backoff());
        let thread_q = Arc::clone(&q);
        std::thread::Builder::new()
            .name("kaspar:timers".into())
            .spawn(move || {
                // It pushes into mailboxes other threads drain: the first
                // contended push must not allocate its parking record.
                crate::base::sync::parking::warm();
                thread_q.run_live()
            })
            .expect("kaspar: the OS refused to spawn the timer thread");
        q
    })
}

#[cfg(test)]
mod tests;
