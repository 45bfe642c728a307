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
//! Measured by `cargo bench --bench mailboxes -- --quick` on the quiet
//! 2-core AMD EPYC VM kaspar is developed on (threads not pinned), five
//! runs: the median, with the range where it moved. Read the ratios, not
//! the absolute numbers. Fan-in p99 on 2 cores (32 producer threads) is
//! decided by which thread is preempted in the middle of a push; under
//! load every kind's p99 there has measured in the hundreds of
//! microseconds.
//!
//! | kind | one-thread push+drain p50 | bursty producer | fan-in 32, push p99 | burst ping-pong | use it for |
//! |---|---:|---:|---:|---:|---|
//! | [`MailboxKind::Segmented`] | 15.2 ns | 14.3 ns/msg (13.9–14.6) | 181 ns (180–300) | 31.2 M rt/s (27.9–36.7) | the default: any unbounded mailbox, from a trickle to a deep burst |
//! | [`MailboxKind::BQueueBatched`] | 25.0 ns | 35.4 ns/msg (31.7–38.2) | 311 ns (200–441) | 21.6 M rt/s (20.1–22.4) | a ring of known size behind a lock, drained in batches |
//! | [`MailboxKind::BQueue`] | 24.7 ns | 272 ns/msg (64–298) | 341 ns (291–371) | 4.8 M rt/s (4.8–5.2) | the pop-one baseline: one message per lock, the paper's reference |
//! | [`MailboxKind::Sharded`] | 39.5 ns | 51.2 ns/msg | 60 ns (60–70) | — | many producer threads (fan-in) |
//! | [`MailboxKind::LockFree`] | 25.2 ns | 27.1 ns/msg | 481 ns (340–500) | 31.0 M rt/s (25.0–31.6) | few producers, a known bound on depth; `Full` as backpressure |
//! | [`MailboxKind::Compact`] | 17.7 ns (17.1–19.6) | 29.8 ns/msg (29.6–35.9) | 601 ns (571–1443) | 37.6 M rt/s (33.9–39.3) | a pooled actor's default: no memory while idle, one word's lock per push |
//!
//! * `Segmented` is the unbounded lock-free queue: linked blocks of 31
//!   slots (crossbeam-channel's list flavour), one compare-and-swap per
//!   push, no read-modify-write per message on the consumer side, and spent
//!   blocks recycled, so a backlog no deeper than an earlier one allocates
//!   nothing. It is never full; `capacity` only says how much is allocated
//!   up front. There is no bounded variant: a bound means `LockFree` (or
//!   the blocking kinds, whose ring spills rather than refuses). Its
//!   median won every column against both blocking kinds, which is why it
//!   is the default ([`MailboxKind::DEFAULT`]); one run in five, its
//!   fan-in p99 (300 ns) was behind `BQueueBatched`'s (231 ns). Until its
//!   producers spun before yielding at a block's end, that p99 was
//!   25–67 µs, and `BQueueBatched` was the default.
//! * `Compact`'s row is from three `--quick` runs of a later sitting, in
//!   which `Segmented` measured 15.9–18.2 ns, 15.7–32.2 ns/msg, 200–761 ns
//!   and 12.0–30.5 M rt/s. It is a `VecDeque` behind a spin lock kept in
//!   the word that also holds its length and flags: a push is one
//!   compare-and-swap and one store, a lock-free queue's shape, where the
//!   blocking kinds' mutex costs two read-modify-writes. It holds nothing
//!   until a message arrives and gives a burst's room back when its
//!   consumer goes idle, which is why a pooled actor gets it by default
//!   ([`MailboxKind::POOLED`]); it is the one kind kept inline in the
//!   actor's cell (128 bytes: its producers' half and its consumer's are
//!   a cache line apart). Its producers and consumer take turns on
//!   one word, so its fan-in p99 trails the lock-free kinds'; a consumer
//!   that falls behind takes the whole queue in one swap and works
//!   through it outside the lock.
//! * `BQueueBatched` drains everything queued (up to the run loop's
//!   `max_batch`) per lock and notifies only when the queue turns
//!   non-empty; a consumer that keeps up still takes one message per lock.
//!   A drain that takes the whole ring swaps it for a spare ring under the
//!   lock and copies the batch out after releasing it, so producers wait
//!   for a swap, not for the copy; the spare doubles the ring's memory
//!   once the first such drain happens.
//! * `BQueue` pays one lock per message on both sides and notifies on every
//!   push to a sleeping consumer; under bursts that dominates.
//! * `Sharded` keeps each producing thread on its own lane, so 32 senders
//!   rarely meet on a lock. It costs a sweep over the lanes per drain and
//!   gives no order between different senders' messages.
//! * `LockFree` reserves a slot with one compare-and-swap and never blocks a
//!   sender behind the consumer; it is bounded: a full ring hands the
//!   message back or makes the sender wait ([`WhenFull`]), and its memory
//!   (`capacity` slots) is allocated up front.
//!
//! * A thread of its own that takes a *stream* from another thread is
//!   faster with `Compact` than with the default: in `peers --quick`
//!   (`kaspar/thread_compact/tell` beside `kaspar/thread/tell`, 2-core
//!   VM), 11–23 ns a message against `Segmented`'s 27–36 in ten runs
//!   of its near mood, and 18 and 26 ns against 97 and 107 in two of its
//!   far mood, where `Segmented`'s consumer, reading each slot on its
//!   producer's heels, pulls a cache line across for nearly every
//!   message and `Compact`'s takes whole buffers. The default stays
//!   `Segmented` because a hot actor's traffic is more often one message
//!   at a time, and there `Compact`'s consumer takes the lock word for
//!   every message where `Segmented`'s only reads its slot: a thread's
//!   ping-pong ran 1.15–2.42 M round trips a second with `Compact`
//!   against 3.03–3.35 M (seven alternating pairs of runs), and its ask
//!   took a little longer (491–540 ns at the median against 331–471).
//!
//! The first three columns were measured through the `Mailbox` API with
//! consumers that sleep as soon as they find their mailbox empty
//! (`IdleWait::Park`); the ping-pong between two actors with the default
//! [`IdleWait::Backoff`], in bursts of 10,000.
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
mod compact;
pub(crate) mod inbox;
mod kind;
mod lockfree;
mod park;
mod segmented;
mod sharded;

