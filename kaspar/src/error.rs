//! Every way a delivery can fail. A message that was not handled always
//! comes back to the caller inside the error.

use std::fmt;

use crate::guard::chain::CallChain;
use crate::guard::deadlock::WaitEdge;

// The actor a failed delivery was aimed at: defined with the other
// identities (the deadlock detector names actors with it too).
pub use crate::base::ids::Target;

/// An asynchronous send that was not accepted. The message is handed back.
///
/// Each variant names the actor the message was for, as
/// [`FastSendError`] does: `target` is `None` only for a bare queue of
/// [`mailbox`](crate::mailbox) used on its own, which belongs to no actor.
///
/// ```
/// use kaspar::prelude::*;
///
/// #[actor]
/// pub struct Book;
/// #[actor]
/// impl Book {
///     #[handler(u32)]
///     fn level(&mut self, _l: u32, _c: &mut Ctx<Self>) {}
/// }
///
/// let system = System::new();
/// let book = system.spawn(Book).name("book-eu").start();
/// book.stop();
/// match book.send(7u32) {
///     Err(SendError::Closed { target, msg }) => {
///         assert_eq!(msg, 7); // handed back
///         assert_eq!(target.unwrap().instance.as_deref(), Some("book-eu"));
///     }
///     other => panic!("{other:?}"),
/// }
/// let err = book.send(8u32).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     format!("book-eu(Book{:?}) has stopped; message handed back", book.id())
/// );
/// system.shutdown();
/// ```
#[derive(PartialEq, Eq)]
pub enum SendError<M> {
    /// A bounded mailbox is full.
    Full {
        /// The actor whose mailbox is full.
        target: Option<Target>,
        /// The message, not sent.
        msg: M,
    },
    /// The actor has stopped, or the system is shutting down.
    Closed {
        /// The stopped actor.
        target: Option<Target>,
        /// The message, not sent.
        msg: M,
    },
    /// The mailbox is full and configured to wait for room
    /// ([`WhenFull::Wait`](crate::WhenFull::Wait)), but the thread that
    /// would make room is itself waiting, directly or through others, for
    /// something this thread holds: waiting would never end.
    Deadlock {
        /// The actor whose mailbox has no room.
        target: Option<Target>,
        /// The message, not sent.
        msg: M,
        /// The cycle: this thread's wait first, then each thread it waits
        /// for in turn.
        cycle: Vec<WaitEdge>,
    },
}

impl<M> SendError<M> {
    /// A full queue's refusal, for a queue of no actor (yet).
    pub(crate) fn full(msg: M) -> Self {
        SendError::Full { target: None, msg }
    }

    /// A closed queue's refusal, for a queue of no actor (yet).
    pub(crate) fn closed(msg: M) -> Self {
        SendError::Closed { target: None, msg }
    }

    /// The message that was not sent.
    pub fn into_inner(self) -> M {
        match self {
            SendError::Full { msg, .. }
            | SendError::Closed { msg, .. }
            | SendError::Deadlock { msg, .. } => msg,
        }
    }

    /// The actor the message was for (`None` for a bare queue).
    pub fn target(&self) -> Option<&Target> {
        match self {
            SendError::Full { target, .. }
            | SendError::Closed { target, .. }
            | SendError::Deadlock { target, .. } => target.as_ref(),
        }
    }

    /// The same error, naming `to` as the actor the message was for. Made
    /// on the error path only, by the actor's queue (whose mailbox layer
    /// knows no actor).
    #[cold]
    pub(crate) fn naming(self, to: Target) -> Self {
        match self {
            SendError::Full { msg, .. } => SendError::Full {
                target: Some(to),
                msg,
            },
            SendError::Closed { msg, .. } => SendError::Closed {
                target: Some(to),
                msg,
            },
            SendError::Deadlock { msg, cycle, .. } => SendError::Deadlock {
                target: Some(to),
                msg,
                cycle,
            },
        }
    }

    /// Whether the mailbox was full (the send may succeed later).
    pub fn is_full(&self) -> bool {
        matches!(self, SendError::Full { .. })
    }

    /// Whether the receiver is gone for good.
    pub fn is_closed(&self) -> bool {
        matches!(self, SendError::Closed { .. })
    }

    /// Whether waiting for room would have deadlocked.
    pub fn is_deadlock(&self) -> bool {
        matches!(self, SendError::Deadlock { .. })
    }

    /// The same error with the message mapped, e.g. out of an envelope.
    pub fn map<N>(self, f: impl FnOnce(M) -> N) -> SendError<N> {
        match self {
            SendError::Full { target, msg } => SendError::Full {
                target,
                msg: f(msg),
            },
            SendError::Closed { target, msg } => SendError::Closed {
                target,
                msg: f(msg),
            },
            SendError::Deadlock { target, msg, cycle } => SendError::Deadlock {
                target,
                msg: f(msg),
                cycle,
            },
        }
    }
}

