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
//! can per lock acquisition. (Batching on the sender side regressed in the
//! paper's companion note; `benches/mailboxes.rs` measures it and kaspar
//! does not adopt it: a sender holding the mailbox lock for a whole burst
//! stalls the consumer and every other sender.)
//!
//! # Choosing a mailbox
//!
//! Measured by `cargo bench --bench mailboxes -- --quick` on a shared 2-core
//! Intel Xeon VM, three runs: the one-thread column gives the range (it
//! jumps between about 38 and 47 ns from run to run for both blocking
//! kinds, which run the same code for one message), the others the median.
//! Read the ratios, not the absolute numbers. Fan-in p99 on 2 cores is
//! dominated by which thread gets preempted while holding a lock: in these
//! runs, made while four other build jobs shared the machine, both
//! blocking kinds' p99 sat at 90–265 µs (before the changes that set these
//! numbers as well as after), where a quiet run had measured 0.6 µs
//! (`BQueue`) and 1.7 µs (`BQueueBatched`).
//!
//! | kind | one-thread push+drain p50 | bursty producer | fan-in 32, push p99 | burst ping-pong (vs `BQueue`) | use it for |
//! |---|---:|---:|---:|---:|---|
//! | [`MailboxKind::BQueueBatched`] | 38–48 ns | 63 ns/msg | 197 µs | 4.47x | the default: anything from a trickle to a deep, bursty mailbox |
//! | [`MailboxKind::BQueue`] | 38–47 ns | 110 ns/msg | 221 µs | 1.00x | the pop-one baseline: one message per lock, the paper's reference |
//! | [`MailboxKind::Sharded`] | 59 ns | 84 ns/msg | 0.18 µs | — | many producer threads (fan-in) |
//! | [`MailboxKind::LockFree`] | 35–38 ns | 60 ns/msg | 0.57 µs | 6.81x | few producers, a known bound on depth; `Full` as backpressure |
//! | [`MailboxKind::Segmented`] | see below | | | | one or a few producers, the cheapest unbounded push |
//!
//! * `BQueueBatched` drains everything queued (up to the run loop's
//!   `max_batch`) per lock and notifies only when the queue turns
//!   non-empty; a consumer that keeps up still takes one message per lock.
//!   It won or tied `BQueue` in every column above, which is why it is the
//!   default ([`MailboxKind::DEFAULT`]). A drain that takes the whole ring
//!   swaps it for a spare ring under the lock and copies the batch out
//!   after releasing it, so producers wait for a swap, not for the copy;
//!   the spare doubles the ring's memory once the first such drain
//!   happens.
//! * `BQueue` pays one lock per message on both sides and notifies on every
//!   push to a sleeping consumer; under bursts that dominates.
//! * `Sharded` keeps each producing thread on its own lane, so 32 senders
//!   rarely meet on a lock (its p99 was three orders of magnitude below
//!   the blocking kinds' in the runs above). It costs a sweep over the
//!   lanes per drain and gives no order between different senders'
//!   messages.
//! * `LockFree` reserves a slot with one compare-and-swap and never blocks a
//!   sender behind the consumer; it is bounded: a full ring hands the
//!   message back or makes the sender wait ([`WhenFull`]), and its memory
//!   (`capacity` slots) is allocated up front.
//! * `Segmented` is the unbounded lock-free queue: linked blocks of 31
//!   slots (crossbeam-channel's list flavour), one compare-and-swap per
//!   push, no read-modify-write per message on the consumer side, and spent
//!   blocks recycled, so a backlog no deeper than an earlier one allocates
//!   nothing. It is never full; `capacity` only says how much is allocated
//!   up front. There is no bounded variant: a bound means `LockFree` (or
//!   the blocking kinds, whose ring spills rather than refuses).
//!
//! `Segmented` was measured later than the table, against `BQueueBatched`
//! in the same runs: fifteen `--quick` runs on the same VM while other
//! builds kept its load average between 5 and 11 on its 2 cores, medians
//! with the range:
//!
//! | kind | one-thread push+drain p50 | bursty producer | fan-in 32, push p99 | burst ping-pong |
//! |---|---:|---:|---:|---:|
//! | `Segmented` | 20 ns (20–24) | 93 ns/msg (40–552) | 78 ns (44 ns–56 µs) | 5.95 M rt/s (2.35–13.9) |
//! | `BQueueBatched` | 33 ns (32–39) | 108 ns/msg (56–204) | 239 ns (40 ns–182 µs) | 4.53 M rt/s (3.63–10.9) |
//!
//! It won the one-thread round trip in every run and the other medians
//! too, but not every run: its burst ping-pong fell to 2.4–2.9 M in four
//! runs (all at the heaviest load), below anything `BQueueBatched` did. In
//! the peers benchmark (see the performance chapter of the book) it won
//! the tell and ping-pong medians and tied `ask`. The rule is to change
//! the default only for a kind that wins every regime, and a tie is not a
//! win, so `Segmented` is an option, not the default.
//!
//! The first three columns were measured through the `Mailbox` API with
//! consumers that sleep as soon as they find their mailbox empty
//! (`IdleWait::Park`); the ping-pong between two actors with the default
//! [`IdleWait::Backoff`].
//!
//! # Waiting
//!
//! A consumer with an empty mailbox waits as its [`IdleWait`] says; the
//! default, [`IdleWait::Backoff`], polls briefly before it sleeps. Every
//! kind polls a word its producers write anyway, never a lock: `BQueue`
//! and `BQueueBatched` a length hint stored under their lock, `Sharded`
//! its count word, `LockFree` its tail, `Segmented` the slot its next
//! message will be written to (reading the tail there made every push's
//! compare-and-swap wait for the line: two thirds of the sender's time in
//! a profile). And every kind lets a producer
//! skip the wake-up system call unless the consumer is asleep, with one
//! wake-up per sleep; [`Mailbox::wakeups`] counts them.

