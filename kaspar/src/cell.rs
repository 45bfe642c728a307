//! An actor's shared core: its state behind its exclusive-access lock, its
//! mailbox, its counters, and the one function through which every handler
//! invocation, synchronous or queued, enters the state.
//!
//! # The entry protocol
//!
//! [`ActorCell::enter`] is the only way to reach the state. In order:
//!
//! 1. the call-chain check (thread-local; refuses a cycle before any lock
//!    is touched);
//! 2. the lock: if this thread already holds it, entry is *nested* (allowed
//!    for a group's shared lock and for reentrant actors only); otherwise a
//!    try-lock, and on failure the operation's wait strategy, preceded by
//!    the cross-thread deadlock check;
//! 3. the stopped check;
//! 4. the frame push.
//!
//! Soundness rests on one invariant: *an actor's state is borrowed on a
//! thread only while that actor's frame is on the thread's call chain, and
//! only while the thread holds the actor's lock.* The lock excludes other
//! threads. The chain check excludes a second `&mut` on the same thread:
//! an `Exclusive` actor already on the chain is refused under every policy.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::actor::{AccessMode, AccessRef, Actor, ActorConfig, ActorId, ClassId};
use crate::chain::{self, CallChain, ChainGuard, CyclePolicy, Frame};
use crate::clock::Clock;
use crate::deadlock::{self, WaitEdge};
use crate::error::Target;
use crate::inbox::Inbox;
use crate::lock::{ActorLock, Wait};
use crate::stats::{SharedCounters, Stats};

/// Why an entry was refused. The operation turns it into its own error.
pub(crate) enum Refusal {
    Cycle(CallChain),
    Busy,
    Deadlock(Vec<WaitEdge>),
    Closed,
}

pub(crate) struct ActorCell<A: Actor> {
    lock: Arc<ActorLock>,
    /// Set once, under the lock, after the `stopped` hook ran.
    stopped: AtomicBool,
    pub(crate) stats: Stats,
    state: UnsafeCell<A>,
    pub(crate) id: ActorId,
    pub(crate) policy: CyclePolicy,
    pub(crate) inbox: Inbox<A>,
    pub(crate) clock: Clock,
}

// SAFETY: the state is only reached through `enter`, which serialises
// access across threads with `lock` (module docs), so sharing the cell
// between threads moves `A` between them but never shares it: `A: Send`
// (an `ActorConfig` bound) is what that needs. The other fields are Sync.
unsafe impl<A: Actor> Sync for ActorCell<A> where Inbox<A>: Sync {}

/// Proof that the calling thread holds an actor's lock and has its frame on
/// the call chain. Dropping it pops the frame and, if this entry took the
/// lock, releases it.
pub(crate) struct Entered<'a, A: Actor> {
    cell: &'a ActorCell<A>,
    fresh: bool,
    /// Whether this entry runs a handler (counted) or a lifecycle hook.
    counted: bool,
    _frame: ChainGuard,
}

impl<A: Actor> ActorCell<A> {
    pub(crate) fn new(
        actor: A,
        lock: Arc<ActorLock>,
        policy: CyclePolicy,
        inbox: Inbox<A>,
        clock: Clock,
    ) -> Self {
        ActorCell {
            lock,
            stopped: AtomicBool::new(false),
            stats: Stats::default(),
            state: UnsafeCell::new(actor),
            id: ActorId::next(),
            policy,
            inbox,
            clock,
        }
    }

    pub(crate) fn target(&self) -> Target {
        Target {
            id: self.id,
            name: <A as ActorConfig>::NAME,
        }
    }

