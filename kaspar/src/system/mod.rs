//! `System`: owns the threads (the paper's Manager).
//!
//! One thread per standalone actor. Shutdown is orderly: every mailbox stops
//! accepting, every run loop handles what it had accepted, runs the actor's
//! `#[stopped]` hook, and exits; then the threads are joined.
//! [`System::shutdown_timeout`] stops waiting at a deadline, reports the
//! threads that did not finish, and has their queued messages handed to the
//! system's [dead letters](crate::DeadLetters).

#[cfg(feature = "console")]
pub(crate) mod console;
pub(crate) mod ctx_spawn;
pub(crate) mod group_spawn;
#[cfg(all(test, any(feature = "tokio", feature = "sim")))]
mod hosted_tests;
pub(crate) mod launch;
#[cfg(feature = "metrics")]
pub(crate) mod metrics;
pub(crate) mod placement;
pub(crate) mod pool;
pub(crate) mod prepare;
#[cfg(any(feature = "metrics", feature = "console"))]
pub(crate) mod registry;
#[cfg(feature = "sim")]
pub mod sim;
pub(crate) mod spawn;

use crate::base::sync::{AtomicBool, Ordering};
use std::fmt;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::base::sync::{Condvar, Mutex};

use crate::actor::cell::ActorCell;
use crate::actor::traits::Actor;
use crate::base::clock::Clock;
use crate::base::ids::Target;
use crate::failure::dead_letters::DeadLetters;
use crate::group::GroupSpec;
use crate::guard::chain::{self, CyclePolicy};
use crate::mailbox::{IdleWait, MailboxKind};
use crate::system::group_spawn::GroupSpawn;
use crate::system::spawn::Spawn;

/// System-wide defaults; each can be overridden per actor.
#[derive(Clone, Debug)]
pub struct SystemConfig {
    /// Cycle policy for actors that do not choose one (default
    /// [`CyclePolicy::Conservative`]). A system-wide
    /// [`Permissive`](CyclePolicy::Permissive) default applies to the
    /// `#[actor(reentrant)]` actors; every other actor is never re-entered,
    /// under any policy. (Asking for `Permissive` on one such actor, at
    /// spawn or per call, panics.)
    pub policy: CyclePolicy,
    /// Mailbox for actors that do not choose one.
    pub mailbox: MailboxKind,
    /// How idle actor threads wait (default [`IdleWait::Backoff`]: poll
    /// briefly, then sleep).
    pub idle: IdleWait,
    /// Most messages a run loop handles per lock acquisition.
    pub max_batch: usize,
    /// The clock handlers read through `Ctx::now`.
    pub clock: Clock,
    /// The actor pool that runs pooled actors
    /// ([`Spawn::pooled`](crate::system::spawn::Spawn::pooled)); started
    /// on the first pooled spawn.
    pub pool: self::pool::PoolConfig,
}

impl Default for SystemConfig {
    fn default() -> Self {
        SystemConfig {
            policy: CyclePolicy::Conservative,
            mailbox: MailboxKind::DEFAULT,
            idle: IdleWait::DEFAULT,
            max_batch: 256,
            clock: Clock::System,
            pool: self::pool::PoolConfig::new(),
        }
    }
}

/// Owns actor threads. Dropping a `System` shuts it down.
pub struct System {
    pub(crate) inner: Arc<SystemInner>,
}

pub(crate) struct SystemInner {
    pub(crate) config: SystemConfig,
    closed: AtomicBool,
    /// A `shutdown_timeout` left threads behind; dropping the system then
    /// does not wait for them again.
    gave_up: AtomicBool,
    running: Mutex<Vec<Running>>,
    /// The actor pool, once a pooled spawn has started it.
    pool: Mutex<Option<Arc<crate::delivery::sched::Shared>>>,
    pub(crate) dead: DeadLetters,
    /// Every actor's cell, held weakly, for the metrics collector and
    /// the console.
    #[cfg(any(feature = "metrics", feature = "console"))]
    pub(crate) observed: self::registry::Registry,
    /// The collector threads, told to stop when the system goes.
    #[cfg(feature = "metrics")]
    pub(crate) collectors: self::metrics::Collectors,
}

