//! The consumer-side waiting the queues share: how long a consumer polls
//! before it sleeps ([`Polls`], per [`IdleWait`]), and the one-token
//! semaphore that the queues which do not sleep on their own lock
//! (`ShardedBQueue`, `LockFreeMpsc`) sleep on.
//!
//! [`Parker`] is a one-token semaphore: `unpark` leaves a token (tokens do
//! not accumulate), `park` sleeps until a token is there and takes it. A
//! token left by an `unpark` that raced ahead of the `park` makes that park
//! return at once, so an unpark is never lost; the price is an occasional
//! spurious return, which every caller handles by re-checking its queue.
//!
//! The queues decide *whether* to unpark with a `SLEEPING` bit kept in an
//! atomic word the producers already read-modify-write on every push. Every
//! read-modify-write of one atomic sees the latest value in its modification
//! order, so "the consumer set `SLEEPING` after seeing the queue empty" and
//! "a producer added a message" are totally ordered without `SeqCst`: either
//! the consumer's bit-set sees the message (and does not sleep), or the
//! producer's update sees the bit (and unparks). The producer whose update
//! clears the bit is the one that unparks, so one sleep costs at most one
//! unpark however many producers push meanwhile, and a producer that finds
//! the bit clear (the consumer is busy, or still polling) makes no wake-up
//! call at all.
//!
//! # Pooled consumers
//!
//! The consumer of a pooled actor holds no thread to park: it runs as a
//! task on a scheduler's worker. Its mailbox carries a [`Schedule`] hook
//! (set once, before the consumer first runs: [`TaskSlot`]), and the same
//! protocol decides who schedules it: "asleep" is "idle", and the producer
//! that would have unparked the consumer schedules it instead ([`Wake`]).
//! The consumer goes idle only through a queue's non-blocking
//! `poll_batch`, which sets `SLEEPING` with a compare-and-swap that
//! succeeds only while the queue is empty and open (a thread consumer may
//! set the bit and take it back; a pooled one may not, or two producers
//! could each schedule it once). So an idle actor is scheduled by exactly
//! one producer (or by `close`), and never while it runs.

use std::any::Any;
use std::fmt;
// The hook is set before the consumer first runs and only read after, so
// a plain `OnceLock` (no loom counterpart) needs no modelling.
use std::sync::OnceLock;

use super::IdleWait;
use crate::base::backoff::{Backoff, Wait};
use crate::base::sync::{hint, AtomicU64, Condvar, Mutex, Ordering};

/// How a scheduler runs the consumer of a mailbox that holds no thread: a
/// producer that finds such a consumer idle calls [`schedule`](Self::schedule)
/// instead of unparking a thread.
pub(crate) trait Schedule: Send + Sync + 'static {
    /// Puts the consumer on a run queue. Called exactly once per idle
    /// period (by the producer whose push ended it, or by `close`), never
    /// while the consumer runs.
    fn schedule(&self);
    /// The hook itself, for the scheduler to find its own type again.
    fn as_any(&self) -> &dyn Any;
    /// Whether the consumer's activations run as tasks of an async
    /// runtime (a pool hosted on tokio, or the simulator's) rather than on
    /// threads of their own: a future awaiting a reply from it must not
    /// spin for it, as the activation that would answer may need the very
    /// thread it spins on.
    fn hosted(&self) -> bool {
        false
    }
    /// A synchronous caller (a `fast_send`) is about to wait for the
    /// actor's lock, held for the actor's first activation, which has not
    /// taken it yet (`begun` says once it has): whether the wait may go
    /// on. Where only the calling thread could run that activation (a
    /// hosted pool: a current-thread runtime's one thread, a runtime
    /// nobody drives, the simulator's thread), the pool either runs its
    /// scheduled activations on the calling thread until `begun`, or
    /// refuses the wait. A thread pool's workers run it: wait.
    fn before_first_wait(&self, begun: &dyn Fn() -> bool) -> bool {
        let _ = begun;
        true
    }
    /// A future on `cx`'s task awaits a reply from the consumer: runs the
    /// consumer's scheduled activation on the calling thread, where the
    /// pool lets it (a hosted pool, on a thread of its runtime) and that
    /// activation is the next to run, rather than let the future wait for
    /// a task to run it. `awaited` is the address of the consumer's actor
    /// (its cell), compared with the scheduled tasks', never read; a hook
    /// whose pool schedules something else (a group) names that instead.
    fn help(&self, cx: &mut std::task::Context<'_>, awaited: *const ()) -> Helped {
        let _ = (cx, awaited);
        Helped::Nothing
    }
    /// A thread is about to block until `done` holds (an `ask(..).wait()`
    /// for the consumer's reply, a push waiting for room in its full
    /// mailbox), where only it may be able to run the consumer (a hosted
    /// pool, on a thread of its runtime or with a current-thread runtime
    /// that perhaps nobody drives): runs the pool's scheduled activations
    /// on the calling thread until `done` or `deadline`, and returns
    /// `true`; `false` where the thread should wait as it would anyway
    /// (the consumer's own thread or a pool's workers run it).
    fn help_blocked(&self, done: &dyn Fn() -> bool, deadline: Option<std::time::Instant>) -> bool {
        let _ = (done, deadline);
        false
    }
}

