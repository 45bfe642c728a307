//! The group spawn builder, and prepared groups: a group's addresses before
//! its members exist.

use std::fmt;
use std::marker::PhantomData;
use std::sync::mpsc;
use std::sync::Arc;

use crate::base::ids::{ActorId, Target};
use crate::delivery::run_loop::LoopConfig;
use crate::group::pooled::PooledGroup;
use crate::group::{self, GroupCore, GroupInit, GroupSpec};
use crate::guard::chain::{self, CyclePolicy};
use crate::guard::lock::{ActorLock, Pledge};
use crate::mailbox::{IdleWait, Mailbox, MailboxKind};
use crate::system::launch::{checked_name, instance_of, placement_of, spawn_thread};
use crate::system::placement::{Placement, PlacementOutcome};
use crate::system::{Role, Running, System, SystemInner};

/// A group's queue, lock and member cells, before its thread runs.
struct Parts<G: GroupSpec> {
    spec: G,
    core: Arc<GroupCore<G>>,
    lock: Arc<ActorLock>,
}

/// Every member's cell is named `name` (the group's), if given.
fn reserve<G: GroupSpec>(
    system: &Arc<SystemInner>,
    mailbox: MailboxKind,
    policy: CyclePolicy,
    name: Option<Arc<str>>,
) -> Parts<G> {
    let (spec, core, lock) = group::reserve::<G>(
        Mailbox::new(mailbox),
        policy,
        &system.config.clock,
        &system.dead,
        // A prepared group is named later; the members share the name.
        instance_of(system, name, true),
    );
    #[cfg(any(feature = "metrics", feature = "console"))]
    for member in group::take_observed(&core) {
        system.observed.add(member);
    }
    Parts { spec, core, lock }
}

/// Names the members of the prepared group `parts` (not started yet)
/// `name`.
///
/// # Panics
///
/// If the group has a name already.
#[track_caller]
fn name_prepared_group<G: GroupSpec>(parts: &Parts<G>, name: Arc<str>) {
    if let Err(had) = group::name_members(&parts.core, name) {
        panic!(
            "kaspar: the prepared group {} is named {had:?} already; a group is given one name",
            G::NAME
        );
    }
}

/// A group about to be started; set its options, then
/// [`start`](GroupSpawn::start).
#[must_use = "the group runs only once `start` is called"]
pub struct GroupSpawn<'s, G: GroupSpec> {
    placement: Placement,
    /// Held, not borrowed, so that a handler can spawn (`Ctx::spawn_group`).
    system: Arc<SystemInner>,
    _system: PhantomData<&'s System>,
    name: Option<Arc<str>>,
    init: GroupInit<G>,
    /// The parts [`System::prepare_group`] made, whose addresses are out.
    prepared: Option<Parts<G>>,
    mailbox: MailboxKind,
    policy: CyclePolicy,
    looping: LoopConfig,
    latency: bool,
    /// Run as one unit on the system's pool instead of a thread.
    pooled: bool,
    /// A placement was asked for (which a pooled group cannot have).
    placed: bool,
}

impl<G: GroupSpec> fmt::Debug for GroupSpawn<'_, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupSpawn")
            .field("group", &G::NAME)
            .field("name", &self.name)
            .field("mailbox", &self.mailbox)
            .field("policy", &self.policy)
            .field("prepared", &self.prepared.is_some())
            .field("latency", &self.latency)
            .finish()
    }
}

impl<'s, G: GroupSpec> GroupSpawn<'s, G> {
    /// A spawn of `members`, made here and moved to the group's thread,
    /// into `system` (a `System`'s, or a handler's through `Ctx`).
    pub(crate) fn of_value(system: Arc<SystemInner>, members: G::Members) -> Self
    where
        G::Members: Send,
    {
        Self::with_init(system, Box::new(move || members), false, None)
    }

    /// A spawn whose members `factory` builds on the group's thread.
    pub(crate) fn of_factory(
        system: Arc<SystemInner>,
        factory: impl FnOnce() -> G::Members + Send + 'static,
    ) -> Self {
        Self::with_init(system, Box::new(factory), true, None)
    }

