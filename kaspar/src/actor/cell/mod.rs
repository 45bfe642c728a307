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
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::Instant;

use crate::actor::instance::Instance;
use crate::actor::restart;
use crate::actor::traits::{AccessMode, AccessRef, Actor, ActorConfig};
use crate::base::clock::Clock;
use crate::base::ids::{ActorId, ClassId};
use crate::base::latency::Latencies;
use crate::base::stats::{SharedCounters, Stats};
use crate::base::sync::{AtomicU8, AtomicUsize, Ordering};
use crate::error::SendError;
use crate::error::Target;
use crate::failure::dead_letters::DeadLetters;
use crate::failure::supervision::Supervisor;
use crate::guard::chain::{
    self, CallChain, ChainGuard, CyclePolicy, FrameHead, FrameNames, GroupMark,
};
use crate::guard::deadlock::{self, WaitEdge, WaitKind, WaitOn};
use crate::guard::lock::{ActorLock, Wait};
use crate::mailbox::inbox::Inbox;

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
/// its queued messages go to dead letters.
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

pub(crate) struct ActorCell<A: Actor> {
    lock: Arc<ActorLock>,
    /// `lock`'s address, read by every entry: one load where dereferencing
    /// the `Arc` would add its header offset on the way.
    lock_at: LockAt,
    /// `STOPPED | HALTED | RESTART_PENDING | VACANT | TIMED`, written only
    /// by the lock holder (so a `Relaxed` read under the lock sees the
    /// latest value), except `TIMED`, which the spawner may set at any
    /// time; every write is a read-modify-write, so none is lost. Zero on
    /// the fast path: entry tests it once.
    flags: AtomicU8,
    pub(crate) stats: Stats,
    state: StateCell<A>,
    pub(crate) id: ActorId,
    /// The actor as its frames on a call chain name it (a copy of `id` and
    /// the type's names): a frame is a pointer to this and a class.
    head: FrameHead,
    pub(crate) policy: CyclePolicy,
    pub(crate) inbox: Inbox<A::Msg>,
    pub(crate) clock: Clock,
    pub(crate) sup: Supervisor<A>,
    /// Token of the thread that runs this actor's loop (see
    /// [`bind_home`](Self::bind_home)), or 0 before it started. Read on
    /// entry only for a thread-bound actor (`ActorConfig::THREAD_BOUND`).
    home: AtomicUsize,
    /// Whether the state of this `Exclusive` group member is borrowed right
    /// now (one of its handlers is running). It stands in for the
    /// call-chain scan on the intra-group path (module docs).
    entered: EnteredFlag,
    /// Its instance name and system; never read on a delivery's way in.
    pub(crate) instance: Instance,
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

/// Proof that the calling thread holds an actor's lock and has its frame on
/// the call chain. Dropping it pops the frame. (The lock, if this entry
/// took it, is released by a [`Release`] that outlives the `Entered`.)
pub(crate) struct Entered<'a, A: Actor> {
    cell: &'a ActorCell<A>,
    /// Pops this entry's frame; `None` for an intra-group entry, which
    /// pushes none.
    _frame: Option<ChainGuard>,
    /// Clears the member's `entered` mark; `Some` for every entry into an
    /// `Exclusive` group member.
    _mark: Option<EnteredMark<'a>>,
}

/// An `Exclusive` group member's `entered` mark: a plain `bool`, read and
/// written only by the thread holding the member's lock (its group's),
/// whose acquire and release order it between holders, so no atomic
/// access is needed.
struct EnteredFlag(UnsafeCell<bool>);

// SAFETY: the flag is only reached through `get` and `set`, whose callers
// hold the lock that serialises every access across threads.
unsafe impl Sync for EnteredFlag {}

impl EnteredFlag {
    /// # Safety
    ///
    /// The calling thread holds the member's lock.
    #[inline(always)]
    unsafe fn get(&self) -> bool {
        // SAFETY: the caller holds the lock, so no other thread accesses the
        // flag, and no reference to it outlives this read.
        unsafe { *self.0.get() }
    }

