//! `System`: owns the threads (the paper's Manager).
//!
//! One thread per standalone actor. Shutdown is orderly: every mailbox stops
//! accepting, every run loop handles what it had accepted, runs the actor's
//! `#[stopped]` hook, and exits; then the threads are joined.
//! [`System::shutdown_timeout`] stops waiting at a deadline, reports the
//! threads that did not finish, and has their queued messages handed to the
//! system's [dead letters](crate::DeadLetters).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::actor::{Actor, ActorConfig, ActorId};
use crate::addr::Addr;
use crate::cell::ActorCell;
use crate::chain::CyclePolicy;
use crate::clock::Clock;
use crate::deadletter::DeadLetters;
use crate::group::{self, GroupSpec};
use crate::inbox::Inbox;
use crate::lock::ActorLock;
use crate::mailbox::{IdleWait, Mailbox, MailboxKind};
use crate::placement::{Placement, PlacementOutcome};
use crate::runloop::{self, LoopConfig};
use crate::supervision::Supervision;

/// System-wide defaults; each can be overridden per actor.
#[derive(Clone, Debug)]
pub struct SystemConfig {
    /// Cycle policy for actors that do not choose one (default
    /// [`CyclePolicy::Conservative`]).
    pub policy: CyclePolicy,
    /// Mailbox for actors that do not choose one.
    pub mailbox: MailboxKind,
    /// How idle actor threads wait.
    pub idle: IdleWait,
    /// Most messages a run loop handles per lock acquisition.
    pub max_batch: usize,
    /// The clock handlers read through `Ctx::now`.
    pub clock: Clock,
}

impl Default for SystemConfig {
    fn default() -> Self {
        SystemConfig {
            policy: CyclePolicy::Conservative,
            mailbox: MailboxKind::DEFAULT,
            idle: IdleWait::Park,
            max_batch: 256,
            clock: Clock::System,
        }
    }
}

/// Owns actor threads. Dropping a `System` shuts it down.
pub struct System {
    inner: Arc<SystemInner>,
}

struct SystemInner {
    config: SystemConfig,
    closed: AtomicBool,
    /// A `shutdown_timeout` left threads behind; dropping the system then
    /// does not wait for them again.
    gave_up: AtomicBool,
    running: Mutex<Vec<Running>>,
    dead: DeadLetters,
}

/// A started actor, as the system tracks it.
struct Running {
    id: ActorId,
    name: &'static str,
    close: Box<dyn Fn() + Send>,
    thread: JoinHandle<()>,
    done: Arc<Done>,
}

/// Set by an actor thread as it exits (also by unwinding), so a shutdown
/// can wait for it with a deadline; `JoinHandle::join` has none.
#[derive(Default)]
struct Done {
    finished: Mutex<bool>,
    cv: Condvar,
}

impl Done {
    /// Whether the thread finished by `deadline` (`None`: wait forever).
    fn wait(&self, deadline: Option<Instant>) -> bool {
        let mut finished = self.finished.lock();
        while !*finished {
            match deadline {
                None => self.cv.wait(&mut finished),
                Some(d) => {
                    if self.cv.wait_until(&mut finished, d).timed_out() {
                        return *finished;
                    }
                }
            }
        }
        true
    }
}

/// Marks its thread done when dropped.
struct DoneOnExit(Arc<Done>);

impl Drop for DoneOnExit {
    fn drop(&mut self) {
        *self.0.finished.lock() = true;
        self.0.cv.notify_all();
    }
}

/// A started thread: its handle, its exit flag, and where it reports how
/// its placement went (before it runs any hook or handler).
struct Spawned {
    thread: JoinHandle<()>,
    done: Arc<Done>,
    placed: mpsc::Receiver<PlacementOutcome>,
}