impl<M> fmt::Debug for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::Full { target, .. } => write!(f, "Full {{ target: {target:?} }}"),
            SendError::Closed { target, .. } => write!(f, "Closed {{ target: {target:?} }}"),
            SendError::Deadlock { target, cycle, .. } => {
                write!(f, "Deadlock {{ target: {target:?}, cycle: {cycle:?} }}")
            }
        }
    }
}

impl<M> fmt::Display for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::Full {
                target: Some(t), ..
            } => write!(f, "the mailbox of {t} is full; message handed back"),
            SendError::Full { target: None, .. } => {
                f.write_str("mailbox full; message handed back")
            }
            SendError::Closed {
                target: Some(t), ..
            } => write!(f, "{t} has stopped; message handed back"),
            SendError::Closed { target: None, .. } => {
                f.write_str("actor stopped; message handed back")
            }
            SendError::Deadlock {
                target: Some(t),
                cycle,
                ..
            } => write!(
                f,
                "waiting for room in the mailbox of {t} would deadlock {} threads; message handed back",
                cycle.len()
            ),
            SendError::Deadlock {
                target: None,
                cycle,
                ..
            } => write!(
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
    /// The actor was prepared ([`System::prepare`](crate::System::prepare))
    /// and has no state yet. Messages sent to it queue up and are handled
    /// once it starts; a synchronous delivery cannot run.
    NotStarted {
        /// The actor not started yet.
        target: Target,
        /// The message, not delivered.
        msg: M,
    },
    /// The actor's state is bound to its own thread
    /// ([`System::spawn_with`](crate::System::spawn_with)) and this is
    /// another thread: only `send`, `ask` and `request` reach it from here
    /// (`fast_send_void` queues instead).
    ThreadBound {
        /// The thread-bound actor.
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
            | FastSendError::Closed { target, .. }
            | FastSendError::NotStarted { target, .. }
            | FastSendError::ThreadBound { target, .. } => target.clone(),
        }
    }

    /// The undelivered message, unless the handler ran (and panicked).
    pub fn into_message(self) -> Option<M> {
        match self {
            FastSendError::Busy { msg, .. }
            | FastSendError::Cycle { msg, .. }
            | FastSendError::Deadlock { msg, .. }
            | FastSendError::Closed { msg, .. }
            | FastSendError::NotStarted { msg, .. }
            | FastSendError::ThreadBound { msg, .. } => Some(msg),
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
            FastSendError::NotStarted { target, msg } => FastSendError::NotStarted {
                target,
                msg: f(msg),
            },
            FastSendError::ThreadBound { target, msg } => FastSendError::ThreadBound {
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
    /// Whether this is [`NotStarted`](FastSendError::NotStarted).
    pub fn is_not_started(&self) -> bool {
        matches!(self, FastSendError::NotStarted { .. })
    }
    /// Whether this is [`ThreadBound`](FastSendError::ThreadBound).
    pub fn is_thread_bound(&self) -> bool {
        matches!(self, FastSendError::ThreadBound { .. })
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
            FastSendError::NotStarted { target, .. } => {
                write!(f, "NotStarted {{ target: {target:?} }}")
            }
            FastSendError::ThreadBound { target, .. } => {
                write!(f, "ThreadBound {{ target: {target:?} }}")
            }
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
            FastSendError::NotStarted { target, .. } => {
                write!(f, "{target} is prepared but not started; message handed back")
            }
            FastSendError::ThreadBound { target, .. } => write!(
                f,
                "{target} is bound to its own thread; send or ask it from here; message handed back"
            ),
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
///
/// `Timeout`, `Panicked` and `Dropped` name the actor that was asked, as
/// [`Addr::target`](crate::Addr::target) does, when the handle knows it:
/// always for an [`Addr::ask`](crate::Addr::ask) (or a
/// [`Recipient`](crate::Recipient)'s); `None` for a handle that no local
/// actor answers (kaspar-remote's asks to another process). A
/// `Deadlock`'s cycle names it as its first edge's
/// [`waits_for`](WaitEdge::waits_for).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum AskError {
    /// `wait_timeout` ran out; the handle can be waited on again.
    Timeout(
        /// The actor asked.
        Option<Target>,
    ),
    /// The handler panicked while handling the message.
    Panicked(
        /// The actor asked.
        Option<Target>,
    ),
    /// The message was dropped unhandled (the actor stopped before it).
    Dropped(
        /// The actor asked.
        Option<Target>,
    ),
    /// Waiting would never end: the thread that must handle the message is
    /// itself waiting, directly or through others, for something this
    /// thread holds (an actor asking itself from its own handler is the
    /// shortest such cycle). Refused before the wait began, or found by a
    /// later look at the wait-for graph while waiting (a cycle closed by a
    /// run loop, which cannot back out); either way the handle can still be
    /// polled or dropped, and the message stays queued.
    Deadlock(
        /// The cycle: this thread's wait first, then each thread it waits
        /// for in turn.
        Vec<WaitEdge>,
    ),
    /// The actor is in another process (kaspar-remote), and the message or
    /// its reply was lost: the link to that process was lost, or no reply
    /// came within the remote node's reply timeout. The message may or may
    /// not have been handled.
    PeerLost,
}

impl AskError {
    /// The actor asked, where the error names it (`Timeout`, `Panicked`,
    /// `Dropped` from a handle that knows it; a `Deadlock` names it as its
    /// cycle's first edge's `waits_for`).
    pub fn target(&self) -> Option<&Target> {
        match self {
            AskError::Timeout(t) | AskError::Panicked(t) | AskError::Dropped(t) => t.as_ref(),
            AskError::Deadlock(cycle) => cycle.first().map(|edge| &edge.waits_for),
            AskError::PeerLost => None,
        }
    }

    /// The same error naming `asked`, unless it names an actor already.
    /// Made by the handle on the error path only.
    #[cold]
    pub(crate) fn naming(self, asked: impl FnOnce() -> Target) -> Self {
        match self {
            AskError::Timeout(None) => AskError::Timeout(Some(asked())),
            AskError::Panicked(None) => AskError::Panicked(Some(asked())),
            AskError::Dropped(None) => AskError::Dropped(Some(asked())),
            other => other,
        }
    }
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::Timeout(Some(t)) => write!(f, "no reply from {t} yet: timed out"),
            AskError::Timeout(None) => f.write_str("no reply yet: timed out"),
            AskError::Panicked(Some(t)) => write!(f, "the handler of {t} panicked; no reply"),
            AskError::Panicked(None) => f.write_str("the handler panicked; no reply"),
            AskError::Dropped(Some(t)) => {
                write!(f, "the message to {t} was dropped unhandled; no reply")
            }
            AskError::Dropped(None) => f.write_str("the message was dropped unhandled; no reply"),
            AskError::Deadlock(cycle) => match cycle.first() {
                Some(edge) => write!(
                    f,
                    "waiting for the reply of {} would deadlock {} threads",
                    edge.waits_for,
                    cycle.len()
                ),
                None => write!(
                    f,
                    "waiting for the reply would deadlock {} threads",
                    cycle.len()
                ),
            },
            AskError::PeerLost => f.write_str(
                "the remote peer was lost; the message may or may not have been handled",
            ),
        }
    }
}

impl std::error::Error for AskError {}

/// Any kaspar error, with the message dropped: what `?` turns every
/// per-message error into, so code that sends several message types can
/// return one error type (and `?` on into `anyhow`-style boxes, since it is
/// `Send + Sync + 'static`).
///
/// The per-message errors ([`SendError<M>`], [`FastSendError<M>`]) stay
/// the operations' return types, for callers who want the undelivered
/// message back; convert with `?` or `.into()` when you do not.
///
/// ```
/// use kaspar::prelude::*;
///
/// pub struct Ping;
/// pub struct Pong;
/// #[actor]
/// pub struct Both;
/// #[actor]
/// impl Both {
///     #[handler(Ping)]
///     fn ping(&mut self, _m: Ping, _c: &mut Ctx<Self>) -> u32 { 1 }
///     #[handler(Pong)]
///     fn pong(&mut self, _m: Pong, _c: &mut Ctx<Self>) -> Result<u32, std::num::ParseIntError> {
///         "2".parse()
///     }
/// }
///
/// fn both(addr: &Addr<Both>) -> Result<u32, kaspar::Error> {
///     let a = addr.fast_send(Ping)?;                 // FastSendError<Ping> -> Error
///     addr.send(Ping)?;                              // SendError<Ping> -> Error
///     let b = addr.fast_send(Pong).flatten_reply()?; // the handler's own Result, too
///     Ok(a + b)
/// }
///
/// let system = System::new();
/// assert_eq!(both(&system.spawn(Both).start()).unwrap(), 3);
/// system.shutdown();
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A bounded mailbox was full ([`SendError::Full`]); the target when
    /// the error knew it.
    Full(Option<Target>),
    /// The actor has stopped ([`SendError::Closed`],
    /// [`FastSendError::Closed`]); the target when the error knew it.
    Closed(Option<Target>),
    /// The actor was busy on another thread ([`FastSendError::Busy`]).
    Busy(Target),
    /// The actor is prepared but not started ([`FastSendError::NotStarted`]).
    NotStarted(Target),
    /// The actor is bound to another thread ([`FastSendError::ThreadBound`]).
    ThreadBound(Target),
    /// A synchronous cycle on this thread ([`FastSendError::Cycle`]).
    Cycle {
        /// The actor already on the chain.
        target: Target,
        /// The chain at the call.
        chain: CallChain,
    },
    /// Waiting would have deadlocked ([`FastSendError::Deadlock`],
    /// [`SendError::Deadlock`], [`AskError::Deadlock`]).
    Deadlock(Vec<WaitEdge>),
    /// The handler panicked ([`FastSendError::Panicked`],
    /// [`AskError::Panicked`]); the target when the error knew it.
    Panicked(Option<Target>),
    /// An `ask` timed out ([`AskError::Timeout`]); the target when the
    /// error knew it.
    Timeout(Option<Target>),
    /// The message was dropped unhandled ([`AskError::Dropped`]); the
    /// target when the error knew it.
    Dropped(Option<Target>),
    /// The link to a remote actor's process was lost
    /// ([`AskError::PeerLost`]).
    PeerLost,
    /// The handler ran and returned an error of its own (see
    /// [`FlattenReply`]).
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Full(Some(t)) => write!(f, "the mailbox of {t} is full"),
            Error::Full(None) => f.write_str("mailbox full"),
            Error::Closed(Some(t)) => write!(f, "{t} has stopped"),
            Error::Closed(None) => f.write_str("actor stopped"),
            Error::Busy(t) => write!(f, "{t} is busy on another thread"),
            Error::Cycle { target, chain } => write!(
                f,
                "synchronous cycle: {target} is already running on this thread ({chain})"
            ),
            Error::Deadlock(cycle) => match cycle.first() {
                Some(edge) => write!(
                    f,
                    "waiting for {} would deadlock {} threads",
                    edge.waits_for,
                    cycle.len()
                ),
                None => write!(f, "waiting would deadlock {} threads", cycle.len()),
            },
            Error::NotStarted(t) => write!(f, "{t} is prepared but not started"),
            Error::ThreadBound(t) => write!(f, "{t} is bound to its own thread"),
            Error::Panicked(Some(t)) => write!(f, "handler of {t} panicked"),
            Error::Panicked(None) => f.write_str("the handler panicked"),
            Error::Timeout(Some(t)) => write!(f, "no reply from {t} yet: timed out"),
            Error::Timeout(None) => f.write_str("no reply yet: timed out"),
            Error::Dropped(Some(t)) => write!(f, "the message to {t} was dropped unhandled"),
            Error::Dropped(None) => f.write_str("the message was dropped unhandled"),
            Error::PeerLost => f.write_str("the remote peer was lost"),
            Error::Failed(e) => write!(f, "the handler failed: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Failed(e) => Some(&**e),
            _ => None,
        }
    }
}