    /// # Safety
    ///
    /// As for [`get`](Self::get).
    #[inline(always)]
    unsafe fn set(&self, on: bool) {
        // SAFETY: as for `get`.
        unsafe { *self.0.get() = on }
    }
}

/// Clears an `Exclusive` group member's `entered` mark when its entry
/// ends (also on unwind). Made only by a thread holding the member's lock,
/// for an entry that ends before the lock is released; not `Send`.
struct EnteredMark<'a>(&'a EnteredFlag, PhantomData<*const ()>);

impl Drop for EnteredMark<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: the entry this mark belongs to holds the lock until after
        // the mark is dropped (on the thread that made it).
        unsafe { self.0.set(false) };
    }
}

/// Releases a lock that this thread acquired for one entry, when dropped
/// (also on unwind). Kept apart from [`Entered`], which handlers borrow
/// through a `catch_unwind`: the compiler sees that nothing can change
/// whether this entry releases, so the uncontended path has no flag to
/// test.
struct Release<'a> {
    lock: &'a ActorLock,
    /// The acquiring thread's token.
    me: usize,
    /// Released by the thread that acquired it.
    _not_send: PhantomData<*const ()>,
}

impl Drop for Release<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: a `Release` is made only right after the thread `me`
        // acquired `lock` for one entry (`enter_or`, `enter_checked`); it
        // is not `Send`, so it is dropped on that thread, and it releases
        // once.
        unsafe { self.lock.release(self.me) };
    }
}

