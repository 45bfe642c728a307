//! A system's actor pool: its configuration, and how the system starts it
//! (lazily, on the first pooled spawn), places its workers and stops it.

use std::sync::Arc;
use std::time::Duration;

use crate::base::ids::{ActorId, Target};
use crate::delivery::sched::{Member, SchedConfig, Shared};
use crate::system::launch::spawn_thread;
use crate::system::placement::Placement;
use crate::system::{Role, Running, System, SystemInner};

/// How a system's actor pool is sized, placed and scheduled (see
/// [`Spawn::pooled`](crate::system::spawn::Spawn::pooled)). The pool
/// starts with the first pooled spawn; until then it costs nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolConfig {
    /// Worker threads; 0 (the default) means one per core the process may
    /// use (`std::thread::available_parallelism`).
    pub workers: usize,
    /// Where every worker runs (affinity, `SCHED_FIFO`), applied by each
    /// worker before it runs anything, as for an actor's own thread. A
    /// refusal by the OS is not an error: the worker runs unplaced.
    pub placement: Placement,
    /// Pins worker `i` to CPU `i` (overriding `placement`'s CPUs).
    pub pin_workers: bool,
    /// Messages one activation of a pooled actor handles before it goes
    /// to the back of its worker's queue, so that a busy actor cannot
    /// starve the others (Akka's throughput, Erlang's reductions). When
    /// nothing else waits anywhere in the pool, a worker's activation
    /// serves on instead: there is nobody to be fair to.
    pub budget: usize,
    /// Activations a worker runs in a row from its next-to-run slot (the
    /// actor a handler on it just sent to) before that actor waits its
    /// turn like the rest: two actors sending to each other cannot keep a
    /// worker's queue waiting for longer than this.
    pub lifo_limit: u32,
    /// How often the pool's monitor looks for a worker stuck in one
    /// activation with an actor waiting in its next-to-run slot (sent to
    /// by the handler that is still running), and moves that actor to
    /// another worker: the shortest stall it acts on, and half the longest
    /// wait it leaves the actor. `None`: no monitor thread, and such an
    /// actor waits for the handler. Values under [`MONITOR_MIN`] are
    /// raised to it. A hosted or simulated pool has no monitor.
    ///
    /// [`MONITOR_MIN`]: Self::MONITOR_MIN
    pub monitor: Option<Duration>,
    /// The tokio runtime that runs the pooled actors instead of worker
    /// threads ([`PoolConfig::tokio`]).
    #[cfg(feature = "tokio")]
    host: Option<TokioHost>,
    /// The simulator that runs every actor of the system, pooled or not
    /// ([`crate::sim`]).
    #[cfg(feature = "sim")]
    pub(crate) sim: Option<SimHost>,
}

/// A simulator's ready list as a [`PoolConfig`] holds it (equal when it
/// is the same one).
#[cfg(feature = "sim")]
#[derive(Clone, Debug)]
pub(crate) struct SimHost(pub(crate) Arc<crate::delivery::sched::sim::Host>);

#[cfg(feature = "sim")]
impl PartialEq for SimHost {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[cfg(feature = "sim")]
impl Eq for SimHost {}

/// A tokio runtime's handle as a [`PoolConfig`] holds it: two configs
/// are equal when they name the handle one [`PoolConfig::tokio`] call was
/// given (tokio's handles have no equality of their own).
#[cfg(feature = "tokio")]
#[derive(Clone)]
struct TokioHost(Arc<tokio::runtime::Handle>);

#[cfg(feature = "tokio")]
impl PartialEq for TokioHost {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[cfg(feature = "tokio")]
impl Eq for TokioHost {}

#[cfg(feature = "tokio")]
impl std::fmt::Debug for TokioHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TokioHost({:?})", self.0.runtime_flavor())
    }
}

impl PoolConfig {
    /// Messages per activation by default. Measured with
    /// `cargo bench --bench sched` (two threads sending round-robin to 64
    /// pooled actors, best of three, on the loaded 2-core dev VM), budgets
    /// 4 / 16 / 64 / 256 / 1024 gave 19.2 / 25.1 / 29.7 / 19.1 / 15.7 M
    /// msgs/s in one run and 15.6 / 18.5 / 20.2 / 22.2 / 22.2 in another:
    /// below 64 an activation's fixed cost (a trip through the run queue)
    /// shows; above it nothing is gained reliably, while a busy actor
    /// delays its neighbours on the worker by up to a budget of handler
    /// runs. So 64: the smallest budget at the top of both sweeps.
    pub const DEFAULT_BUDGET: usize = 64;
    /// Next-to-run activations in a row by default. A ping-pong between
    /// two pooled actors on one worker measured 462 / 407 / 352 / 351 /
    /// 303 ns per round trip with limits 0 / 1 / 3 / 8 / 32
    /// (`benches/sched.rs`, one run): most of the slot's gain is in by 3;
    /// 8 keeps it while a pair that sends to each other still lets the
    /// rest of the worker's queue in every eight activations.
    pub const DEFAULT_LIFO_LIMIT: u32 = 8;
    /// The monitor's look interval by default. A handler that sent to a
    /// pooled actor and then computed for 20 ms had the actor start after
    /// 1.2–1.3 ms (median of 20 rounds, two runs, 2-core VM) with 1 ms,
    /// and 0.33 ms with 250 µs, where the pooled ping-pong of
    /// `benches/sched` looked 5–10% slower; at 1 ms its cost was lost in
    /// the noise.
    pub const DEFAULT_MONITOR: Duration = crate::delivery::sched::monitor::EVERY;
    /// The shortest look interval: below it the monitor's thread would
    /// take a core's worth of wake-ups for little gain.
    pub const MONITOR_MIN: Duration = Duration::from_micros(100);

