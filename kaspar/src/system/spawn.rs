//! The actor spawn builder, and the thread start (shared with groups) that
//! applies a placement and reports it.

use std::fmt;
use std::marker::PhantomData;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::actor::addr::Addr;
use crate::actor::cell::ActorCell;
use crate::actor::instance::Instance;
use crate::actor::traits::{Actor, ActorConfig};
use crate::base::ids::Target;
use crate::delivery::run_loop::{self, Init, LoopConfig};
use crate::failure::supervision::Supervision;
use crate::guard::chain::CyclePolicy;
use crate::guard::lock::ActorLock;
use crate::mailbox::inbox::Inbox;
use crate::mailbox::{IdleWait, Mailbox, MailboxKind};
use crate::system::placement::{Placement, PlacementOutcome};
use crate::system::{Done, DoneOnExit, Running, System, SystemInner};

/// A started thread: its handle, its exit flag, and where it reports how
/// its placement went (before it runs any hook or handler).
pub(super) struct Spawned {
    pub(super) thread: JoinHandle<()>,
    pub(super) done: Arc<Done>,
    pub(super) placed: mpsc::Receiver<PlacementOutcome>,
}

/// Spawns an actor or group thread that applies `placement`, reports the
/// outcome, runs `body`, and reports its exit to `done`.
pub(super) fn spawn_thread(
    name: String,
    placement: Placement,
    body: impl FnOnce() + Send + 'static,
) -> Spawned {
    let done = Arc::new(Done::default());
    let on_exit = DoneOnExit(Arc::clone(&done));
    let (report, placed) = mpsc::sync_channel(1);
    let thread = std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let _on_exit = on_exit;
            // The spawner may not wait for the report; that is fine.
            let _ = report.send(placement.apply_to_current_thread());
            body();
        })
        .expect("kaspar: the OS refused to spawn an actor thread");
    Spawned {
        thread,
        done,
        placed,
    }
}

/// Waits for a thread's placement report.
pub(super) fn placement_of(placed: &mpsc::Receiver<PlacementOutcome>) -> PlacementOutcome {
    // The thread sends before anything else; a closed channel means it
    // died before reporting, and nothing was applied.
    placed.recv().unwrap_or(PlacementOutcome {
        affinity: None,
        priority: None,
    })
}

/// Makes an actor's state on its thread: moves a given one there, or runs
/// the user's factory there.
type Build<A> = Box<dyn FnOnce() -> A + Send>;