impl<A: Actor> ActorCell<A> {
    pub(crate) fn new(
        actor: A,
        lock: Arc<ActorLock>,
        policy: CyclePolicy,
        inbox: Inbox<A::Msg>,
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
        inbox: Inbox<A::Msg>,
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
        inbox: Inbox<A::Msg>,
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
            state: StateCell(UnsafeCell::new(actor)),
            id,
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
            home: AtomicUsize::new(0),
            entered: EnteredFlag(UnsafeCell::new(false)),
            instance,
        }
    }

    /// Records handler service times from now on: allocates one histogram
    /// per message class and sets [`TIMED`]. For the spawner, before the
    /// actor's thread starts; an entry that read the flags just before is
    /// not timed.
    pub(crate) fn record_latency(&self) {
        self.stats
            .latency
            .get_or_init(|| Latencies::new(A::CLASSES.len()));
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

    pub(crate) fn target(&self) -> Target {
        Target::new(
            self.id,
            <A as ActorConfig>::NAME,
            self.instance.name.clone(),
        )
    }

    /// Queues an envelope for the actor's run loop. A push that must wait
    /// for room first checks that the thread it waits for (the consumer of
    /// this actor's queue) is not waiting for this one.
    #[inline]
    pub(crate) fn push(&self, msg: A::Msg) -> Result<usize, SendError<A::Msg>> {
        self.inbox.push(msg, &|| self.before_room_wait())
    }

    #[cold]
    fn before_room_wait(&self) -> Result<Option<deadlock::Registered>, Vec<WaitEdge>> {
        let on = WaitOn::consumer(WaitKind::Room, &self.lock);
        match deadlock::before_wait(chain::thread_token(), on, || self.target()) {
            Ok(registered) => Ok(Some(registered)),
            Err(cycle) => {
                SharedCounters::bump(&self.stats.shared.deadlocks);
                Err(cycle)
            }
        }
    }

    /// Queues a message one of the actor's timers fired.
    pub(crate) fn push_timer(&self, msg: A::Msg) -> Result<usize, SendError<A::Msg>> {
        self.inbox.push_timer(msg)
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

    pub(crate) fn is_stopped(&self) -> bool {
        self.flags.load(Ordering::Acquire) & STOPPED != 0
    }

    /// The flag bits; exact only for the lock holder.
    #[inline]
    pub(crate) fn flags(&self) -> u8 {
        self.flags.load(Ordering::Relaxed)
    }

    /// [`enter_or`](Self::enter_or) with the refusal as an `Err` (tests).
    #[cfg(test)]
    pub(crate) fn enter_with<C, R>(
        &self,
        class: ClassId,
        policy: CyclePolicy,
        wait: Wait,
        carry: C,
        f: impl FnOnce(&mut Entered<'_, A>, C) -> R,
    ) -> Result<R, (Refusal, C)> {
        self.enter_or(
            class,
            policy,
            wait,
            carry,
            |entered, carry| Ok(f(entered, carry)),
            |refusal, carry| Err((refusal, carry)),
        )
    }

    /// Enters the actor to run the handler of `class` (see module docs) and
    /// runs `f` under the entry; the entry ends when `f` returns. A refused
    /// entry hands `refused` the reason and `carry` (the message), which
    /// moves into `f` only once the entry succeeded. Both produce the
    /// caller's result, so nothing else leaves the entry.
    ///
    /// Two ways in are inlined into every delivery, each straight-line code
    /// with `f` inlined once:
    ///
    /// * *intra-group*: this thread holds the group lock of this
    ///   `Exclusive` member, and no member has a flag set. The member's
    ///   `entered` mark replaces the chain scan; no frame is pushed, no
    ///   lock touched, no flag read.
    /// * *uncontended*: the chain check and push, then one compare-and-swap
    ///   of the lock word from 0 to this thread's token. Success proves the
    ///   lock was free and the actor has no flag set (the word would carry
    ///   `FLAGGED`), so the flags need no separate read.
    ///
    /// Everything else (a held lock, a flagged actor, a group's lock from
    /// outside, a nested entry, waiting) is [`enter_checked`], out of line.
    ///
    /// [`enter_checked`]: Self::enter_checked
    #[inline(always)]
    pub(crate) fn enter_or<C, R>(
        &self,
        class: ClassId,
        policy: CyclePolicy,
        wait: Wait,
        carry: C,
        f: impl FnOnce(&mut Entered<'_, A>, C) -> R,
        refused: impl FnOnce(Refusal, C) -> R,
    ) -> R {
        let reentrant = <A::Access as AccessMode>::REENTRANT;
        let t = chain::this_thread();
        // A thread-bound state is reached only from its own thread. The
        // home token is written once, by that thread, so only that thread
        // can ever read its own token here; any other sees 0 or another
        // thread's token and is refused. (A constant `false` for every
        // other actor: the test compiles away.)
        if <A as ActorConfig>::THREAD_BOUND && self.home.load(Ordering::Relaxed) != t.token() {
            return refused(Refusal::ThreadBound, carry);
        }
        let lock = self.lock_word();
        if !reentrant && t.holds_group(lock) {
            return self.enter_intra(class, carry, f, refused);
        }
        // The frame goes on the chain before the lock is tried; a refused
        // entry drops the guard, which pops it again.
        let frame = match chain::enter_on(t, &self.head, class, reentrant, policy) {
            Ok(frame) => frame,
            Err(chain) => return refused(self.cycle(chain), carry),
        };
        let me = t.token();
        if lock.try_acquire_unflagged(me) {
            let _release = Release {
                lock,
                me,
                _not_send: PhantomData,
            };
            let mut entered = Entered {
                cell: self,
                _frame: Some(frame),
                _mark: None,
            };
            entered.count(class);
            return f(&mut entered, carry);
        }
        match self.enter_checked(me, frame, class, wait, carry, f) {
            Ok(out) => out,
            Err((refusal, carry)) => refused(refusal, carry),
        }
    }

    /// The intra-group entry (see [`enter_or`](Self::enter_or)): this
    /// thread holds the group's lock, and this member takes `&mut self`.
    #[inline(always)]
    fn enter_intra<C, R>(
        &self,
        class: ClassId,
        carry: C,
        f: impl FnOnce(&mut Entered<'_, A>, C) -> R,
        refused: impl FnOnce(Refusal, C) -> R,
    ) -> R {
        // SAFETY: this thread holds the group's lock, which is this
        // member's (`holds_group`, checked by the caller).
        if unsafe { self.entered.get() } {
            return refused(self.cycle(chain::snapshot()), carry);
        }
        // The thread marks a group it holds only while no member has a flag
        // set, and only it could set one now: no flags to check.
        debug_assert_eq!(self.flags(), 0, "intra-group entry into a flagged member");
        // SAFETY: as above; the mark is dropped with the entry, before the
        // caller's hold ends.
        unsafe { self.entered.set(true) };
        let mut entered = Entered {
            cell: self,
            _frame: None,
            _mark: Some(EnteredMark(&self.entered, PhantomData)),
        };
        entered.count(class);
        f(&mut entered, carry)
    }

    /// [`enter_or`](Self::enter_or) off its two inlined ways: the lock
    /// is held (by this thread: a nested entry; by another: the wait
    /// strategy, preceded by the deadlock check), or the word is flagged.
    #[cold]
    #[inline(never)]
    fn enter_checked<C, R>(
        &self,
        me: usize,
        frame: ChainGuard,
        class: ClassId,
        wait: Wait,
        carry: C,
        f: impl FnOnce(&mut Entered<'_, A>, C) -> R,
    ) -> Result<R, (Refusal, C)> {
        let lock: &ActorLock = &self.lock;
        if lock.held_by(me) {
            // Nested entry. The chain check proved this actor's state is
            // not borrowed as `&mut` through a frame on this thread. A
            // per-actor lock of an `Exclusive` actor held by this thread
            // would contradict the chain invariant; refuse rather than
            // trust it.
            let reentrant = <A::Access as AccessMode>::REENTRANT;
            if !(lock.is_group() || reentrant) {
                drop(frame);
                return Err((self.cycle(chain::snapshot()), carry));
            }
            return self.run_entered(frame, class, carry, f);
        }
        let acquired = lock.try_acquire(me);
        // Take the frame off while blocked, so the deadlock registry
        // records only what this thread actually holds.
        let frame = if acquired {
            frame
        } else {
            drop(frame);
            if let Err(refusal) = self.wait_for_lock(me, wait) {
                return Err((refusal, carry));
            }
            chain::push(&self.head, class)
        };
        let _release = Release {
            lock,
            me,
            _not_send: PhantomData,
        };
        // Dropped before `_release`: the mark never outlives the hold.
        let _group = lock
            .is_group()
            .then(|| GroupMark::set(lock, lock.members_clean()));
        self.run_entered(frame, class, carry, f)
    }

    /// An entry with the lock held by this thread, by any way but the two
    /// inlined ones: the `entered` mark of an `Exclusive` group member, the
    /// flags check, the count, `f`.
    #[inline(always)]
    fn run_entered<C, R>(
        &self,
        frame: ChainGuard,
        class: ClassId,
        carry: C,
        f: impl FnOnce(&mut Entered<'_, A>, C) -> R,
    ) -> Result<R, (Refusal, C)> {
        // SAFETY: every caller of `run_entered` holds the lock (nested, or
        // acquired by `enter_checked`, whose release outlives the entry).
        let mark = match unsafe { self.mark_entered() } {
            Ok(mark) => mark,
            Err(()) => {
                drop(frame);
                return Err((self.cycle(chain::snapshot()), carry));
            }
        };
        let mut entered = Entered {
            cell: self,
            _frame: Some(frame),
            _mark: mark,
        };
        let flags = self.flags.load(Ordering::Relaxed);
        if flags != 0 {
            return self.run_flagged(entered, flags, class, carry, f);
        }
        entered.count(class);
        Ok(f(&mut entered, carry))
    }

    /// For an `Exclusive` member of a group, whose lock this thread holds:
    /// sets its `entered` mark, or fails if it is already set (the member
    /// is running a handler further up this thread's stack, possibly
    /// reached intra-group, without a frame). `Ok(None)` for any other
    /// actor, whose chain check suffices.
    ///
    /// # Safety
    ///
    /// The calling thread holds this actor's lock, until after the returned
    /// mark is dropped.
    #[inline]
    unsafe fn mark_entered(&self) -> Result<Option<EnteredMark<'_>>, ()> {
        if <A::Access as AccessMode>::REENTRANT || !self.lock.is_group() {
            return Ok(None);
        }
        // SAFETY: the caller holds this member's lock.
        if unsafe { self.entered.get() } {
            return Err(());
        }
        // SAFETY: as above, until after the mark is dropped.
        unsafe { self.entered.set(true) };
        Ok(Some(EnteredMark(&self.entered, PhantomData)))
    }

    /// [`run_entered`](Self::run_entered) for an actor with some flag set:
    /// the admission check unless `TIMED` is the only flag, and the handler
    /// timed if the actor records latency.
    #[cold]
    #[inline(never)]
    fn run_flagged<C, R>(
        &self,
        mut entered: Entered<'_, A>,
        flags: u8,
        class: ClassId,
        carry: C,
        f: impl FnOnce(&mut Entered<'_, A>, C) -> R,
    ) -> Result<R, (Refusal, C)> {
        if flags & !TIMED != 0 {
            if let Err(refusal) = entered.admit(flags) {
                // Dropping the entry pops the frame (and the caller's
                // `Release` lets go of a lock this entry took).
                return Err((refusal, carry));
            }
        }
        entered.count(class);
        let latency = match self.stats.latency.get() {
            Some(latency) if class != ClassId::LIFECYCLE => latency,
            _ => return Ok(f(&mut entered, carry)),
        };
        let start = Instant::now();
        let out = f(&mut entered, carry);
        // Still under the entry, so still the only writer.
        latency.record(class, start.elapsed());
        Ok(out)
    }

    #[cold]
    fn cycle(&self, chain: CallChain) -> Refusal {
        SharedCounters::bump(&self.stats.shared.cycles);
        Refusal::Cycle(chain)
    }

    #[cold]
    fn wait_for_lock(&self, me: usize, wait: Wait) -> Result<(), Refusal> {
        if wait == Wait::Try {
            return Err(Refusal::Busy);
        }
        let target = || self.target();
        let _registered = match deadlock::before_wait(me, WaitOn::lock(&self.lock), target) {
            Ok(r) => r,
            Err(cycle) => {
                SharedCounters::bump(&self.stats.shared.deadlocks);
                return Err(Refusal::Deadlock(cycle));
            }
        };
        match wait {
            Wait::Try => unreachable!("handled above"),
            Wait::Spin => self.lock.spin_acquire(me),
            Wait::Adaptive => self.lock.adaptive_acquire(me),
            Wait::Park => self.lock.park_acquire(me),
        }
        Ok(())
    }

    /// Takes this actor's lock for a run loop's batch (see [`Held`]).
    pub(crate) fn hold(&self) -> Held<'_> {
        Held::acquire_watched(&self.lock, || self.target())
    }

    /// Enters for one queued message of `class`, under a lock the calling
    /// run loop already holds. The run loop's chain is empty between
    /// messages, so there is nothing to check.
    ///
    /// # Panics
    ///
    /// If `held` is not this actor's lock: entering without it would be
    /// unsound, so this is checked, not assumed.
    #[inline]
    pub(crate) fn enter_held<'h>(&'h self, held: &'h Held<'_>, class: ClassId) -> Entered<'h, A> {
        self.assert_own(held);
        assert!(
            self.flags() & VACANT == 0,
            "kaspar: run loop entered an actor that has no state"
        );
        let frame = chain::push(&self.head, class);
        // SAFETY: `held` is this actor's lock (asserted above), held by this
        // thread for as long as the entry can live (it borrows `held`).
        let mark = unsafe { self.mark_entered() }
            .expect("kaspar: run loop entered a group member that is running a handler");
        let entered = Entered {
            cell: self,
            _frame: Some(frame),
            _mark: mark,
        };
        entered.count(class);
        entered
    }

    /// Records the calling thread, which holds the lock for the run loop it
    /// is about to start, as this actor's home (see `THREAD_BOUND`).
    pub(crate) fn bind_home(&self, held: &Held<'_>) {
        self.assert_own(held);
        self.home.store(held.me, Ordering::Relaxed);
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
            std::ptr::eq(held.lock, &*self.lock),
            "kaspar: run loop entered an actor under a lock that is not its own"
        );
    }
}

impl<'a, A: Actor> Entered<'a, A> {
    /// The handler's view of the state.
    #[inline(always)]
    pub(crate) fn access(&mut self) -> AccessRef<'_, A> {
        // SAFETY: `self` proves this thread holds the lock (no other thread
        // can reach the state) and that the actor's frame is on the chain.
        // Entry refused any `Exclusive` actor already on the chain, so no
        // other `&mut A` is live on this thread; a `Shared` actor may be
        // entered again, but all its references are `&A`. The returned
        // reference borrows `self`, so it cannot outlive the entry.
        //
        // The slot is `Some`: this entry was admitted, and admission refuses
        // a `VACANT` cell, whose flag is cleared only once the slot is
        // filled and set before it is emptied, both under the lock this
        // entry holds.
        unsafe {
            let slot = &mut *self.cell.state.0.get();
            debug_assert!(slot.is_some(), "an admitted entry found no state");
            <A::Access as AccessMode>::from_ptr(slot.as_mut().unwrap_unchecked())
        }
    }

    /// Off the fast path (some flag other than [`TIMED`] is set): whether
    /// the entry may run its handler. Performs a restart left pending by a
    /// nested panic.
    #[cold]
    #[inline(never)]
    fn admit(&mut self, flags: u8) -> Result<(), Refusal> {
        if flags & (STOPPED | HALTED) != 0 {
            return Err(Refusal::Closed);
        }
        if flags & VACANT != 0 {
            return Err(Refusal::NotStarted);
        }
        if flags & RESTART_PENDING != 0 {
            restart::restart_pending(self);
        }
        if self.flags() & HALTED != 0 {
            return Err(Refusal::Closed);
        }
        Ok(())
    }

    /// Counts a handler entry (not a lifecycle hook) in `handled`. Counted
    /// as the handler starts, in every mode: a reply cannot reach its
    /// caller before the count includes its message, and the handler sees
    /// itself counted whichever way it was reached. `class` is a constant
    /// at every call site, so the test folds away.
    #[inline(always)]
    fn count(&self, class: ClassId) {
        if class != ClassId::LIFECYCLE {
            self.cell.stats.locked.handled();
        }
    }

    /// The cell this entry holds.
    pub(crate) fn cell(&self) -> &'a ActorCell<A> {
        self.cell
    }

    /// The flag bits (exact: this entry holds the lock).
    pub(crate) fn flags(&self) -> u8 {
        self.cell.flags.load(Ordering::Relaxed)
    }

    /// Sets flag bits; only a lock holder writes them.
    pub(crate) fn set_flag(&self, bits: u8) {
        self.cell.raise(bits);
    }

    /// Clears flag bits; only a lock holder writes them.
    pub(crate) fn clear_flag(&self, bits: u8) {
        self.cell.lower(bits);
    }

    /// Whether [`replace_state`](Self::replace_state) would succeed: this
    /// entry is the only entry of the actor on this thread. Always so for
    /// an `Exclusive` actor, which is never entered twice (the chain check,
    /// or a group member's `entered` mark); for a `Shared` one, this
    /// entry's frame is the only frame of the actor on the chain.
    #[cold]
    pub(crate) fn may_replace_state(&self) -> bool {
        if !<A::Access as AccessMode>::REENTRANT {
            return true;
        }
        let id = self.cell.id;
        chain::snapshot()
            .frames()
            .iter()
            .filter(|f| f.actor() == id)
            .count()
            == 1
    }

    /// Replaces the actor's state with `new` (a supervised restart) and
    /// returns the old one; hands `new` back if some other entry of this
    /// actor, further up this thread's stack, may still borrow the state.
    #[cold]
    pub(crate) fn replace_state(&mut self, new: A) -> Result<A, A> {
        if !self.may_replace_state() {
            return Err(new);
        }
        // SAFETY: `self` proves this thread holds the actor's lock, so no
        // other thread can reach the state (module invariant: a state is
        // borrowed only by the lock holder). On this thread a reference to
        // the state exists only while one of the actor's frames is on the
        // chain; the check above found exactly one, this entry's own. The
        // only references this entry ever handed out came from `access`,
        // which borrows `self`; `&mut self` here proves none of them is
        // live. So nothing borrows the state, and writing it is exclusive,
        // also for a `Shared` (reentrant) actor.
        let old = unsafe { std::ptr::replace(self.cell.state.0.get(), Some(new)) };
        Ok(old.expect("kaspar: an admitted entry found no state"))
    }
}

mod held;
#[cfg(all(test, not(loom)))]
mod tests;

pub(crate) use held::Held;
