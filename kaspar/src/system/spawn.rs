//! The actor spawn builder: per-actor options, then `start`. How a start
//! runs the actor (its own thread, or the pool) is `launch`.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::actor::addr::Addr;
use crate::actor::cell::ActorCell;
use crate::actor::traits::{Actor, ActorConfig};
use crate::delivery::run_loop::LoopConfig;
use crate::failure::supervision::Supervision;
use crate::guard::chain::CyclePolicy;
use crate::mailbox::{IdleWait, MailboxKind};
use crate::system::launch::{checked_name, name_prepared, placement_of};
use crate::system::placement::{Placement, PlacementOutcome};
use crate::system::{System, SystemInner};

/// Makes an actor's state on its thread: moves a given one there, or runs
/// the user's factory there.
type Build<A> = Box<dyn FnOnce() -> A + Send>;

/// An actor about to be started; set per-actor options, then
/// [`start`](Spawn::start).
#[must_use = "the actor runs only once `start` is called"]
pub struct Spawn<'s, A: Actor> {
    pub(super) placement: Placement,
    /// Held, not borrowed, so that a handler can spawn (`Ctx::spawn`).
    pub(super) system: Arc<SystemInner>,
    pub(super) _system: PhantomData<&'s System>,
    pub(super) name: Option<Arc<str>>,
    pub(super) build: Build<A>,
    /// The state is built on the actor's thread and must be dropped there.
    pub(super) thread_bound: bool,
    /// The cell [`System::prepare`] made, whose address is out already.
    pub(super) prepared: Option<Arc<ActorCell<A>>>,
    pub(super) supervision: Option<Supervision<A>>,
    pub(super) mailbox: MailboxKind,
    pub(super) policy: CyclePolicy,
    pub(super) looping: LoopConfig,
    pub(super) latency: bool,
    /// Run on the system's pool instead of a thread of its own.
    pub(super) pooled: bool,
    /// The mailbox kind was chosen (by the actor's declaration, the
    /// system's configuration or `mailbox`), so `pooled` keeps it.
    pub(super) mailbox_chosen: bool,
    /// A placement was asked for (which a pooled actor cannot have).
    pub(super) placed: bool,
    #[cfg(feature = "journal")]
    pub(super) flight: Option<crate::delivery::flight::FlightRecorder<A::Msg>>,
}

impl<A: Actor> fmt::Debug for Spawn<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spawn")
            .field("actor", &<A as ActorConfig>::NAME)
            .field("name", &self.name)
            .field("mailbox", &self.mailbox)
            .field("policy", &self.policy)
            .field("supervision", &self.supervision)
            .field("latency", &self.latency)
            .finish()
    }
}

impl<'s, A: Actor> Spawn<'s, A> {
    /// A spawn of `actor`, made here and moved to its thread, into
    /// `system` (a `System`'s, or a handler's through `Ctx`); into the
    /// `prepared` cell if `System::prepare` made one.
    pub(crate) fn of_value(
        system: Arc<SystemInner>,
        actor: A,
        prepared: Option<Arc<ActorCell<A>>>,
    ) -> Self
    where
        A: Send,
    {
        Self::with_build(system, Box::new(move || actor), false, prepared)
    }

    /// A spawn whose state `factory` builds on the actor's thread, where it
    /// stays (see `System::spawn_with`).
    pub(crate) fn of_factory(
        system: Arc<SystemInner>,
        factory: impl FnOnce() -> A + Send + 'static,
        prepared: Option<Arc<ActorCell<A>>>,
    ) -> Self {
        Self::with_build(system, Box::new(factory), true, prepared)
    }

    fn with_build(
        system: Arc<SystemInner>,
        build: Build<A>,
        thread_bound: bool,
        prepared: Option<Arc<ActorCell<A>>>,
    ) -> Self {
        let c = &system.config;
        Spawn {
            placement: Placement::new(),
            name: None,
            _system: PhantomData,
            build,
            thread_bound,
            prepared,
            supervision: None,
            mailbox: A::MAILBOX.unwrap_or(c.mailbox),
            mailbox_chosen: A::MAILBOX.is_some() || c.mailbox != MailboxKind::DEFAULT,
            pooled: false,
            placed: false,
            policy: A::POLICY.unwrap_or(c.policy),
            looping: LoopConfig {
                idle: c.idle,
                max_batch: c.max_batch.max(1),
            },
            system,
            latency: false,
            #[cfg(feature = "journal")]
            flight: None,
        }
    }

