//! An actor's shared core: its state behind its exclusive-access lock, its
//! mailbox, its counters, and the functions through which every handler
//! invocation, synchronous or queued, enters the state.
//!
//! # The entry protocol
//!
//! A synchronous delivery enters through [`ActorCell::enter_or`]; a run
//! loop, which already holds the lock, through [`ActorCell::enter_held`].
//! Nothing else reaches the state. A synchronous entry, in order:
//!
//! 1. the call-chain check (thread-local; refuses a cycle before any lock
//!    is touched) and the frame push;
//! 2. the lock: one compare-and-swap of its word from 0 to this thread's
//!    token. If the word was not 0, out of line: this thread already holds
//!    it (a *nested* entry, allowed for a group's shared lock and for
//!    reentrant actors only), or another does (the operation's wait
//!    strategy, preceded by the cross-thread deadlock check), or the word
//!    is flagged (a group's lock, or an actor with a flag set);
//! 3. the flags check, on the out-of-line paths only (a per-actor lock
//!    carries `FLAGGED` exactly while its actor has a flag): refused if
//!    stopped or halted by supervision; a restart left pending by a nested
//!    panic is performed here, and an actor that records latency has its
//!    handler timed from here on.
//!
//! An *intra-group* entry (a member calling a member of its own group, on
//! the group's thread, while no member has a flag set) skips all three:
//! the thread's group mark proves it holds the lock, and the callee's
//! `entered` mark stands in for the chain (it is set by every entry into an
//! `Exclusive` group member, whichever way it came, and refuses a second).
//!
//! Soundness rests on one invariant: *an actor's state is borrowed on a
//! thread only while the thread holds the actor's lock, and while that
//! actor's frame is on the thread's call chain or (an `Exclusive` group
//! member) its `entered` mark is set.* The lock excludes other threads. The
//! chain check and the mark exclude a second `&mut` on the same thread: an
//! `Exclusive` actor already entered is refused under every policy.

use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::actor::instance::Instance;
use crate::actor::packed::ActorInbox;
use crate::actor::trace::Queued;
use crate::actor::traits::{Actor, ActorConfig};
use crate::base::clock::Clock;
use crate::base::ids::ActorId;
use crate::base::latency::Latencies;
use crate::base::stats::{ActorStats, LockedCounters, Rare, SharedCounters, Stats};
use crate::base::sync::{AtomicU32, AtomicU8, Ordering};
use crate::error::SendError;
use crate::error::Target;
use crate::failure::dead_letters::DeadLetters;
use crate::failure::supervision::Supervisor;
use crate::guard::chain::{self, CallChain, CyclePolicy, FrameHead, FrameNames};
use crate::guard::deadlock::{self, WaitEdge, WaitKind, WaitOn};
use crate::guard::lock::ActorLock;

/// Why an entry was refused. The operation turns it into its own error.
pub(crate) enum Refusal {
    Cycle(CallChain),
    Busy,
    Deadlock(Vec<WaitEdge>),
    Closed,
    /// The actor was prepared and has no state yet.
    NotStarted,
    /// A thread-bound actor entered from a thread other than its own.
    ThreadBound,
}

/// `flags` bit: the `stopped` hook ran.
pub(crate) const STOPPED: u8 = 1;
/// `flags` bit: supervision stopped the actor; entries are refused and
/// its queued messages go to dead letters. [`ActorCell::is_stopped`] counts
/// it as stopped: a halted group member's `stopped` hook (and so
/// `STOPPED`) waits for its group to stop, but the member is gone already.
pub(crate) const HALTED: u8 = 2;
/// `flags` bit: a restart waits for an entry that may replace the state.
pub(crate) const RESTART_PENDING: u8 = 4;
/// `flags` bit: the state slot is empty: the actor was prepared and is not
/// started yet, or its thread-bound state was dropped on its own thread
/// when it stopped. Entries are refused.
pub(crate) const VACANT: u8 = 8;
/// `flags` bit: handler service times are recorded (`stats.latency` is
/// set). Set by the spawner, never cleared. Riding in `flags` sends a timed
/// actor's entries down the out-of-line flagged path, so an untimed
/// actor's entry tests exactly what it tested before timing existed.
pub(crate) const TIMED: u8 = 16;