    /// One worker per core, unplaced, with the default budget.
    pub fn new() -> Self {
        PoolConfig {
            workers: 0,
            placement: Placement::new(),
            pin_workers: false,
            budget: Self::DEFAULT_BUDGET,
            lifo_limit: Self::DEFAULT_LIFO_LIMIT,
            monitor: Some(Self::DEFAULT_MONITOR),
            #[cfg(feature = "tokio")]
            host: None,
            #[cfg(feature = "sim")]
            sim: None,
        }
    }

    /// Pooled actors run as tasks on the tokio runtime of `handle` instead
    /// of on worker threads of the system's own (feature `tokio`).
    ///
    /// A send that finds a pooled actor idle spawns a task on the runtime
    /// that runs one activation of it (at most [`budget`](Self::budget)
    /// messages, then it yields to the runtime's other tasks). An idle
    /// actor holds no task. A tokio task that sends to such an actor, or
    /// `ask(..).await`s it, on a thread of the same runtime has it run on
    /// that thread, and the reply wakes the task there: no thread is woken.
    /// `workers`, `placement`, `pin_workers` and `lifo_limit` do not apply
    /// (the runtime's threads are the runtime's), and
    /// [`System::pool_threads`](crate::System::pool_threads) is 0.
    ///
    /// Inside a handler of such an actor, a wait for another actor's
    /// queue (`Ask::wait`, a send waiting for room in a full
    /// `WhenFull::Wait` mailbox) would block a thread of the runtime, which
    /// the actor waited for may need: it is refused with the deadlock error
    /// ([`AskError::Deadlock`](crate::AskError::Deadlock),
    /// [`SendError::Deadlock`](crate::SendError::Deadlock) with the message
    /// back) and a one-edge cycle, the caller's own, on either kind of
    /// runtime. `fast_send` waits for a lock as everywhere.
    ///
    /// The system keeps one thread of its own, asleep, so that
    /// [`System::shutdown`](crate::System::shutdown) can wait for the pool.
    /// The shutdown runs the pooled actors' last activations on its own
    /// thread (beside the runtime, which may run some of them too): it
    /// works inside `block_on` on a current-thread runtime, outside it, and
    /// after the runtime is gone. So a
    /// [`shutdown_timeout`](crate::System::shutdown_timeout)'s deadline
    /// does not cut short a hosted actor's drain.
    #[cfg(feature = "tokio")]
    pub fn tokio(handle: tokio::runtime::Handle) -> Self {
        PoolConfig {
            host: Some(TokioHost(Arc::new(handle))),
            ..Self::new()
        }
    }

