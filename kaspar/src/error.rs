//! Every way a delivery can fail. A message that was not handled always
//! comes back to the caller inside the error.

use std::fmt;

use crate::base::ids::ActorId;
use crate::guard::chain::CallChain;
use crate::guard::deadlock::WaitEdge;

/// The actor a failed delivery was aimed at.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Target {
    /// Its identity.
    pub id: ActorId,
    /// Its type name.
    pub name: &'static str,
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:?}", self.name, self.id)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// An asynchronous send that was not accepted. The message is handed back.
#[derive(PartialEq, Eq)]
pub enum SendError<M> {
    /// A bounded mailbox is full.
    Full(M),
    /// The actor has stopped, or the system is shutting down.
    Closed(M),
    /// The mailbox is full and configured to wait for room
    /// ([`WhenFull::Wait`](crate::WhenFull::Wait)), but the thread that
    /// would make room is itself waiting, directly or through others, for
    /// something this thread holds: waiting would never end.
    Deadlock {
        /// The message, not sent.
        msg: M,
        /// The cycle: this thread's wait first, then each thread it waits
        /// for in turn.
        cycle: Vec<WaitEdge>,
    },
}

impl<M> SendError<M> {
    /// The message that was not sent.
    pub fn into_inner(self) -> M {
        match self {
            SendError::Full(m) | SendError::Closed(m) | SendError::Deadlock { msg: m, .. } => m,
        }
    }

    /// Whether the mailbox was full (the send may succeed later).
    pub fn is_full(&self) -> bool {
        matches!(self, SendError::Full(_))
    }

    /// Whether the receiver is gone for good.
    pub fn is_closed(&self) -> bool {
        matches!(self, SendError::Closed(_))
    }

    /// Whether waiting for room would have deadlocked.
    pub fn is_deadlock(&self) -> bool {
        matches!(self, SendError::Deadlock { .. })
    }

    /// The same error with the message mapped, e.g. out of an envelope.
    pub fn map<N>(self, f: impl FnOnce(M) -> N) -> SendError<N> {
        match self {
            SendError::Full(m) => SendError::Full(f(m)),
            SendError::Closed(m) => SendError::Closed(f(m)),
            SendError::Deadlock { msg, cycle } => SendError::Deadlock { msg: f(msg), cycle },
        }
    }
}

impl<M> fmt::Debug for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::Full(_) => f.write_str("Full(..)"),
            SendError::Closed(_) => f.write_str("Closed(..)"),
            SendError::Deadlock { cycle, .. } => write!(f, "Deadlock {{ cycle: {cycle:?} }}"),
        }
    }
}

impl<M> fmt::Display for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::Full(_) => f.write_str("mailbox full; message handed back"),
            SendError::Closed(_) => f.write_str("actor stopped; message handed back"),
            SendError::Deadlock { cycle, .. } => write!(
                f,
                "waiting for room would deadlock {} threads; message handed back",
                cycle.len()
            ),
        }
    }
}

impl<M> std::error::Error for SendError<M> {}

/// A synchronous delivery that did not run the handler to completion.
///
/// Except for [`Panicked`](FastSendError::Panicked) the handler never ran
/// and the message is handed back in `msg`. Use
/// [`without_message`](FastSendError::without_message) to get a
/// `FastSendError<()>` that is `Send + Sync + 'static` for `?` into boxed
/// errors.
pub enum FastSendError<M = ()> {
    /// The target's lock is held by another thread (`fast_send_x`).
    Busy {
        /// The actor that was busy.
        target: Target,
        /// The message, not delivered.
        msg: M,
    },
    /// Entering the target would re-enter a handler already running on this
    /// thread. Detected before any lock was touched.
    Cycle {
        /// The actor that is already on the chain.
        target: Target,
        /// This thread's chain at the call, outermost first.
        chain: CallChain,
        /// The message, not delivered.
        msg: M,
    },
    /// Waiting for the target's lock would close a cycle of threads each
    /// waiting for a lock another holds.
    Deadlock {
        /// The actor whose lock this thread would have waited for.
        target: Target,
        /// The cycle: this thread's edge first, then each holder in turn.
        cycle: Vec<WaitEdge>,
        /// The message, not delivered.
        msg: M,
    },
    /// The handler panicked. The panic was caught; the actor's lock was
    /// released and the actor goes on serving other messages.
    Panicked {
        /// The actor whose handler panicked.
        target: Target,
    },
    /// The actor has stopped.
    Closed {
        /// The stopped actor.
        target: Target,
        /// The message, not delivered.
        msg: M,
    },
}

impl<M> FastSendError<M> {
    /// The actor the delivery was aimed at.
    pub fn target(&self) -> Target {
        match self {
            FastSendError::Busy { target, .. }
            | FastSendError::Cycle { target, .. }
            | FastSendError::Deadlock { target, .. }
            | FastSendError::Panicked { target }
            | FastSendError::Closed { target, .. } => *target,
        }
    }

