//! # kaspar
//!
//! Actors for latency-critical systems. An actor is declared with
//! `#[actor]` on its struct and on the impl block holding its
//! `#[handler(Msg)]` methods; the macro generates the message enum, a
//! compile-time dispatch `match`, and the (actor, message class) keys that
//! cycle detection uses.
//!
//! Every handler can be reached two ways, and cannot tell which:
//!
//! * **asynchronously**: [`Addr::send`], [`Addr::ask`], [`Addr::request`]
//!   queue the message for the actor's own thread;
//! * **synchronously**: [`Addr::fast_send`] and its family run the handler
//!   on the caller's thread, under the actor's lock, and return the reply by
//!   value: no queue, no context switch, no allocation.
//!
//! ```
//! use kaspar::prelude::*;
//!
//! pub struct Ping(pub u64);
//! pub struct Pong(pub u64);
//!
//! #[actor]
//! pub struct Ponger {
//!     seen: u64,
//! }
//!
//! #[actor]
//! impl Ponger {
//!     #[handler(Ping)]
//!     fn on_ping(&mut self, msg: Ping, _ctx: &mut Ctx<Self>) -> Pong {
//!         self.seen += 1;
//!         Pong(msg.0 + 1)
//!     }
//! }
//!
//! let system = System::new();
//! let ponger = system.spawn(Ponger { seen: 0 }).start();
//! let Pong(n) = ponger.fast_send(Ping(1)).unwrap(); // runs here, now
//! assert_eq!(n, 2);
//! ponger.send(Ping(2)).unwrap(); // runs on ponger's thread
//! let Pong(n) = ponger.ask(Ping(3)).unwrap().wait().unwrap();
//! assert_eq!(n, 4);
//! system.shutdown();
//! ```
//!
//! # Where to go next
//!
//! * [`Addr`] and the [`delivery` table](Addr::fast_send) for the eight ways
//!   in; [`CyclePolicy`] and [`FastSendError`] for what a synchronous
//!   delivery refuses, and why.
//! * [`group`](macro@group) and [`GroupSpec`]: several actors on one thread behind one
//!   queue; a `fast_send` between members takes no second lock.
//! * [`Simulation`] (and, with the `journal` feature, `journal`): the same
//!   group on virtual time, replayed deterministically.
//! * [`mailbox`]: the five queues and how to choose; [`pool`]: `Pooled<T>`.
//! * [`Addr::stats`] and [`Addr::latency`]: an actor's counters, and its
//!   handlers' service times per message class (when spawned with
//!   [`Spawn::record_latency`]). With the `metrics` feature,
//!   `System::publish_metrics` and `System::metrics_every` publish every
//!   actor's through the `metrics` facade, to any of its exporters.
//!   With the `console` feature, `System::console` serves a live page of
//!   them in the browser: the actor graph, rates, depths, latencies.
//! * [`Supervision`] and [`DeadLetters`]: what happens after a panic, and
//!   where undeliverable messages go. [`Placement`]: CPU affinity and
//!   `SCHED_FIFO` for actor threads.
//! * The guide (`book/` in the repository) explains the design, including
//!   the receiver transparency contract.
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc,
    missing_docs,
    missing_debug_implementations
)]

// # Module map
//
// The runtime is in layers; each folder uses only the folders above it in
// this list (CI checks it: `.ci/tools/layers.py`).
//
//   base/      ids (ActorId, ClassId, thread tokens), per-actor counters,
//              clock and timers, the `sync` shim (std or loom), the
//              waiters' backoff
//   guard/     the call chain (cycle check before any lock), the actor
//              lock, the cross-thread wait-for registry
//   error.rs   what a delivery refuses and hands back
//   mailbox/   the five queues, the kinds and wait strategies, the inbox
//              (own mailbox or a group's queue), generic over the message
//   reply/     where a handler's return value goes; `Ask`
//   failure/   dead letters and supervision policy, as data
//   actor/     the traits `#[actor]` implements, `Ctx`, the cell and its
//              entry protocol, `Addr`, supervision's mechanics on a cell
//   delivery/  the fast_send family and the run loop
//   group/     groups, simulation, the journal
//   system/    `System`, the spawn builders, thread placement
//   pool/      `Pooled<T>` and its allocator (independent of the rest)