    /// `n` worker threads (0: one per core).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = n;
        self
    }

    /// Where every worker runs.
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// Pins worker `i` to CPU `i`.
    pub fn pin_workers(mut self, on: bool) -> Self {
        self.pin_workers = on;
        self
    }

    /// Messages per activation (at least 1).
    pub fn budget(mut self, n: usize) -> Self {
        self.budget = n.max(1);
        self
    }

    /// Next-to-run activations in a row while other activations wait on
    /// the worker (0: never run from the slot first). With nobody
    /// waiting, a chain of sends runs on from the slot past the limit.
    pub fn lifo_limit(mut self, n: u32) -> Self {
        self.lifo_limit = n;
        self
    }

    /// How often the pool's monitor looks for an actor stranded behind a
    /// long handler ([`monitor`](Self#structfield.monitor)); `None` for no
    /// monitor thread. Raised to [`MONITOR_MIN`](Self::MONITOR_MIN).
    pub fn monitor(mut self, every: Option<Duration>) -> Self {
        self.monitor = every.map(|e| e.max(Self::MONITOR_MIN));
        self
    }

    /// The worker count this configuration gives on this machine.
    pub fn worker_count(&self) -> usize {
        match self.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    fn placement_of(&self, worker: usize) -> Placement {
        if self.pin_workers {
            self.placement.clone().pin(worker)
        } else {
            self.placement.clone()
        }
    }
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl SystemInner {
    /// Adds `member` to the system's pool, starting the pool if there is
    /// none (or its workers have left, after a shutdown); returns the pool
    /// and the member's slot.
    pub(crate) fn pool_member(&self, member: Arc<dyn Member>) -> (Arc<Shared>, usize) {
        let order = self.next_start();
        let mut pool = self.pool.lock();
        if let Some(shared) = &*pool {
            if let Some(slot) = shared.join(order, Arc::clone(&member)) {
                return (Arc::clone(shared), slot);
            }
        }
        let config = &self.config.pool;
        #[cfg(feature = "sim")]
        if let Some(host) = &config.sim {
            // No threads: the simulator runs every activation.
            let shared = crate::delivery::sched::sim::start(Arc::clone(&host.0));
            let slot = shared
                .join(order, member)
                .expect("kaspar: a new pool takes members");
            *pool = Some(Arc::clone(&shared));
            return (shared, slot);
        }
        #[cfg(feature = "tokio")]
        if let Some(host) = &config.host {
            return self.start_tokio_pool(pool, order, member, host);
        }
        let spare_placement = config.placement.clone();
        let (shared, bodies) = Shared::start(
            SchedConfig {
                workers: config.worker_count(),
                budget: config.budget.max(1),
                lifo_limit: config.lifo_limit,
                monitor: config
                    .monitor
                    .map(|every| every.max(PoolConfig::MONITOR_MIN)),
            },
            Box::new(move || {
                let _ = spare_placement.apply_to_current_thread();
            }),
        );
        let slot = shared
            .join(order, member)
            .expect("kaspar: a new pool takes members");
        *pool = Some(Arc::clone(&shared));
        drop(pool);
        for (i, body) in bodies.into_iter().enumerate() {
            let name = format!("kaspar:pool-{i}");
            let spawned = spawn_thread(name, config.placement_of(i), body);
            let closing = Arc::clone(&shared);
            // Each worker is one entry: the shutdown closes the pool at the
            // first (newest) and waits for each worker, which leaves once
            // the pool's last member has stopped.
            self.register(Running {
                target: Target::new(ActorId::next(), "Pool", Some(format!("pool-{i}").into())),
                role: Role::PoolWorker,
                close: Box::new(move |deadline| closing.close_all(deadline)),
                thread: spawned.thread,
                done: spawned.done,
            });
        }
        (shared, slot)
    }
}

#[cfg(feature = "tokio")]
impl SystemInner {
    /// [`pool_member`](Self::pool_member)'s new pool on a tokio runtime
    /// (`pool` is the system's slot for it, locked).
    fn start_tokio_pool(
        &self,
        mut pool: crate::base::sync::MutexGuard<'_, Option<Arc<Shared>>>,
        order: u64,
        member: Arc<dyn Member>,
        host: &TokioHost,
    ) -> (Arc<Shared>, usize) {
        let (shared, keeper) = crate::delivery::sched::tokio::start(
            SchedConfig {
                workers: 0,
                budget: self.config.pool.budget.max(1),
                lifo_limit: 0,
                // The runtime's threads are the runtime's to watch.
                monitor: None,
            },
            &host.0,
        );
        let slot = shared
            .join(order, member)
            .expect("kaspar: a new pool takes members");
        *pool = Some(Arc::clone(&shared));
        drop(pool);
        let spawned = spawn_thread("kaspar:pool-tokio".into(), Placement::new(), keeper);
        let closing = Arc::clone(&shared);
        self.register(Running {
            target: Target::new(ActorId::next(), "Pool", Some("pool-tokio".into())),
            role: Role::PoolWorker,
            close: Box::new(move |deadline| closing.close_all(deadline)),
            thread: spawned.thread,
            done: spawned.done,
        });
        (shared, slot)
    }
}

impl SystemInner {
    /// Whether a simulator runs this system's actors (every spawn is then
    /// a pooled one, on the simulator's thread).
    #[inline]
    pub(crate) fn simulated(&self) -> bool {
        #[cfg(feature = "sim")]
        return self.config.pool.sim.is_some();
        #[cfg(not(feature = "sim"))]
        false
    }

    /// What the console names as the thread of a pooled actor or group:
    /// the pool (its workers take turns running it), the tokio runtime
    /// that hosts it, or the simulator.
    pub(crate) fn pool_thread_name(&self) -> &'static str {
        #[cfg(feature = "sim")]
        if self.config.pool.sim.is_some() {
            return "kaspar:sim";
        }
        #[cfg(feature = "tokio")]
        if self.config.pool.host.is_some() {
            return "kaspar:pool-tokio";
        }
        "kaspar:pool"
    }

    /// The simulated system's pool, once an actor has joined it.
    #[cfg(feature = "sim")]
    pub(crate) fn sim_pool(&self) -> Option<Arc<Shared>> {
        self.pool.lock().clone()
    }
}

impl System {
    /// Threads working for the system's actor pool now: its workers and
    /// the spare threads that blocking waits inside pooled handlers
    /// started (0 before the first pooled spawn, and once a shutdown has
    /// stopped the pool).
    pub fn pool_threads(&self) -> usize {
        match &*self.inner.pool.lock() {
            Some(pool) if !pool.exited() => pool.threads(),
            _ => 0,
        }
    }

    /// Pooled actors that have started and not yet stopped.
    pub fn pooled_actors(&self) -> usize {
        self.inner.pool.lock().as_ref().map_or(0, |p| p.live())
    }
}
