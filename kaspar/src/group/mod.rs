//! Actor groups (paper §7.5): several actors on one thread behind one
//! shared queue.
//!
//! Declared with `#[group]` on a struct of member addresses:
//!
//! ```
//! use kaspar::prelude::*;
//! # pub struct Tick(pub u64);
//! # #[actor] pub struct Feed { seen: u64 }
//! # #[actor] impl Feed {
//! #     #[handler(Tick)] fn tick(&mut self, t: Tick, _c: &mut Ctx<Self>) -> u64 { self.seen += t.0; self.seen }
//! # }
//! # #[actor] pub struct Book { n: u64 }
//! # #[actor] impl Book {
//! #     #[handler(Tick)] fn tick(&mut self, _t: Tick, _c: &mut Ctx<Self>) -> u64 { self.n += 1; self.n }
//! # }
//! #[group]
//! pub struct Pipeline {
//!     pub feed: Addr<Feed>,
//!     pub book: Addr<Book>,
//! }
//!
//! let system = System::new();
//! let p: Pipeline = system.spawn_group::<Pipeline>((Feed { seen: 0 }, Book { n: 0 })).start();
//! p.feed.send(Tick(1)).unwrap();
//! assert_eq!(p.book.fast_send(Tick(1)).unwrap(), 1);
//! ```
//!
//! * Every message for any member — from outside, or from one member to
//!   another — goes through the group's single queue, so the group sees one
//!   total order of its inputs. A member's envelope is the group's message
//!   enum (one variant per member, holding that member's own enum): no
//!   allocation per message.
//! * The group thread holds the group's lock while it handles a batch. All
//!   members share that lock, so a `fast_send` from one member to another on
//!   the group thread is *nested* entry: no second lock, no atomic
//!   read-modify-write, only the call-chain check and the handler call.
//! * A `fast_send` from any other thread takes the group's lock like any
//!   actor's: exclusive access holds for every member, on every thread.

#[cfg(feature = "journal")]
pub mod journal;
pub(crate) mod pooled;
pub(crate) mod sim;
pub(crate) mod solo;

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::actor::addr::Addr;
use crate::actor::cell::{ActorCell, Held, STOPPED};
use crate::actor::instance::Instance;
#[cfg(any(feature = "metrics", feature = "console"))]
use crate::actor::observe::Observed;
use crate::actor::packed::Plain;
use crate::actor::trace::{self, Queued};
use crate::actor::traits::Actor;
use crate::base::clock::Clock;
use crate::base::ids::Target;
use crate::base::stats::Rare;
use crate::base::sync::{AtomicU64, Ordering};
use crate::delivery::run_loop::{self, LoopConfig};
use crate::error::SendError;
use crate::failure::dead_letters::DeadLetters;
use crate::failure::{drop_quietly, quietly};
use crate::guard::chain::{self, CyclePolicy};
use crate::guard::lock::ActorLock;
use crate::mailbox::inbox::{GroupSink, Inbox};
use crate::mailbox::{Drained, IdleWait, Mailbox, Watch};