mod batched;
mod blocking;
pub(crate) mod inbox;
mod kind;
mod lockfree;
mod park;
mod segmented;
mod sharded;

pub use batched::BQueueBatched;
pub use blocking::BQueue;
pub use kind::{IdleWait, MailboxKind, WhenFull};
pub use lockfree::LockFreeMpsc;
pub use segmented::SegmentedMpsc;
pub use sharded::ShardedBQueue;

use crate::error::SendError;
use crate::guard::deadlock::{Registered, WaitEdge};

/// Called by a push just before it would block waiting for room (a full
/// [`WhenFull::Wait`] mailbox): registers the wait with the deadlock
/// detector, or returns the cycle it would close. `Ok(None)`: nothing to
/// check (a mailbox used outside an actor).
pub(crate) type Watch<'a> = &'a dyn Fn() -> Result<Option<Registered>, Vec<WaitEdge>>;

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
    /// See [`BQueueBatched`].
    BQueueBatched(BQueueBatched<T>),
    /// See [`ShardedBQueue`].
    Sharded(ShardedBQueue<T>),
    /// See [`LockFreeMpsc`].
    LockFree(LockFreeMpsc<T>),
    /// See [`SegmentedMpsc`].
    Segmented(SegmentedMpsc<T>),
}

impl<T> Mailbox<T> {
    /// A new, open, empty mailbox of the given kind.
    pub fn new(kind: MailboxKind) -> Self {
        match kind {
            MailboxKind::BQueue { capacity } => Mailbox::BQueue(BQueue::new(capacity)),
            MailboxKind::BQueueBatched { capacity } => {
                Mailbox::BQueueBatched(BQueueBatched::new(capacity))
            }
            MailboxKind::Sharded { lanes, capacity } => {
                Mailbox::Sharded(ShardedBQueue::new(lanes, capacity))
            }
            MailboxKind::LockFree {
                capacity,
                when_full,
            } => Mailbox::LockFree(LockFreeMpsc::new(capacity, when_full)),
            MailboxKind::Segmented { capacity } => Mailbox::Segmented(SegmentedMpsc::new(capacity)),
        }
    }

