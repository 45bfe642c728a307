//! Mailboxes: multi-producer, single-consumer queues, selectable per actor.
//!
//! [`Mailbox<T>`] is an enum over the concrete queues (the paper's
//! `std::variant`), so `push` and the drain loop are a `match` the compiler
//! can inline, never a virtual call. Every kind:
//!
//! * keeps FIFO per sender: messages one thread pushes are popped in the
//!   order it pushed them;
//! * hands a message back instead of dropping it: [`SendError::Full`] when a
//!   bounded queue is full, [`SendError::Closed`] after [`Mailbox::close`];
//! * after `close`, still yields everything accepted before it, so a
//!   shutdown drains rather than discards.
//!
//! Batching lives on the drain side only: the consumer takes as much as it
//! can per lock acquisition. (Batching on the sender side was measured to
//! regress in the paper's companion note, and does here too.)
//!
//! # Choosing a mailbox
//!
//! | kind | use it for |
//! |---|---|
//! | [`MailboxKind::BQueue`] | the default; one lock, one message per pop |

mod blocking;

pub use blocking::BQueue;

use crate::error::SendError;

/// Which queue an actor's mailbox uses, and its size.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum MailboxKind {
    /// A mutex and a condition variable around a fixed ring that spills into
    /// an unbounded overflow; the consumer pops one message per lock.
    BQueue {
        /// Ring slots allocated up front; more messages spill to the overflow.
        capacity: usize,
    },
}

impl MailboxKind {
    /// `BQueue` with a 1024-slot ring.
    pub const DEFAULT: MailboxKind = MailboxKind::BQueue { capacity: 1024 };
}

impl Default for MailboxKind {
    fn default() -> Self {
        MailboxKind::DEFAULT
    }
}

/// How a consumer waits while its mailbox is empty.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum IdleWait {
    /// Sleep on the mailbox's condition variable (no CPU while idle).
    #[default]
    Park,
    /// Poll `spins` times with a spin hint, then sleep.
    SpinThenPark {
        /// Polls before sleeping.
        spins: u32,
    },
    /// Poll forever: the lowest wake-up latency, one core per consumer.
    Spin,
}

/// What a drain found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Drained {
    /// This many messages were appended to the output.
    Got(usize),
    /// The mailbox is closed and empty: nothing more will ever arrive.
    Closed,
}

/// An actor's (or a group's) mailbox.
#[derive(Debug)]
pub enum Mailbox<T> {
    /// See [`BQueue`].
    BQueue(BQueue<T>),
}

impl<T> Mailbox<T> {
    /// A new, open, empty mailbox of the given kind.
    pub fn new(kind: MailboxKind) -> Self {
        match kind {
            MailboxKind::BQueue { capacity } => Mailbox::BQueue(BQueue::new(capacity)),
        }
    }

    /// Appends a message. Returns the queue length after the push (an
    /// upper bound for some kinds), for the high-water mark.
    #[inline]
    pub fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        match self {
            Mailbox::BQueue(q) => q.push(msg),
        }
    }

    /// Moves up to `max` messages into `out`, waiting as `idle` says while
    /// the mailbox is empty and open. A pop-one kind moves at most one.
    #[inline]
    pub fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        match self {
            Mailbox::BQueue(q) => q.pop_batch(out, max, idle),
        }
    }

    /// Moves up to `max` messages into `out` without waiting.
    #[inline]
    pub fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        match self {
            Mailbox::BQueue(q) => q.try_pop_batch(out, max),
        }
    }

    /// Refuses further pushes and wakes the consumer. Messages already
    /// accepted stay and are still popped.
    pub fn close(&self) {
        match self {
            Mailbox::BQueue(q) => q.close(),
        }
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        match self {
            Mailbox::BQueue(q) => q.is_closed(),
        }
    }

    /// Messages currently queued (a snapshot).
    pub fn len(&self) -> usize {
        match self {
            Mailbox::BQueue(q) => q.len(),
        }
    }

    /// Whether no message is queued (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