impl<M> From<SendError<M>> for Error {
    fn from(e: SendError<M>) -> Self {
        match e {
            SendError::Full { target, .. } => Error::Full(target),
            SendError::Closed { target, .. } => Error::Closed(target),
            SendError::Deadlock { cycle, .. } => Error::Deadlock(cycle),
        }
    }
}

impl<M> From<FastSendError<M>> for Error {
    fn from(e: FastSendError<M>) -> Self {
        match e {
            FastSendError::Busy { target, .. } => Error::Busy(target),
            FastSendError::Cycle { target, chain, .. } => Error::Cycle { target, chain },
            FastSendError::Deadlock { cycle, .. } => Error::Deadlock(cycle),
            FastSendError::Panicked { target } => Error::Panicked(Some(target)),
            FastSendError::Closed { target, .. } => Error::Closed(Some(target)),
            FastSendError::NotStarted { target, .. } => Error::NotStarted(target),
            FastSendError::ThreadBound { target, .. } => Error::ThreadBound(target),
        }
    }
}

impl From<AskError> for Error {
    fn from(e: AskError) -> Self {
        match e {
            AskError::Timeout(target) => Error::Timeout(target),
            AskError::Panicked(target) => Error::Panicked(target),
            AskError::Dropped(target) => Error::Dropped(target),
            AskError::Deadlock(cycle) => Error::Deadlock(cycle),
            AskError::PeerLost => Error::PeerLost,
        }
    }
}

/// Flattens the reply of a handler that returns its own `Result`: a
/// delivery error and the handler's error both become an [`Error`].
pub trait FlattenReply<T> {
    /// `Ok(value)` if delivered and the handler succeeded; otherwise the
    /// delivery's error, or [`Error::Failed`] with the handler's.
    fn flatten_reply(self) -> Result<T, Error>;
}

impl<T, E, D> FlattenReply<T> for Result<Result<T, E>, D>
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
    D: Into<Error>,
{
    fn flatten_reply(self) -> Result<T, Error> {
        match self {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(Error::Failed(e.into())),
            Err(e) => Err(e.into()),
        }
    }
}