impl SystemInner {
    /// Stands in for the system of an actor that no system started (one in
    /// a `Simulation`), or whose system is gone, when its handler spawns:
    /// closed from the start, so what is spawned into it starts closed.
    pub(crate) fn closed() -> Self {
        SystemInner {
            config: SystemConfig::default(),
            closed: AtomicBool::new(true),
            gave_up: AtomicBool::new(false),
            running: Mutex::new(Vec::new()),
            pool: Mutex::new(None),
            dead: DeadLetters::new(),
            #[cfg(any(feature = "metrics", feature = "console"))]
            observed: Default::default(),
            #[cfg(feature = "metrics")]
            collectors: Default::default(),
        }
    }

    /// Lets the metrics collector and the console read `cell` (features
    /// `metrics`, `console`; without them, nothing). Where each cell is
    /// made, once.
    #[inline]
    pub(crate) fn observe<A: Actor>(&self, cell: &Arc<ActorCell<A>>) {
        #[cfg(any(feature = "metrics", feature = "console"))]
        self.observed.add(crate::actor::observe::observed(cell));
        #[cfg(not(any(feature = "metrics", feature = "console")))]
        let _ = cell;
    }

    /// Records that the thread named `thread` serves `lock`, a standalone
    /// actor's or (with `group`, its type name) a group's, for the console
    /// (feature `console`; without it, nothing).
    #[inline]
    pub(crate) fn placed(
        &self,
        lock: &Arc<crate::guard::lock::ActorLock>,
        thread: &str,
        group: Option<&'static str>,
    ) {
        #[cfg(feature = "console")]
        self.observed.placed(
            lock,
            self::registry::Thread {
                name: thread.into(),
                group,
            },
        );
        #[cfg(not(feature = "console"))]
        let _ = (lock, thread, group);
    }

    /// Registers a started thread. If the system is shutting down or shut
    /// down, the thread's mailbox is closed at once (its actor runs its
    /// hooks and refuses every message); the shutdown in progress stops and
    /// joins it, or else the next one or the system's drop does. (Not
    /// joined here: the caller may be a handler the new actor's hooks
    /// call.)
    pub(crate) fn register(&self, running: Running) {
        let mut list = self.running.lock();
        if self.closed.load(Ordering::SeqCst) {
            (running.close)();
        }
        list.push(running);
    }
}

/// A started actor or group, as the system tracks it.
pub(crate) struct Running {
    /// As the shutdown report names it.
    pub(crate) target: Target,
    pub(crate) close: Box<dyn Fn() + Send>,
    pub(crate) thread: JoinHandle<()>,
    pub(crate) done: Arc<Done>,
}

/// Set by an actor thread as it exits (also by unwinding), so a shutdown
/// can wait for it with a deadline; `JoinHandle::join` has none.
#[derive(Default)]
pub(crate) struct Done {
    finished: Mutex<bool>,
    cv: Condvar,
}

impl Done {
    /// Whether the thread finished by `deadline` (`None`: wait forever).
    fn wait(&self, deadline: Option<Instant>) -> bool {
        let mut finished = self.finished.lock();
        while !*finished {
            match deadline {
                None => finished = self.cv.wait(finished),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    let (guard, timed_out) = self.cv.wait_timeout(finished, left);
                    finished = guard;
                    if timed_out {
                        return *finished;
                    }
                }
            }
        }
        true
    }
}

/// Marks its thread done when dropped.
pub(crate) struct DoneOnExit(pub(crate) Arc<Done>);

impl Drop for DoneOnExit {
    fn drop(&mut self) {
        *self.0.finished.lock() = true;
        self.0.cv.notify_all();
    }
}

impl fmt::Debug for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("System")
            .field("actors", &self.inner.running.lock().len())
            .field("closed", &self.inner.closed.load(Ordering::Relaxed))
            .finish()
    }
}