/// What [`Schedule::help`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Helped {
    /// Ran nothing: the pool does not let this thread run its activations,
    /// or the next one to run is not the awaited actor's.
    Nothing,
    /// Ran the awaited actor's activation, and none is left waiting for a
    /// runner.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    Ran,
    /// Ran the awaited actor's activation, and others wait for a runner
    /// (some perhaps scheduled by the one it ran): the caller lets its
    /// runtime run them before it goes on, as it would have had it waited
    /// for a runner.
    OthersWait,
}

/// Where a mailbox keeps its [`Schedule`] hook: empty for a consumer that
/// parks a thread, set once for a pooled one.
#[derive(Default)]
pub(crate) struct TaskSlot(OnceLock<Box<dyn Schedule>>);

impl TaskSlot {
    /// Makes the consumer a pooled one. Hands the hook back if one is set
    /// already.
    pub(crate) fn set(&self, hook: Box<dyn Schedule>) -> Result<(), Box<dyn Schedule>> {
        self.0.set(hook)
    }

    /// The hook, for a pooled consumer.
    #[inline]
    pub(crate) fn get(&self) -> Option<&dyn Schedule> {
        self.0.get().map(|b| &**b)
    }
}

impl fmt::Debug for TaskSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "Task"
        } else {
            "Thread"
        })
    }
}

/// The wake-up of the queues that sleep on a [`Parker`]: unpark the
/// consumer's thread, or schedule the pooled consumer.
#[derive(Debug, Default)]
pub(super) struct Wake {
    pub(super) parker: Parker,
    pub(super) task: TaskSlot,
}

impl Wake {
    /// Ends the consumer's sleep (or idleness): called by the one producer
    /// (or `close`) that found it asleep.
    #[cold]
    pub(super) fn wake(&self) {
        match self.task.get() {
            Some(task) => {
                // A load and a store, not a read-modify-write (one was a
                // sixteenth of a pooled hop's time): the wakes of a
                // mailbox take turns. Each is made by the one party whose
                // read-modify-write of the mailbox's state ended an idle
                // period, which the consumer began by a release after the
                // activation this wake's predecessor scheduled; so each
                // wake's store happens before the next one's load.
                let unparks = &self.parker.unparks;
                unparks.store(unparks.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                task.schedule();
            }
            None => self.parker.unpark(),
        }
    }

    /// Wake-ups so far: unparks and schedules.
    pub(super) fn wakes(&self) -> u64 {
        self.parker.unparks()
    }
}

/// A one-token semaphore over a mutex and a condition variable, counting
/// its unparks.
#[derive(Debug, Default)]
pub(super) struct Parker {
    token: Mutex<bool>,
    cv: Condvar,
    /// Calls to `unpark`: only producers that found the consumer asleep
    /// (or about to be) make one, so this counts wake-ups.
    unparks: AtomicU64,
}

impl Parker {
    /// Sleeps until a token is available, then takes it.
    pub(super) fn park(&self) {
        let mut token = self.token.lock();
        while !*token {
            token = self.cv.wait(token);
        }
        *token = false;
    }

    /// Leaves a token and wakes the parked consumer, if any.
    #[cold]
    pub(super) fn unpark(&self) {
        self.unparks.fetch_add(1, Ordering::Relaxed);
        *self.token.lock() = true;
        self.cv.notify_one();
    }

