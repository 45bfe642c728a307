//! Tracing (feature `tracing`): one `tracing` span per handled message,
//! opened by the runtime around the handler, and the causal link from each
//! message to the handler run that sent it.
//!
//! The pieces, bottom up:
//!
//! * `context`: the process-independent identity of a span
//!   (`TraceContext`: a trace id shared by a whole causal chain and a
//!   span id of its own), minted without a lock, and the thread's *current*
//!   context: the handler running on this thread, if any, or a frame that
//!   arrived from another process.
//! * `queue`: what a queued message carries with it (a cause, inside
//!   `Traced`), and how a consuming loop hands each cause to the handler
//!   run of its own message.
//! * `span`: the spans themselves and the guard that keeps one entered
//!   while its handler runs.
//!
//! With the feature off, only [`Queued`], [`map`] and [`consumer`] exist,
//! and they are the message type itself, a call of the function, and the
//! mailbox itself: every queue holds exactly what it held before, and the
//! delivery paths compile to what they were.
//!
//! # Causality
//!
//! A handler run *inline* (the `fast_send` family) runs on its caller's
//! stack: the caller's span is current, and becomes the new span's parent.
//! A *queued* message is handled later, on another thread, possibly after
//! its sender's span has closed: its span is a root in `tracing`'s tree,
//! with a `follows_from` link to the sender's span. A parent would be
//! wrong there: `tracing` reads a child as running inside its parent, and
//! a subscriber's registry keeps a parent open while any child is, so a
//! pipeline of queued hops would hold every upstream span open until the
//! last downstream handler finished. The envelope holds a handle to the
//! sender's span only until the link is recorded (when the handler
//! starts), so the link never names a span id a subscriber has reused.
//!
//! `tracing`'s ids are per process. The ids every span also records as
//! fields (`trace_id`, `span_id`, `parent_id`) are not, and kaspar-remote
//! carries them in a frame's header, so that a chain that crosses processes
//! can be put back together from the spans of every process.

#[cfg(feature = "tracing")]
mod context;
#[cfg(feature = "tracing")]
mod queue;
#[cfg(feature = "tracing")]
mod span;

#[cfg(feature = "tracing")]
pub(crate) use context::Via;
#[cfg(feature = "tracing")]
pub use context::{arrived_remote, TraceContext};
#[cfg(feature = "tracing")]
pub(crate) use queue::{arrive, consumer, Traced};
#[cfg(feature = "tracing")]
pub(crate) use span::{entering, inline, queued};

/// What a mailbox or a group's queue holds for one message: the actor's
/// (or group's) message enum, with its cause beside it when the
/// feature is on.
#[cfg(feature = "tracing")]
pub(crate) type Queued<M> = Traced<M>;

/// What a mailbox or a group's queue holds for one message: with the
/// feature off, the message enum itself.
#[cfg(not(feature = "tracing"))]
pub(crate) type Queued<M> = M;

/// `f` applied to the message a queue element holds (a group member's
/// message wrapped into its group's, or back): with the feature off, the
/// element is the message.
#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub(crate) fn map<M, N>(queued: M, f: impl FnOnce(M) -> N) -> N {
    f(queued)
}

/// `f` applied to the message a queue element holds (a group member's
/// message wrapped into its group's, or back), its cause kept.
#[cfg(feature = "tracing")]
#[inline(always)]
pub(crate) fn map<M, N>(queued: Traced<M>, f: impl FnOnce(M) -> N) -> Traced<N> {
    queued.map(f)
}

/// The end of a queue that the loop serving it pops: with the feature off,
/// the mailbox itself (so the loop's code is what it was).
#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub(crate) fn consumer<M>(mailbox: &crate::mailbox::Mailbox<M>) -> &crate::mailbox::Mailbox<M> {
    mailbox
}