/// The fields are laid out in four bands (hence `repr(C)`), so that no
/// cache line is written by both a sender and the lock holder without
/// need, and none that every push writes is read by the consumer for
/// every message, and without padding the cell to 128-byte lines (that
/// made an idle pooled actor's cell 1,408 bytes):
///
/// 1. read by every entry and push, written at most at a state change:
///    the lock's address, the flags, the names a frame shows (and a group
///    member's `entered` mark, which only its group's thread writes; a
///    thread-bound actor's home, written when its loop starts and stops);
///    and the statistics whose high-water mark every push reads (and writes
///    only when it rises);
/// 2. cold: the instance and the clock (and the console's edges, where
///    built), which keep band 1's flags, read for every message served, a
///    whole line from the mailbox's first bytes;
/// 3. the mailbox: first what senders write (inline for the pooled
///    default, `Compact`; for every other kind, the pointer to its boxed
///    queue), then, a cache line on,
///    what its consumer writes (`Compact`'s spill), which is the lock
///    holder;
/// 4. the consumer's: supervision, whose dead letters the run loop asks
///    for every message whether they were abandoned; the reply ports'
///    head; then what
///    the lock holder writes on every handled message, its counters and
///    the state. All of it at least 64 bytes past what senders write.
///
/// Supervision sat in band 2 until a probe found a stream into a pooled
/// actor 1.6 times slower whenever the allocator placed the cell at 0 or
/// 16 bytes past a cache line's start: there the dead letters' handle in
/// its `sup` shared a line with the queue's lock word, so the consumer's
/// read for every message took the line from the producer, whose next
/// push took it back (the book's chapter on streams into pooled actors).
/// A unit test checks the distances.
#[repr(C)]
pub(crate) struct ActorCell<A: Actor> {
    // Band 1.
    /// `lock`'s address, read by every entry: one load where dereferencing
    /// the `Arc` would add its header offset on the way (two instructions
    /// per `fast_send`, four on the intra-group path, by callgrind).
    lock_at: LockAt,
    lock: Arc<ActorLock>,
    /// The actor as its frames on a call chain name it (its id and the
    /// type's names): a frame is a pointer to this and a class.
    head: FrameHead,
    /// `STOPPED | HALTED | RESTART_PENDING | VACANT | TIMED`, written only
    /// by the lock holder (so a `Relaxed` read under the lock sees the
    /// latest value), except `TIMED`, which the spawner may set at any
    /// time; every write is a read-modify-write, so none is lost. Zero on
    /// the fast path: entry tests it once.
    flags: AtomicU8,
    pub(crate) policy: CyclePolicy,
    /// Whether the state of this `Exclusive` group member is borrowed right
    /// now (one of its handlers is running). It stands in for the
    /// call-chain scan on the intra-group path (module docs). Written on
    /// entry into a group member only, by the group's own thread, which
    /// reads this band anyway; a byte beside the flags, where at the end
    /// it would take a word of padding.
    entered: EnteredFlag,
    /// Home id (`ThreadState::home_id`, never reused) of the thread that
    /// runs this thread-bound actor's loop (see
    /// [`bind_home`](Self::bind_home)), or 0 before it started, after it
    /// stopped, and always for an actor that is not thread-bound. Read on
    /// entry only for a thread-bound actor (`ActorConfig::THREAD_BOUND`),
    /// so in this band; 32 bits, so in the padding after the bytes above,
    /// where a word at the end of the cell cost a malloc size class.
    home: AtomicU32,
    pub(crate) stats: Stats,
    // Band 2.
    /// Its instance name and system; never read on a delivery's way in.
    pub(crate) instance: Instance,
    pub(crate) clock: Clock,
    /// Its senders and their counts, for the console's actor graph.
    #[cfg(feature = "console")]
    pub(crate) edges: crate::actor::edges::Edges,
    // Band 3.
    pub(crate) inbox: ActorInbox<A>,
    // Band 4.
    /// Read by the run loop for every message (are dead letters
    /// abandoned?), so kept a line from what pushes write.
    pub(crate) sup: Supervisor<A>,
    /// The ports that `request`s' reply routes to this actor go through,
    /// one per reply type, made on first use (`reply::Ports`).
    pub(crate) ports: crate::reply::Ports,
    /// Written by the lock holder on every handled message.
    pub(crate) locked: LockedCounters,
    state: StateCell<A>,
}