    /// The undelivered message, unless the handler ran (and panicked).
    pub fn into_message(self) -> Option<M> {
        match self {
            FastSendError::Busy { msg, .. }
            | FastSendError::Cycle { msg, .. }
            | FastSendError::Deadlock { msg, .. }
            | FastSendError::Closed { msg, .. } => Some(msg),
            FastSendError::Panicked { .. } => None,
        }
    }

    /// The same error with the message dropped.
    pub fn without_message(self) -> FastSendError<()> {
        self.map(|_| ())
    }

    /// The same error with the message mapped.
    pub fn map<N>(self, f: impl FnOnce(M) -> N) -> FastSendError<N> {
        match self {
            FastSendError::Busy { target, msg } => FastSendError::Busy {
                target,
                msg: f(msg),
            },
            FastSendError::Cycle { target, chain, msg } => FastSendError::Cycle {
                target,
                chain,
                msg: f(msg),
            },
            FastSendError::Deadlock { target, cycle, msg } => FastSendError::Deadlock {
                target,
                cycle,
                msg: f(msg),
            },
            FastSendError::Panicked { target } => FastSendError::Panicked { target },
            FastSendError::Closed { target, msg } => FastSendError::Closed {
                target,
                msg: f(msg),
            },
        }
    }

    /// Whether this is [`Busy`](FastSendError::Busy).
    pub fn is_busy(&self) -> bool {
        matches!(self, FastSendError::Busy { .. })
    }
    /// Whether this is [`Cycle`](FastSendError::Cycle).
    pub fn is_cycle(&self) -> bool {
        matches!(self, FastSendError::Cycle { .. })
    }
    /// Whether this is [`Deadlock`](FastSendError::Deadlock).
    pub fn is_deadlock(&self) -> bool {
        matches!(self, FastSendError::Deadlock { .. })
    }
    /// Whether this is [`Panicked`](FastSendError::Panicked).
    pub fn is_panicked(&self) -> bool {
        matches!(self, FastSendError::Panicked { .. })
    }
    /// Whether this is [`Closed`](FastSendError::Closed).
    pub fn is_closed(&self) -> bool {
        matches!(self, FastSendError::Closed { .. })
    }
}

impl<M> fmt::Debug for FastSendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FastSendError::Busy { target, .. } => write!(f, "Busy {{ target: {target:?} }}"),
            FastSendError::Cycle { target, chain, .. } => {
                write!(f, "Cycle {{ target: {target:?}, chain: {chain} }}")
            }
            FastSendError::Deadlock { target, cycle, .. } => {
                write!(f, "Deadlock {{ target: {target:?}, cycle: {cycle:?} }}")
            }
            FastSendError::Panicked { target } => write!(f, "Panicked {{ target: {target:?} }}"),
            FastSendError::Closed { target, .. } => write!(f, "Closed {{ target: {target:?} }}"),
        }
    }
}

impl<M> fmt::Display for FastSendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FastSendError::Busy { target, .. } => {
                write!(f, "{target} is busy on another thread; message handed back")
            }
            FastSendError::Cycle { target, chain, .. } => write!(
                f,
                "synchronous cycle: {target} is already running on this thread ({chain}); message handed back"
            ),
            FastSendError::Deadlock { target, cycle, .. } => write!(
                f,
                "waiting for {target} would deadlock {} threads; message handed back",
                cycle.len()
            ),
            FastSendError::Panicked { target } => write!(f, "handler of {target} panicked"),
            FastSendError::Closed { target, .. } => {
                write!(f, "{target} has stopped; message handed back")
            }
        }
    }
}

impl<M> std::error::Error for FastSendError<M> {}

/// Where `fast_send_void` delivered its message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Delivered {
    /// The handler ran on the calling thread.
    Inline,
    /// The lock was busy, or entering would have been a cycle: the message
    /// went to the mailbox instead.
    Queued,
}

/// Why an [`Ask`](crate::Ask) produced no reply.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum AskError {
    /// `wait_timeout` ran out; the handle can be waited on again.
    Timeout,
    /// The handler panicked while handling the message.
    Panicked,
    /// The message was dropped unhandled (the actor stopped before it).
    Dropped,
    /// Waiting would never end: the thread that must handle the message is
    /// itself waiting, directly or through others, for something this
    /// thread holds (an actor asking itself from its own handler is the
    /// shortest such cycle). Nothing was waited for; the handle can still
    /// be polled or dropped.
    Deadlock(
        /// The cycle: this thread's wait first, then each thread it waits
        /// for in turn.
        Vec<WaitEdge>,
    ),
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::Timeout => f.write_str("no reply yet: timed out"),
            AskError::Panicked => f.write_str("the handler panicked; no reply"),
            AskError::Dropped => f.write_str("the message was dropped unhandled; no reply"),
            AskError::Deadlock(cycle) => write!(
                f,
                "waiting for the reply would deadlock {} threads",
                cycle.len()
            ),
        }
    }
}

impl std::error::Error for AskError {}
