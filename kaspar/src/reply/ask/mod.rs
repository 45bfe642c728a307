//! `ask`'s side of reply routing: the one-shot [`Slot`] a reply is parked
//! in (`slot.rs`), the per-thread cache that recycles answered slots, and
//! the [`Ask`] handle that waits on one (blocking or as a `Future`).

use std::any::{Any, TypeId};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::base::backoff::{Backoff, Wait};
use crate::base::ids::Target;
use crate::base::sync::thread;
use crate::base::sync::{thread_local, Arc};
use crate::error::AskError;
use crate::guard::chain;
use crate::guard::deadlock::{self, Registered, WaitKind, WaitOn};
use crate::guard::lock::ActorLock;
use crate::mailbox::Helped;

mod slot;

pub use slot::Slot;
use slot::Waiter;

/// Slots per reply type that a thread keeps for reuse.
const SLOT_CACHE: usize = 32;

/// Per reply type, a `Vec<Arc<Slot<R>>>` behind `dyn Any`: one box and one
/// vector per type for the life of the thread, then no allocation at all.
/// Looked up twice per `ask` (draw, recycle), so keyed without SipHash.
type SlotCache = HashMap<TypeId, Box<dyn Any>, BuildHasherDefault<TypeIdHasher>>;

/// Hashes a [`TypeId`], which is itself a hash of high quality: std feeds
/// a hasher its low 64 bits with one `write_u64`, and those are the hash.
/// (With std's SipHash, drawing a slot took about 165 instructions in
/// callgrind, most of them hashing, and recycling it as many again.)
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Not how std hashes a `TypeId`; correct for any key all the same
        // (FNV-1a).
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

thread_local! {
    /// Answered `ask` slots, kept by the thread that asked, so that in
    /// steady state an `ask` draws a slot from here rather than allocating.
    static SLOTS: RefCell<SlotCache> = RefCell::new(HashMap::default());
}

std::thread_local! {
    /// Replies this thread has stored into askers' slots. Std's, not the
    /// shim's: a count the loom models do not look at.
    static ANSWERED: Cell<u64> = const { Cell::new(0) };
}

/// Counts a reply this thread stored (see [`answered`]).
fn count_answer() {
    let _ = ANSWERED.try_with(|n| n.set(n.get().wrapping_add(1)));
}

/// How many replies (or errors) this thread has stored into askers' slots
/// so far, wrapping: a pooled activation compares it around a message to
/// learn whether the message was an ask it answered
/// (`mailbox::INFLATE_AFTER`).
#[inline]
pub(crate) fn answered() -> u64 {
    ANSWERED.try_with(Cell::get).unwrap_or(0)
}

/// Runs `f` on this thread's cached slots for reply type `R`; `None` during
/// thread teardown, when the cache is gone.
fn with_cached<R: Send + 'static, T>(f: impl FnOnce(&mut Vec<Arc<Slot<R>>>) -> T) -> Option<T> {
    SLOTS
        .try_with(|cache| {
            let mut cache = cache.borrow_mut();
            let list = cache
                .entry(TypeId::of::<Vec<Arc<Slot<R>>>>())
                .or_insert_with(|| Box::new(Vec::<Arc<Slot<R>>>::with_capacity(SLOT_CACHE)));
            list.downcast_mut::<Vec<Arc<Slot<R>>>>().map(f)
        })
        .ok()
        .flatten()
}

/// A fresh or recycled one-shot slot for a reply of type `R`.
pub(crate) fn slot<R: Send + 'static>() -> Arc<Slot<R>> {
    with_cached::<R, _>(Vec::pop)
        .flatten()
        .unwrap_or_else(|| Arc::new(Slot::new()))
}

/// Slots of reply type `R` in this thread's cache (for the loom model).
#[cfg(loom)]
pub(crate) fn cached_slots<R: Send + 'static>() -> usize {
    with_cached::<R, _>(|list| list.len()).unwrap_or(0)
}