/// A group's members and dispatch. Implemented by `#[group]`.
pub trait GroupSpec: Sized + Send + 'static {
    /// The group's message enum: one variant per member.
    type Msg: Send + 'static;
    /// The member actors' initial states, in field order.
    type Members: 'static;
    /// The group's name, for threads and errors.
    const NAME: &'static str;

    /// Creates every member's cell through `builder`, without its state.
    #[doc(hidden)]
    fn reserve(builder: &mut GroupBuilder<'_, Self>) -> Self;
    /// Gives every member its state, under the group's lock.
    #[doc(hidden)]
    fn fill(&self, members: Self::Members, held: &GroupHold<'_>);
    /// A second handle to the same members, for the group's thread.
    #[doc(hidden)]
    fn duplicate(&self) -> Self;
    /// Routes one queued message to its member.
    #[doc(hidden)]
    fn dispatch(&self, msg: Self::Msg, held: &GroupHold<'_>);
    /// Runs every member's `started` hook, in field order.
    #[doc(hidden)]
    fn started(&self, held: &GroupHold<'_>);
    /// Runs every member's `stopped` hook, in field order.
    #[doc(hidden)]
    fn stopped(&self, held: &GroupHold<'_>);
    /// Where the group reports its timer firings (a journal, or nowhere).
    #[doc(hidden)]
    fn tap(&self) -> &GroupTap;
}

/// The group's one queue, shared by its members' sinks. (The group's lock
/// is a separate `Arc<ActorLock>` that every member's cell holds.)
pub(crate) struct GroupCore<G: GroupSpec> {
    mailbox: Mailbox<Queued<G::Msg>>,
    tap: GroupTap,
    /// Timers the members armed so far: the next one's tag
    /// ([`GroupSink::next_timer`]).
    timers: AtomicU64,
    /// One switch per member that turns on its latency recording
    /// ([`record_latency`]). Filled while the members are made, which may
    /// be long before the group is spawned (`System::prepare_group`). A
    /// switch holds its member weakly: the member's cell owns this core.
    timing: crate::base::sync::Mutex<Vec<LatencySwitch>>,
    /// What every member's cell knows of itself (a clone of each one's):
    /// naming it names every member ([`name_members`]).
    instance: Instance,
    /// The members as the system's metrics collector reads them, held
    /// weakly; taken by the system that spawns the group
    /// ([`take_observed`]).
    #[cfg(any(feature = "metrics", feature = "console"))]
    observed: crate::base::sync::Mutex<Vec<std::sync::Weak<dyn Observed>>>,
}

type LatencySwitch = Box<dyn Fn() + Send + Sync>;

/// Where a group reports the timers that fire into it: nowhere, or a
/// journal that records each firing in the group's queue order, so that a
/// replay fires the same timers at the same points of the input sequence.
#[doc(hidden)]
#[derive(Default)]
pub struct GroupTap {
    recorder: crate::base::sync::Mutex<Option<Arc<dyn TimerRecorder>>>,
}

impl fmt::Debug for GroupTap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on = self.recorder.lock().is_some();
        write!(f, "GroupTap({})", if on { "recording" } else { "off" })
    }
}

/// Records timer firings (a journal).
pub(crate) trait TimerRecorder: Send + Sync {
    /// Runs `push` (the firing of the timer tagged `timer`) and, if it
    /// queued the message (`push` returns `true`), records it, as one
    /// step with respect to the recorder's other records.
    fn timer_fired(&self, timer: u64, push: &mut dyn FnMut() -> bool);
}

impl GroupTap {
    /// Starts recording into `recorder` (replacing any other).
    #[cfg(feature = "journal")]
    pub(crate) fn set(&self, recorder: Arc<dyn TimerRecorder>) {
        *self.recorder.lock() = Some(recorder);
    }

    /// Stops recording, if `recorder` is the one recording (a later
    /// journal of the same group may have replaced it).
    #[cfg(feature = "journal")]
    pub(crate) fn clear(&self, recorder: &Arc<dyn TimerRecorder>) {
        let mut current = self.recorder.lock();
        if current.as_ref().is_some_and(|r| Arc::ptr_eq(r, recorder)) {
            *current = None;
        }
    }

    fn fire(&self, timer: u64, push: &mut dyn FnMut() -> bool) {
        let recorder = self.recorder.lock().clone();
        match recorder {
            Some(r) => r.timer_fired(timer, push),
            None => {
                push();
            }
        }
    }
}

/// The tap of the group `member` belongs to. Used by `#[group]` code.
///
/// # Panics
///
/// If `member` is not a member of a group of type `G` (the generated code
/// passes one of `G`'s own fields).
#[doc(hidden)]
pub fn group_tap<G: GroupSpec, A: Actor>(member: &Addr<A>) -> &GroupTap {
    member
        .cell
        .inbox
        .group_sink()
        .and_then(|sink| sink.as_any().downcast_ref::<MemberSink<G, A>>())
        .map(|sink| &sink.core.tap)
        .expect("kaspar: a group's member belongs to that group")
}

struct MemberSink<G: GroupSpec, A: Actor> {
    core: Arc<GroupCore<G>>,
    wrap: fn(A::Msg) -> G::Msg,
    unwrap: fn(G::Msg) -> A::Msg,
}

impl<G: GroupSpec, A: Actor> GroupSink<Queued<A::Msg>> for MemberSink<G, A> {
    #[inline]
    fn push(
        &self,
        msg: Queued<A::Msg>,
        watch: Watch<'_>,
    ) -> Result<usize, SendError<Queued<A::Msg>>> {
        self.core
            .mailbox
            .push_watched(trace::map(msg, self.wrap), watch)
            .map_err(|e| e.map(|m| trace::map(m, self.unwrap)))
    }

    /// Never waits for room: a full group queue hands the message back as
    /// `Full` (the timer queue retries it). A journal records a firing
    /// only if it queued, under the journal's lock, so a record always
    /// stands for a message really queued and a full queue records
    /// nothing.
    fn push_timer(
        &self,
        msg: Queued<A::Msg>,
        timer: u64,
    ) -> Result<usize, SendError<Queued<A::Msg>>> {
        use crate::mailbox::inbox::push_now;
        let mut msg = Some(msg);
        let mut pushed = None;
        self.core.tap.fire(timer, &mut || {
            let m = msg.take().expect("a timer fires once per firing");
            let queued = push_now(&self.core.mailbox, trace::map(m, self.wrap));
            let ok = queued.is_ok();
            pushed = Some(queued.map_err(|e| e.map(|m| trace::map(m, self.unwrap))));
            ok
        });
        pushed.expect("the tap ran the push")
    }

    fn next_timer(&self) -> u64 {
        // Members arm timers one handler at a time, under the group's
        // lock: the count needs no order of its own.
        self.core.timers.fetch_add(1, Ordering::Relaxed)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn hosted(&self) -> bool {
        self.core.mailbox.hosted()
    }

    fn before_first_wait(&self, begun: &dyn Fn() -> bool) -> bool {
        self.core.mailbox.before_first_wait(begun)
    }

    fn help(&self, cx: &mut std::task::Context<'_>) -> crate::mailbox::Helped {
        // The group's hook names the group itself as the awaited unit.
        self.core.mailbox.help(cx, std::ptr::null())
    }

    fn help_blocked(&self, done: &dyn Fn() -> bool, deadline: Option<std::time::Instant>) -> bool {
        self.core.mailbox.help_blocked(done, deadline)
    }

    #[cfg(any(feature = "metrics", feature = "console"))]
    fn len(&self) -> usize {
        self.core.mailbox.len()
    }

    #[cfg(feature = "sim")]
    fn rejects_when_full(&self) -> bool {
        self.core.mailbox.rejects_when_full()
    }
}

/// Creates member cells while a group is built. Used by `#[group]` code.
#[doc(hidden)]
pub struct GroupBuilder<'a, G: GroupSpec> {
    core: &'a Arc<GroupCore<G>>,
    lock: &'a Arc<ActorLock>,
    policy: CyclePolicy,
    clock: &'a Clock,
    dead: &'a DeadLetters,
    /// Every member's: the group's name and system.
    instance: Instance,
}

impl<G: GroupSpec> fmt::Debug for GroupBuilder<'_, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GroupBuilder({})", G::NAME)
    }
}