/// The address of the `ActorLock` inside a cell's `Arc<ActorLock>`.
struct LockAt(NonNull<ActorLock>);

// SAFETY: a `LockAt` is only ever turned into a `&ActorLock` (by
// `ActorCell::lock_word`), and `ActorLock` is `Sync`: sharing or sending the
// address is sharing a `&ActorLock`, which is `Send` and `Sync`.
unsafe impl Send for LockAt {}
// SAFETY: as for `Send`.
unsafe impl Sync for LockAt {}

/// The actor's state. Reached only through [`Entered::access`] and
/// [`Entered::replace_state`], that is, only by the thread holding the
/// actor's lock with the actor's frame on its chain (module docs), and
/// filled or emptied only under that lock ([`ActorCell::fill`],
/// [`ActorCell::vacate`]). `None` exactly while the cell's `VACANT` flag
/// is set; no entry is admitted then, so an `Entered` always finds `Some`.
struct StateCell<A>(UnsafeCell<Option<A>>);

// SAFETY: every access to the state goes through an `Entered`, which proves
// the accessing thread holds the actor's lock; the lock serialises those
// accesses across threads. Sharing a `StateCell` between threads therefore
// hands `A` from one thread to the next but never lets two threads touch it
// at once, and that needs `A: Send` only (not `A: Sync`). The bound on
// `ActorConfig::Home` (`Admits<Self>`) makes `A: Send` unless `A`'s home
// is `OwnThread`;
// a state that is not `Send` is constructible here only through
// `ActorCell::vacant` + `fill` on its home thread (`spawn_with`,
// `spawn_group_with`; every by-value path requires `A: Send`), is entered
// only on that thread (`enter_or` refuses other threads before touching
// anything, run loops run there), and is dropped there (`vacate` at stop).
// So a `!Send` state never leaves its thread, and `A: Send` is not needed
// for `Sync` or `Send`.
unsafe impl<A: ActorConfig> Sync for StateCell<A> {}
// SAFETY: as for `Sync` above: the cell moves between threads (inside the
// `Arc` of every address), the state it holds does not, unless it is
// `Send`.
unsafe impl<A: ActorConfig> Send for StateCell<A> {}

impl<A: Actor> ActorCell<A> {
    pub(crate) fn new(
        actor: A,
        lock: Arc<ActorLock>,
        policy: CyclePolicy,
        inbox: ActorInbox<A>,
        clock: Clock,
        dead: DeadLetters,
        instance: Instance,
    ) -> Self
    where
        // A state given by value may have been made on another thread.
        A: Send,
    {
        Self::with_state(Some(actor), lock, policy, inbox, clock, dead, instance)
    }

    /// A cell without a state yet: messages can be queued for it, entries
    /// are refused until [`fill`](Self::fill).
    pub(crate) fn vacant(
        lock: Arc<ActorLock>,
        policy: CyclePolicy,
        inbox: ActorInbox<A>,
        clock: Clock,
        dead: DeadLetters,
        instance: Instance,
    ) -> Self {
        Self::with_state(None, lock, policy, inbox, clock, dead, instance)
    }

    fn with_state(
        actor: Option<A>,
        lock: Arc<ActorLock>,
        policy: CyclePolicy,
        inbox: ActorInbox<A>,
        clock: Clock,
        dead: DeadLetters,
        instance: Instance,
    ) -> Self {
        if actor.is_none() {
            // A vacant cell's entries must see `VACANT`.
            lock.member_flagged();
        }
        let id = ActorId::next();
        ActorCell {
            lock_at: LockAt(NonNull::from(&*lock)),
            lock,
            flags: AtomicU8::new(if actor.is_some() { 0 } else { VACANT }),
            stats: Stats::default(),
            locked: LockedCounters::default(),
            state: StateCell(UnsafeCell::new(actor)),
            head: FrameHead {
                actor: id,
                names: const {
                    &FrameNames {
                        actor: <A as ActorConfig>::NAME,
                        classes: A::CLASSES,
                    }
                },
            },
            policy,
            inbox,
            clock,
            sup: Supervisor::new(dead),
            home: AtomicU32::new(0),
            ports: crate::reply::Ports::new(),
            entered: EnteredFlag::new(),
            instance,
            #[cfg(feature = "console")]
            edges: Default::default(),
        }
    }