pub(crate) use park::{Helped, Schedule, TaskSlot};

pub use batched::BQueueBatched;
pub use blocking::BQueue;
pub use compact::CompactMpsc;
pub(crate) use compact::{INFLATE_AFTER, STREAM_AFTER};
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

/// What a pooled consumer's non-blocking drain found
/// ([`Mailbox::poll_batch`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Polled {
    /// This many messages were appended to the output.
    Got(usize),
    /// Empty and open: the consumer is idle now, and the next push (or
    /// `close`) schedules it through its hook, exactly once.
    Idle,
    /// Empty for the moment, but a push is under way (reserved, not yet
    /// written; or counted after the sweep): run again soon.
    Busy,
    /// Closed and empty: nothing more will ever arrive.
    Closed,
}

/// An actor's (or a group's) mailbox.
///
/// Every kind but the pooled default is boxed. The lock-free kinds keep
/// their producers' and their consumer's words on cache lines of their own
/// (256 to 512 bytes, aligned to 128), and inline they made every mailbox,
/// and the actor cell around it, that large and that aligned: 640 bytes in
/// a cell of 1,408, whatever the kind. The two blocking kinds carry a
/// ring, a spare ring and a condition variable (144 bytes). Boxed, each
/// kind's room stays where it does its job, and the enum is the size of
/// the one kind kept inline, [`CompactMpsc`] (the default of a pooled
/// actor, of which a process may hold a million). A push to a boxed kind
/// reads one more pointer, from the cell line the sender reads anyway:
/// `benches/callgrind.sh`'s `tell` row went from 264.9 to 268.9
/// instructions when the lock-free kinds were boxed.
#[derive(Debug)]
pub enum Mailbox<T> {
    /// See [`BQueue`].
    BQueue(Box<BQueue<T>>),
    /// See [`BQueueBatched`].
    BQueueBatched(Box<BQueueBatched<T>>),
    /// See [`ShardedBQueue`].
    Sharded(Box<ShardedBQueue<T>>),
    /// See [`LockFreeMpsc`].
    LockFree(Box<LockFreeMpsc<T>>),
    /// See [`SegmentedMpsc`].
    Segmented(Box<SegmentedMpsc<T>>),
    /// See [`CompactMpsc`].
    Compact(CompactMpsc<T>),
}

