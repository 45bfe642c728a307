//! The exclusive-access lock every actor's handlers run under.
//!
//! One word holds everything: the token of the holding thread (0 when
//! free) and two flag bits in the low bits (tokens are addresses of
//! 8-aligned thread-local data, so those bits are always free):
//!
//! * `PARKED`: some thread is parked waiting for the lock; the holder's
//!   release must wake one (and hands the lock to it directly when asked
//!   to be fair);
//! * `FLAGGED`: entries through this lock must take the checked path. A
//!   per-actor lock carries it exactly while the actor has a flag set
//!   (stopped, halted, a restart pending, no state, timed); a group's lock
//!   carries it always, because the members' flags differ.
//!
//! So the uncontended `fast_send` into an actor with nothing to check is
//! one compare-and-swap from 0 to its own token, and one back: no separate
//! owner word to write, no flags to read. The owner in the word serves two
//! readers, both off that path:
//!
//! * nested entry: a thread that already holds the lock (a group's thread
//!   holds its group's lock for a whole batch; a reentrant actor is held by
//!   the thread re-entering it) proceeds without another atomic RMW;
//! * the cross-thread deadlock detector ([`crate::guard::deadlock`]) follows
//!   "lock → owner → what the owner waits for" edges.
//!
//! Waiting uses parking_lot_core's address-keyed queue, the one under
//! parking_lot's own mutex (`base::sync::parking`; under loom, a yield).
//!
//! # Contract
//!
//! Acquiring is safe. Releasing, bumping and adopting are `unsafe fn`s:
//! each needs the calling thread to hold the lock, which only the guards
//! that acquired it can promise (`actor::cell` for a synchronous entry,
//! `actor::cell::Held` for a run loop's batch). The owner part of the word
//! is changed only by the holder (acquire, release, hand-over, adopt) or,
//! for a direct hand-off, by the releasing holder on the woken thread's
//! behalf. The loom models in `tests/loom_lock.rs` check this protocol;
//! `tests/loom_handover.rs`, `tests/loom_group_mark.rs` and
//! `tests/loom_registry.rs` check the hand-over, a run loop's bump and the
//! deadlock registry's view of them.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use crossbeam_utils::Backoff;

use crate::base::sync::{hint, parking, AtomicU32, AtomicUsize, Ordering};
use crate::guard::chain;

/// How long a synchronous delivery is prepared to wait for a held lock.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wait {
    /// `fast_send_x`, `fast_send_void`: never wait.
    Try,
    /// `fast_send_spin`: busy-wait with a spin hint.
    Spin,
    /// `fast_send_adaptive`: spin a bounded count, then park.
    Adaptive,
    /// `fast_send`: park.
    Park,
}

/// Word bit: a thread is parked (or about to park) waiting for the lock.
const PARKED: usize = 1;
/// Word bit: entries take the checked path (module docs).
const FLAGGED: usize = 2;
const BITS: usize = PARKED | FLAGGED;

/// The owner of a lock acquired for a thread that has yet to adopt it:
/// an address no thread-local data can have.
const HANDED_OVER: usize = !BITS;

/// Unpark token: the releaser made the woken thread the holder.
const HANDED_OFF: usize = 1;

pub(crate) struct ActorLock {
    /// Owner token | `PARKED` | `FLAGGED` (module docs). `Acquire` on
    /// every acquisition and `Release` on every release order the state
    /// the lock protects.
    word: AtomicUsize,
    /// Token of the thread that runs this lock's run loop (the actor's own
    /// thread, or its group's), or 0 while none does. The thread a queued
    /// message waits for: the deadlock detector follows it from an `ask`
    /// being waited on, or a send waiting for room. Written by that thread
    /// at the start and end of its loop; read under the registry mutex.
    consumer: AtomicUsize,
    /// Whether this lock is shared by the members of a group. Nested entry
    /// into *another* member is then legitimate; on a per-actor lock it can
    /// only mean re-entry into the same actor.
    group: bool,
    /// For a group's lock: how many members have a flag set. While none
    /// has, a thread holding the lock marks itself as its holder
    /// (`chain::GroupMark`), and calls between members skip the flags
    /// check (`actor::cell`). A `u32` beside `group`: every actor has a
    /// lock, so its 24 bytes (not 32) count, and no group has 2^32
    /// members.
    flagged_members: AtomicU32,
}

// Every actor has a lock, an idle pooled one too: three words.
#[cfg(all(target_pointer_width = "64", not(loom)))]
const _: () = assert!(std::mem::size_of::<ActorLock>() == 24);