/// An actor about to be started; set per-actor options, then
/// [`start`](Spawn::start).
#[must_use = "the actor runs only once `start` is called"]
pub struct Spawn<'s, A: Actor> {
    placement: Placement,
    /// Held, not borrowed, so that a handler can spawn (`Ctx::spawn`).
    system: Arc<SystemInner>,
    _system: PhantomData<&'s System>,
    name: Option<Arc<str>>,
    build: Build<A>,
    /// The state is built on the actor's thread and must be dropped there.
    thread_bound: bool,
    /// The cell [`System::prepare`] made, whose address is out already.
    prepared: Option<Arc<ActorCell<A>>>,
    supervision: Option<Supervision<A>>,
    mailbox: MailboxKind,
    policy: CyclePolicy,
    looping: LoopConfig,
    latency: bool,
    /// Run on the system's pool instead of a thread of its own.
    pooled: bool,
    /// The mailbox kind was chosen (by the actor's declaration, the
    /// system's configuration or `mailbox`), so `pooled` keeps it.
    mailbox_chosen: bool,
    /// A placement was asked for (which a pooled actor cannot have).
    placed: bool,
    #[cfg(feature = "journal")]
    flight: Option<crate::delivery::flight::FlightRecorder<A::Msg>>,
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
    /// now (an error's [`Target`], a dead letter) names it by type and id
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
        if self.pooled {
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
    /// returns.
    ///
    /// If the system is already shut down, the actor starts closed: it runs
    /// its hooks and sends to it return `Closed`.
    pub fn start(self) -> Addr<A> {
        if self.pooled {
            return self.launch_pooled();
        }
        self.launch().0
    }

    /// [`start`](Self::start) for a pooled actor: the cell joins the
    /// system's pool, and its first activation (its state's build and
    /// `started`, if any, then whatever is queued) is scheduled.
    #[track_caller]
    fn launch_pooled(mut self) -> Addr<A> {
        assert!(
            !self.placed,
            "kaspar: a pooled actor runs on the pool's workers; place them with `PoolConfig`, not `Spawn::placement`"
        );
        if !self.mailbox_chosen && self.prepared.is_none() {
            self.mailbox = MailboxKind::POOLED;
        }
        let cell = match self.prepared {
            Some(cell) => cell,
            None => {
                let cell = Arc::new(vacant_cell(
                    &self.system,
                    self.mailbox,
                    self.policy,
                    self.name,
                ));
                self.system.observe(&cell);
                cell
            }
        };
        if self.latency {
            cell.record_latency();
        }
        if let Some(policy) = self.supervision {
            cell.sup.set(policy);
        }
        let build = if A::HAS_STARTED || self.thread_bound {
            // The first activation takes the lock over before anything
            // else, as an actor's thread does.
            cell.lock().hand_over();
            Some(self.build)
        } else {
            let held = cell.hold();
            cell.fill(&held, (self.build)());
            None
        };
        let addr = Addr::from_cell(Arc::clone(&cell));
        let init = Init {
            build,
            thread_bound: false,
            #[cfg(feature = "journal")]
            flight: self.flight,
        };
        let (pool, slot) = self
            .system
            .pool_member(Arc::clone(&cell) as Arc<dyn crate::delivery::sched::Member>);
        // After joining: a shutdown that began before has closed the
        // system first, and its `close_all` either saw this member or this
        // sees the system closed (as `register` does for a thread).
        if self.system.closed.load(std::sync::atomic::Ordering::SeqCst) {
            cell.inbox.close();
        }
        crate::delivery::sched::actor::attach(&cell, &pool, slot, self.looping.max_batch, init);
        addr
    }

    fn launch(self) -> (Addr<A>, mpsc::Receiver<PlacementOutcome>) {
        let cell = match self.prepared {
            // Observed since it was prepared.
            Some(cell) => cell,
            None => {
                let cell = Arc::new(vacant_cell(
                    &self.system,
                    self.mailbox,
                    self.policy,
                    self.name,
                ));
                self.system.observe(&cell);
                cell
            }
        };
        if self.latency {
            cell.record_latency();
        }
        if let Some(policy) = self.supervision {
            cell.sup.set(policy);
        }
        // A thread-bound actor needs its thread to record itself as home
        // before anyone enters, even with a state made here.
        let build = if A::HAS_STARTED || self.thread_bound || A::THREAD_BOUND {
            // The thread takes the lock over before anything else: no
            // synchronous caller gets in before the state and `started`.
            cell.lock().hand_over();
            Some(self.build)
        } else {
            // Nothing runs before the first message: the state goes in
            // here, and the actor is open to `fast_send` as `start` returns.
            let held = cell.hold();
            cell.fill(&held, (self.build)());
            None
        };
        let addr = Addr::from_cell(Arc::clone(&cell));
        let thread_cell = Arc::clone(&cell);
        let looping = self.looping;
        let init = Init {
            build,
            thread_bound: self.thread_bound,
            #[cfg(feature = "journal")]
            flight: self.flight,
        };
        let target = cell.target();
        let thread = thread_name(&target);
        self.system.placed(cell.lock(), &thread, None);
        let spawned = spawn_thread(thread, self.placement, move || {
            run_loop::run(thread_cell, looping, init)
        });
        let close_cell = Arc::clone(&cell);
        self.system.register(Running {
            target,
            close: Box::new(move || close_cell.inbox.close()),
            thread: spawned.thread,
            done: spawned.done,
        });
        (addr, spawned.placed)
    }
}

/// A standalone actor's cell without its state: the address exists, sends
/// queue up, and the state comes with the actor's thread.
pub(crate) fn vacant_cell<A: Actor>(
    system: &Arc<SystemInner>,
    mailbox: MailboxKind,
    policy: CyclePolicy,
    name: Option<Arc<str>>,
) -> ActorCell<A> {
    ActorCell::vacant(
        Arc::new(ActorLock::new(false)),
        policy,
        Inbox::Own(Mailbox::new(mailbox)),
        system.config.clock.clone(),
        system.dead.clone(),
        instance_of(system, name),
    )
}

/// What a cell of `system` knows of itself: `name`, and a weak handle on
/// `system` for its handlers' `Ctx::spawn`.
pub(crate) fn instance_of(system: &Arc<SystemInner>, name: Option<Arc<str>>) -> Instance {
    let strong: Arc<dyn std::any::Any + Send + Sync> = system.clone();
    Instance::new(name, Arc::downgrade(&strong))
}

/// Names the prepared actor `cell` (not started yet) `name`.
///
/// # Panics
///
/// If it has a name already.
#[track_caller]
pub(crate) fn name_prepared<A: Actor>(cell: &ActorCell<A>, name: Arc<str>) {
    if let Err(had) = cell.instance.set_name(name) {
        panic!(
            "kaspar: the prepared actor {} is named {had:?} already; an actor is given one name",
            <A as ActorConfig>::NAME
        );
    }
}

/// An instance name as given to `name`, checked.
#[track_caller]
pub(crate) fn checked_name(name: Arc<str>) -> Arc<str> {
    assert!(!name.is_empty(), "kaspar: an actor's name cannot be empty");
    assert!(
        !name.contains('\0'),
        "kaspar: an actor's name cannot hold a NUL character (it names a thread): {name:?}"
    );
    name
}

/// `kaspar:` and the instance name, or the type name and id.
fn thread_name(target: &Target) -> String {
    match &target.instance {
        Some(name) => format!("kaspar:{name}"),
        None => format!("kaspar:{}{:?}", target.name, target.id),
    }
}