impl<G: GroupSpec> GroupBuilder<'_, G> {
    /// Makes a member, without its state yet, whose messages are wrapped by
    /// `wrap`.
    pub fn member<A: Actor>(
        &mut self,
        wrap: fn(A::Msg) -> G::Msg,
        unwrap: fn(G::Msg) -> A::Msg,
    ) -> Addr<A> {
        let sink: Arc<dyn GroupSink<Queued<A::Msg>>> = Arc::new(MemberSink::<G, A> {
            core: Arc::clone(self.core),
            wrap,
            unwrap,
        });
        let cell = Arc::new(ActorCell::vacant(
            Arc::clone(self.lock),
            A::POLICY.unwrap_or(self.policy),
            Inbox::Group {
                sink,
                closed: Default::default(),
            },
            self.clock.clone(),
            self.dead.clone(),
            self.instance.clone(),
        ));
        // As for an actor on a thread of its own (`Spawn::launch`): its
        // first refusal must not allocate.
        cell.stats.shared.make_rare();
        #[cfg(any(feature = "metrics", feature = "console"))]
        self.core
            .observed
            .lock()
            .push(crate::actor::observe::observed(&cell));
        let member = Arc::downgrade(&cell);
        self.core.timing.lock().push(Box::new(move || {
            if let Some(cell) = member.upgrade() {
                cell.record_latency();
            }
        }));
        Addr::from_cell(cell)
    }
}