    /// Appends a message. Returns the queue length after the push (an
    /// upper bound for some kinds), for the high-water mark.
    #[inline]
    pub fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        self.push_watched(msg, &|| Ok(None))
    }

    /// [`push`](Self::push), with the deadlock check a wait for room needs
    /// (only a `LockFree` mailbox with [`WhenFull::Wait`] ever waits).
    #[inline]
    pub(crate) fn push_watched(&self, msg: T, watch: Watch<'_>) -> Result<usize, SendError<T>> {
        match self {
            Mailbox::BQueue(q) => q.push(msg),
            Mailbox::BQueueBatched(q) => q.push(msg),
            Mailbox::Sharded(q) => q.push(msg),
            Mailbox::LockFree(q) => q.push_watched(msg, watch),
            Mailbox::Segmented(q) => q.push(msg),
        }
    }

    /// Moves up to `max` messages into `out`, waiting as `idle` says while
    /// the mailbox is empty and open. A pop-one kind moves at most one.
    #[inline]
    pub fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        match self {
            Mailbox::BQueue(q) => q.pop_batch(out, max, idle),
            Mailbox::BQueueBatched(q) => q.pop_batch(out, max, idle),
            Mailbox::Sharded(q) => q.pop_batch(out, max, idle),
            Mailbox::LockFree(q) => q.pop_batch(out, max, idle),
            Mailbox::Segmented(q) => q.pop_batch(out, max, idle),
        }
    }

    /// Moves up to `max` messages into `out` without waiting.
    #[inline]
    pub fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        match self {
            Mailbox::BQueue(q) => q.try_pop_batch(out, max),
            Mailbox::BQueueBatched(q) => q.try_pop_batch(out, max),
            Mailbox::Sharded(q) => q.try_pop_batch(out, max),
            Mailbox::LockFree(q) => q.try_pop_batch(out, max),
            Mailbox::Segmented(q) => q.try_pop_batch(out, max),
        }
    }

    /// Refuses further pushes and wakes the consumer. Messages already
    /// accepted stay and are still popped.
    pub fn close(&self) {
        match self {
            Mailbox::BQueue(q) => q.close(),
            Mailbox::BQueueBatched(q) => q.close(),
            Mailbox::Sharded(q) => q.close(),
            Mailbox::LockFree(q) => q.close(),
            Mailbox::Segmented(q) => q.close(),
        }
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        match self {
            Mailbox::BQueue(q) => q.is_closed(),
            Mailbox::BQueueBatched(q) => q.is_closed(),
            Mailbox::Sharded(q) => q.is_closed(),
            Mailbox::LockFree(q) => q.is_closed(),
            Mailbox::Segmented(q) => q.is_closed(),
        }
    }

    /// Messages currently queued (a snapshot).
    pub fn len(&self) -> usize {
        match self {
            Mailbox::BQueue(q) => q.len(),
            Mailbox::BQueueBatched(q) => q.len(),
            Mailbox::Sharded(q) => q.len(),
            Mailbox::LockFree(q) => q.len(),
            Mailbox::Segmented(q) => q.len(),
        }
    }

    /// Whether no message is queued (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many times a producer (or [`close`](Self::close)) found the
    /// consumer asleep and woke it: each is at most one wake-up system
    /// call, and only these cost one. A push to a consumer that is busy, or
    /// still polling per its [`IdleWait`], is picked up without any; one
    /// sleep is ended by exactly one wake-up, however many pushes follow.
    /// Counted only on that slow path, so keeping the count costs the
    /// pushes that find the consumer awake nothing.
    pub fn wakeups(&self) -> u64 {
        match self {
            Mailbox::BQueue(q) => q.wakeups(),
            Mailbox::BQueueBatched(q) => q.wakeups(),
            Mailbox::Sharded(q) => q.wakeups(),
            Mailbox::LockFree(q) => q.wakeups(),
            Mailbox::Segmented(q) => q.wakeups(),
        }
    }

    /// Whether the consumer is asleep (or committed to sleeping): the next
    /// push wakes it.
    #[cfg(test)]
    fn consumer_asleep(&self) -> bool {
        match self {
            Mailbox::BQueue(q) => q.consumer_asleep(),
            Mailbox::BQueueBatched(q) => q.consumer_asleep(),
            Mailbox::Sharded(q) => q.consumer_asleep(),
            Mailbox::LockFree(q) => q.consumer_asleep(),
            Mailbox::Segmented(q) => q.consumer_asleep(),
        }
    }
}

#[cfg(test)]
mod tests;
