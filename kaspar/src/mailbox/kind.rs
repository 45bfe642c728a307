//! What a user chooses per actor: which queue ([`MailboxKind`]), what a
//! push to a full one does ([`WhenFull`]), and how the consumer waits while
//! it is empty ([`IdleWait`]).

#[cfg(doc)]
use crate::SendError;

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
    /// The same lock and ring as `BQueue`, but the consumer drains
    /// everything queued (up to the run loop's `max_batch`) per lock, and a
    /// producer notifies only when the queue turns non-empty.
    BQueueBatched {
        /// Ring slots allocated up front; more messages spill to the
        /// overflow. 0: nothing up front, every message in the overflow.
        capacity: usize,
    },
    /// `lanes` independently locked queues; each producing thread keeps to
    /// one lane, the consumer drains them round-robin. Unbounded.
    Sharded {
        /// Number of lanes (at least 1).
        lanes: usize,
        /// Slots preallocated across all lanes; a lane grows past its share
        /// when it must.
        capacity: usize,
    },
    /// A bounded lock-free ring (Vyukov): one compare-and-swap reserves a
    /// slot. Holds at most `capacity` messages (rounded up to a power of
    /// two); `when_full` says what a push does when it is full.
    LockFree {
        /// Slots in the ring, rounded up to a power of two (at least 2).
        capacity: usize,
        /// Hand the message back, or wait for room.
        when_full: WhenFull,
    },
    /// An unbounded lock-free queue of linked blocks of 31 slots (the shape
    /// of crossbeam-channel's unbounded list): one compare-and-swap
    /// reserves a slot, and the consumer takes messages without any
    /// read-modify-write. Spent blocks are recycled, so a backlog no deeper
    /// than an earlier one allocates nothing. Never full: there is no
    /// bound to configure, and `capacity` is only what is allocated up
    /// front.
    Segmented {
        /// Slots allocated up front, rounded up to whole blocks; the queue
        /// grows a block at a time past them and keeps what it grew.
        capacity: usize,
    },
    /// An unbounded queue behind a spin lock kept in the same word as its
    /// length and flags ([`CompactMpsc`](super::CompactMpsc)): a push is
    /// one compare-and-swap and one store; nothing is allocated until a
    /// message arrives, and a burst's room is freed when the consumer next
    /// finds it empty. The queue is 128 bytes (its producers' half and its
    /// consumer's a cache line apart), and the only kind kept
    /// inline in an actor's cell: the pooled default. A pooled actor that
    /// answers asks one at a time, handed over from another core, inflates
    /// it into a `Segmented` lane of its own (about 2 KiB, kept while the
    /// actor lives), where producers and consumer no longer take turns on
    /// one word ([`ActorStats::mailbox_lane`](crate::ActorStats::mailbox_lane)
    /// tells).
    Compact,
}

impl MailboxKind {
    /// `Segmented` with 1024 slots allocated up front: it won every
    /// column of the mailbox table against both blocking kinds (see
    /// [`mailbox`](crate::mailbox)) once its producers stopped yielding at
    /// once at a block's end. Its push has the shape of a crossbeam-channel
    /// send: one compare-and-swap and a slot write, no lock. For a thread
    /// that takes a stream from another thread, choose
    /// [`Compact`](Self::Compact) (see [`mailbox`](crate::mailbox)).
    pub const DEFAULT: MailboxKind = MailboxKind::Segmented { capacity: 1024 };

    /// The mailbox of a pooled actor that chose none: [`Compact`](Self::Compact),
    /// which takes no memory until messages arrive and gives a burst's
    /// room back (all but a few slots, in one buffer its activations
    /// borrow) when its actor goes idle again. Its push is one
    /// compare-and-swap and one store, as a lock-free queue's; what it
    /// lacks against `Segmented` is that producers and the consumer take
    /// turns on one word, which an actor answering asks one at a time
    /// from another core escapes by inflating into a lane (see
    /// [`Compact`](Self::Compact)). Choose `Segmented` (whose first block
    /// of 31 slots every idle actor would hold) for a pooled actor that
    /// many threads stream into at once.
    pub const POOLED: MailboxKind = MailboxKind::Compact;

    /// `BQueue` with a `capacity`-slot ring.
    pub const fn bqueue(capacity: usize) -> Self {
        MailboxKind::BQueue { capacity }
    }

    /// `BQueueBatched` with a `capacity`-slot ring.
    pub const fn batched(capacity: usize) -> Self {
        MailboxKind::BQueueBatched { capacity }
    }

    /// `Sharded` with `lanes` lanes sharing `capacity` preallocated slots.
    pub const fn sharded(lanes: usize, capacity: usize) -> Self {
        MailboxKind::Sharded { lanes, capacity }
    }

    /// `Segmented` with `capacity` slots allocated up front.
    pub const fn segmented(capacity: usize) -> Self {
        MailboxKind::Segmented { capacity }
    }

    /// `LockFree` with `capacity` slots; a push to a full ring hands the
    /// message back ([`WhenFull::Reject`]).
    pub const fn lock_free(capacity: usize) -> Self {
        MailboxKind::LockFree {
            capacity,
            when_full: WhenFull::Reject,
        }
    }
}

/// What a push to a full bounded mailbox does. Either way the message is
/// never dropped.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum WhenFull {
    /// Return at once with [`SendError::Full`] holding the message.
    #[default]
    Reject,
    /// Block the sender until the consumer frees a slot (or the mailbox
    /// closes, which returns [`SendError::Closed`]). A wait that could
    /// never end, because the consumer is itself waiting for the sender
    /// (an actor sending to its own full mailbox, say), is refused with
    /// [`SendError::Deadlock`] instead.
    Wait,
}

impl Default for MailboxKind {
    fn default() -> Self {
        MailboxKind::DEFAULT
    }
}

/// How a consumer waits while its mailbox is empty.
///
/// Whatever the strategy, a producer makes the wake-up system call only
/// when the consumer is asleep (see [`Mailbox::wakeups`](super::Mailbox::wakeups)):
/// a consumer that is still polling picks the message up by itself.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum IdleWait {
    /// Poll for a short, bounded while (spin hints in growing runs, about
    /// 1.4 µs, then yielding the core, about 6 µs more), then sleep. A
    /// message that arrives while the consumer polls costs no wake-up; an
    /// idle consumer is asleep and costs no CPU after the budget. The spin
    /// phase adapts: after a wait that was not over within it, the next
    /// wait spins only briefly, so consumers whose messages come far apart
    /// do not hold cores that others need. And after a sleep that a message
    /// ended within 100 µs, the next wait yields for 100 µs more before
    /// it sleeps: a consumer whose messages come that close together is
    /// not put to sleep and woken for each. The default: the
    /// right choice unless you know better.
    #[default]
    Backoff,
    /// Sleep as soon as the mailbox is empty: no CPU at all while idle, a
    /// kernel wake-up (microseconds) for every message that finds the
    /// consumer asleep.
    Park,
    /// Poll `spins` times with a spin hint, then sleep.
    SpinThenPark {
        /// Polls before sleeping.
        spins: u32,
    },
    /// Poll forever: the lowest wake-up latency, one core per consumer,
    /// permanently. Only with a core to spare for each spinning consumer.
    Spin,
}

impl IdleWait {
    /// [`IdleWait::Backoff`], usable in `const` items.
    pub const DEFAULT: IdleWait = IdleWait::Backoff;
}