    fn with_init(
        system: Arc<SystemInner>,
        build: Box<dyn FnOnce() -> G::Members + Send>,
        thread_bound: bool,
        prepared: Option<Parts<G>>,
    ) -> Self {
        let c = &system.config;
        GroupSpawn {
            placement: Placement::new(),
            // A prepared group's, given with `PreparedGroup::name`: its
            // thread and its report entry carry it too.
            name: prepared
                .as_ref()
                .and_then(|parts| group::members_name(&parts.core)),
            _system: PhantomData,
            init: GroupInit {
                build,
                thread_bound,
                #[cfg(feature = "journal")]
                flight: None,
            },
            prepared,
            mailbox: c.mailbox,
            policy: c.policy,
            looping: LoopConfig {
                idle: c.idle,
                max_batch: c.max_batch.max(1),
            },
            system,
            latency: false,
            pooled: false,
            placed: false,
        }
    }

    /// [`Spawn::record_latency`](crate::Spawn::record_latency) for every
    /// member: each member's [`Addr::latency`](crate::Addr::latency)
    /// reports its own handlers. Also for a prepared group.
    pub fn record_latency(mut self, on: bool) -> Self {
        self.latency = on;
        self
    }

    /// Records the last messages the group handles from its queue (every
    /// member's) in `recorder`, to be dumped as a journal on a handler's
    /// panic or on request, and replayed in a
    /// [`Simulation`](crate::Simulation) (feature `journal`; see
    /// [`FlightRecorder`](crate::journal::FlightRecorder) for what it
    /// costs and what a replay can show). Also for a prepared group.
    /// Without it, the group's thread records nothing and pays nothing.
    ///
    /// # Panics
    ///
    /// If `recorder` already records another group or actor.
    #[cfg(feature = "journal")]
    #[track_caller]
    pub fn flight_recorder(
        mut self,
        recorder: &crate::delivery::flight::FlightRecorder<G::Msg>,
    ) -> Self {
        recorder.attach(self.system.config.clock.clone(), "group");
        self.init.flight = Some(recorder.clone());
        self
    }

    #[track_caller]
    fn assert_fresh(&self, option: &str, instead: &str) {
        assert!(
            self.prepared.is_none(),
            "kaspar: `{option}` cannot change for the prepared group {}: its addresses are out already; {instead}",
            G::NAME
        );
    }