/// Marks the calling thread as the consumer of a lock's queue while it
/// lives (see `ActorLock::consuming`).
pub(crate) struct Consuming<'a> {
    lock: &'a ActorLock,
}

impl Drop for Consuming<'_> {
    fn drop(&mut self) {
        self.lock.consumer.store(0, Ordering::Relaxed);
        chain::set_consuming(false);
    }
}

/// Marks the calling thread as the one that will start a prepared actor
/// (or group) whose lock this is, while it lives: until it starts, the
/// queue's messages wait for that thread, and the deadlock detector says
/// so (an `ask` to the prepared actor, waited on by the thread that must
/// start it, can never be answered). Not `Send`: dropped on the thread
/// that made it, which is the one it names.
pub(crate) struct Pledge {
    lock: Arc<ActorLock>,
    me: usize,
    _not_send: PhantomData<*const ()>,
}

impl Pledge {
    /// Pledges the calling thread (token `me`) to start `lock`'s run loop.
    pub(crate) fn new(lock: &Arc<ActorLock>, me: usize) -> Pledge {
        lock.consumer.store(me, Ordering::Relaxed);
        chain::set_pledged(true);
        Pledge {
            lock: Arc::clone(lock),
            me,
            _not_send: PhantomData,
        }
    }
}

impl Drop for Pledge {
    fn drop(&mut self) {
        // A run loop that has started since records itself; leave it.
        let _ =
            self.lock
                .consumer
                .compare_exchange(self.me, 0, Ordering::Relaxed, Ordering::Relaxed);
        chain::set_pledged(false);
    }
}

impl fmt::Debug for Pledge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pledge").field("me", &self.me).finish()
    }
}

impl fmt::Debug for ActorLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = self.word.load(Ordering::Relaxed);
        f.debug_struct("ActorLock")
            .field("owner", &(word & !BITS))
            .field("parked", &(word & PARKED != 0))
            .field("flagged", &(word & FLAGGED != 0))
            .field("consumer", &self.consumer.load(Ordering::Relaxed))
            .field("group", &self.group)
            .finish()
    }
}

impl ActorLock {
    pub(crate) fn new(group: bool) -> Self {
        ActorLock {
            word: AtomicUsize::new(if group { FLAGGED } else { 0 }),
            consumer: AtomicUsize::new(0),
            group,
            flagged_members: AtomicU32::new(0),
        }
    }

    /// For a group's lock: whether no member has a flag set.
    #[inline]
    pub(crate) fn members_clean(&self) -> bool {
        self.flagged_members.load(Ordering::SeqCst) == 0
    }

    /// An actor under this lock went from no flag to some flag. A per-actor
    /// lock is flagged; a group's counts the member, and the calling thread
    /// (the only one that changes a running member's flags: it holds the
    /// lock) stops marking itself as the holder of a clean group.
    pub(crate) fn member_flagged(&self) {
        if self.group {
            self.flagged_members.fetch_add(1, Ordering::SeqCst);
            chain::forget_group(self);
        } else {
            self.flag();
        }
    }

    /// An actor under this lock went from some flag to none (`flags_now`
    /// reads its flags): see [`unflag_if`](Self::unflag_if).
    pub(crate) fn member_unflagged(&self, flags_now: impl Fn() -> u8) {
        if self.group {
            self.flagged_members.fetch_sub(1, Ordering::SeqCst);
        } else {
            self.unflag_if(flags_now);
        }
    }

    pub(crate) fn is_group(&self) -> bool {
        self.group
    }

    /// The key this lock parks its waiters under.
    fn key(&self) -> usize {
        &self.word as *const AtomicUsize as usize
    }

    /// The holder's token, or 0.
    #[inline]
    pub(crate) fn owner(&self) -> usize {
        self.word.load(Ordering::Relaxed) & !BITS
    }

    /// The thread running this lock's run loop, or 0.
    #[inline]
    pub(crate) fn consumer(&self) -> usize {
        self.consumer.load(Ordering::Relaxed)
    }