/// Spawns an actor or group thread that applies `placement`, reports the
/// outcome, runs `body`, and reports its exit to `done`.
fn spawn_thread(
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
fn placement_of(placed: &mpsc::Receiver<PlacementOutcome>) -> PlacementOutcome {
    // The thread sends before anything else; a closed channel means it
    // died before reporting, and nothing was applied.
    placed.recv().unwrap_or(PlacementOutcome {
        affinity: None,
        priority: None,
    })
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
        System {
            inner: Arc::new(SystemInner {
                config,
                closed: AtomicBool::new(false),
                gave_up: AtomicBool::new(false),
                running: Mutex::new(Vec::new()),
                dead: DeadLetters::new(),
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
    pub fn spawn<A: Actor>(&self, actor: A) -> Spawn<'_, A> {
        let c = &self.inner.config;
        Spawn {
            placement: Placement::new(),
            system: self,
            actor,
            supervision: None,
            mailbox: A::MAILBOX.unwrap_or(c.mailbox),
            policy: A::POLICY.unwrap_or(c.policy),
            looping: LoopConfig {
                idle: c.idle,
                max_batch: c.max_batch.max(1),
            },
        }
    }

    /// Prepares a group: its members (in the `#[group]` struct's field
    /// order) run on one thread behind one queue. Call
    /// [`start`](GroupSpawn::start) on the result.
    pub fn spawn_group<G: GroupSpec>(&self, members: G::Members) -> GroupSpawn<'_, G> {
        let c = &self.inner.config;
        GroupSpawn {
            placement: Placement::new(),
            system: self,
            members,
            mailbox: c.mailbox,
            policy: c.policy,
            looping: LoopConfig {
                idle: c.idle,
                max_batch: c.max_batch.max(1),
            },
        }
    }

    /// Registers a started thread, or, if the system has already shut down,
    /// closes and joins it at once.
    fn register(&self, running: Running) {
        let inner = &self.inner;
        let mut list = inner.running.lock();
        if inner.closed.load(Ordering::SeqCst) {
            drop(list);
            (running.close)();
            let _ = running.thread.join();
        } else {
            list.push(running);
        }
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
        let running = std::mem::take(&mut *self.inner.running.lock());
        let mut report = ShutdownReport::default();
        let mut left = Vec::new();
        // Newest first, one at a time: an actor's downstream was usually
        // spawned before it (its address had to exist), so it is still open
        // while the upstream actor drains what it had accepted.
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
                Ok(()) => report.stopped.push((r.id, r.name)),
                Err(_) => report.failed.push((r.id, r.name)),
            }
        }
        if !left.is_empty() {
            self.inner.gave_up.store(true, Ordering::SeqCst);
            report.unfinished = left.iter().map(|r| (r.id, r.name)).collect();
            left.reverse();
            self.inner.running.lock().extend(left);
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
    /// Actors that drained, ran `stopped`, and exited.
    pub stopped: Vec<(ActorId, &'static str)>,
    /// Actor threads that died outside a handler (a runtime bug).
    pub failed: Vec<(ActorId, &'static str)>,
    /// Actor and group threads still running when
    /// [`System::shutdown_timeout`] stopped waiting (a handler that does
    /// not return). Their queued messages go to dead letters as each
    /// thread gets back to its run loop.
    pub unfinished: Vec<(ActorId, &'static str)>,
}

/// An actor about to be started; set per-actor options, then
/// [`start`](Spawn::start).
#[must_use = "the actor runs only once `start` is called"]
pub struct Spawn<'s, A: Actor> {
    placement: Placement,
    system: &'s System,
    actor: A,
    supervision: Option<Supervision<A>>,
    mailbox: MailboxKind,
    policy: CyclePolicy,
    looping: LoopConfig,
}

impl<A: Actor> fmt::Debug for Spawn<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spawn")
            .field("actor", &<A as ActorConfig>::NAME)
            .field("mailbox", &self.mailbox)
            .field("policy", &self.policy)
            .field("supervision", &self.supervision)
            .finish()
    }
}

impl<'s, A: Actor> Spawn<'s, A> {
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
    pub fn mailbox(mut self, kind: MailboxKind) -> Self {
        self.mailbox = kind;
        self
    }

    /// This actor's cycle policy (overrides `#[actor(policy = ...)]`).
    pub fn policy(mut self, policy: CyclePolicy) -> Self {
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
        self
    }

    /// [`start`](Spawn::start), then waits until the thread has applied
    /// its placement and returns what the OS did with it.
    pub fn start_placed(self) -> (Addr<A>, PlacementOutcome) {
        let (addr, placed) = self.launch();
        (addr, placement_of(&placed))
    }

    /// Starts the actor's thread and returns its address. The `#[started]`
    /// hook runs on that thread before the first message.
    ///
    /// If the system is already shut down, the actor starts closed: it runs
    /// its hooks and sends to it return `Closed`.
    pub fn start(self) -> Addr<A> {
        self.launch().0
    }

    fn launch(self) -> (Addr<A>, mpsc::Receiver<PlacementOutcome>) {
        let inner = &self.system.inner;
        let cell = Arc::new(ActorCell::new(
            self.actor,
            Arc::new(ActorLock::new(false)),
            self.policy,
            Inbox::Own(Mailbox::new(self.mailbox)),
            inner.config.clock.clone(),
            inner.dead.clone(),
        ));
        if let Some(policy) = self.supervision {
            cell.sup.set(policy);
        }
        let addr = Addr::from_cell(Arc::clone(&cell));
        let thread_cell = Arc::clone(&cell);
        let looping = self.looping;
        let spawned = spawn_thread(
            format!("kaspar:{}{:?}", <A as ActorConfig>::NAME, cell.id),
            self.placement,
            move || runloop::run(thread_cell, looping),
        );
        let close_cell = Arc::clone(&cell);
        self.system.register(Running {
            id: cell.id,
            name: <A as ActorConfig>::NAME,
            close: Box::new(move || close_cell.inbox.close()),
            thread: spawned.thread,
            done: spawned.done,
        });
        (addr, spawned.placed)
    }
}

/// A group about to be started; set its options, then
/// [`start`](GroupSpawn::start).
#[must_use = "the group runs only once `start` is called"]
pub struct GroupSpawn<'s, G: GroupSpec> {
    placement: Placement,
    system: &'s System,
    members: G::Members,
    mailbox: MailboxKind,
    policy: CyclePolicy,
    looping: LoopConfig,
}

impl<G: GroupSpec> fmt::Debug for GroupSpawn<'_, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupSpawn")
            .field("group", &G::NAME)
            .field("mailbox", &self.mailbox)
            .field("policy", &self.policy)
            .finish()
    }
}