    /// Records handler service times from now on: allocates one histogram
    /// per message class and sets [`TIMED`]. For the spawner, before the
    /// actor's thread starts; an entry that read the flags just before is
    /// not timed.
    pub(crate) fn record_latency(&self) {
        self.stats
            .latency
            .get_or_init(|| Box::new(Latencies::new(A::CLASSES.len())));
        self.raise(TIMED);
    }

    /// Sets flag bits (by the lock holder, or by the spawner before the
    /// actor starts), and tells the lock when the first one goes up.
    fn raise(&self, bits: u8) {
        // The flag first, then the lock (see `ActorLock::unflag_if`).
        let before = self.flags.fetch_or(bits, Ordering::SeqCst);
        if before == 0 && bits != 0 {
            self.lock.member_flagged();
        }
    }

    /// Clears flag bits (by the lock holder), and tells the lock when the
    /// last one goes.
    fn lower(&self, bits: u8) {
        let before = self.flags.fetch_and(!bits, Ordering::SeqCst);
        if before != 0 && before & !bits == 0 {
            self.lock
                .member_unflagged(|| self.flags.load(Ordering::SeqCst));
        }
    }

    /// The actor's id.
    #[inline]
    pub(crate) fn id(&self) -> ActorId {
        self.head.actor
    }

    pub(crate) fn target(&self) -> Target {
        Target::new(self.id(), <A as ActorConfig>::NAME, self.instance.name())
    }

    /// Queues an envelope for the actor's run loop. A push that must wait
    /// for room first checks that the thread it waits for (the consumer of
    /// this actor's queue) is not waiting for this one. A refusal names
    /// this actor.
    #[inline(always)]
    pub(crate) fn push(&self, msg: A::Msg) -> Result<usize, SendError<A::Msg>> {
        #[cfg(feature = "tracing")]
        let msg = crate::actor::trace::Traced::new(msg, crate::actor::trace::Via::Queued);
        // The simulator may find a bounded, rejecting mailbox full here.
        #[cfg(feature = "sim")]
        if self.inbox.rejects_when_full() && crate::base::sim_watch::full(|| self.target()) {
            return Err(self.refused(SendError::full(msg)));
        }
        match self.inbox.push(msg, &|| self.before_room_wait()) {
            Ok(len) => {
                #[cfg(feature = "console")]
                self.edges.record_send();
                Ok(len)
            }
            Err(e) => Err(self.refused(e)),
        }
    }

    /// A refusal of this actor's queue, naming this actor (the queue knows
    /// no actor). Off the delivery path: the name is made only here.
    #[cold]
    #[inline(never)]
    fn refused(&self, e: SendError<Queued<A::Msg>>) -> SendError<A::Msg> {
        #[cfg(feature = "tracing")]
        let e = e.map(crate::actor::trace::Traced::into_msg);
        e.naming(self.target())
    }

    #[cold]
    fn before_room_wait(&self) -> Result<Option<deadlock::Registered>, Vec<WaitEdge>> {
        let on = WaitOn::consumer(WaitKind::Room, &self.lock);
        match deadlock::before_wait(chain::thread_token(), on, || self.target()) {
            Ok(registered) => Ok(Some(registered)),
            Err(cycle) => {
                self.stats.shared.bump(Rare::Deadlocks);
                Err(cycle)
            }
        }
    }

    /// Queues a message one of the actor's timers fired, without ever
    /// waiting for room: a full mailbox hands it back as `Full`, for the
    /// timer queue to retry (see `Inbox::push_timer`).
    /// `timer` is the timer's tag ([`timer_tag`](Self::timer_tag)), 0 for
    /// a standalone actor's.
    pub(crate) fn push_timer(&self, msg: A::Msg, timer: u64) -> Result<usize, SendError<A::Msg>> {
        #[cfg(feature = "tracing")]
        let msg = crate::actor::trace::Traced::new(msg, crate::actor::trace::Via::Timer);
        self.inbox
            .push_timer(msg, timer)
            .map_err(|e| self.refused(e))
    }

    /// The tag of a timer the actor arms now: for a group member, its
    /// place among the timers the group's members armed (a journal records
    /// it, a replay fires by it); `None` for a standalone actor.
    pub(crate) fn timer_tag(&self) -> Option<u64> {
        self.inbox.timer_tag()
    }

