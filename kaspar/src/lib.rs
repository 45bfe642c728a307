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
//! * [`Addr`] and the [`delivery` table](Addr::fast_send) for the six ways
//!   in; [`CyclePolicy`] and [`FastSendError`] for what a synchronous
//!   delivery refuses, and why.
//! * [`group`] and [`GroupSpec`]: several actors on one thread behind one
//!   queue; a `fast_send` between members takes no second lock.
//! * [`Simulation`] (and, with the `journal` feature, `journal`): the same
//!   group on virtual time, replayed deterministically.
//! * [`mailbox`]: the four queues and how to choose; [`pool`]: `Pooled<T>`.
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

mod actor;
mod addr;
mod cell;
mod chain;
mod clock;
mod ctx;
mod deadletter;
mod deadlock;
mod delivery;
mod error;
mod group;
/// The guide's chapters, compiled as doctests (`cargo test --doc`).
#[cfg(doctest)]
mod guide;
mod inbox;
#[cfg(feature = "journal")]
pub mod journal;
mod lock;
pub mod mailbox;
mod placement;
pub mod pool;
mod reply;
mod runloop;
mod sim;
mod spawn;
mod stats;
mod supervision;
mod sync;
mod system;
mod timer;

pub use actor::{
    AccessMode, AccessRef, Actor, ActorConfig, ActorId, ClassId, Exclusive, Handler, Shared,
};
pub use addr::Addr;
pub use chain::{CallChain, CyclePolicy, Frame};
pub use clock::{Clock, Time, VirtualClock};
pub use ctx::Ctx;
pub use deadletter::{DeadLetter, DeadLetterCounts, DeadLetterReason, DeadLetters};
pub use deadlock::WaitEdge;
pub use delivery::Call;
pub use error::{AskError, Delivered, FastSendError, SendError, Target};
pub use group::GroupSpec;
pub use kaspar_macros::{actor, group, handler};
pub use mailbox::{IdleWait, MailboxKind, WhenFull};
pub use placement::{Placement, PlacementOutcome};
pub use reply::{Ask, ReplyTo};
pub use sim::Simulation;
pub use spawn::{GroupSpawn, Spawn};
pub use stats::ActorStats;
pub use supervision::{ExitReason, Restarted, Supervision, Terminated};
pub use system::{ShutdownReport, System, SystemConfig};
pub use timer::TimerId;

/// Everything a typical actor module needs.
pub mod prelude {
    pub use crate::{
        actor, group, handler, Addr, Ctx, CyclePolicy, Delivered, FastSendError, IdleWait,
        MailboxKind, SendError, System,
    };
}

/// What `#[actor]` expansions name. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::actor::{
        exclusive_ref, shared_ref, AccessMode, AccessRef, Actor, ActorConfig, ClassId, Exclusive,
        ExclusiveMode, Handler, Shared,
    };
    pub use crate::chain::CyclePolicy;
    pub use crate::ctx::Ctx;
    pub use crate::group::{GroupBuilder, GroupHold, GroupSpec};
    pub use crate::mailbox::MailboxKind;
    pub use crate::reply::ReplyTo;
    pub use core::option::Option;
    pub use core::unreachable;
}