    /// How many times [`unpark`](Self::unpark) was called.
    pub(super) fn unparks(&self) -> u64 {
        self.unparks.load(Ordering::Relaxed)
    }
}

/// What is left of a consumer's polling before it sleeps, per its
/// [`IdleWait`]. Each queue polls a word its producers update anyway (a
/// count or a tail), never a lock, so a polling consumer does not slow the
/// producers down beyond sharing that cache line.
#[derive(Clone, Copy, Debug)]
pub(super) enum Polls {
    /// Sleep now.
    None,
    /// This many polls, one spin hint before each.
    Count(u32),
    /// The shared backoff's budget.
    Backoff(Backoff),
    /// The shared backoff's budget, then yielding for [`SHORT_SLEEP`]
    /// more: until the instant set when the budget ran out.
    #[cfg(not(loom))]
    Awake(Backoff, Option<std::time::Instant>),
    /// Never sleep.
    Forever,
}

// Whether this thread's last sleep as a consumer was short. A thread
// consumes one mailbox (its actor's or its group's run loop), so this is
// that consumer's history, as its `Backoff` budget's (`Wait::Consumer`)
// is. Not under loom, whose models want the same budget on every wait.
#[cfg(not(loom))]
std::thread_local! {
    static SLEPT_SHORT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A consumer's sleep that ends within this was not worth its cost: two
/// system calls, and a wake-up that on a virtual machine takes tens of
/// microseconds. After one, the consumer's next `Backoff` wait stays
/// awake (yielding the core) for this much longer once its budget is
/// spent, and sleeps only then. The clock is read only then, not on the
/// way to a message that is already there. A consumer whose messages come
/// at most this far apart so stays awake, as one whose messages come in a
/// stream does; one whose messages stop sleeps once this has passed, and
/// then its sleep is long, so its next wait has the plain budget again.
///
/// What it breaks is a cycle between a consumer and a sender that sleeps
/// too: a tokio task awaiting `ask`s one after another from an actor on
/// its own thread. A reply that misses the task's spin finds its runtime
/// parked, the runtime's wake-up takes longer than the actor's budget, the
/// actor sleeps, the next `ask` must wake it and misses the spin again.
/// On the 2-core VM, 99% of such slow asks followed a slow ask, and a run
/// of them made a round's mean 1.3 to 17 µs against 0.3 µs.
#[cfg(not(loom))]
pub(super) const SHORT_SLEEP: std::time::Duration = std::time::Duration::from_micros(100);

/// Sleeps the consumer with `park`, and remembers whether the sleep was
/// short ([`SHORT_SLEEP`]) for the thread's next wait.
#[inline]
pub(super) fn sleep<R>(park: impl FnOnce() -> R) -> R {
    #[cfg(not(loom))]
    {
        let start = std::time::Instant::now();
        let woken = park();
        slept(start.elapsed());
        woken
    }
    #[cfg(loom)]
    park()
}

#[cfg(not(loom))]
#[inline]
pub(super) fn slept(asleep: std::time::Duration) {
    SLEPT_SHORT.with(|s| s.set(asleep < SHORT_SLEEP));
}

#[cfg(not(loom))]
#[inline]
fn slept_short() -> bool {
    SLEPT_SHORT.with(std::cell::Cell::get)
}

impl Polls {
    /// The budget for `idle`. `Backoff` adapts to the consumer's last
    /// wait: if that one was over within a full spin phase (about 1.4 µs,
    /// a request-reply between two cores), spin fully again; if not (its
    /// messages come further apart, or its thread shares a core with the
    /// threads that send them), spin only briefly before yielding
    /// ([`Backoff::brief`]). A brief wait that ends within the time a
    /// full spin would have taken switches back, unless one of its yields
    /// gave the core to another thread ([`Backoff::habitual`]).
    ///
    /// And after a short sleep ([`SHORT_SLEEP`]), the budget is followed by
    /// yields for that much longer.
    pub(super) fn new(idle: IdleWait) -> Self {
        match idle {
            IdleWait::Backoff => {
                let backoff = Backoff::habitual(Wait::Consumer);
                #[cfg(not(loom))]
                if slept_short() {
                    return Polls::Awake(backoff, None);
                }
                Polls::Backoff(backoff)
            }
            IdleWait::Park => Polls::None,
            IdleWait::SpinThenPark { spins } => Polls::Count(spins),
            IdleWait::Spin => Polls::Forever,
        }
    }

    /// Polls `ready` (after a wait per the budget, each time) until it
    /// returns `true`, and then returns `true`; returns `false` when the
    /// budget is spent first and the caller should sleep. With no budget
    /// (`Park`) it returns `false` without calling `ready` at all.
    #[inline]
    pub(super) fn until(&mut self, mut ready: impl FnMut() -> bool) -> bool {
        while self.snooze() {
            if ready() {
                if let Some(b) = self.backoff() {
                    b.remember(Wait::Consumer, true);
                }
                return true;
            }
        }
        if let Some(b) = self.backoff() {
            b.remember(Wait::Consumer, false);
        }
        false
    }

    /// Waits before the next poll and returns `true`, or returns `false`
    /// when the budget is spent.
    #[inline]
    fn snooze(&mut self) -> bool {
        match self {
            Polls::None => false,
            Polls::Count(0) => false,
            Polls::Count(left) => {
                *left -= 1;
                hint::spin_loop();
                true
            }
            Polls::Backoff(b) => b.snooze(),
            #[cfg(not(loom))]
            Polls::Awake(b, until) => {
                b.snooze() || {
                    let now = std::time::Instant::now();
                    let awake = now < *until.get_or_insert(now + SHORT_SLEEP);
                    if awake {
                        crate::base::sync::thread::yield_now();
                    }
                    awake
                }
            }
            Polls::Forever => {
                hint::spin_loop();
                true
            }
        }
    }

    /// The shared backoff's budget, for the waits that use it.
    #[inline]
    fn backoff(&self) -> Option<&Backoff> {
        match self {
            Polls::Backoff(b) => Some(b),
            #[cfg(not(loom))]
            Polls::Awake(b, _) => Some(b),
            _ => None,
        }
    }
}