    /// Records the calling thread (token `me`) as the one that handles this
    /// lock's queued messages, until the returned guard is dropped.
    pub(crate) fn consuming(&self, me: usize) -> Consuming<'_> {
        self.consumer.store(me, Ordering::Relaxed);
        chain::set_consuming(true);
        Consuming { lock: self }
    }

    /// Whether the calling thread (token `me`) holds the lock. `Relaxed`
    /// suffices: a thread always sees its own writes, and no other thread
    /// writes its token.
    #[inline]
    pub(crate) fn held_by(&self, me: usize) -> bool {
        self.owner() == me
    }

    /// The uncontended entry: succeeds only if the lock is free *and*
    /// unflagged, which is what lets the caller skip the flags check.
    #[inline(always)]
    pub(crate) fn try_acquire_unflagged(&self, me: usize) -> bool {
        self.word
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// One non-blocking attempt, whatever the flag bits.
    #[inline]
    pub(crate) fn try_acquire(&self, me: usize) -> bool {
        let mut cur = self.word.load(Ordering::Relaxed);
        loop {
            if cur & !BITS != 0 {
                return false;
            }
            match self.word.compare_exchange_weak(
                cur,
                cur | me,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Acquires a fresh lock on behalf of a thread that has yet to start
    /// (an actor's or a group's run loop), which takes it over with
    /// [`adopt`](Self::adopt) before anything else. Until then the owner
    /// names no thread, so a synchronous caller waits for the lock like
    /// for any holder (and the deadlock detector sees no thread to follow).
    /// This is how `start` guarantees that the `#[started]` hook runs before
    /// the first `fast_send`.
    ///
    /// The lock may be held for a moment when this is called: a prepared
    /// actor's address is public before it starts, and a synchronous
    /// delivery to it takes the lock, finds the actor vacant and lets go
    /// (`NotStarted`). So this waits for the lock like any caller; no
    /// holder of a vacant actor's lock runs a handler or waits for
    /// anything, so the wait is short and needs no deadlock check.
    pub(crate) fn hand_over(&self) {
        if !self.try_acquire(HANDED_OVER) {
            // A direct hand-off from a releasing holder writes the park
            // token, `HANDED_OVER`, as owner: exactly what `adopt` expects.
            self.park_acquire(HANDED_OVER);
        }
    }

    /// Whether the lock is held for a thread that has yet to adopt it: an
    /// actor's first activation (or its thread) that has not begun.
    pub(crate) fn is_handed_over(&self) -> bool {
        self.owner() == HANDED_OVER
    }

    /// Takes over a lock acquired by [`hand_over`](Self::hand_over): the
    /// calling thread (token `me`) holds it from now on.
    ///
    /// # Safety
    ///
    /// The lock was handed over for the calling thread, and no other thread
    /// adopts it: the caller then holds it as if it had acquired it, and
    /// must release it exactly once.
    pub(crate) unsafe fn adopt(&self, me: usize) {
        debug_assert_eq!(self.owner(), HANDED_OVER, "adopting a lock not handed over");
        // Waiters may set `PARKED` meanwhile: keep the bits.
        self.update(|w| (w & BITS) | me, Ordering::Acquire);
    }

    /// Busy-waits until acquired.
    pub(crate) fn spin_acquire(&self, me: usize) {
        while !self.try_acquire(me) {
            hint::spin_loop();
        }
    }

    /// Spins with exponential backoff for a bounded count, then parks.
    pub(crate) fn adaptive_acquire(&self, me: usize) {
        let backoff = Backoff::new();
        while !backoff.is_completed() {
            if self.try_acquire(me) {
                return;
            }
            backoff.snooze();
        }
        self.park_acquire(me);
    }

    /// Parks until acquired: spins briefly with backoff while nobody is
    /// parked (a short hold ends without a kernel round trip, as in
    /// parking_lot's mutex), then marks the word `PARKED` and sleeps on the
    /// lock's key until the holder hands the lock over or lets it go.
    pub(crate) fn park_acquire(&self, me: usize) {
        let backoff = Backoff::new();
        loop {
            if self.try_acquire(me) {
                return;
            }
            let cur = self.word.load(Ordering::Relaxed);
            if cur & !BITS == 0 {
                continue; // released meanwhile
            }
            if cur & PARKED == 0 && !backoff.is_completed() {
                backoff.snooze();
                continue;
            }
            if cur & PARKED == 0
                && self
                    .word
                    .compare_exchange_weak(cur, cur | PARKED, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            // Sleep only if the lock is still held and still marked: a
            // release in between cleared the mark and found nobody parked.
            let still_held = || {
                let w = self.word.load(Ordering::Relaxed);
                w & PARKED != 0 && w & !BITS != 0
            };
            if parking::park(self.key(), still_held, me) == Some(HANDED_OFF) {
                // The releaser wrote this thread's token into the word
                // before waking it; the wake-up orders that write (and
                // everything before the release) before this return.
                debug_assert_eq!(self.owner(), me);
                return;
            }
            // Woken without the lock (an unfair release, or the lock went
            // before this thread slept): spin afresh before parking again,
            // as parking_lot's mutex does, so a holder that takes the lock
            // back and forth quickly does not keep a woken waiter asleep.
            backoff.reset();
        }
    }

    /// Releases the lock.
    ///
    /// # Safety
    ///
    /// The calling thread (token `me`) acquired the lock (one of the
    /// acquires returned `true` or returned, or it adopted it) and has not
    /// released it since. Each acquisition is released exactly once.
    #[inline(always)]
    pub(crate) unsafe fn release(&self, me: usize) {
        if self
            .word
            .compare_exchange(me, 0, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            self.release_slow(false);
        }
    }

    /// A release with a flag bit set: keeps `FLAGGED`, and wakes one parked
    /// waiter, handing it the lock directly if `fair` (or if the parking
    /// queue asks for fairness, about every half millisecond per lock).
    #[cold]
    #[inline(never)]
    fn release_slow(&self, fair: bool) {
        // Nobody parked: let go, keeping `FLAGGED`. The compare-and-swap is
        // against the word seen without `PARKED`: a waiter that sets it
        // meanwhile (and may already be asleep) makes it fail, and the
        // release wakes it below instead of clearing its mark unseen.
        let mut cur = self.word.load(Ordering::Relaxed);
        while cur & PARKED == 0 {
            match self.word.compare_exchange_weak(
                cur,
                cur & FLAGGED,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
        parking::unpark_one(self.key(), |woken, more, be_fair| {
            let parked = if more { PARKED } else { 0 };
            match woken {
                Some(token) if fair || be_fair => {
                    self.update(|w| (w & FLAGGED) | token | parked, Ordering::Release);
                    HANDED_OFF
                }
                _ => {
                    self.update(|w| (w & FLAGGED) | parked, Ordering::Release);
                    0
                }
            }
        });
    }

    /// Lets a parked waiter (a blocked `fast_send`) in, then takes the lock
    /// back. A no-op unless somebody is parked. Called by run loops between
    /// the messages of a batch, so a batch does not starve synchronous
    /// callers. (The run loops go through `Held::bump`, which also takes
    /// the thread's group mark off while the lock is let go and registers
    /// the wait to take it back with the deadlock detector; this is the
    /// bare protocol, for the loom models.)
    ///
    /// # Safety
    ///
    /// The calling thread (token `me`) holds the lock. It holds it again
    /// when `bump` returns.
    #[inline]
    #[cfg_attr(not(loom), allow(dead_code))]
    pub(crate) unsafe fn bump(&self, me: usize) {
        // SAFETY: this function's contract.
        if unsafe { self.let_parked_in() } {
            self.park_acquire(me);
        }
    }

    /// Whether some thread is parked waiting for the lock.
    #[inline]
    pub(crate) fn has_parked(&self) -> bool {
        self.word.load(Ordering::Relaxed) & PARKED != 0
    }

    /// The first half of [`bump`](Self::bump): if a thread is parked, hands
    /// it the lock (a fair release) and returns `true`; the caller then no
    /// longer holds the lock and must take it back. Otherwise returns
    /// `false` and the caller still holds it.
    ///
    /// # Safety
    ///
    /// The calling thread holds the lock.
    #[inline]
    pub(crate) unsafe fn let_parked_in(&self) -> bool {
        if !self.has_parked() {
            return false;
        }
        self.release_slow(true);
        true
    }

    /// Sets `FLAGGED`: entries through this lock take the checked path
    /// from now on. By anyone who has just set an actor flag.
    pub(crate) fn flag(&self) {
        self.word.fetch_or(FLAGGED, Ordering::SeqCst);
    }

    /// Clears `FLAGGED` on a per-actor lock whose actor has no flag left
    /// (`flags_now` reads them), without losing a flag set concurrently by
    /// another thread: that thread sets its flag before [`flag`](Self::flag),
    /// and this re-reads the flags after clearing. A group's lock stays
    /// flagged.
    pub(crate) fn unflag_if(&self, flags_now: impl Fn() -> u8) {
        if self.group || flags_now() != 0 {
            return;
        }
        self.word.fetch_and(!FLAGGED, Ordering::SeqCst);
        if flags_now() != 0 {
            self.flag();
        }
    }

    /// A read-modify-write of the whole word.
    fn update(&self, f: impl Fn(usize) -> usize, success: Ordering) {
        let mut cur = self.word.load(Ordering::Relaxed);
        loop {
            match self
                .word
                .compare_exchange_weak(cur, f(cur), success, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }
}