    /// This actor's instance name, shown wherever the actor is named:
    /// errors (`book-a(Strategy#3) has stopped`), dead letters, deadlock
    /// cycles, [`Addr::stats`], `Debug`, the [`ShutdownReport`], and its
    /// thread (`kaspar:book-a`; the OS may shorten a thread's name). Without
    /// one, an actor is named by its type name and id alone.
    ///
    /// The name is stored once and read only off the delivery paths: a
    /// named actor's `send`, `fast_send` and run loop cost what an unnamed
    /// one's do. Names need not be unique; the id still is.
    ///
    /// ```
    /// use kaspar::prelude::*;
    ///
    /// #[actor]
    /// pub struct Strategy;
    /// #[actor]
    /// impl Strategy {
    ///     #[handler(u32)]
    ///     fn tick(&mut self, _t: u32, _c: &mut Ctx<Self>) {}
    /// }
    ///
    /// let system = System::new();
    /// let a = system.spawn(Strategy).name("momentum").start();
    /// a.stop();
    /// # while !a.is_stopped() { std::thread::yield_now(); }
    /// let err = a.fast_send(1u32).unwrap_err();
    /// assert_eq!(err.to_string(), format!("momentum(Strategy{:?}) has stopped; message handed back", a.id()));
    /// system.shutdown();
    /// ```
    ///
    /// An actor made by [`System::prepare`] can be named here too (or with
    /// [`Prepared::name`](crate::Prepared::name)), as long as it has not
    /// started: its address was out before, so what was made from it until
    /// now (an error's [`Target`](crate::Target), a dead letter) names it by type and id
    /// alone; everything from now on, its thread included, names it by
    /// this name.
    ///
    /// # Panics
    ///
    /// If `name` is empty or holds a NUL character (a thread cannot be named
    /// so), and for a prepared actor that was named already (with
    /// [`Prepared::name`](crate::Prepared::name)): an actor is given one
    /// name.
    ///
    /// [`ShutdownReport`]: crate::ShutdownReport
    #[track_caller]
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        let name = checked_name(name.into());
        if let Some(cell) = &self.prepared {
            name_prepared::<A>(cell, Arc::clone(&name));
        }
        self.name = Some(name);
        self
    }

    /// Whether to record each handler run's service time, per message
    /// class, for [`Addr::latency`] (default: off). On, the histograms
    /// (about 30 KiB per handler) are allocated when the actor starts, and
    /// each run costs two clock reads and a few stores, no allocation;
    /// off, the delivery paths are exactly what they are without it.
    pub fn record_latency(mut self, on: bool) -> Self {
        self.latency = on;
        self
    }

    /// Records the last messages this actor handles from its mailbox in
    /// `recorder`, to be dumped as a journal on a handler's panic or on
    /// request, and replayed in a [`Simulation`](crate::Simulation) of
    /// [`Solo<A>`](crate::Solo) (feature `journal`; see
    /// [`FlightRecorder`](crate::journal::FlightRecorder) for what it
    /// costs and what a replay can show). Without it, the run loop records
    /// nothing and pays nothing.
    ///
    /// # Panics
    ///
    /// If `recorder` already records another actor or group.
    #[cfg(feature = "journal")]
    #[track_caller]
    pub fn flight_recorder(
        mut self,
        recorder: &crate::delivery::flight::FlightRecorder<A::Msg>,
    ) -> Self {
        recorder.attach(self.system.config.clock.clone(), "actor");
        self.flight = Some(recorder.clone());
        self
    }

    /// What a panic in one of this actor's handlers does (default:
    /// [`Supervision::resume`]).
    pub fn supervise(mut self, policy: Supervision<A>) -> Self {
        self.supervision = Some(policy);
        self
    }

    /// Shorthand for `supervise(Supervision::restart(factory))`.
    pub fn restart_with(self, factory: impl Fn() -> A + Send + Sync + 'static) -> Self {
        self.supervise(Supervision::restart(factory))
    }

    /// This actor's mailbox kind (overrides `#[actor(mailbox = ...)]`).
    ///
    /// # Panics
    ///
    /// For an actor made by [`System::prepare`]: its mailbox exists since
    /// then (choose it with [`System::prepare_with`]).
    #[track_caller]
    pub fn mailbox(mut self, kind: MailboxKind) -> Self {
        self.assert_fresh("mailbox", "choose it with `System::prepare_with`");
        self.mailbox = kind;
        self.mailbox_chosen = true;
        self
    }

    #[track_caller]
    fn assert_fresh(&self, option: &str, instead: &str) {
        assert!(
            self.prepared.is_none(),
            "kaspar: `{option}` cannot change for the prepared actor {}: its address is out already; {instead}",
            <A as ActorConfig>::NAME
        );
    }

    /// This actor's cycle policy (overrides `#[actor(policy = ...)]`).
    ///
    /// # Panics
    ///
    /// On [`CyclePolicy::Permissive`] for an actor that is not
    /// `#[actor(reentrant)]`: such an actor is never re-entered (its
    /// handlers take `&mut self`), so the refined policy could only do
    /// nothing, and asking for it is a mistake worth a clear message. And
    /// for an actor made by [`System::prepare`], whose policy is fixed since
    /// then.
    #[track_caller]
    pub fn policy(mut self, policy: CyclePolicy) -> Self {
        crate::actor::traits::assert_policy_meaningful::<A>(policy);
        self.assert_fresh("policy", "declare it with `#[actor(policy = ...)]`");
        self.policy = policy;
        self
    }

    /// How this actor's thread waits while idle.
    pub fn idle(mut self, idle: IdleWait) -> Self {
        self.looping.idle = idle;
        self
    }

    /// Most messages handled per lock acquisition.
    pub fn max_batch(mut self, n: usize) -> Self {
        self.looping.max_batch = n.max(1);
        self
    }

    /// Where the actor's thread runs (CPU affinity, `SCHED_FIFO`). Applied
    /// by the thread before its `#[started]` hook; see
    /// [`start_placed`](Spawn::start_placed) for whether the OS agreed.
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self.placed = true;
        self
    }

    /// Runs the actor on the system's pool of worker threads instead of a
    /// thread of its own (see [`PoolConfig`](crate::PoolConfig) and the
    /// pool's module docs): it holds no thread and no stack while idle,
    /// a send to it schedules it on a worker, and one activation handles up
    /// to the pool's budget of messages. Everything else is as on a
    /// thread: one handler for every delivery, `fast_send` on the caller's
    /// thread under the actor's lock, supervision, timers, dead letters,
    /// names, latency, watchers, shutdown. A blocking wait inside a pooled
    /// handler (`ask(..).wait()`, a full `WhenFull::Wait` mailbox, a
    /// `fast_send` waiting for a lock) lends the worker's queue to the
    /// rest of the pool, which starts a spare thread if it must: it never
    /// hangs the pool.
    ///
    /// Unless a mailbox kind was chosen (by `#[actor(mailbox = ...)]`,
    /// [`SystemConfig::mailbox`](crate::SystemConfig) or
    /// [`mailbox`](Self::mailbox)), a pooled actor gets
    /// [`MailboxKind::POOLED`], which takes no memory until messages
    /// arrive. [`idle`](Self::idle) does not apply (no thread waits), and
    /// [`placement`](Self::placement) cannot: the pool's workers are
    /// placed with [`PoolConfig`](crate::PoolConfig).
    ///
    /// ```
    /// use kaspar::prelude::*;
    ///
    /// #[actor]
    /// pub struct Counter { n: u64 }
    /// #[actor]
    /// impl Counter {
    ///     #[handler(u64)]
    ///     fn add(&mut self, k: u64, _c: &mut Ctx<Self>) -> u64 { self.n += k; self.n }
    /// }
    ///
    /// let system = System::new();
    /// let c = system.spawn(Counter { n: 0 }).pooled().start();
    /// c.send(1).unwrap();
    /// assert_eq!(c.ask(2).unwrap().wait().unwrap(), 3);
    /// assert_eq!(c.fast_send(3).unwrap(), 6);
    /// system.shutdown();
    /// ```
    ///
    /// # Panics
    ///
    /// For an `#[actor(thread_bound)]` actor: its state lives on one
    /// thread, and a pool moves an actor between threads.
    #[track_caller]
    pub fn pooled(mut self) -> Self {
        assert!(
            !A::THREAD_BOUND,
            "kaspar: {} is `#[actor(thread_bound)]`: its state never leaves its thread, so it cannot run on the pool; spawn it on a thread of its own",
            <A as ActorConfig>::NAME
        );
        self.pooled = true;
        self
    }

    /// [`start`](Spawn::start), then waits until the thread has applied
    /// its placement and returns what the OS did with it.
    pub fn start_placed(self) -> (Addr<A>, PlacementOutcome) {
        if self.pooled || self.system.simulated() {
            let addr = self.launch_pooled();
            let nothing = PlacementOutcome {
                affinity: None,
                priority: None,
            };
            return (addr, nothing);
        }
        let (addr, placed) = self.launch();
        (addr, placement_of(&placed))
    }

    /// Starts the actor's thread and returns its address. The `#[started]`
    /// hook runs on that thread before the first message, synchronous or
    /// queued: a `fast_send` made right after `start` returns waits for it
    /// (`fast_send_x` may find the actor busy until it has run). An actor
    /// without the hook, spawned with its state, is open as `start`
    /// returns. A pooled actor's hook runs in its first activation; on a
    /// pool hosted on tokio, a `fast_send` waiting for it runs the pool's
    /// queued activations on its own thread until it has begun (the
    /// runtime's one thread may be the caller's), and inside a hosted
    /// handler, or in a simulation outside a step, the wait is refused as
    /// [`FastSendError::Deadlock`](crate::FastSendError::Deadlock) with the
    /// message handed back.
    ///
    /// If the system is already shut down, the actor starts closed: it runs
    /// its hooks and sends to it return `Closed`.
    pub fn start(self) -> Addr<A> {
        // In a simulated system (`kaspar::sim`) every actor runs on the
        // simulator's one thread, whatever its placement.
        if self.pooled || self.system.simulated() {
            return self.launch_pooled();
        }
        self.launch().0
    }
}
