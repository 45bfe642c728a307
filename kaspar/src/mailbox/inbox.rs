//! Where an actor's queued messages go: its own mailbox, or its group's
//! shared queue.
//!
//! A standalone actor owns a [`Mailbox`] of its own message enum. A group
//! member has none: its messages are wrapped into the group's message enum
//! and pushed on the group's one queue, which is what gives every message
//! entering a group one total order. The member's sink wraps the message and
//! pushes it: one indirect call through the sink's vtable, then the group
//! queue's own `push`; nothing is allocated.
//!
//! The inbox is generic over how messages are stored ([`Stores`]), not
//! over the actor, so the mailbox layer knows nothing about actors. A
//! standalone actor's own mailbox stores its messages packed (without the
//! enum's tag word, `actor::packed`); a group's sink takes them as they
//! are, to wrap them into the group's enum.

use std::sync::Arc;

use crate::base::sync::{AtomicBool, Ordering};
use crate::error::SendError;
use crate::mailbox::{Mailbox, Watch};

/// A group's queue, as one member sees it.
pub(crate) trait GroupSink<M>: Send + Sync {
    /// Wraps and pushes; hands the member's message back on failure.
    fn push(&self, msg: M, watch: Watch<'_>) -> Result<usize, SendError<M>>;
    /// Pushes a message the timer `timer` fired (its tag, from
    /// [`next_timer`](Self::next_timer)), so the group can record it (a
    /// journaled group writes the firing into its journal, in queue order).
    /// Never waits for room: a full queue hands the message back as
    /// [`SendError::Full`], for the timer queue to retry.
    fn push_timer(&self, msg: M, timer: u64) -> Result<usize, SendError<M>>;
    /// The tag of a timer a member arms now: how many timers the group's
    /// members armed before it. Members arm timers in their handlers,
    /// which run one at a time in the group's queue order, so a replay of
    /// the same inputs arms the same timers under the same tags.
    fn next_timer(&self) -> u64;
    /// The sink itself, for the group layer to recognise its own.
    fn as_any(&self) -> &dyn std::any::Any;
    /// Whether the group's activations run as tasks of an async runtime
    /// ([`Schedule::hosted`](crate::mailbox::Schedule::hosted)).
    fn hosted(&self) -> bool;
    /// [`Schedule::before_first_wait`](crate::mailbox::Schedule::before_first_wait)
    /// of the group's queue.
    fn before_first_wait(&self, begun: &dyn Fn() -> bool) -> bool;
    /// [`Schedule::help`](crate::mailbox::Schedule::help) of the group's
    /// queue: runs the group's scheduled activation here, where its hosted
    /// pool lets it and it is the next to run.
    fn help(&self, cx: &mut std::task::Context<'_>) -> crate::mailbox::Helped;
    /// [`Schedule::help_blocked`](crate::mailbox::Schedule::help_blocked)
    /// of the group's queue.
    fn help_blocked(&self, done: &dyn Fn() -> bool, deadline: Option<std::time::Instant>) -> bool;
    /// Messages queued in the group's queue now, every member's (a
    /// snapshot, for the metrics collector).
    #[cfg(any(feature = "metrics", feature = "console"))]
    fn len(&self) -> usize;
    /// Whether a push can find the group's queue full and hand the
    /// message back (for the simulator's fault).
    #[cfg(feature = "sim")]
    fn rejects_when_full(&self) -> bool;
}

/// What an inbox is pushed, and what its own mailbox stores of it.
pub(crate) trait Stores {
    /// A pushed message.
    type Msg;
    /// A message as the inbox's own mailbox holds it.
    type Stored;
    /// `msg` as the own mailbox stores it.
    fn store(msg: Self::Msg) -> Self::Stored;
    /// The message [`store`](Self::store) made `stored` of.
    fn load(stored: Self::Stored) -> Self::Msg;
}

// The mailbox stays inline: boxing it would add a pointer chase to every
// send to a standalone actor, and a cell is allocated once per actor.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Inbox<K: Stores> {
    Own(Mailbox<K::Stored>),
    Group {
        sink: Arc<dyn GroupSink<K::Msg>>,
        /// This member stopped accepting (`Ctx::stop`, or the group closed).
        closed: AtomicBool,
    },
}

impl<K: Stores> Inbox<K> {
    #[inline(always)]
    pub(crate) fn push(&self, msg: K::Msg, watch: Watch<'_>) -> Result<usize, SendError<K::Msg>> {
        match self {
            Inbox::Own(mailbox) => mailbox
                .push_watched(K::store(msg), watch)
                .map_err(|e| e.map(K::load)),
            Inbox::Group { sink, closed } => {
                if closed.load(Ordering::Acquire) {
                    Err(SendError::closed(msg))
                } else {
                    sink.push(msg, watch)
                }
            }
        }
    }