// Lets the crate's own unit tests declare actors with `#[actor]`, whose
// expansion names `::kaspar::__private`.
#[cfg(test)]
extern crate self as kaspar;

mod actor;
mod base;
mod delivery;
mod error;
mod failure;
mod group;
mod guard;
pub mod mailbox;
pub mod pool;
mod reply;
mod system;

/// The guide's chapters, compiled as doctests (`cargo test --doc`): each
/// chapter of `book/src` is the documentation of an empty module, so every
/// ```rust sample in it is built and run against the current code.
#[cfg(doctest)]
mod guide {
    macro_rules! chapters {
        ($($name:ident = $file:literal;)*) => {
            $(
                #[doc = include_str!(concat!("../../book/src/", $file))]
                pub mod $name {}
            )*
        };
    }
    chapters! {
        introduction = "introduction.md";
        quick_start = "quick-start.md";
        coming_from = "coming-from.md";
        actors_and_handlers = "actors-and-handlers.md";
        delivery = "delivery.md";
        wiring = "wiring.md";
        transparency = "transparency.md";
        cycles_and_deadlocks = "cycles-and-deadlocks.md";
        supervision = "supervision.md";
        groups_and_simulation = "groups-and-simulation.md";
        flight_recorder = "flight-recorder.md";
        mailboxes = "mailboxes.md";
        memory_pool = "memory-pool.md";
        performance = "performance.md";
        pipeline = "pipeline.md";
        prior_art = "prior-art.md";
        // remote.md needs kaspar-remote, which depends on this crate: its
        // samples are compiled by the root package (src/lib.rs) instead.
        // So are observing.md's, which need the Prometheus exporter (with
        // the root package's `metrics` feature).
    }
}

/// The guide's chapter on pooled actors hosted on tokio, compiled as
/// doctests with the `tokio` feature that its samples need.
#[cfg(all(doctest, feature = "tokio"))]
mod guide_tokio {
    #[doc = include_str!("../../book/src/pool-on-tokio.md")]
    pub mod pool_on_tokio {}
}

/// The guide's chapter on simulating a whole system, compiled as doctests
/// with the `sim` feature that its samples need.
#[cfg(all(doctest, feature = "sim"))]
mod guide_sim {
    #[doc = include_str!("../../book/src/simulating-a-system.md")]
    pub mod simulating_a_system {}
}

pub use actor::addr::Addr;
pub use actor::ctx::Ctx;
pub use actor::traits::{
    AccessMode, AccessRef, Actor, ActorConfig, AnyThread, Exclusive, Handler, Home, OwnThread,
    Shared,
};
pub use base::clock::{Clock, Time, VirtualClock};
pub use base::ids::{ActorId, ClassId};
pub use base::latency::{ClassLatency, LatencyStats};
pub use base::stats::ActorStats;
pub use base::timer::TimerId;
pub use delivery::fast_send::Call;
pub use delivery::recipient::Recipient;
pub use error::{AskError, Delivered, Error, FastSendError, FlattenReply, SendError, Target};
pub use failure::dead_letters::{DeadLetter, DeadLetterCounts, DeadLetterReason, DeadLetters};
pub use failure::supervision::{ExitReason, Restarted, Supervision, Terminated};
pub use group::sim::Simulation;
pub use group::solo::Solo;
pub use group::GroupSpec;
pub use guard::chain::{CallChain, CyclePolicy, Frame};
pub use guard::deadlock::{WaitEdge, WaitKind};
pub use kaspar_macros::{actor, group, handler};
pub use mailbox::{IdleWait, MailboxKind, WhenFull};
pub use reply::{Ask, ReplyTo};
pub use system::group_spawn::{GroupSpawn, PreparedGroup};
pub use system::placement::{Placement, PlacementOutcome};
pub use system::pool::PoolConfig;
pub use system::prepare::Prepared;
pub use system::spawn::Spawn;
pub use system::{ShutdownReport, System, SystemConfig};

/// The collector thread of [`System::metrics_every`] (feature `metrics`).
#[cfg(feature = "metrics")]
pub use system::metrics::MetricsHandle;

/// The live console of [`System::console`] (feature `console`).
#[cfg(feature = "console")]
pub use system::console::Console;

/// Journal a live group's inputs and replay them in a [`Simulation`]
/// (feature `journal`).
#[cfg(feature = "journal")]
pub use group::journal;

