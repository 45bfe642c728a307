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
//!   [`Spawn::record_latency`]).
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
        mailboxes = "mailboxes.md";
        memory_pool = "memory-pool.md";
        performance = "performance.md";
        pipeline = "pipeline.md";
        prior_art = "prior-art.md";
        // remote.md needs kaspar-remote, which depends on this crate: its
        // samples are compiled by the root package (src/lib.rs) instead.
    }
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
pub use system::prepare::Prepared;
pub use system::spawn::Spawn;
pub use system::{ShutdownReport, System, SystemConfig};

/// Journal a live group's inputs and replay them in a [`Simulation`]
/// (feature `journal`).
#[cfg(feature = "journal")]
pub use group::journal;

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
    /// `guard::lock::ActorLock`, the lock every handler runs under.
    #[derive(Debug)]
    pub struct Lock(crate::guard::lock::ActorLock);

    impl Default for Lock {
        fn default() -> Self {
            Lock(crate::guard::lock::ActorLock::new(false))
        }
    }

    impl Lock {
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
}

/// What `#[actor]` expansions name. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::actor::ctx::Ctx;
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
    pub use crate::reply::{ask_pair, ask_slot, ReplySink, Slot as AskSlot};

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
}
