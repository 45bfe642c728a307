//! How a handler invocation enters an actor: the synchronous entry
//! ([`ActorCell::enter_or`], its inlined intra-group and uncontended ways
//! and its out-of-line checked way), the run loop's entry under a lock it
//! holds ([`ActorCell::enter_held`]), and the guards that end an entry.
//! The protocol and the invariant it keeps are in the parent module's docs.

use std::marker::PhantomData;
use std::time::Instant;

use super::{ActorCell, Held, Refusal, TIMED, VACANT};
use crate::actor::traits::{AccessMode, Actor, ActorConfig};
use crate::base::ids::ClassId;
use crate::base::stats::Rare;
use crate::base::sync::{Ordering, UnsafeCell};
use crate::guard::chain::{self, CallChain, ChainGuard, CyclePolicy, GroupMark};
use crate::guard::deadlock::{self, WaitKind, WaitOn};
use crate::guard::lock::{ActorLock, Wait};

/// Proof that the calling thread holds an actor's lock and has its frame on
/// the call chain. Dropping it pops the frame. (The lock, if this entry
/// took it, is released by a [`Release`] that outlives the `Entered`.)
pub(crate) struct Entered<'a, A: Actor> {
    pub(super) cell: &'a ActorCell<A>,
    /// Pops this entry's frame; `None` for an intra-group entry, which
    /// pushes none.
    _frame: Option<ChainGuard>,
    /// Clears the member's `entered` mark; `Some` for every entry into an
    /// `Exclusive` group member.
    _mark: Option<EnteredMark<'a>>,
    /// Makes this actor the thread's current one (the sender of what its
    /// handler sends) while the entry lasts.
    #[cfg(feature = "console")]
    pub(super) current: crate::actor::edges::Current,
}

/// An `Exclusive` group member's `entered` mark: a plain `bool`, read and
/// written only by the thread holding the member's lock (its group's),
/// whose acquire and release order it between holders, so no atomic
/// access is needed. (The cell is the `sync` shim's: under loom, loom's,
/// so the models in `tests/loom_group_mark.rs` check that ordering.)
pub(crate) struct EnteredFlag(UnsafeCell<bool>);

// SAFETY: the flag is only reached through `get` and `set`, whose callers
// hold the lock that serialises every access across threads.
unsafe impl Sync for EnteredFlag {}

impl EnteredFlag {
    pub(crate) fn new() -> Self {
        EnteredFlag(UnsafeCell::new(false))
    }

    /// # Safety
    ///
    /// The calling thread holds the member's lock.
    #[inline(always)]
    unsafe fn get(&self) -> bool {
        // SAFETY: the caller holds the lock, so no other thread accesses the
        // flag, and no reference to it outlives this read.
        self.0.with(|on| unsafe { *on })
    }

    /// # Safety
    ///
    /// As for [`get`](Self::get).
    #[inline(always)]
    unsafe fn set(&self, on: bool) {
        // SAFETY: as for `get`.
        self.0.with_mut(|flag| unsafe { *flag = on })
    }

    /// Sets the mark for an entry, or fails if it is set already (the
    /// member is running a handler further up this thread's stack).
    ///
    /// # Safety
    ///
    /// The calling thread holds the member's lock, until after the
    /// returned mark is dropped.
    #[inline(always)]
    pub(crate) unsafe fn mark(&self) -> Result<EnteredMark<'_>, ()> {
        // SAFETY: the caller holds the lock.
        if unsafe { self.get() } {
            return Err(());
        }
        // SAFETY: as above, until after the mark is dropped.
        unsafe { self.set(true) };
        Ok(EnteredMark(self, PhantomData))
    }
}

/// Clears an `Exclusive` group member's `entered` mark when its entry
/// ends (also on unwind). Made only by a thread holding the member's lock,
/// for an entry that ends before the lock is released; not `Send`.
pub(crate) struct EnteredMark<'a>(&'a EnteredFlag, PhantomData<*const ()>);

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
    /// [`enter_or`](Self::enter_or) with the refusal as an `Err` (tests).
    #[cfg(all(test, not(loom)))]
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
        // home id is written by that thread (and cleared by it when the
        // actor stops), and a home id is never reused by another thread
        // (`ThreadState::home_id`), so only that thread can ever read its
        // own id here; any other sees 0 or another thread's id and is
        // refused. (A constant `false` for every other actor: the test
        // compiles away.)
        if <A as ActorConfig>::THREAD_BOUND && !t.is_home(self.home.load(Ordering::Relaxed)) {
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
                #[cfg(feature = "console")]
                current: crate::actor::edges::Current::call(self.id()),
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
            #[cfg(feature = "console")]
            current: crate::actor::edges::Current::call(self.id()),
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
            #[cfg(feature = "console")]
            current: crate::actor::edges::Current::call(self.id()),
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
        // SAFETY: the caller holds this member's lock, until after the
        // mark is dropped.
        unsafe { self.entered.mark() }.map(Some)
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

    /// A cycle refused: counted, and the chain handed back. Inlined into
    /// both ways in: called out of line, the call kept the cell's address
    /// live across the intra-group path (two to three instructions more
    /// per intra-group `fast_send`, by callgrind).
    #[inline(always)]
    fn cycle(&self, chain: CallChain) -> Refusal {
        self.stats.shared.bump(Rare::Cycles);
        Refusal::Cycle(chain)
    }

    #[cold]
    fn wait_for_lock(&self, me: usize, wait: Wait) -> Result<(), Refusal> {
        if wait == Wait::Try {
            return Err(Refusal::Busy);
        }
        // The lock waits for the actor's first activation (`start` handed
        // it over so that `started` runs first); on a hosted pool that
        // activation may need this very thread.
        if self.lock.is_handed_over()
            && !self
                .inbox
                .before_first_wait(&|| !self.lock.is_handed_over())
        {
            self.stats.shared.bump(Rare::Deadlocks);
            return Err(Refusal::Deadlock(deadlock::own_edge(
                me,
                WaitKind::Lock,
                self.target(),
            )));
        }
        let target = || self.target();
        let _registered = match deadlock::before_wait(me, WaitOn::lock(&self.lock), target) {
            Ok(r) => r,
            Err(cycle) => {
                self.stats.shared.bump(Rare::Deadlocks);
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
            #[cfg(feature = "console")]
            current: crate::actor::edges::Current::serve(self.id()),
        };
        entered.count(class);
        entered
    }
}

impl<A: Actor> Entered<'_, A> {
    /// Makes this entry, made by [`ActorCell::enter_held`] for a queued
    /// message whose handler has returned, the entry of the next queued
    /// message (of `class`), as if it had been dropped and made again:
    /// its frame names `class` and the message is counted. The lock,
    /// the group mark and the chain below stay as they are.
    #[inline(always)]
    pub(crate) fn next_message(&mut self, class: ClassId) {
        debug_assert!(self._frame.is_some(), "a run loop's entry has a frame");
        chain::retag_top(class);
        self.count(class);
    }
}