/// A whole actor system under one seeded scheduler, with injected faults
/// and a trace that replays from its seed (feature `sim`).
#[cfg(feature = "sim")]
pub use system::sim;

/// The cross-process identity of a handled message's span (feature
/// `tracing`).
#[cfg(feature = "tracing")]
pub use actor::trace::TraceContext;

/// Everything a typical actor module needs.
pub mod prelude {
    pub use crate::{
        actor, group, handler, Addr, Ctx, CyclePolicy, Delivered, FastSendError, FlattenReply,
        IdleWait, MailboxKind, Recipient, SendError, System,
    };
}

/// The runtime's internals that the loom models (`kaspar/tests/loom_*.rs`)
/// drive, as thin forwarding wrappers: the models check the shipped code.
/// Only built under `--cfg loom`.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom {
    use std::fmt;

    use crate::actor::cell::{EnteredFlag, EnteredMark, Held};
    use crate::base::ids::{ActorId, ClassId, Target};
    use crate::guard::chain::{self, FrameHead, FrameNames, GroupMark, ThreadState};
    use crate::guard::deadlock::{self, WaitOn};
    use crate::guard::lock::ActorLock;
    use crate::{WaitEdge, WaitKind};

    /// `guard::lock::ActorLock`, the lock every handler runs under (in the
    /// `Arc` a cell keeps it in: the run loop's hold and the deadlock
    /// registry hold it so).
    #[derive(Debug)]
    pub struct Lock(std::sync::Arc<ActorLock>);

    impl Default for Lock {
        fn default() -> Self {
            Lock(std::sync::Arc::new(ActorLock::new(false)))
        }
    }

    /// The calling loom thread's token (`chain::thread_token`): under loom
    /// each model thread has its own runtime thread state.
    pub fn thread_token() -> usize {
        chain::thread_token()
    }

    /// What the models' waits and holds are waiting for, as the deadlock
    /// detector names it.
    fn target() -> Target {
        Target::new(ActorId::GROUP, "Model", None)
    }

    static CALLER_NAMES: FrameNames = FrameNames {
        actor: "Caller",
        classes: &["Call"],
    };

    /// The frame a synchronous caller's handler has on its chain.
    static CALLER: FrameHead = FrameHead {
        actor: ActorId(u64::MAX),
        names: &CALLER_NAMES,
    };

    impl Lock {
        /// A group's lock (`ActorLock::new(true)`): flagged for good, its
        /// flagged members counted.
        pub fn group() -> Self {
            Lock(std::sync::Arc::new(ActorLock::new(true)))
        }
        /// Whether the lock is held for a thread that has yet to adopt it
        /// (`ActorLock::hand_over`).
        pub fn is_handed_over(&self) -> bool {
            self.0.is_handed_over()
        }
        /// See `ActorLock::has_parked`.
        pub fn has_parked(&self) -> bool {
            self.0.has_parked()
        }
        /// See `ActorLock::consuming`: the calling thread (token `me`) runs
        /// this lock's queue while the guard lives.
        pub fn consuming(&self, me: usize) -> Consuming<'_> {
            Consuming {
                _guard: self.0.consuming(me),
            }
        }
        /// See `ActorLock::consumer`: the token of the thread the
        /// deadlock detector reads as running this lock's queue, or 0.
        pub fn consumer(&self) -> usize {
            self.0.consumer()
        }
        /// See `ActorLock::members_clean`.
        pub fn members_clean(&self) -> bool {
            self.0.members_clean()
        }
        /// See `ActorLock::member_flagged`: for a group's lock, counts the
        /// member and forgets the calling thread's group mark.
        pub fn member_flagged(&self) {
            self.0.member_flagged()
        }
        /// Whether the calling thread's group mark names this lock
        /// (`ThreadState::holds_group`): an entry into one of its members
        /// would take the intra-group path, with no flags check.
        pub fn marked_here(&self) -> bool {
            chain::this_thread().holds_group(&*self.0)
        }
        /// A run loop's hold on the lock for a batch (`Held::acquire`), by
        /// the calling thread.
        pub fn hold(&self) -> Hold<'_> {
            Hold(Held::acquire(&self.0))
        }
        /// A run loop's hold taken with its wait registered with the
        /// deadlock detector (`Held::acquire_watched`).
        pub fn hold_watched(&self) -> Hold<'_> {
            Hold(Held::acquire_watched(&self.0, target))
        }
        /// A synchronous caller (token `me`, the calling thread's) into an
        /// actor under this lock, the way `ActorCell::enter_checked` takes
        /// it once the lock is busy: waits for the lock (parked; a caller
        /// on a plain thread skips the deadlock registry), pushes the
        /// handler's frame, marks a group's lock if its members are clean
        /// (`GroupMark`), runs `f` (the handler), and undoes all of it in
        /// reverse.
        pub fn call<R>(&self, me: usize, f: impl FnOnce() -> R) -> R {
            let lock = &*self.0;
            if !lock.try_acquire(me) {
                lock.park_acquire(me);
            }
            let frame = chain::push(&CALLER, ClassId::new(0));
            let group = lock
                .is_group()
                .then(|| GroupMark::set(lock, lock.members_clean()));
            let out = f();
            drop(group);
            drop(frame);
            // SAFETY: acquired above by this thread (token `me`), released
            // once.
            unsafe { lock.release(me) };
            out
        }
        /// `deadlock::before_wait` by the calling thread (token `me`) on
        /// this lock (`WaitKind::Lock`) or on its actor's queue (`Reply`,
        /// `Room`; `WaitOn::holders` says which threads each waits for):
        /// the cycle the wait would close, or the registration.
        pub fn before_wait(&self, me: usize, kind: WaitKind) -> Result<Registered, Vec<WaitEdge>> {
            let on = match kind {
                WaitKind::Lock => WaitOn::lock(&self.0),
                kind => WaitOn::consumer(kind, &self.0),
            };
            deadlock::before_wait(me, on, target).map(Registered)
        }
        /// See `ActorLock::try_acquire`.
        pub fn try_acquire(&self, me: usize) -> bool {
            self.0.try_acquire(me)
        }
        /// See `ActorLock::park_acquire`.
        pub fn park_acquire(&self, me: usize) {
            self.0.park_acquire(me)
        }
        /// See `ActorLock::held_by`.
        pub fn held_by(&self, me: usize) -> bool {
            self.0.held_by(me)
        }
        /// See `ActorLock::owner`.
        pub fn owner(&self) -> usize {
            self.0.owner()
        }
        /// See `ActorLock::try_acquire_unflagged`.
        pub fn try_acquire_unflagged(&self, me: usize) -> bool {
            self.0.try_acquire_unflagged(me)
        }
        /// See `ActorLock::flag`.
        pub fn flag(&self) {
            self.0.flag()
        }
        /// See `ActorLock::unflag_if`.
        pub fn unflag_if(&self, flags_now: impl Fn() -> u8) {
            self.0.unflag_if(flags_now)
        }
        /// See `ActorLock::release`.
        ///
        /// # Safety
        ///
        /// As `ActorLock::release`: the caller (token `me`) holds the lock.
        pub unsafe fn release(&self, me: usize) {
            // SAFETY: forwarded from the caller.
            unsafe { self.0.release(me) }
        }
        /// See `ActorLock::hand_over`.
        pub fn hand_over(&self) {
            self.0.hand_over()
        }
        /// See `ActorLock::adopt`.
        ///
        /// # Safety
        ///
        /// As `ActorLock::adopt`: the lock was handed over for the caller.
        pub unsafe fn adopt(&self, me: usize) {
            // SAFETY: forwarded from the caller.
            unsafe { self.0.adopt(me) }
        }
        /// See `ActorLock::bump`.
        ///
        /// # Safety
        ///
        /// As `ActorLock::bump`: the caller (token `me`) holds the lock.
        pub unsafe fn bump(&self, me: usize) {
            // SAFETY: forwarded from the caller.
            unsafe { self.0.bump(me) }
        }
    }

    /// `ActorLock::consuming`'s guard.
    pub struct Consuming<'a> {
        _guard: crate::guard::lock::Consuming<'a>,
    }

    impl fmt::Debug for Consuming<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Consuming")
        }
    }

    /// A run loop's hold on a lock (`actor::cell::Held`), by the thread
    /// that took it; released when dropped.
    pub struct Hold<'a>(Held<'a>);

    impl Hold<'_> {
        /// `Held::bump`: lets a parked caller in between two messages and
        /// takes the lock back, the group mark off meanwhile and the wait
        /// to take it back registered with the deadlock detector.
        pub fn bump(&mut self) {
            self.0.bump(target)
        }
    }

    impl fmt::Debug for Hold<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Hold")
        }
    }

    /// A wait in the deadlock registry (`deadlock::Registered`); removed
    /// when dropped.
    pub struct Registered(deadlock::Registered);

    impl Registered {
        /// See `Registered::in_graph`.
        pub fn in_graph(&self) -> bool {
            self.0.in_graph()
        }
        /// See `Registered::recheck`: the cycle this wait has become part
        /// of since it registered, if any.
        pub fn recheck(&self) -> Result<(), Vec<WaitEdge>> {
            self.0.recheck()
        }
    }

    impl fmt::Debug for Registered {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Registered")
        }
    }

    /// An `Exclusive` group member's `entered` mark
    /// (`actor::cell::EnteredFlag`), read and written only by the holder
    /// of the member's lock.
    pub struct Member(EnteredFlag);

    impl Default for Member {
        fn default() -> Self {
            Member(EnteredFlag::new())
        }
    }

    impl Member {
        /// `EnteredFlag::mark`: the mark of an entry into the member, which
        /// clears it when dropped; `None` if it is set (the member is
        /// running a handler).
        ///
        /// # Safety
        ///
        /// As `EnteredFlag::mark`: the calling thread holds the member's
        /// lock until after the mark is dropped.
        pub unsafe fn enter(&self) -> Option<Entered<'_>> {
            // SAFETY: forwarded from the caller.
            unsafe { self.0.mark() }
                .ok()
                .map(|mark| Entered { _mark: mark })
        }
    }

    impl fmt::Debug for Member {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Member")
        }
    }

    /// An entry's `entered` mark (`actor::cell::EnteredMark`).
    pub struct Entered<'a> {
        _mark: EnteredMark<'a>,
    }

    impl fmt::Debug for Entered<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Entered")
        }
    }

    /// A thread's runtime state (`guard::chain::ThreadState`) in storage
    /// the model owns, so that a thread started after another has exited
    /// can be given the dead thread's storage, as the OS may give it the
    /// dead thread's TLS block: the same token, a fresh state.
    pub struct ThreadBlock(Box<ThreadState>);

    // SAFETY: `ThreadState` is `!Send` for the frame pointers it may hold;
    // a block's chain is never pushed to (only its token and home id are
    // read), and the models move a block to the thread whose state it is
    // before that thread uses it, one thread at a time.
    unsafe impl Send for ThreadBlock {}

    impl Default for ThreadBlock {
        fn default() -> Self {
            ThreadBlock(Box::new(ThreadState::new()))
        }
    }

    impl ThreadBlock {
        /// Gives the storage to a new thread: a fresh state in the same
        /// place, so with the same token.
        pub fn reuse(&mut self) {
            *self.0 = ThreadState::new();
        }
        /// See `ThreadState::token`.
        pub fn token(&self) -> usize {
            self.0.token()
        }
        /// See `ThreadState::home_id`: what `ActorCell::bind_home` records
        /// for the thread.
        pub fn home_id(&self) -> u32 {
            self.0.home_id()
        }
        /// See `ThreadState::is_home`: the entry check of a thread-bound
        /// actor whose recorded home is `home`.
        pub fn is_home(&self, home: u32) -> bool {
            self.0.is_home(home)
        }
    }

    impl fmt::Debug for ThreadBlock {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("ThreadBlock")
        }
    }

    /// An `ask` handle and the reply route its replier gets, as
    /// `Addr::ask` makes them (the slot drawn from this thread's cache).
    pub fn ask<R: Send + 'static>() -> (crate::Ask<R>, crate::ReplyTo<R>) {
        let slot = crate::reply::slot::<R>();
        (
            crate::Ask::new(crate::base::sync::Arc::clone(&slot), None),
            crate::reply::ReplyTo::ask(slot),
        )
    }

    /// Slots of reply type `R` in this thread's cache.
    pub fn cached_slots<R: Send + 'static>() -> usize {
        crate::reply::cached_slots::<R>()
    }

    /// A sink that keeps ports (`reply::Ports`), as an actor's cell does
    /// for `request`, and counts and sums the `u64` replies that reach it.
    #[derive(Debug)]
    pub struct PortSink {
        ports: crate::reply::Ports,
        heard: crate::base::sync::AtomicU64,
        sum: crate::base::sync::AtomicU64,
    }

    impl Default for PortSink {
        fn default() -> Self {
            PortSink {
                ports: crate::reply::Ports::new(),
                heard: crate::base::sync::AtomicU64::new(0),
                sum: crate::base::sync::AtomicU64::new(0),
            }
        }
    }

    // SAFETY: a field, dropped with the sink.
    unsafe impl crate::reply::HasPorts for PortSink {
        fn ports(&self) -> &crate::reply::Ports {
            &self.ports
        }
    }

    impl crate::reply::ReplySink<u64> for PortSink {
        fn deliver(self: std::sync::Arc<Self>, reply: u64) {
            use crate::base::sync::Ordering::Relaxed;
            self.sum.fetch_add(reply, Relaxed);
            self.heard.fetch_add(1, Relaxed);
        }
    }

    impl PortSink {
        /// How many replies reached it, and their sum.
        pub fn heard(&self) -> (u64, u64) {
            use crate::base::sync::Ordering::Relaxed;
            (self.heard.load(Relaxed), self.sum.load(Relaxed))
        }

        /// How many ports it keeps.
        pub fn ports(&self) -> usize {
            self.ports.len()
        }
    }

    /// A route to `sink` through its port for `u64`, as `Addr::request`
    /// makes one to the requesting actor's cell.
    pub fn route_to(sink: &std::sync::Arc<PortSink>) -> crate::ReplyTo<u64> {
        crate::ReplyTo::shared(sink)
    }

    pub use crate::delivery::sched::model::{
        Carry, IdleModel, Park, Poll, PooledMailbox, SleepToken,
    };
    pub use crate::delivery::sched::next_slot::NextSlot;
    pub use crate::delivery::sched::seats::Seats;
}