/// Keeps an answered slot that only the caller references for the next
/// `ask` of this thread. Reset through the unique reference: `get_mut`
/// acquires the replier's release of its reference, which came after its
/// last access (`slot.rs`, rule R).
fn recycle<R: Send + 'static>(mut slot: Arc<Slot<R>>) {
    let Some(unique) = Arc::get_mut(&mut slot) else {
        return;
    };
    unique.reset();
    let _ = with_cached::<R, _>(|list| {
        if list.len() < SLOT_CACHE {
            list.push(slot);
        }
    });
}

/// The pending reply of an [`Addr::ask`](crate::Addr::ask).
///
/// Wait for it from a plain thread with [`wait`](Ask::wait) or
/// [`wait_timeout`](Ask::wait_timeout), or `.await` it from any async
/// executor: `Ask` is a `Future` and needs no particular runtime.
///
/// Awaited, it polls for its reply for a short, bounded while (the spin
/// phase of [`wait`](Ask::wait), about a microsecond and a half) the
/// first time it is polled, before it leaves a waker: a reply from an
/// actor on another thread usually comes within that, and the task then
/// never suspends, so its runtime's thread does not go to sleep and need
/// waking (a system call, and tens of microseconds on a virtual machine).
/// It does not poll when the actor it asked runs as a task of an async
/// runtime itself (a pool hosted on tokio, or a simulated system): the
/// reply may need the very thread the poll would hold.
///
/// After the reply has been taken, dropping the handle (which `wait` does)
/// returns its slot to a per-thread cache: an `ask` in steady state costs no
/// system allocation.
#[must_use = "an Ask does nothing unless waited on; drop it to ignore the reply"]
pub struct Ask<R: Send + 'static> {
    /// `None` only while being dropped.
    slot: Option<Arc<Slot<R>>>,
    /// Who must handle the message, for the deadlock detector: the
    /// target's lock (whose consumer thread runs the handler) and name.
    target: Option<AskTarget>,
    /// The reply (or its error) was taken: the replier is done with the
    /// slot or about to be.
    answered: bool,
    /// Polled as a future already: its one spin for the reply is spent.
    polled: bool,
}

impl<R: Send + 'static> Drop for Ask<R> {
    fn drop(&mut self) {
        // Unique only once the replier has let go of the slot (its
        // `ReplyTo` was consumed or dropped); only then can the slot be
        // reset and reused.
        let Some(slot) = self.slot.take() else {
            return;
        };
        if !self.answered {
            // Unanswered: the replier may hold the slot indefinitely.
            return;
        }
        // Answered: the replier drops its reference right after storing
        // the value (`Slot::complete`); wait out that short window.
        // It is usually a few instructions away (a waiter that polled
        // sees the reply before `complete` has let go): spin first.
        let mut backoff = Backoff::new();
        let mut tries = 0;
        while Arc::strong_count(&slot) > 1 && tries < 10_000 {
            if !backoff.snooze() {
                tries += 1;
                thread::yield_now();
            }
        }
        // Once the replier is gone for good (its reference was the only
        // other one, and nobody can clone a reference back into
        // existence), `recycle`'s `get_mut` finds the slot unique, and its
        // acquire orders the reset after the replier's last access.
        recycle(slot);
    }
}

impl<R: Send + 'static> fmt::Debug for Ask<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ask(..)")
    }
}

/// The actor an `ask` went to (its cell, type-erased): the lock whose
/// consumer thread handles the message, and the actor as the deadlock
/// detector names it. Holding the cell costs the `ask` what holding its
/// lock would (one reference count), and the name is read only if the
/// wait is registered.
pub(crate) trait Asked: Send + Sync {
    fn lock(&self) -> &std::sync::Arc<ActorLock>;
    fn target(&self) -> Target;
    /// Whether the actor's messages are handled by tasks of an async
    /// runtime (its pool, or its group's, is hosted on tokio, or simulated).
    fn hosted(&self) -> bool;
    /// Whether the actor's messages are handled by a thread of its own:
    /// not a pool's workers, and not a group's run loop.
    fn dedicated(&self) -> bool;
    /// [`Schedule::help`](crate::mailbox::Schedule::help) of the actor's
    /// pooled consumer: runs the actor's scheduled activation here, where
    /// its hosted pool lets it and it is the next to run.
    fn help(&self, cx: &mut Context<'_>) -> Helped {
        let _ = cx;
        Helped::Nothing
    }
    /// [`Schedule::help_blocked`](crate::mailbox::Schedule::help_blocked)
    /// of the actor's pooled consumer: before a blocking wait for the
    /// reply (`done`), runs the actor's pool here where only this thread
    /// may be able to.
    fn help_blocked(&self, done: &dyn Fn() -> bool, deadline: Option<Instant>) -> bool {
        let _ = (done, deadline);
        false
    }
}

