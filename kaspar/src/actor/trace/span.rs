//! The span of one handler run.
//!
//! Name `handle`, target `kaspar`, level `TRACE`; fields:
//!
//! | field | value |
//! |---|---|
//! | `actor` | the actor's type name (`#[actor(name = ...)]` or the type's) |
//! | `actor_id` | its [`ActorId`](crate::ActorId), as a number |
//! | `instance` | the name it was spawned under, if any |
//! | `class` | the message class: the handler's message type, as the actor's class table names it |
//! | `delivery` | `fast_send`, `group`, `queued`, `timer` or `remote` ([`Via`]) |
//! | `trace_id`, `span_id` | its [`TraceContext`] |
//! | `parent_id` | its cause's `span_id`; absent for the first span of a chain |
//!
//! While the handler runs, the span is entered (so the handler's own
//! events and spans nest in it) and its context is the thread's current
//! one (so what the handler sends names it as cause). A span that no
//! subscriber wants records nothing and mints nothing the rest of the
//! chain would point at: the handler runs under its cause's context, so
//! its effects name the nearest recorded ancestor as parent. Whether
//! anyone wants kaspar's spans at all is asked first ([`wanted`]): with no
//! subscriber, or one whose filter turns target `kaspar` away, a handler
//! run costs that one check, and no span is built.

use tracing::span::EnteredSpan;
use tracing::{span, Level, Span};

use super::context::{self, Current, TraceContext, Via};
use super::queue;
use crate::actor::cell::ActorCell;
use crate::actor::traits::{Actor, ActorConfig};
use crate::base::ids::ClassId;

/// Whether a subscriber may want kaspar's spans (target `kaspar`, level
/// `TRACE`) now. With none, or one that never does, the answer is cached
/// in a static and costs a load.
#[inline]
pub(crate) fn wanted() -> bool {
    tracing::enabled!(target: "kaspar", Level::TRACE)
}

/// Keeps a handler run's span entered and its context current; dropped
/// when the run ends, it restores what was current before.
pub(crate) struct Handling {
    /// Restored on drop.
    outer: Current,
    /// Exited (and closed, if no one else holds it) after `outer` is back.
    _span: Option<EnteredSpan>,
}

impl Handling {
    /// Enters `span`, made with `own` as its ids: its context is current
    /// from now on, or, if no subscriber took the span, `parent` stays so.
    fn spanned(
        span: Span,
        parent: Option<TraceContext>,
        own: TraceContext,
        outer: Current,
    ) -> Self {
        let context = if span.is_disabled() {
            parent
        } else {
            Some(own)
        };
        let mut handling = Handling::unspanned(context, outer);
        handling._span = Some(span.entered());
        handling
    }

    /// No span: the handler runs under `context` (its cause's).
    fn unspanned(context: Option<TraceContext>, outer: Current) -> Self {
        context::replace(Current {
            context,
            remote: false,
        });
        Handling { outer, _span: None }
    }
}

impl Drop for Handling {
    #[inline]
    fn drop(&mut self) {
        context::replace(self.outer);
    }
}

/// The name of `class` in `A`'s class table.
fn class_name<A: Actor>(class: ClassId) -> &'static str {
    A::CLASSES
        .get(usize::from(class.index()))
        .copied()
        .unwrap_or("?")
}

/// Before a synchronous delivery into `cell`: `None` if no subscriber
/// wants kaspar's spans, else whether this thread already holds the
/// cell's group lock (a member calling a member). Asked before the entry,
/// which may take that lock itself.
#[inline]
pub(crate) fn entering<A: Actor>(cell: &ActorCell<A>) -> Option<bool> {
    wanted().then(|| context::holds_group(cell))
}

/// Opens the span of a handler that the `fast_send` family runs inline,
/// on the caller's stack: the caller's current span is its parent.
/// `entering` is what [`entering`] said before the entry; `None` (no one
/// wants the span) opens nothing and touches nothing.
///
/// (With no span the thread's context stays as it was, so a handler run
/// inline by a kaspar-remote bridge sends as the bridge would, labelled
/// `remote`; such a label is only ever read by a span, and no span is
/// wanted.)
#[inline(always)]
pub(crate) fn inline<A: Actor>(
    cell: &ActorCell<A>,
    class: ClassId,
    entering: Option<bool>,
) -> Option<Handling> {
    entering.map(|group| inline_span(cell, class, group))
}

#[inline(never)]
fn inline_span<A: Actor>(cell: &ActorCell<A>, class: ClassId, group: bool) -> Handling {
    let outer = context::current();
    let via = if outer.remote {
        Via::Remote
    } else if group {
        Via::Group
    } else {
        Via::FastSend
    };
    let parent = outer.context;
    let own = TraceContext::child_of(parent);
    let span = span!(
        target: "kaspar",
        Level::TRACE,
        "handle",
        actor = <A as ActorConfig>::NAME,
        actor_id = cell.id().get(),
        instance = cell.instance.name_str(),
        class = class_name::<A>(class),
        delivery = via.as_str(),
        trace_id = own.trace_id,
        span_id = own.span_id,
        parent_id = parent.map(|p| p.span_id),
    );
    Handling::spanned(span, parent, own, outer)
}

/// Opens the span of a handler run for a queued message, whose cause the
/// serving loop has handed over (`queue::arrive`): a root span with a
/// `follows_from` link to the sender's span.
#[inline(never)]
pub(crate) fn queued<A: Actor>(cell: &ActorCell<A>, class: ClassId) -> Handling {
    let outer = context::current();
    let (via, parent, sender) = match queue::take_arrived() {
        Some(cause) => (cause.via, cause.context(), cause.span),
        None => (Via::Queued, None, Span::none()),
    };
    if !wanted() {
        return Handling::unspanned(parent, outer);
    }
    let own = TraceContext::child_of(parent);
    let span = span!(
        target: "kaspar",
        parent: None,
        Level::TRACE,
        "handle",
        actor = <A as ActorConfig>::NAME,
        actor_id = cell.id().get(),
        instance = cell.instance.name_str(),
        class = class_name::<A>(class),
        delivery = via.as_str(),
        trace_id = own.trace_id,
        span_id = own.span_id,
        parent_id = parent.map(|p| p.span_id),
    );
    // Recorded while `sender` still holds its span open, so the id it
    // names is that span's; the handle goes right after.
    span.follows_from(&sender);
    drop(sender);
    Handling::spanned(span, parent, own, outer)
}
