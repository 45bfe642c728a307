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
use crate::lock::{ActorLock, Wait};
use crate::mailbox::Mailbox;
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
    pub(crate) mailbox: Mailbox<A::Msg>,
    pub(crate) clock: Clock,
}

// SAFETY: the state is only reached through `enter`, which serialises
// access across threads with `lock` (module docs), so sharing the cell
// between threads moves `A` between them but never shares it: `A: Send`
// (an `ActorConfig` bound) is what that needs. The other fields are Sync.
unsafe impl<A: Actor> Sync for ActorCell<A> where Mailbox<A::Msg>: Sync {}

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
        mailbox: Mailbox<A::Msg>,
        clock: Clock,
    ) -> Self {
        ActorCell {
            lock,
            stopped: AtomicBool::new(false),
            stats: Stats::default(),
            state: UnsafeCell::new(actor),
            id: ActorId::next(),
            policy,
            mailbox,
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
        if let Err(chain) = chain::check(self.id, class, reentrant, policy) {
            SharedCounters::bump(&self.stats.shared.cycles);
            return Err(Refusal::Cycle(chain));
        }
        let me = chain::thread_token();
        let fresh = if self.lock.held_by(me) {
            // Nested entry. The chain check above proved this actor's state
            // is not borrowed as `&mut` on this thread. A per-actor lock of
            // an `Exclusive` actor held by this thread would contradict the
            // chain invariant; refuse rather than trust it.
            if !(self.lock.is_group() || reentrant) {
                SharedCounters::bump(&self.stats.shared.cycles);
                return Err(Refusal::Cycle(chain::snapshot()));
            }
            false
        } else if self.lock.try_acquire(me) {
            true
        } else {
            self.wait_for_lock(me, wait)?;
            true
        };
        if self.stopped.load(Ordering::Relaxed) {
            if fresh {
                self.lock.release();
            }
            return Err(Refusal::Closed);
        }
        Ok(Entered {
            cell: self,
            fresh,
            counted: class != ClassId::LIFECYCLE,
            _frame: chain::push(self.frame(class)),
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

    /// Takes the lock for a run loop's batch. The run loop's thread holds no
    /// other actor's lock, so it cannot close a wait cycle and waits plainly.
    pub(crate) fn lock_batch(&self) -> BatchLock<'_, A> {
        let me = chain::thread_token();
        debug_assert!(
            chain::snapshot().is_empty(),
            "run loop entered with a chain"
        );
        self.lock.park_acquire(me);
        BatchLock { cell: self, me }
    }

    /// Marks the actor stopped; later entries get `Closed`.
    pub(crate) fn mark_stopped(&self, _held: &BatchLock<'_, A>) {
        self.stopped.store(true, Ordering::Release);
    }
}

/// A run loop's hold on the lock for one batch of queued messages.
pub(crate) struct BatchLock<'a, A: Actor> {
    cell: &'a ActorCell<A>,
    me: usize,
}

impl<'a, A: Actor> BatchLock<'a, A> {
    /// Enters for one queued message of `class`. The run loop's chain is
    /// empty between messages, so there is nothing to check.
    #[inline]
    pub(crate) fn enter(&self, class: ClassId) -> Entered<'a, A> {
        Entered {
            cell: self.cell,
            fresh: false,
            counted: class != ClassId::LIFECYCLE,
            _frame: chain::push(self.cell.frame(class)),
        }
    }

    /// Lets a parked synchronous caller in between two messages.
    #[inline]
    pub(crate) fn bump(&self) {
        self.cell.lock.bump(self.me);
    }
}

impl<A: Actor> Drop for BatchLock<'_, A> {
    fn drop(&mut self) {
        self.cell.lock.release();
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