    /// Pushes a message one of the actor's timers fired (see
    /// [`GroupSink::push_timer`]); a standalone actor's own mailbox takes it
    /// like any other. Never waits for room (see [`push_now`]): the timer
    /// thread fires every actor's timers, and one full mailbox must not
    /// hold the others' back.
    /// `timer` is the timer's tag (see [`timer_tag`](Self::timer_tag)), 0
    /// for a standalone actor's.
    pub(crate) fn push_timer(&self, msg: K::Msg, timer: u64) -> Result<usize, SendError<K::Msg>> {
        match self {
            Inbox::Own(mailbox) => push_now(mailbox, K::store(msg)).map_err(|e| e.map(K::load)),
            Inbox::Group { sink, closed } => {
                if closed.load(Ordering::Acquire) {
                    Err(SendError::closed(msg))
                } else {
                    sink.push_timer(msg, timer)
                }
            }
        }
    }

    /// The tag of a timer the actor arms now, for a group member (see
    /// [`GroupSink::next_timer`]); `None` for a standalone actor.
    pub(crate) fn timer_tag(&self) -> Option<u64> {
        self.group_sink().map(|sink| sink.next_timer())
    }

    /// The group sink, for a group member; `None` for a standalone actor.
    pub(crate) fn group_sink(&self) -> Option<&dyn GroupSink<K::Msg>> {
        match self {
            Inbox::Own(_) => None,
            Inbox::Group { sink, .. } => Some(&**sink),
        }
    }

    /// Stops accepting. A standalone actor's run loop then drains and
    /// stops; a group member's queued messages are still handled, and its
    /// `stopped` hook runs when its group stops.
    pub(crate) fn close(&self) {
        match self {
            Inbox::Own(mailbox) => mailbox.close(),
            Inbox::Group { closed, .. } => closed.store(true, Ordering::Release),
        }
    }

    /// Messages queued now (a snapshot, for the metrics collector): in the
    /// actor's own mailbox, or in its group's queue, every member's.
    #[cfg(any(feature = "metrics", feature = "console"))]
    pub(crate) fn len(&self) -> usize {
        match self {
            Inbox::Own(mailbox) => mailbox.len(),
            Inbox::Group { sink, .. } => sink.len(),
        }
    }

    /// Whether a push can find it full and hand the message back (a
    /// bounded mailbox, own or the group's, that rejects), for the
    /// simulator's fault.
    #[cfg(feature = "sim")]
    pub(crate) fn rejects_when_full(&self) -> bool {
        match self {
            Inbox::Own(mailbox) => mailbox.rejects_when_full(),
            Inbox::Group { sink, .. } => sink.rejects_when_full(),
        }
    }

    /// The actor's own mailbox; `None` for a group member.
    pub(crate) fn own(&self) -> Option<&Mailbox<K::Stored>> {
        match self {
            Inbox::Own(mailbox) => Some(mailbox),
            Inbox::Group { .. } => None,
        }
    }

    /// Whether the messages here are handled by activations that run as
    /// tasks of an async runtime ([`Schedule::hosted`](crate::mailbox::Schedule::hosted)):
    /// the actor's, or its group's.
    pub(crate) fn hosted(&self) -> bool {
        match self {
            Inbox::Own(mailbox) => mailbox.hosted(),
            Inbox::Group { sink, .. } => sink.hosted(),
        }
    }

    /// [`Schedule::help`](crate::mailbox::Schedule::help) of the actor's
    /// own pooled consumer (`awaited`: the actor's cell), or of its
    /// group's.
    pub(crate) fn help(
        &self,
        cx: &mut std::task::Context<'_>,
        awaited: *const (),
    ) -> crate::mailbox::Helped {
        match self {
            Inbox::Own(mailbox) => mailbox.help(cx, awaited),
            Inbox::Group { sink, .. } => sink.help(cx),
        }
    }

    /// Whether the messages here are handled by a thread of the actor's
    /// own: its own mailbox, with no pooled consumer.
    pub(crate) fn dedicated(&self) -> bool {
        matches!(self, Inbox::Own(mailbox) if mailbox.task().is_none())
    }

    /// Whether a synchronous caller may wait for the lock the actor's (or
    /// its group's) first activation has yet to take
    /// ([`Schedule::before_first_wait`](crate::mailbox::Schedule::before_first_wait)).
    pub(crate) fn before_first_wait(&self, begun: &dyn Fn() -> bool) -> bool {
        match self {
            Inbox::Own(mailbox) => mailbox.before_first_wait(begun),
            Inbox::Group { sink, .. } => sink.before_first_wait(begun),
        }
    }

    /// [`Schedule::help_blocked`](crate::mailbox::Schedule::help_blocked)
    /// of the actor's own pooled consumer, or of its group's.
    pub(crate) fn help_blocked(
        &self,
        done: &dyn Fn() -> bool,
        deadline: Option<std::time::Instant>,
    ) -> bool {
        match self {
            Inbox::Own(mailbox) => mailbox.help_blocked(done, deadline),
            Inbox::Group { sink, .. } => sink.help_blocked(done, deadline),
        }
    }
}

/// Pushes `msg` without ever waiting for room: a full bounded (`LockFree`)
/// mailbox hands it back as [`SendError::Full`] even when its kind is
/// [`WhenFull::Wait`](crate::WhenFull::Wait). The other kinds are never
/// full, so their ordinary push is already this.
pub(crate) fn push_now<M>(mailbox: &Mailbox<M>, msg: M) -> Result<usize, SendError<M>> {
    match mailbox {
        Mailbox::LockFree(q) => q.try_push(msg),
        other => other.push(msg),
    }
}