// SAFETY: every kind is a queue that moves its messages from producer
// threads to one consumer, never sharing a `&T`, and is itself `Send` and
// `Sync` for any `T: Send` (the check below proves it for a `T` that is
// `Send` and not `Sync`). Said once here, so that the compiler, asked
// whether an actor's address is `Send`, goes from the mailbox straight to
// its message type: derived through the variants, each actor an address
// leads to cost a dozen levels of the trait solver's recursion limit (128),
// and a pipeline of six actors whose messages carry the next one's
// address overflowed it (E0275, `tick_to_book` with `tracing`).
unsafe impl<T: Send> Send for Mailbox<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for Mailbox<T> {}

/// Never called: type-checked, so that the two impls above stay true of
/// every kind.
#[allow(dead_code)]
fn every_kind_is_send_and_sync_for_a_send_message() {
    fn both<Q: Send + Sync>() {}
    type Unshared = std::cell::Cell<u8>;
    both::<BQueue<Unshared>>();
    both::<BQueueBatched<Unshared>>();
    both::<ShardedBQueue<Unshared>>();
    both::<LockFreeMpsc<Unshared>>();
    both::<SegmentedMpsc<Unshared>>();
    both::<CompactMpsc<Unshared>>();
}

impl<T> Mailbox<T> {
    /// Whether a push can find it full and hand the message back: a
    /// `LockFree` ring with [`WhenFull::Reject`].
    #[cfg(feature = "sim")]
    pub(crate) fn rejects_when_full(&self) -> bool {
        matches!(self, Mailbox::LockFree(q) if q.when_full() == WhenFull::Reject)
    }