/// The group thread's hold on the group lock. Used by `#[group]` code.
#[doc(hidden)]
pub struct GroupHold<'a> {
    held: Held<'a>,
    /// The members' states were built on this thread and are dropped on it
    /// when they stop.
    thread_bound: bool,
}

impl fmt::Debug for GroupHold<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GroupHold")
    }
}

impl GroupHold<'_> {
    /// Handles one queued message of `member`.
    #[inline]
    pub fn serve<A: Actor>(&self, member: &Addr<A>, msg: A::Msg) {
        run_loop::serve_one(&member.cell, &self.held, Plain(msg));
    }

    /// Runs `member`'s `started` hook.
    pub fn started<A: Actor>(&self, member: &Addr<A>) {
        run_loop::start_under(&member.cell, &self.held);
    }

    /// Runs `member`'s `stopped` hook and marks it stopped; a thread-bound
    /// member's state is dropped here, on its own thread, and its home is
    /// forgotten. Never unwinds: the hook and the state's destructor are
    /// the user's, and caught, so every member of the group is stopped
    /// whatever one of them does.
    pub fn stopped<A: Actor>(&self, member: &Addr<A>) {
        let cell = &member.cell;
        cell.inbox.close();
        quietly(|| run_loop::stop_under(cell, &self.held));
        if cell.flags() & STOPPED == 0 {
            cell.mark_stopped(&self.held);
        }
        if self.thread_bound {
            if drop_quietly(cell.vacate(&self.held)) > 0 {
                cell.stats.shared.bump(Rare::Panics);
            }
            cell.clear_home();
        }
    }

    /// Gives `member` its state; this thread becomes its home.
    pub fn fill<A: Actor>(&self, member: &Addr<A>, state: A) {
        member.cell.bind_home(&self.held);
        member.cell.fill(&self.held, state);
    }
}

/// Builds a group's cells: its queue, its lock, one cell per member, each
/// without its state and with `instance` (the group's name and system).
pub(crate) fn reserve<G: GroupSpec>(
    mailbox: Mailbox<Queued<G::Msg>>,
    policy: CyclePolicy,
    clock: &Clock,
    dead: &DeadLetters,
    instance: Instance,
) -> (G, Arc<GroupCore<G>>, Arc<ActorLock>) {
    let core = Arc::new(GroupCore {
        mailbox,
        tap: GroupTap::default(),
        timers: AtomicU64::new(0),
        timing: Default::default(),
        instance: instance.clone(),
        #[cfg(any(feature = "metrics", feature = "console"))]
        observed: Default::default(),
    });
    let lock = Arc::new(ActorLock::new(true));
    let mut builder = GroupBuilder {
        core: &core,
        lock: &lock,
        policy,
        clock,
        dead,
        instance,
    };
    let spec = G::reserve(&mut builder);
    (spec, core, lock)
}

/// The group's members as the system's metrics collector reads them, for
/// the system that spawns the group to register (once: they are taken).
#[cfg(any(feature = "metrics", feature = "console"))]
pub(crate) fn take_observed<G: GroupSpec>(
    core: &GroupCore<G>,
) -> Vec<std::sync::Weak<dyn Observed>> {
    std::mem::take(&mut *core.observed.lock())
}

/// Gives the members their states and runs their `started` hooks, on the
/// calling thread (for the simulator).
pub(crate) fn fill_and_start<G: GroupSpec>(spec: &G, members: G::Members, lock: &Arc<ActorLock>) {
    let hold = GroupHold {
        held: Held::acquire(lock),
        thread_bound: false,
    };
    spec.fill(members, &hold);
    spec.started(&hold);
}