pub(crate) type AskTarget = std::sync::Arc<dyn Asked>;

impl<R: Send + 'static> Ask<R> {
    /// A handle on `slot` for a message queued to `target` (`None` where no
    /// actor's thread answers, as in tests).
    pub(crate) fn new(slot: Arc<Slot<R>>, target: Option<AskTarget>) -> Self {
        Ask {
            slot: Some(slot),
            target,
            answered: false,
            polled: false,
        }
    }

    /// Before blocking: records this thread as waiting for the target's
    /// consumer thread, or returns the cycle that waiting would close.
    #[cold]
    fn register(&self) -> Result<Option<Registered>, AskError> {
        let Some(t) = &self.target else {
            return Ok(None);
        };
        let on = WaitOn::consumer(WaitKind::Reply, t.lock());
        match deadlock::before_wait(chain::thread_token(), on, || t.target()) {
            Ok(registered) => Ok(Some(registered)),
            Err(cycle) => {
                // Not waiting after all: the replier need not unpark us.
                self.slot().unregister();
                Err(AskError::Deadlock(cycle))
            }
        }
    }

    fn slot(&self) -> &Slot<R> {
        self.slot.as_deref().expect("present until drop")
    }

    /// Blocks until the reply arrives.
    ///
    /// Polls for a short, bounded while first (the same budget as an idle
    /// actor's [`IdleWait::Backoff`](crate::IdleWait::Backoff)), so a reply
    /// that comes within microseconds costs no sleep and no wake-up; then
    /// sleeps until the reply wakes it.
    ///
    /// Returns [`AskError::Deadlock`] instead of blocking when the thread
    /// that must handle the message is itself waiting, directly or through
    /// other threads, for something this thread holds (for example, this
    /// thread is inside a handler of `A`, and the target's thread waits in
    /// a `fast_send` to `A`).
    ///
    /// For an actor hosted on a tokio runtime
    /// (`PoolConfig::tokio`, feature `tokio`), a wait outside
    /// actor code on one of that runtime's threads, or on any thread for
    /// a current-thread runtime's actor, runs the pool's scheduled
    /// activations itself until the reply is in: blocking there would
    /// otherwise take away the thread that runs the actor. (Inside a
    /// hosted handler the wait is refused instead, with
    /// [`AskError::Deadlock`].) Prefer `.await` in async code.
    pub fn wait(mut self) -> Result<R, AskError> {
        self.help_blocked(None);
        self.poll_until_ready(None);
        let mut registered = None;
        loop {
            if let Some(v) = self.take_or_register() {
                return v;
            }
            if self.watch(&mut registered)? {
                continue;
            }
            match &registered {
                // In the graph: look again now and then (see `recheck`).
                Some(Some(r)) if r.in_graph() => thread::park_timeout(deadlock::RECHECK),
                // Not in the graph (no actor behind the handle, or nobody
                // can be waiting for this thread): nothing to recheck.
                _ => thread::park(),
            }
        }
    }

    /// Before a blocking wait: where the actor's activations are tasks of
    /// a tokio runtime that only this thread may be able to run now (this
    /// is one of its threads, or it is a current-thread runtime), runs
    /// the pool's scheduled activations here until the reply is in or
    /// `deadline` passes ([`Asked::help_blocked`]). Without it, such a
    /// wait on the runtime's only thread waited for itself forever.
    fn help_blocked(&self, deadline: Option<Instant>) {
        if let Some(t) = &self.target {
            let slot = self.slot();
            t.help_blocked(&|| slot.is_ready(), deadline);
        }
    }

    /// Polls `ready` with backoff until it is set, the budget is spent or
    /// `deadline` passes. Polling is not waiting in the deadlock
    /// detector's sense: the wait registers (and may be refused) after
    /// this, before it first sleeps.
    ///
    /// The budget is this thread's habit for replies
    /// ([`Backoff::habitual`]): a brief spin after a wait that outlasted a
    /// full one or gave the core away, as when the asker and the actor
    /// share a core and the actor can answer only once the asker yields.
    /// Asking an actor on a thread of its own, a yield that gave the core
    /// away ends the polling: the asker sleeps, and the reply's wake-up
    /// moves it to an idle core if there is one
    /// ([`Backoff::ending_at_switch`]).
    fn poll_until_ready(&self, deadline: Option<Instant>) {
        let slot = self.slot();
        let dedicated = self.target.as_ref().is_some_and(|t| t.dedicated());
        let mut backoff = Backoff::habitual(Wait::Reply).ending_at_switch(dedicated);
        let mut checked = false;
        while !slot.is_ready() {
            if !checked && !backoff.is_spinning() {
                checked = true;
                if self.answered_here() {
                    // No reply can come while this thread polls: straight
                    // to the check, which refuses the wait at once.
                    return;
                }
            }
            if !backoff.snooze() || deadline.is_some_and(|d| Instant::now() >= d) {
                backoff.remember(Wait::Reply, false);
                return;
            }
        }
        backoff.remember(Wait::Reply, true);
    }

    /// What the first poll of an awaited `Ask` does before it looks for
    /// the reply: spins for it where a thread answers, or helps where the
    /// activation that answers is a task of an async runtime
    /// ([`Asked::help`]). Returns whether the poll should yield once before
    /// it takes the reply: answered, and other activations wait for a
    /// runner (some perhaps scheduled by the handler the help ran), which
    /// run first, as they would have had the task waited for a runner.
    fn first_poll(&self, cx: &mut Context<'_>) -> bool {
        let Some(target) = &self.target else {
            return false;
        };
        if !target.hosted() {
            self.spin_for_reply();
            return false;
        }
        target.help(cx) == Helped::OthersWait && self.slot().is_ready()
    }

    /// The first poll of an awaited `Ask` whose actor answers on a thread
    /// (its own, or a pool's worker): polls for the reply through the
    /// spin phase of [`wait`](Self::wait)'s budget (no yields: a future
    /// must not give its runtime's thread away). Not for a handle with no
    /// actor named (a remote ask's), nor for an actor whose activations
    /// are tasks of an async runtime, which may need this very thread
    /// (that one is helped instead: `poll`).
    fn spin_for_reply(&self) {
        let slot = self.slot();
        let mut backoff = Backoff::new();
        while backoff.is_spinning() && !slot.is_ready() {
            #[cfg(all(test, not(loom)))]
            tests::SPINS.with(|n| n.set(n.get() + 1));
            backoff.snooze();
        }
    }

    /// Whether only this thread runs the target's queue, or this thread
    /// holds the lock the target's handler needs. Asked once the
    /// spin phase is over, not before it: the consumer's token shares a
    /// cache line with the target's lock word, which the target's thread
    /// takes for every message, our own among them.
    #[cold]
    fn answered_here(&self) -> bool {
        let me = chain::thread_token();
        self.target
            .as_ref()
            .is_some_and(|t| t.lock().consumer() == me || t.lock().held_by(me))
    }

    /// The deadlock detector's part of a wait loop, before each park: the
    /// first time, register (and return `true`: look for the reply again,
    /// it may have come meanwhile); later, recheck.
    fn watch(&self, registered: &mut Option<Option<Registered>>) -> Result<bool, AskError> {
        match registered {
            None => {
                *registered = Some(self.register()?);
                Ok(true)
            }
            Some(r) => {
                self.recheck(r.as_ref())?;
                Ok(false)
            }
        }
    }

    /// After a wake-up without the reply: whether a waiter that cannot back
    /// out (the target's run loop, say) has since closed a cycle through
    /// this wait.
    fn recheck(&self, registered: Option<&Registered>) -> Result<(), AskError> {
        match registered.map(Registered::recheck) {
            Some(Err(cycle)) => {
                self.slot().unregister();
                Err(AskError::Deadlock(cycle))
            }
            _ => Ok(()),
        }
    }

    /// The value if it is there (marking the handle answered); otherwise
    /// registers this thread to be unparked when it arrives.
    fn take_or_register(&mut self) -> Option<Result<R, AskError>> {
        if let Some(v) = self.take_reply() {
            return Some(v);
        }
        let me = thread::current();
        if self.slot().register(|w| *w = Waiter::Thread(me)) {
            None
        } else {
            self.take_reply()
        }
    }

    /// The reply if it is in, marking the handle answered.
    #[inline]
    fn take_reply(&mut self) -> Option<Result<R, AskError>> {
        let v = self.slot().take()?;
        self.answered = true;
        Some(self.named(v))
    }

    /// Blocks at most `timeout`, polling first as [`wait`](Ask::wait)
    /// does (never past the deadline). On [`AskError::Timeout`] the handle
    /// stays valid and can be waited on again.
    /// Refuses to wait, like [`wait`](Ask::wait), when waiting would
    /// deadlock. Where the wait runs a hosted pool's activations itself
    /// (see [`wait`](Ask::wait)), it looks at the deadline between them:
    /// it can end late by as long as the handler running at the deadline.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<R, AskError> {
        let deadline = Instant::now() + timeout;
        self.help_blocked(Some(deadline));
        self.poll_until_ready(Some(deadline));
        let mut registered = None;
        loop {
            if let Some(v) = self.take_or_register() {
                return v;
            }
            if self.watch(&mut registered)? {
                continue;
            }
            let now = Instant::now();
            if now >= deadline {
                self.slot().unregister();
                return self
                    .take_reply()
                    .unwrap_or_else(|| Err(self.name(AskError::Timeout(None))));
            }
            thread::park_timeout((deadline - now).min(deadlock::RECHECK));
        }
    }

    /// The actor asked, as [`Addr::target`](crate::Addr::target) names it;
    /// `None` for a handle no local actor answers (kaspar-remote's asks
    /// to another process). Made on each call.
    pub fn target(&self) -> Option<Target> {
        self.target.as_ref().map(|t| t.target())
    }

    /// The reply if it has arrived, without blocking.
    pub fn try_take(&mut self) -> Option<Result<R, AskError>> {
        self.take_reply()
    }

    /// `v`, its error naming the actor asked (see [`name`](Self::name)).
    #[inline]
    fn named(&self, v: Result<R, AskError>) -> Result<R, AskError> {
        match v {
            Ok(reply) => Ok(reply),
            Err(e) => Err(self.name(e)),
        }
    }

    /// `e`, naming the actor asked if the handle knows it and `e` does not
    /// name one yet (a reply route that was dropped or failed knows only
    /// why). Made here, on the error path only.
    #[cold]
    fn name(&self, e: AskError) -> AskError {
        match &self.target {
            Some(t) => e.naming(|| t.target()),
            None => e,
        }
    }
}

impl<R: Send + 'static> Future for Ask<R> {
    type Output = Result<R, AskError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if !this.polled {
            this.polled = true;
            if this.first_poll(cx) {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        if let Some(v) = this.take_reply() {
            return Poll::Ready(v);
        }
        let waker = cx.waker();
        let left = this.slot().register(|w| match w {
            Waiter::Task(kept) if kept.will_wake(waker) => {}
            w => *w = Waiter::Task(waker.clone()),
        });
        match left {
            true => Poll::Pending,
            // The reply came meanwhile. (`None` only if it was taken
            // already: polled after it completed.)
            false => this.take_reply().map_or(Poll::Pending, Poll::Ready),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