    /// A new, open, empty mailbox of the given kind.
    pub fn new(kind: MailboxKind) -> Self {
        match kind {
            MailboxKind::BQueue { capacity } => Mailbox::BQueue(Box::new(BQueue::new(capacity))),
            MailboxKind::BQueueBatched { capacity } => {
                Mailbox::BQueueBatched(Box::new(BQueueBatched::new(capacity)))
            }
            MailboxKind::Sharded { lanes, capacity } => {
                Mailbox::Sharded(Box::new(ShardedBQueue::new(lanes, capacity)))
            }
            MailboxKind::LockFree {
                capacity,
                when_full,
            } => Mailbox::LockFree(Box::new(LockFreeMpsc::new(capacity, when_full))),
            MailboxKind::Segmented { capacity } => {
                Mailbox::Segmented(Box::new(SegmentedMpsc::new(capacity)))
            }
            MailboxKind::Compact => Mailbox::Compact(CompactMpsc::new()),
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
    ///
    /// The two default kinds' pushes (a thread's `Segmented`, one
    /// compare-and-swap and a slot write; a pooled actor's `Compact`, one
    /// compare-and-swap and one store) are inlined into the sender, each
    /// by an `#[inline(always)]` of its own; the other kinds' are left to
    /// the compiler. With the whole `match` behind one `#[inline]`, the
    /// compiler inlined it at some send sites and called it at others, and
    /// a called push cost a `tell` loop about half its rate (`peers`: 57
    /// against 107-114 M messages/s). `Compact`'s own push was a hint too,
    /// until the compiler stopped taking it (`CompactMpsc::push` says
    /// what that cost).
    #[inline(always)]
    pub(crate) fn push_watched(&self, msg: T, watch: Watch<'_>) -> Result<usize, SendError<T>> {
        match self {
            Mailbox::Segmented(q) => q.push(msg),
            Mailbox::Compact(q) => q.push(msg),
            _ => self.push_other(msg, watch),
        }
    }

    /// [`push_watched`](Self::push_watched) for the kinds other than the
    /// defaults.
    fn push_other(&self, msg: T, watch: Watch<'_>) -> Result<usize, SendError<T>> {
        match self {
            Mailbox::BQueue(q) => q.push(msg),
            Mailbox::BQueueBatched(q) => q.push(msg),
            Mailbox::Sharded(q) => q.push(msg),
            Mailbox::LockFree(q) => q.push_watched(msg, watch),
            Mailbox::Segmented(q) => q.push(msg),
            Mailbox::Compact(q) => q.push(msg),
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
            Mailbox::Compact(q) => q.pop_batch(out, max, idle),
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
            Mailbox::Compact(q) => q.try_pop_batch(out, max),
        }
    }

    /// Makes the consumer a pooled one: from now on a push (or `close`)
    /// that finds it idle calls `hook` instead of waking a thread, and the
    /// consumer drains with [`poll_batch`](Self::poll_batch) only. Call it
    /// before the consumer first runs. Hands the hook back if the mailbox
    /// was made pooled already.
    pub(crate) fn set_task(&self, hook: Box<dyn Schedule>) -> Result<(), Box<dyn Schedule>> {
        self.task_slot().set(hook)
    }

    /// The pooled consumer's hook, if the mailbox has one.
    pub(crate) fn task(&self) -> Option<&dyn Schedule> {
        self.task_slot().get()
    }

    /// Whether the consumer is pooled and its activations run as tasks of
    /// an async runtime ([`Schedule::hosted`]).
    pub(crate) fn hosted(&self) -> bool {
        self.task().is_some_and(|t| t.hosted())
    }

    /// [`Schedule::help`] of a pooled consumer; nothing for a thread's.
    pub(crate) fn help(&self, cx: &mut std::task::Context<'_>, awaited: *const ()) -> Helped {
        self.task().map_or(Helped::Nothing, |t| t.help(cx, awaited))
    }

    /// [`Schedule::before_first_wait`] of a pooled consumer; `true` (wait)
    /// for a thread's.
    pub(crate) fn before_first_wait(&self, begun: &dyn Fn() -> bool) -> bool {
        self.task().is_none_or(|t| t.before_first_wait(begun))
    }

    /// [`Schedule::help_blocked`] of a pooled consumer; `false` (wait) for
    /// a thread's.
    pub(crate) fn help_blocked(
        &self,
        done: &dyn Fn() -> bool,
        deadline: Option<std::time::Instant>,
    ) -> bool {
        self.task().is_some_and(|t| t.help_blocked(done, deadline))
    }

    fn task_slot(&self) -> &TaskSlot {
        match self {
            Mailbox::BQueue(q) => &q.locked().task,
            Mailbox::BQueueBatched(q) => &q.locked().task,
            Mailbox::Sharded(q) => &q.wake.task,
            Mailbox::LockFree(q) => &q.wake.task,
            Mailbox::Segmented(q) => &q.wake.task,
            Mailbox::Compact(q) => &q.wake.task,
        }
    }

    /// The pooled consumer's drain: up to `max` messages without waiting,
    /// or, with none, the consumer goes idle (or learns the mailbox is
    /// closed and drained, or that a push is under way). A pop-one kind
    /// moves at most one.
    #[inline]
    pub(crate) fn poll_batch(&self, out: &mut Vec<T>, max: usize) -> Polled {
        match self {
            Mailbox::BQueue(q) => q.poll_batch(out, max),
            Mailbox::BQueueBatched(q) => q.poll_batch(out, max),
            Mailbox::Sharded(q) => q.poll_batch(out, max),
            Mailbox::LockFree(q) => q.poll_batch(out, max),
            Mailbox::Segmented(q) => q.poll_batch(out, max),
            Mailbox::Compact(q) => q.poll_batch(out, max),
        }
    }

    /// [`poll_batch`](Self::poll_batch), except that a lone message may
    /// come back as itself (`Ok`), with nothing appended to `out`: the
    /// pooled default's way of sparing a single message's buffer a trip
    /// to the batch and back (`CompactMpsc::poll`). The other kinds always
    /// fill `out`.
    #[inline]
    // With `tracing`, the loops drain through `trace::Consumer`, which
    // always batches.
    #[cfg_attr(feature = "tracing", allow(dead_code))]
    pub(crate) fn poll(&self, out: &mut Vec<T>, max: usize) -> Result<T, Polled> {
        match self {
            Mailbox::Compact(q) => q.poll(out, max),
            _ => Err(self.poll_batch(out, max)),
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
            Mailbox::Compact(q) => q.close(),
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
            Mailbox::Compact(q) => q.is_closed(),
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
            Mailbox::Compact(q) => q.len(),
        }
    }

    /// Whether no message is queued (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the consumer would find nothing to take now: a poll for the
    /// consumer's side only (a lingering pooled activation's), reading as
    /// few of the producers' lines as the queue allows.
    pub(crate) fn nothing_published(&self) -> bool {
        match self {
            Mailbox::Segmented(q) => q.nothing_published(),
            Mailbox::Compact(q) => match q.lane() {
                Some(lane) => lane.nothing_published(),
                None => q.is_empty(),
            },
            _ => self.is_empty(),
        }
    }

    /// Called by a pooled activation that has answered [`INFLATE_AFTER`]
    /// lone asks in a row: a compact queue inflates into a lane (the
    /// `compact::lane` module); every other kind stays as it is. Returns
    /// whether it inflated.
    pub(crate) fn inflate(&self) -> bool {
        match self {
            Mailbox::Compact(q) => q.inflate(),
            _ => false,
        }
    }

    /// [`inflate`](Self::inflate) for a stream's consumer: a compact queue
    /// inflates taking up to `max` messages still queued into `out`
    /// (`CompactMpsc::inflate_into`), which the caller serves before it
    /// polls again. Returns how many it took, or `None` if it did not
    /// inflate (every other kind).
    pub(crate) fn inflate_into(&self, out: &mut Vec<T>, max: usize) -> Option<usize> {
        match self {
            Mailbox::Compact(q) => q.inflate_into(out, max),
            _ => None,
        }
    }

    /// Whether it is a compact queue that has inflated.
    pub(crate) fn inflated(&self) -> bool {
        matches!(self, Mailbox::Compact(q) if q.lane().is_some())
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
            Mailbox::Compact(q) => q.wakeups(),
        }
    }

    /// Whether the consumer is asleep (or committed to sleeping): the next
    /// push wakes it.
    #[cfg(test)]
    pub(crate) fn consumer_asleep(&self) -> bool {
        match self {
            Mailbox::BQueue(q) => q.consumer_asleep(),
            Mailbox::BQueueBatched(q) => q.consumer_asleep(),
            Mailbox::Sharded(q) => q.consumer_asleep(),
            Mailbox::LockFree(q) => q.consumer_asleep(),
            Mailbox::Segmented(q) => q.consumer_asleep(),
            Mailbox::Compact(q) => q.consumer_asleep(),
        }
    }
}

#[cfg(test)]
mod tests;