/// Stops a group that never started (a prepared group dropped unspawned):
/// its members refuse entries, and what was queued goes to dead letters.
pub(crate) fn abandon<G: GroupSpec>(spec: &G, core: &GroupCore<G>, lock: &Arc<ActorLock>) {
    let hold = GroupHold {
        held: Held::acquire(lock),
        thread_bound: false,
    };
    core.mailbox.close();
    spec.stopped(&hold);
    drain_closed(spec, core, &hold, &mut Vec::new());
}

/// Hands what a group's closed queue still holds, and what `batch` still
/// holds (a batch an unwind interrupted, in reverse order), to dead
/// letters: every member is stopped, so dispatching a message posts it.
/// A slot reserved before the close but not yet written is waited for (as
/// the run loop's pop waits for it), not skipped.
fn drain_closed<G: GroupSpec>(
    spec: &G,
    core: &GroupCore<G>,
    hold: &GroupHold<'_>,
    batch: &mut Vec<G::Msg>,
) {
    let queue = trace::consumer(&core.mailbox);
    loop {
        while let Some(msg) = batch.pop() {
            // Dead letters drop a message quietly; `quietly` is for a
            // member whose flags say otherwise (none should).
            quietly(|| spec.dispatch(msg, hold));
        }
        match queue.pop_batch(batch, usize::MAX, IdleWait::Backoff) {
            Drained::Closed => return,
            Drained::Got(_) => batch.reverse(),
        }
    }
}

/// Makes every member record its handlers' service times.
pub(crate) fn record_latency<G: GroupSpec>(core: &GroupCore<G>) {
    for switch in core.timing.lock().iter() {
        switch();
    }
}

/// Gives every member of a group that has not started the instance name
/// `name` (see `Instance::set_name`); `Err` with the name the group has if
/// it has one.
pub(crate) fn name_members<G: GroupSpec>(
    core: &GroupCore<G>,
    name: Arc<str>,
) -> Result<(), Arc<str>> {
    core.instance.set_name(name)
}

/// The instance name every member of the group has, if any.
pub(crate) fn members_name<G: GroupSpec>(core: &GroupCore<G>) -> Option<Arc<str>> {
    core.instance.name()
}

/// Closes the group's queue: members then refuse sends.
pub(crate) fn close<G: GroupSpec>(core: &GroupCore<G>) {
    core.mailbox.close();
}

/// Handles everything queued for the group on the calling thread, batch by
/// batch, until the queue is empty. Returns how many messages it handled.
/// For the simulator, which runs a group without a thread of its own.
pub(crate) fn drain<G: GroupSpec>(
    spec: &G,
    core: &GroupCore<G>,
    lock: &Arc<ActorLock>,
    batch: &mut Vec<G::Msg>,
    max_batch: usize,
) -> usize {
    let mut handled = 0;
    // The simulating thread handles the group's queue while it drains.
    let _consuming = lock.consuming(chain::thread_token());
    let queue = trace::consumer(&core.mailbox);
    while queue.try_pop_batch(batch, max_batch) > 0 {
        let hold = GroupHold {
            held: Held::acquire(lock),
            thread_bound: false,
        };
        for msg in batch.drain(..) {
            handled += 1;
            spec.dispatch(msg, &hold);
        }
    }
    handled
}

/// Closes the queue and runs every member's `stopped` hook on the calling
/// thread. The caller has drained the queue.
pub(crate) fn stop_members<G: GroupSpec>(spec: &G, core: &GroupCore<G>, lock: &Arc<ActorLock>) {
    core.mailbox.close();
    spec.stopped(&GroupHold {
        held: Held::acquire(lock),
        thread_bound: false,
    });
}

/// How a group thread gets its members' states: `build` runs first thing
/// on the group's thread (it moves states made elsewhere, or runs the
/// user's factory). `thread_bound` states are dropped on that thread.
pub(crate) struct GroupInit<G: GroupSpec> {
    pub(crate) build: Box<dyn FnOnce() -> G::Members + Send>,
    pub(crate) thread_bound: bool,
    /// Records what the group serves (`GroupSpawn::flight_recorder`).
    #[cfg(feature = "journal")]
    pub(crate) flight: Option<crate::delivery::flight::FlightRecorder<G::Msg>>,
}