    /// The group's instance name: its thread's (`kaspar:book-a`), its entry
    /// in the [`ShutdownReport`](crate::ShutdownReport), and every member's
    /// (see [`Spawn::name`](crate::Spawn::name)): an error about a member
    /// reads `book-a(Strategy#3)`, so members of two groups of one type can
    /// be told apart. Without one, the thread is `kaspar:group:<type>` and
    /// members are named by type and id.
    ///
    /// A group made by [`System::prepare_group`] can be named here too (or
    /// with [`PreparedGroup::name`]) until it starts; what was made from its
    /// members' addresses before (an error's [`Target`], a dead letter)
    /// names them by type and id alone.
    ///
    /// # Panics
    ///
    /// If `name` is empty or holds a NUL character, and for a prepared
    /// group that was named already (with [`PreparedGroup::name`]): a group
    /// is given one name.
    #[track_caller]
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        let name = checked_name(name.into());
        if let Some(parts) = &self.prepared {
            name_prepared_group(parts, Arc::clone(&name));
        }
        self.name = Some(name);
        self
    }

    /// The kind of the group's one shared queue.
    ///
    /// # Panics
    ///
    /// For a group made by [`System::prepare_group`], whose queue exists
    /// since then.
    #[track_caller]
    pub fn mailbox(mut self, kind: MailboxKind) -> Self {
        self.assert_fresh("mailbox", "choose it with `System::prepare_group_with`");
        self.mailbox = kind;
        self
    }

    /// The cycle policy of members that do not declare one.
    ///
    /// # Panics
    ///
    /// For a group made by [`System::prepare_group`], whose members exist
    /// since then.
    #[track_caller]
    pub fn policy(mut self, policy: CyclePolicy) -> Self {
        self.assert_fresh(
            "policy",
            "declare it per member with `#[actor(policy = ...)]`, or set `SystemConfig::policy`",
        );
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
        self.placed = true;
        self
    }

    /// Runs the whole group on the system's pool as one schedulable unit
    /// (see [`Spawn::pooled`](crate::Spawn::pooled)): its one queue, its
    /// one lock and its total order are kept; a send to any member
    /// schedules the group, and one activation handles up to the pool's
    /// budget of the group's messages.
    ///
    /// # Panics
    ///
    /// At [`start`](Self::start), for a group whose members a factory
    /// builds on the group's thread ([`System::spawn_group_with`]): such
    /// states may not be `Send`, and the pool moves a group between
    /// threads. Or with a [`placement`](Self::placement): the pool's
    /// workers are placed with [`PoolConfig`](crate::PoolConfig).
    pub fn pooled(mut self) -> Self {
        self.pooled = true;
        self
    }

    /// [`start`](GroupSpawn::start), then waits until the thread has
    /// applied its placement and returns what the OS did with it.
    pub fn start_placed(self) -> (G, PlacementOutcome) {
        if self.pooled || self.system.simulated() {
            let nothing = PlacementOutcome {
                affinity: None,
                priority: None,
            };
            return (self.launch_pooled(), nothing);
        }
        let (group, placed) = self.launch();
        (group, placement_of(&placed))
    }

    /// Starts the group's thread and returns the members' addresses. Every
    /// member gets its state and runs its `#[started]` hook on that thread,
    /// in field order, before the first message to any member, synchronous
    /// or queued.
    #[track_caller]
    pub fn start(self) -> G {
        // In a simulated system every group runs on the simulator's thread.
        if self.pooled || self.system.simulated() {
            return self.launch_pooled();
        }
        self.launch().0
    }

    /// [`start`](Self::start) for a pooled group.
    #[track_caller]
    fn launch_pooled(mut self) -> G {
        // The simulator runs everything on its one thread: a thread-bound
        // group's states never leave it, and a placement means nothing.
        let simulated = self.system.simulated();
        assert!(
            simulated || !self.init.thread_bound,
            "kaspar: the group {} builds its members on its own thread (`spawn_group_with`), so they may not be `Send`; it cannot run on the pool",
            G::NAME
        );
        assert!(
            simulated || !self.placed,
            "kaspar: a pooled group runs on the pool's workers; place them with `PoolConfig`, not `GroupSpawn::placement`"
        );
        let Parts { spec, core, lock } = match self.prepared.take() {
            Some(parts) => parts,
            None => reserve(&self.system, self.mailbox, self.policy, self.name.clone()),
        };
        if self.latency {
            group::record_latency(&core);
        }
        // The first activation takes the lock over before anything else.
        lock.hand_over();
        self.system
            .placed(&lock, self.system.pool_thread_name(), Some(G::NAME));
        let waits_for = Target::new(ActorId::GROUP, G::NAME, self.name.clone());
        let unit = Arc::new(PooledGroup::new(
            spec.duplicate(),
            Arc::clone(&core),
            lock,
            self.looping.max_batch,
            self.init,
            waits_for,
        ));
        let (pool, slot) = self
            .system
            .pool_member(Arc::clone(&unit) as Arc<dyn crate::delivery::sched::Member>);
        if self.system.closed.load(std::sync::atomic::Ordering::SeqCst) {
            group::close(&core);
        }
        unit.attach(&pool, slot);
        spec
    }

    fn launch(mut self) -> (G, mpsc::Receiver<PlacementOutcome>) {
        let Parts { spec, core, lock } = match self.prepared.take() {
            Some(parts) => parts,
            None => reserve(&self.system, self.mailbox, self.policy, self.name.clone()),
        };
        if self.latency {
            group::record_latency(&core);
        }
        // The thread takes the lock over before anything else: no
        // synchronous caller gets into a member before its state and its
        // `started` hook.
        lock.hand_over();
        let thread_spec = spec.duplicate();
        let thread_core = Arc::clone(&core);
        let looping = self.looping;
        let init = self.init;
        // What the deadlock detector names the group's thread waiting for.
        let waits_for = Target::new(ActorId::GROUP, G::NAME, self.name.clone());
        let thread = match &self.name {
            Some(name) => format!("kaspar:{name}"),
            None => format!("kaspar:group:{}", G::NAME),
        };
        self.system.placed(&lock, &thread, Some(G::NAME));
        let spawned = spawn_thread(thread, self.placement, move || {
            group::run(thread_spec, thread_core, lock, looping, init, waits_for)
        });
        self.system.register(Running {
            target: Target::new(ActorId::next(), G::NAME, self.name),
            role: Role::Actor,
            close: Box::new(move |_| group::close(&core)),
            thread: spawned.thread,
            done: spawned.done,
        });
        (spec, spawned.placed)
    }
}