impl Default for System {
    fn default() -> Self {
        Self::new()
    }
}

impl System {
    /// A system with the default configuration.
    pub fn new() -> Self {
        Self::with_config(SystemConfig::default())
    }

    /// A system with `config`.
    pub fn with_config(config: SystemConfig) -> Self {
        crate::guard::deadlock::reserve();
        System {
            inner: Arc::new(SystemInner {
                config,
                closed: AtomicBool::new(false),
                gave_up: AtomicBool::new(false),
                running: Mutex::new(Vec::new()),
                pool: Mutex::new(None),
                dead: DeadLetters::new(),
                #[cfg(any(feature = "metrics", feature = "console"))]
                observed: Default::default(),
                #[cfg(feature = "metrics")]
                collectors: Default::default(),
            }),
        }
    }

    /// The system-wide defaults.
    pub fn config(&self) -> &SystemConfig {
        &self.inner.config
    }

    /// The system's dead-letter sink: every message its actors could not
    /// handle, with the reason. Subscribe an actor to it, or read its
    /// counters.
    pub fn dead_letters(&self) -> &DeadLetters {
        &self.inner.dead
    }

    /// Prepares `actor` to run on its own thread; call
    /// [`start`](Spawn::start) on the result.
    pub fn spawn<A: Actor + Send>(&self, actor: A) -> Spawn<'_, A> {
        Spawn::of_value(Arc::clone(&self.inner), actor, None)
    }

    /// Starts an actor whose state `factory` builds on the actor's own
    /// thread; call [`start`](Spawn::start) on the result.
    ///
    /// The state never leaves that thread: it is built there, every handler
    /// runs there, and it is dropped there when the actor stops. So it
    /// need not be `Send` (an order book on `Rc`, say) if the actor is
    /// declared `#[actor(thread_bound)]`. Such an actor takes messages from
    /// any thread through `send`, `ask` and `request`; a synchronous
    /// delivery (`fast_send` and its family) runs only on the actor's own
    /// thread (from its handlers, or its group's) and is refused elsewhere
    /// with [`FastSendError::ThreadBound`](crate::FastSendError::ThreadBound)
    /// (`fast_send_void` queues instead).
    ///
    /// Until the factory returns, synchronous callers wait as for a busy
    /// actor and messages queue up. If it panics, the actor stops before it
    /// started: queued messages go to dead letters and watchers hear
    /// [`ExitReason::Panicked`](crate::ExitReason::Panicked).
    pub fn spawn_with<A: Actor>(
        &self,
        factory: impl FnOnce() -> A + Send + 'static,
    ) -> Spawn<'_, A> {
        Spawn::of_factory(Arc::clone(&self.inner), factory, None)
    }

    /// Prepares a group: its members (in the `#[group]` struct's field
    /// order) run on one thread behind one queue. Call
    /// [`start`](GroupSpawn::start) on the result.
    pub fn spawn_group<G: GroupSpec>(&self, members: G::Members) -> GroupSpawn<'_, G>
    where
        G::Members: Send,
    {
        GroupSpawn::of_value(Arc::clone(&self.inner), members)
    }

    /// Stops every actor and group, newest first, one at a time: its
    /// mailbox stops accepting, it handles what it had already accepted,
    /// runs its `#[stopped]` hook, and its thread is joined before the next
    /// one is closed. Sends to an actor already stopped are handed back as
    /// `Closed`. Idempotent; after a
    /// [`shutdown_timeout`](Self::shutdown_timeout), waits for the threads
    /// it left behind.
    pub fn shutdown(&self) -> ShutdownReport {
        self.stop_all(None)
    }

    /// [`shutdown`](Self::shutdown), but stops waiting `timeout` from now.
    ///
    /// Threads that have not finished by then are listed in
    /// [`ShutdownReport::unfinished`] and left running; the ones not yet
    /// closed are closed at once. From then on every run loop of this
    /// system hands what it dequeues to dead letters
    /// ([`DeadLetterReason::ShutdownTimeout`](crate::DeadLetterReason::ShutdownTimeout))
    /// instead of handling it, as soon as its current handler returns, and
    /// then runs its `#[stopped]` hook and exits. A later
    /// [`shutdown`](Self::shutdown) waits for them; dropping the system
    /// does not.
    pub fn shutdown_timeout(&self, timeout: Duration) -> ShutdownReport {
        self.stop_all(Some(Instant::now() + timeout))
    }

    fn stop_all(&self, deadline: Option<Instant>) -> ShutdownReport {
        self.inner.closed.store(true, Ordering::SeqCst);
        if chain::runs_actor_code() {
            return self.close_without_waiting();
        }
        let mut report = ShutdownReport::default();
        let mut left = Vec::new();
        // A handler still draining may spawn (`Ctx::spawn`): its actor
        // starts closed and is registered, and is stopped by the next round.
        loop {
            let running = std::mem::take(&mut *self.inner.running.lock());
            if running.is_empty() {
                break;
            }
            // Newest first, one at a time: an actor's downstream was usually
            // spawned before it (its address had to exist), so it is still
            // open while the upstream actor drains what it had accepted.
            for r in running.into_iter().rev() {
                (r.close)();
                if !r.done.wait(deadline) {
                    if !self.inner.dead.is_abandoned() {
                        // The deadline passed: stop handling, start dead-lettering.
                        self.inner.dead.abandon();
                    }
                    left.push(r);
                    continue;
                }
                match r.thread.join() {
                    Ok(()) => report.stopped.push(r.target),
                    Err(_) => report.failed.push(r.target),
                }
            }
        }
        if !left.is_empty() {
            self.inner.gave_up.store(true, Ordering::SeqCst);
            report.unfinished = left.iter().map(|r| r.target.clone()).collect();
            left.reverse();
            self.inner.running.lock().extend(left);
        }
        report
    }
}