    pub(crate) fn shared_counters(&self) -> &SharedCounters {
        &self.stats.shared
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    pub(crate) fn frame(&self, class: ClassId) -> Frame {
        let class_name = match A::CLASSES.get(class.index() as usize) {
            Some(name) => name,
            None => "lifecycle",
        };
        Frame {
            actor: self.id,
            actor_name: <A as ActorConfig>::NAME,
            class,
            class_name,
        }
    }

    /// Enters the actor to run the handler of `class` (see module docs).
    #[inline]
    pub(crate) fn enter(
        &self,
        class: ClassId,
        policy: CyclePolicy,
        wait: Wait,
    ) -> Result<Entered<'_, A>, Refusal> {
        let reentrant = <A::Access as AccessMode>::REENTRANT;
        // The frame goes on the chain before the lock is tried; a refused
        // entry drops the guard, which pops it again.
        let (me, mut frame) = match chain::enter(self.frame(class), reentrant, policy) {
            Ok(entry) => entry,
            Err(chain) => {
                SharedCounters::bump(&self.stats.shared.cycles);
                return Err(Refusal::Cycle(chain));
            }
        };
        let fresh = if self.lock.held_by(me) {
            // Nested entry. The chain check above proved this actor's state
            // is not borrowed as `&mut` on this thread. A per-actor lock of
            // an `Exclusive` actor held by this thread would contradict the
            // chain invariant; refuse rather than trust it.
            if !(self.lock.is_group() || reentrant) {
                drop(frame);
                SharedCounters::bump(&self.stats.shared.cycles);
                return Err(Refusal::Cycle(chain::snapshot()));
            }
            false
        } else if self.lock.try_acquire(me) {
            true
        } else {
            // Waiting: take the frame off while blocked, so the deadlock
            // registry records only what this thread actually holds.
            drop(frame);
            self.wait_for_lock(me, wait)?;
            frame = chain::push(self.frame(class));
            true
        };
        if self.stopped.load(Ordering::Relaxed) {
            drop(frame);
            if fresh {
                self.lock.release();
            }
            return Err(Refusal::Closed);
        }
        Ok(Entered {
            cell: self,
            fresh,
            counted: class != ClassId::LIFECYCLE,
            _frame: frame,
        })
    }

    #[cold]
    fn wait_for_lock(&self, me: usize, wait: Wait) -> Result<(), Refusal> {
        if wait == Wait::Try {
            return Err(Refusal::Busy);
        }
        let target = (self.id, <A as ActorConfig>::NAME);
        let _registered = match deadlock::before_wait(me, &self.lock, target) {
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
        Held::acquire(&self.lock)
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
        assert!(
            std::ptr::eq(held.lock, &*self.lock),
            "kaspar: run loop entered an actor under a lock that is not its own"
        );
        Entered {
            cell: self,
            fresh: false,
            counted: class != ClassId::LIFECYCLE,
            _frame: chain::push(self.frame(class)),
        }
    }

    /// Marks the actor stopped; later entries get `Closed`.
    pub(crate) fn mark_stopped(&self, _held: &Held<'_>) {
        self.stopped.store(true, Ordering::Release);
    }
}

/// A run loop's hold on an actor's (or a group's) lock for one batch of
/// queued messages. The run loop's thread holds no other lock, so it cannot
/// close a wait cycle and waits plainly.
pub(crate) struct Held<'a> {
    lock: &'a ActorLock,
    me: usize,
}

impl<'a> Held<'a> {
    pub(crate) fn acquire(lock: &'a ActorLock) -> Self {
        let me = chain::thread_token();
        debug_assert!(
            chain::snapshot().is_empty(),
            "run loop entered with a chain"
        );
        lock.park_acquire(me);
        Held { lock, me }
    }

    /// Lets a parked synchronous caller in between two messages.
    #[inline]
    pub(crate) fn bump(&self) {
        self.lock.bump(self.me);
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.lock.release();
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
        unsafe { <A::Access as AccessMode>::from_ptr(self.cell.state.get()) }
    }
}

impl<A: Actor> Drop for Entered<'_, A> {
    #[inline]
    fn drop(&mut self) {
        if self.counted {
            self.cell.stats.locked.handled();
        }
        if self.fresh {
            self.cell.lock.release();
        }
    }
}