/// A group's addresses, handed out before its members exist: the group
/// counterpart of [`Prepared`](crate::Prepared), for members that need
/// each other's addresses (or outside actors' that need theirs) in their
/// state. Sends to a member queue up; a synchronous delivery is refused
/// with [`FastSendError::NotStarted`](crate::FastSendError::NotStarted)
/// until the group is spawned. Dropping it unspawned stops the members and
/// hands what was queued to dead letters.
#[must_use = "a prepared group that is never spawned stops, and its queued messages go to dead letters"]
pub struct PreparedGroup<'s, G: GroupSpec> {
    system: &'s System,
    parts: Option<Parts<G>>,
    /// Until spawned: this thread is the one the group's queue waits for
    /// (see [`Prepared`](crate::Prepared); not `Send` either).
    pledge: Option<Pledge>,
}

impl<G: GroupSpec> fmt::Debug for PreparedGroup<'_, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedGroup")
            .field("group", &G::NAME)
            .finish()
    }
}

impl<'s, G: GroupSpec> PreparedGroup<'s, G> {
    fn parts(&self) -> &Parts<G> {
        self.parts
            .as_ref()
            .expect("kaspar: a PreparedGroup has its parts until spawned")
    }

    /// The members' addresses (the `#[group]` struct), valid before and
    /// after the group starts.
    pub fn group(&self) -> G {
        self.parts().spec.duplicate()
    }

    /// The group's instance name, as [`GroupSpawn::name`] gives it (its
    /// thread, its report entry, every member's name), before it starts.
    /// Name it before handing its members' addresses out, or what was made
    /// from them until now (an error's [`Target`], a dead letter) names
    /// them by type and id alone.
    ///
    /// # Panics
    ///
    /// If `name` is empty or holds a NUL character, and if the group was
    /// named already: a group is given one name.
    #[track_caller]
    pub fn name(self, name: impl Into<Arc<str>>) -> Self {
        name_prepared_group(self.parts(), checked_name(name.into()));
        self
    }

    /// The members' states (in the `#[group]` struct's field order), moved
    /// to the group's thread; set options on the result and
    /// [`start`](GroupSpawn::start) it.
    pub fn spawn(mut self, members: G::Members) -> GroupSpawn<'s, G>
    where
        G::Members: Send,
    {
        let (system, parts) = (Arc::clone(&self.system.inner), self.parts.take());
        drop(self.pledge.take());
        GroupSpawn::with_init(system, Box::new(move || members), false, parts)
    }

    /// Like [`System::spawn_group_with`]: the members' states are built by
    /// `factory` on the group's thread.
    pub fn spawn_with(
        mut self,
        factory: impl FnOnce() -> G::Members + Send + 'static,
    ) -> GroupSpawn<'s, G> {
        let (system, parts) = (Arc::clone(&self.system.inner), self.parts.take());
        drop(self.pledge.take());
        GroupSpawn::with_init(system, Box::new(factory), true, parts)
    }
}

impl<G: GroupSpec> Drop for PreparedGroup<'_, G> {
    fn drop(&mut self) {
        if let Some(Parts { spec, core, lock }) = self.parts.take() {
            drop(self.pledge.take());
            group::abandon(&spec, &core, &lock);
        }
    }
}

impl System {
    /// The addresses of a group of type `G` whose members do not exist
    /// yet, with a queue of the system's default kind; see
    /// [`PreparedGroup`].
    pub fn prepare_group<G: GroupSpec>(&self) -> PreparedGroup<'_, G> {
        self.prepare_group_with(self.config().mailbox)
    }

    /// [`prepare_group`](Self::prepare_group) with a queue of `kind`.
    pub fn prepare_group_with<G: GroupSpec>(&self, kind: MailboxKind) -> PreparedGroup<'_, G> {
        let parts = reserve(&self.inner, kind, self.config().policy, None);
        let pledge = Pledge::new(&parts.lock, chain::thread_token());
        PreparedGroup {
            system: self,
            parts: Some(parts),
            pledge: Some(pledge),
        }
    }

    /// Starts a group whose members' states `factory` builds on the
    /// group's own thread (see [`System::spawn_with`] for what that allows
    /// and what it refuses).
    pub fn spawn_group_with<G: GroupSpec>(
        &self,
        factory: impl FnOnce() -> G::Members + Send + 'static,
    ) -> GroupSpawn<'_, G> {
        GroupSpawn::of_factory(Arc::clone(&self.inner), factory)
    }
}
