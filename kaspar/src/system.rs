//! `System`: owns the threads (the paper's Manager).
//!
//! One thread per standalone actor. Shutdown is orderly: every mailbox stops
//! accepting, every run loop handles what it had accepted, runs the actor's
//! `#[stopped]` hook, and exits; then the threads are joined.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::actor::{Actor, ActorConfig, ActorId};
use crate::addr::Addr;
use crate::cell::ActorCell;
use crate::chain::CyclePolicy;
use crate::clock::Clock;
use crate::group::{self, GroupSpec};
use crate::inbox::Inbox;
use crate::lock::ActorLock;
use crate::mailbox::{IdleWait, Mailbox, MailboxKind};
use crate::runloop::{self, LoopConfig};

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
    running: Mutex<Vec<Running>>,
}

/// A started actor, as the system tracks it.
struct Running {
    id: ActorId,
    name: &'static str,
    close: Box<dyn Fn() + Send>,
    thread: JoinHandle<()>,
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
                running: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The system-wide defaults.
    pub fn config(&self) -> &SystemConfig {
        &self.inner.config
    }

    /// Prepares `actor` to run on its own thread; call
    /// [`start`](Spawn::start) on the result.
    pub fn spawn<A: Actor>(&self, actor: A) -> Spawn<'_, A> {
        let c = &self.inner.config;
        Spawn {
            system: self,
            actor,
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
    /// `Closed`. Idempotent.
    pub fn shutdown(&self) -> ShutdownReport {
        self.inner.closed.store(true, Ordering::SeqCst);
        let running = std::mem::take(&mut *self.inner.running.lock());
        let mut report = ShutdownReport::default();
        // Newest first, one at a time: an actor's downstream was usually
        // spawned before it (its address had to exist), so it is still open
        // while the upstream actor drains what it had accepted.
        for r in running.into_iter().rev() {
            (r.close)();
            match r.thread.join() {
                Ok(()) => report.stopped.push((r.id, r.name)),
                Err(_) => report.failed.push((r.id, r.name)),
            }
        }
        report
    }
}

impl Drop for System {
    fn drop(&mut self) {
        self.shutdown();
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
}

/// An actor about to be started; set per-actor options, then
/// [`start`](Spawn::start).
#[must_use = "the actor runs only once `start` is called"]
pub struct Spawn<'s, A: Actor> {
    system: &'s System,
    actor: A,
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
            .finish()
    }
}

impl<'s, A: Actor> Spawn<'s, A> {
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

    /// Starts the actor's thread and returns its address. The `#[started]`
    /// hook runs on that thread before the first message.
    ///
    /// If the system is already shut down, the actor starts closed: it runs
    /// its hooks and sends to it return `Closed`.
    pub fn start(self) -> Addr<A> {
        let inner = &self.system.inner;
        let cell = Arc::new(ActorCell::new(
            self.actor,
            Arc::new(ActorLock::new(false)),
            self.policy,
            Inbox::Own(Mailbox::new(self.mailbox)),
            inner.config.clock.clone(),
        ));
        let addr = Addr::from_cell(Arc::clone(&cell));
        let thread_cell = Arc::clone(&cell);
        let looping = self.looping;
        let thread = std::thread::Builder::new()
            .name(format!("kaspar:{}{:?}", <A as ActorConfig>::NAME, cell.id))
            .spawn(move || runloop::run(thread_cell, looping))
            .expect("kaspar: the OS refused to spawn an actor thread");
        let close_cell = Arc::clone(&cell);
        self.system.register(Running {
            id: cell.id,
            name: <A as ActorConfig>::NAME,
            close: Box::new(move || close_cell.inbox.close()),
            thread,
        });
        addr
    }
}

/// A group about to be started; set its options, then
/// [`start`](GroupSpawn::start).
#[must_use = "the group runs only once `start` is called"]
pub struct GroupSpawn<'s, G: GroupSpec> {
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

    /// Starts the group's thread and returns the members' addresses. Every
    /// member's `#[started]` hook runs on that thread, in field order,
    /// before the first message.
    pub fn start(self) -> G {
        let clock = self.system.inner.config.clock.clone();
        let (spec, core, lock) = group::build::<G>(
            self.members,
            Mailbox::new(self.mailbox),
            self.policy,
            &clock,
        );
        let thread_spec = spec.duplicate();
        let thread_core = Arc::clone(&core);
        let looping = self.looping;
        let thread = std::thread::Builder::new()
            .name(format!("kaspar:group:{}", G::NAME))
            .spawn(move || group::run(thread_spec, thread_core, lock, looping))
            .expect("kaspar: the OS refused to spawn a group thread");
        self.system.register(Running {
            id: ActorId::next(),
            name: G::NAME,
            close: Box::new(move || group::close(&core)),
            thread,
        });
        spec
    }
}