    /// The actor's lock (its group's, for a member).
    pub(crate) fn lock(&self) -> &Arc<ActorLock> {
        &self.lock
    }

    /// The actor's lock, reached through `lock_at`.
    #[inline(always)]
    fn lock_word(&self) -> &ActorLock {
        // SAFETY: `lock_at` points into the allocation of `self.lock`,
        // which is never replaced and lives as long as `self`.
        unsafe { self.lock_at.0.as_ref() }
    }

    pub(crate) fn shared_counters(&self) -> &SharedCounters {
        &self.stats.shared
    }

    /// A snapshot of the actor's counters (without its name).
    pub(crate) fn counters(&self) -> ActorStats {
        self.stats.snapshot(&self.locked)
    }

    /// Whether the actor is stopped for good: its `stopped` hook ran
    /// (`STOPPED`), or supervision halted it (`HALTED`: it refuses every
    /// entry and send from then on, though a halted group member's hook
    /// runs only when its group stops).
    pub(crate) fn is_stopped(&self) -> bool {
        self.flags.load(Ordering::Acquire) & (STOPPED | HALTED) != 0
    }

    /// The flag bits; exact only for the lock holder.
    #[inline]
    pub(crate) fn flags(&self) -> u8 {
        self.flags.load(Ordering::Relaxed)
    }

    /// Records the calling thread, which holds the lock for the run loop it
    /// is about to start, as this actor's home (see `THREAD_BOUND`). Does
    /// nothing for an actor that is not thread-bound: no entry reads its
    /// home, and the thread keeps its home id for one that does.
    pub(crate) fn bind_home(&self, held: &Held<'_>) {
        self.assert_own(held);
        if <A as ActorConfig>::THREAD_BOUND {
            self.home
                .store(chain::this_thread().home_id(), Ordering::Relaxed);
        }
    }

    /// Forgets the actor's home: no thread passes the home check of a
    /// thread-bound actor from now on. By its home thread, when the actor
    /// has stopped and its state was dropped there.
    pub(crate) fn clear_home(&self) {
        self.home.store(0, Ordering::Relaxed);
    }

    /// Marks the actor stopped; later entries get `Closed`.
    pub(crate) fn mark_stopped(&self, _held: &Held<'_>) {
        self.raise(STOPPED);
    }

    /// Puts the first state into a vacant cell and opens it for entries.
    ///
    /// # Panics
    ///
    /// If `held` is not this actor's lock, or the cell has a state.
    pub(crate) fn fill(&self, held: &Held<'_>, actor: A) {
        self.assert_own(held);
        assert!(
            self.flags() & VACANT != 0,
            "kaspar: an actor's state was given twice"
        );
        // SAFETY: `held` proves this thread holds the actor's lock, and the
        // cell is `VACANT`: every entry takes the lock and then refuses a
        // vacant cell before it reaches the state, so no reference to the
        // slot exists. Writing it is exclusive.
        unsafe { *self.state.0.get() = Some(actor) };
        // Published by the lock's release to whoever takes it next.
        self.lower(VACANT);
    }

    /// Takes the state out of a stopped actor, so that it is dropped on the
    /// calling thread (a thread-bound state on its own thread). Later
    /// entries are refused as they were.
    pub(crate) fn vacate(&self, held: &Held<'_>) -> Option<A> {
        self.assert_own(held);
        debug_assert!(self.flags() & STOPPED != 0, "vacating a running actor");
        self.raise(VACANT);
        // SAFETY: `held` proves this thread holds the lock, and the actor is
        // stopped: no entry is admitted (each refuses `STOPPED` before it
        // reaches the state), so nothing borrows the slot.
        unsafe { (*self.state.0.get()).take() }
    }

    fn assert_own(&self, held: &Held<'_>) {
        assert!(
            Arc::ptr_eq(held.lock, &self.lock),
            "kaspar: run loop entered an actor under a lock that is not its own"
        );
    }
}

mod entered;
mod entry;
mod held;
#[cfg(all(test, not(loom)))]
mod tests;

pub(crate) use entry::Entered;
pub(crate) use entry::EnteredFlag;
/// An entry's `entered` mark, for the loom models (`crate::__loom`).
#[cfg(loom)]
pub(crate) use entry::EnteredMark;
pub(crate) use held::Held;
