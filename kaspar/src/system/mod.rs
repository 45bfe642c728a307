//! `System`: owns the actors' threads and the actor pool (the paper's
//! Manager).
//!
//! An actor runs on a thread of its own, or on the system's pool of worker
//! threads (`Spawn::pooled`). Shutdown is orderly: actors stop newest
//! first, one at a time, threads and pooled actors in one order; each
//! mailbox stops accepting, its run loop (or activation) handles what it
//! had accepted, runs the actor's `#[stopped]` hook, and exits (`shutdown`).
//! [`System::shutdown_timeout`] stops waiting at a deadline, reports the
//! actors that did not finish, and has their queued messages handed to the
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
mod shutdown;
#[cfg(feature = "sim")]
pub mod sim;
pub(crate) mod spawn;

pub use shutdown::ShutdownReport;
pub(crate) use shutdown::{Done, DoneOnExit, Role, Running};

use crate::base::sync::{AtomicBool, AtomicU64, Ordering};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::base::sync::Mutex;

use crate::actor::cell::ActorCell;
use crate::actor::traits::Actor;
use crate::base::clock::Clock;
use crate::failure::dead_letters::DeadLetters;
use crate::group::GroupSpec;
use crate::guard::chain::CyclePolicy;
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
    /// Started threads, each with its place in the start order, oldest
    /// first.
    running: Mutex<Vec<(u64, Running)>>,
    /// The start order's next number, shared by threads and pooled actors:
    /// a shutdown stops them all newest first.
    started: AtomicU64,
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
            started: AtomicU64::new(0),
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
            // Without waiting (a pool's close could): the list is locked.
            (running.close)(Some(Instant::now()));
        }
        // Under the list's lock: the list stays in start order.
        list.push((self.next_start(), running));
    }

    /// The next place in the start order, which a shutdown stops newest
    /// first.
    pub(crate) fn next_start(&self) -> u64 {
        self.started.fetch_add(1, Ordering::Relaxed)
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
                started: AtomicU64::new(0),
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
    /// runs its `#[stopped]` hook, and its thread is joined (or, pooled, it
    /// leaves the pool) before the next one is closed. Threads and pooled
    /// actors stop in one order, the order they started in, reversed; the
    /// pool's workers stop last. Sends to an actor already stopped are
    /// handed back as `Closed`. Idempotent; after a
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
}