/// The group thread: the members' states and `started` hooks, then batches
/// from the one queue under the one lock until the queue is closed and
/// empty, then `stopped` hooks.
///
/// The spawner handed the group's lock over to this thread, so no
/// synchronous caller enters a member before every member has its state
/// and has run `started`.
///
/// `group` names the group where the deadlock detector names what this
/// thread waits for.
///
/// As an actor's run loop (`run_loop::run`), the thread never dies
/// silently: should anything unwind out of the loop, every member is
/// stopped (hooks caught, thread-bound states dropped here) and what the
/// queue had accepted, with the rest of the interrupted batch, goes to
/// dead letters.
pub(crate) fn run<G: GroupSpec>(
    spec: G,
    core: Arc<GroupCore<G>>,
    lock: Arc<ActorLock>,
    config: LoopConfig,
    init: GroupInit<G>,
    group: Target,
) {
    // This thread handles every member's queued messages (see
    // `run_loop::run`).
    let _consuming = lock.consuming(chain::thread_token());
    let thread_bound = init.thread_bound;
    let mut batch: Vec<G::Msg> = Vec::new();
    let served = catch_unwind(AssertUnwindSafe(|| {
        serve_until_closed(&spec, &core, &lock, config, init, &group, &mut batch);
        spec.stopped(&GroupHold {
            held: Held::acquire(&lock),
            thread_bound,
        });
    }));
    if let Err(payload) = served {
        drop_quietly(payload);
        core.mailbox.close();
        let hold = GroupHold {
            held: Held::acquire(&lock),
            thread_bound,
        };
        spec.stopped(&hold);
        drain_closed(&spec, &core, &hold, &mut batch);
    }
}

/// The group thread's life short of stopping (see [`run`]); `batch` is
/// the caller's, so that what an unwind leaves in it is not lost.
fn serve_until_closed<G: GroupSpec>(
    spec: &G,
    core: &GroupCore<G>,
    lock: &Arc<ActorLock>,
    config: LoopConfig,
    init: GroupInit<G>,
    group: &Target,
    batch: &mut Vec<G::Msg>,
) {
    {
        let hold = GroupHold {
            // SAFETY: the spawner handed this lock over to this thread
            // before starting it, and nothing else adopts it.
            held: unsafe { Held::adopt(lock) },
            thread_bound: init.thread_bound,
        };
        match quietly(init.build) {
            Some(members) => {
                spec.fill(members, &hold);
                spec.started(&hold);
            }
            None => {
                // The members never had a state: they stop before they
                // started, and what is queued goes to dead letters below.
                core.mailbox.close();
                spec.stopped(&hold);
            }
        }
    }
    batch.reserve(config.max_batch.min(4096));
    let queue = trace::consumer(&core.mailbox);
    loop {
        match queue.pop_batch(batch, config.max_batch, config.idle) {
            Drained::Closed => return,
            Drained::Got(_) => {
                let mut hold = GroupHold {
                    // The group's thread waits for a synchronous caller into
                    // any member; named by the group (no one actor id).
                    held: Held::acquire_watched(lock, || group.clone()),
                    thread_bound: init.thread_bound,
                };
                // Served from the back, so a message leaves `batch` only
                // as it is served (see `run_loop::serve`).
                batch.reverse();
                #[cfg(feature = "journal")]
                if let Some(flight) = &init.flight {
                    flight.serve_batch(batch, |msg, first| {
                        if !first {
                            hold.held.bump(|| group.clone());
                        }
                        spec.dispatch(msg, &hold);
                    });
                    continue;
                }
                if let Some(msg) = batch.pop() {
                    spec.dispatch(msg, &hold);
                }
                while let Some(msg) = batch.pop() {
                    hold.held.bump(|| group.clone());
                    spec.dispatch(msg, &hold);
                }
            }
        }
    }
}