impl<G: GroupSpec> GroupSpawn<'_, G> {
    /// The kind of the group's one shared queue.
    pub fn mailbox(mut self, kind: MailboxKind) -> Self {
        self.mailbox = kind;
        self
    }

    /// The cycle policy of members that do not declare one.
    pub fn policy(mut self, policy: CyclePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// How the group's thread waits while idle.
    pub fn idle(mut self, idle: IdleWait) -> Self {
        self.looping.idle = idle;
        self
    }

    /// Most messages handled per lock acquisition.
    pub fn max_batch(mut self, n: usize) -> Self {
        self.looping.max_batch = n.max(1);
        self
    }

    /// Where the group's thread runs (CPU affinity, `SCHED_FIFO`).
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// [`start`](GroupSpawn::start), then waits until the thread has
    /// applied its placement and returns what the OS did with it.
    pub fn start_placed(self) -> (G, PlacementOutcome) {
        let (group, placed) = self.launch();
        (group, placement_of(&placed))
    }

    /// Starts the group's thread and returns the members' addresses. Every
    /// member's `#[started]` hook runs on that thread, in field order,
    /// before the first message.
    pub fn start(self) -> G {
        self.launch().0
    }

    fn launch(self) -> (G, mpsc::Receiver<PlacementOutcome>) {
        let inner = &self.system.inner;
        let clock = inner.config.clock.clone();
        let (spec, core, lock) = group::build::<G>(
            self.members,
            Mailbox::new(self.mailbox),
            self.policy,
            &clock,
            &inner.dead,
        );
        let thread_spec = spec.duplicate();
        let thread_core = Arc::clone(&core);
        let looping = self.looping;
        let spawned = spawn_thread(
            format!("kaspar:group:{}", G::NAME),
            self.placement,
            move || group::run(thread_spec, thread_core, lock, looping),
        );
        self.system.register(Running {
            id: ActorId::next(),
            name: G::NAME,
            close: Box::new(move || group::close(&core)),
            thread: spawned.thread,
            done: spawned.done,
        });
        (spec, spawned.placed)
    }
}