/// What `#[actor]` expansions name. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::actor::ctx::Ctx;
    pub use crate::actor::packed::{
        At, Cons, Either, Handlers, Nil, Packed, Packing, Serves, S, Z,
    };
    pub use crate::actor::traits::{
        exclusive_ref, shared_ref, AccessMode, AccessRef, Actor, ActorConfig, ActorState,
        AnyThread, Exclusive, ExclusiveMode, Handler, NoMessage, OwnThread, Shared,
    };
    pub use crate::base::ids::ClassId;
    pub use crate::group::{group_tap, GroupBuilder, GroupHold, GroupSpec, GroupTap};
    pub use crate::guard::chain::CyclePolicy;
    pub use crate::mailbox::MailboxKind;
    pub use crate::reply::ReplyTo;
    pub use core::option::Option;
    pub use core::unreachable;

    // What kaspar-remote builds on (a remote `ask`'s handle, an inbound
    // `ask`'s reply route, a remote actor's identity in `Terminated`).
    pub use crate::actor::addr::send_with_reply;
    pub use crate::reply::{ask_pair, ask_slot, OwnedSink, ReplySink, Slot as AskSlot};

    /// A fresh identity for an actor in another process, named `name`
    /// (its type name) and `instance` (the name it is exported under).
    pub fn remote_target(name: &'static str, instance: std::sync::Arc<str>) -> crate::Target {
        crate::Target::new(crate::ActorId::next(), name, Some(instance))
    }

    /// A [`Terminated`](crate::Terminated) notification, for kaspar-remote's
    /// watchers of a lost peer.
    pub fn terminated(target: crate::Target, reason: crate::ExitReason) -> crate::Terminated {
        crate::Terminated { target, reason }
    }

    /// Posts `message`, sent to `target` in another process, to `sink`:
    /// kaspar-remote's retain buffer handing back what a lost peer never
    /// acknowledged.
    pub fn post_dead_letter(
        sink: &crate::DeadLetters,
        target: crate::Target,
        class: &'static str,
        reason: crate::DeadLetterReason,
        message: Box<dyn std::any::Any + Send>,
    ) {
        sink.post(crate::DeadLetter {
            target,
            class,
            reason,
            message: Some(message),
            panic: None,
        });
    }

    // kaspar-remote's inbound bridge, delivering a frame (feature `tracing`).
    #[cfg(feature = "tracing")]
    pub use crate::actor::trace::arrived_remote;
}