impl System {
    /// [`shutdown`](Self::shutdown) from a thread that runs actor code (a
    /// handler, a hook, a run loop): every mailbox is closed, so every
    /// actor drains, runs its `stopped` hook and exits as usual, but none
    /// is waited for. Waiting could not end: this thread holds a lock, or
    /// is the very run loop, that one of them needs to finish. Every actor
    /// is reported unfinished; a later `shutdown` from outside any actor
    /// (or dropping the `System` there) joins them.
    #[cold]
    fn close_without_waiting(&self) -> ShutdownReport {
        let running = self.inner.running.lock();
        let mut report = ShutdownReport {
            not_waited: true,
            ..ShutdownReport::default()
        };
        for r in running.iter().rev() {
            (r.close)();
            report.unfinished.push(r.target.clone());
        }
        report
    }
}

impl Drop for System {
    fn drop(&mut self) {
        if self.inner.gave_up.load(Ordering::SeqCst) {
            // Join what has finished; detach what a timeout gave up on.
            self.stop_all(Some(Instant::now()));
        } else {
            self.shutdown();
        }
    }
}

/// What [`System::shutdown`] did.
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct ShutdownReport {
    /// Actors that drained, ran `stopped`, and exited, in the order they
    /// were stopped. A group is one entry: its type name, its instance
    /// name if it was given one, and an id of its own.
    pub stopped: Vec<Target>,
    /// Actor threads that died outside a handler (a runtime bug).
    pub failed: Vec<Target>,
    /// Actor and group threads still running when
    /// [`System::shutdown_timeout`] stopped waiting (a handler that does
    /// not return). Their queued messages go to dead letters as each
    /// thread gets back to its run loop. After a shutdown called from
    /// actor code (see [`not_waited`](Self::not_waited)): every actor,
    /// none of them waited for.
    pub unfinished: Vec<Target>,
    /// Whether this shutdown was called from a thread running actor code
    /// (inside a handler or a hook, or on an actor's thread), where it
    /// cannot wait: it closed every mailbox and returned at once, and the
    /// actors stop on their own threads. (Dropping the last `System` there
    /// does the same and detaches the threads.)
    pub not_waited: bool,
}
