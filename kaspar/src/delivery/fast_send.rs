//! The synchronous delivery operations (paper §7.1, §7.4).
//!
//! Each runs the target's handler on the calling thread, under the target's
//! lock, and hands the reply back by value. They differ only in what the
//! caller does when the lock is held by another thread or entering would
//! be a cycle:
//!
//! | operation | lock held elsewhere | cycle on this thread |
//! |---|---|---|
//! | [`fast_send`](Addr::fast_send) | park | `Err(Cycle)` |
//! | [`fast_send_spin`](Addr::fast_send_spin) | busy-wait | `Err(Cycle)` |
//! | [`fast_send_x`](Addr::fast_send_x) | `Err(Busy)` at once | `Err(Cycle)` |
//! | [`fast_send_void`](Addr::fast_send_void) | queue instead | queue instead |
//! | [`fast_send_adaptive`](Addr::fast_send_adaptive) | spin, then park | `Err(Cycle)` |
//!
//! Every waiting variant checks for a cross-thread deadlock before it waits
//! and returns `Err(Deadlock)` rather than close one. No variant allocates
//! or dispatches dynamically: `fast_send::<M>` compiles to the lock, the
//! chain bookkeeping and a direct call of the `#[handler(M)]` method.

use std::any::Any;
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::actor::addr::Addr;
use crate::actor::cell::{ActorCell, Entered, Refusal};
use crate::actor::ctx::Ctx;
use crate::actor::restart;
use crate::actor::traits::{Actor, Handler};
use crate::base::ids::ClassId;
use crate::base::stats::Rare;
use crate::error::{Delivered, FastSendError, SendError};
use crate::guard::chain::CyclePolicy;
use crate::guard::lock::Wait;

/// Synchronous delivery with a cycle policy chosen for this call, from
/// [`Addr::with_policy`].
#[derive(Debug)]
pub struct Call<'a, A: Actor> {
    addr: &'a Addr<A>,
    policy: CyclePolicy,
}

impl<A: Actor> Addr<A> {
    /// The synchronous operations, with `policy` instead of the actor's own
    /// for this call only. The policy decides whether *this* call may
    /// re-enter the actor while one of its handlers is already running on
    /// this thread (a callback).
    ///
    /// # Panics
    ///
    /// On [`CyclePolicy::Permissive`] for an actor that is not
    /// `#[actor(reentrant)]`, which is never re-entered under any policy.
    #[inline]
    #[track_caller]
    pub fn with_policy(&self, policy: CyclePolicy) -> Call<'_, A> {
        crate::actor::traits::assert_policy_meaningful::<A>(policy);
        Call { addr: self, policy }
    }

    #[inline(always)]
    fn call(&self) -> Call<'_, A> {
        Call {
            addr: self,
            policy: self.cell.policy,
        }
    }

    /// Runs the handler for `msg` on this thread and returns its reply,
    /// parking while another thread holds the actor.
    ///
    /// Runs ahead of messages already queued in the mailbox (it does not
    /// join the queue). Errors: `Cycle` (before any lock), `Deadlock`
    /// (before waiting), `Panicked`, `Closed`. All but `Panicked` hand the
    /// message back.
    #[inline]
    pub fn fast_send<M>(&self, msg: M) -> Result<A::Reply, FastSendError<M>>
    where
        A: Handler<M>,
    {
        self.call().fast_send(msg)
    }

    /// [`fast_send`](Addr::fast_send), but busy-waits with a spin hint
    /// instead of parking. For short handlers and spare cores.
    #[inline]
    pub fn fast_send_spin<M>(&self, msg: M) -> Result<A::Reply, FastSendError<M>>
    where
        A: Handler<M>,
    {
        self.call().fast_send_spin(msg)
    }

    /// [`fast_send`](Addr::fast_send), but returns `Err(Busy)` at once if
    /// another thread holds the actor. Bounded time.
    #[inline]
    pub fn fast_send_x<M>(&self, msg: M) -> Result<A::Reply, FastSendError<M>>
    where
        A: Handler<M>,
    {
        self.call().fast_send_x(msg)
    }

    /// Runs the handler inline if the actor is free, otherwise (held by
    /// another thread, or a cycle) queues `msg` like [`send`](Addr::send).
    /// Never waits for the lock. Any reply is discarded.
    ///
    /// A handler panic during an inline run is caught, counted in
    /// [`stats`](Addr::stats) and handed to supervision; the message counts
    /// as delivered (and goes to dead letters as panicked).
    #[inline]
    pub fn fast_send_void<M>(&self, msg: M) -> Result<Delivered, SendError<M>>
    where
        A: Handler<M>,
    {
        self.call().fast_send_void(msg)
    }

    /// [`fast_send`](Addr::fast_send), but spins with exponential backoff
    /// for a bounded count before parking.
    #[inline]
    pub fn fast_send_adaptive<M>(&self, msg: M) -> Result<A::Reply, FastSendError<M>>
    where
        A: Handler<M>,
    {
        self.call().fast_send_adaptive(msg)
    }
}

impl<A: Actor> Call<'_, A> {
    /// See [`Addr::fast_send`].
    #[inline]
    pub fn fast_send<M>(&self, msg: M) -> Result<A::Reply, FastSendError<M>>
    where
        A: Handler<M>,
    {
        self.deliver(msg, Wait::Park)
    }

    /// See [`Addr::fast_send_spin`].
    #[inline]
    pub fn fast_send_spin<M>(&self, msg: M) -> Result<A::Reply, FastSendError<M>>
    where
        A: Handler<M>,
    {
        self.deliver(msg, Wait::Spin)
    }

    /// See [`Addr::fast_send_x`].
    #[inline]
    pub fn fast_send_x<M>(&self, msg: M) -> Result<A::Reply, FastSendError<M>>
    where
        A: Handler<M>,
    {
        self.deliver(msg, Wait::Try)
    }

    /// See [`Addr::fast_send_adaptive`].
    #[inline]
    pub fn fast_send_adaptive<M>(&self, msg: M) -> Result<A::Reply, FastSendError<M>>
    where
        A: Handler<M>,
    {
        self.deliver(msg, Wait::Adaptive)
    }

    /// See [`Addr::fast_send_void`].
    #[inline]
    pub fn fast_send_void<M>(&self, msg: M) -> Result<Delivered, SendError<M>>
    where
        A: Handler<M>,
    {
        let cell = &self.addr.cell;
        let class = <A as Handler<M>>::CLASS;
        // Asked before entry, which may take the group's lock itself.
        #[cfg(feature = "tracing")]
        let entering = crate::actor::trace::entering(cell);
        // The message moves into the entry only once entry succeeded; a
        // refusal hands it back (through `slot`, as in `deliver`) to be
        // queued instead.
        let slot = ErrorSlot::new();
        let slot = &slot;
        let inline = cell.enter_or(
            class,
            self.policy,
            Wait::Try,
            msg,
            move |entered, msg| {
                let mut ctx = Ctx::new(cell);
                #[cfg(feature = "tracing")]
                let _span = crate::actor::trace::inline(cell, class, entering);
                let run = catch_unwind(AssertUnwindSafe(|| {
                    #[cfg(feature = "sim")]
                    sim_handling::<A, M>(cell);
                    <A as Handler<M>>::handle(entered.access(), msg, &mut ctx)
                }));
                // Counted after the handler (still under the lock), so a
                // handler reading its own stats cannot see how it was
                // reached.
                cell.locked.void_inline();
                if let Err(payload) = run {
                    restart::on_panic(entered, <A as Handler<M>>::CLASS, payload);
                }
                Ok(())
            },
            move |refusal, msg| Err(slot.put((refusal, msg))),
        );
        let msg = match inline {
            Ok(()) => return Ok(Delivered::Inline),
            Err(refused) => match slot.take(refused) {
                (Refusal::Closed, msg) => return Err(SendError::closed(msg).naming(cell.target())),
                // Not started: queued, it is handled once the actor starts.
                (
                    Refusal::Busy
                    | Refusal::Cycle(_)
                    | Refusal::Deadlock(_)
                    | Refusal::NotStarted
                    | Refusal::ThreadBound,
                    msg,
                ) => msg,
            },
        };
        self.addr.send(msg)?;
        cell.stats.shared.bump(Rare::VoidQueued);
        Ok(Delivered::Queued)
    }

    #[inline(always)]
    fn deliver<M>(&self, msg: M, wait: Wait) -> Result<A::Reply, FastSendError<M>>
    where
        A: Handler<M>,
    {
        let cell = &self.addr.cell;
        let class = <A as Handler<M>>::CLASS;
        // Asked before entry, which may take the group's lock itself.
        #[cfg(feature = "tracing")]
        let entering = crate::actor::trace::entering(cell);
        // Every way but success leaves its error in `slot` and answers with
        // the token that proves it, so the entry's paths merge on a
        // two-word outcome (a small reply travels in registers) instead of
        // the whole error in memory; the error moves out on the failure
        // branch only. The closures capture references and copies only:
        // nothing of this frame is spilled for the out-of-line paths.
        let slot = ErrorSlot::new();
        let slot = &slot;
        let outcome = cell.enter_or(
            class,
            self.policy,
            wait,
            msg,
            move |entered, msg| {
                let mut ctx = Ctx::new(cell);
                #[cfg(feature = "tracing")]
                let _span = crate::actor::trace::inline(cell, class, entering);
                let run = catch_unwind(AssertUnwindSafe(|| {
                    #[cfg(feature = "sim")]
                    sim_handling::<A, M>(cell);
                    <A as Handler<M>>::handle(entered.access(), msg, &mut ctx)
                }));
                match run {
                    Ok(reply) => Ok(reply),
                    // Supervision runs under this entry, before the lock goes.
                    Err(payload) => {
                        Err(slot.put(panicked(entered, <A as Handler<M>>::CLASS, payload)))
                    }
                }
            },
            move |refusal, msg| Err(slot.put(refused(cell, refusal, msg))),
        );
        match outcome {
            Ok(reply) => Ok(reply),
            Err(failed) => Err(slot.take(failed)),
        }
    }
}

/// Tells the simulator's watch (feature `sim`) that `A`'s handler for `M`
/// runs inline, and panics in its place if the watch says so.
#[cfg(feature = "sim")]
#[inline]
fn sim_handling<A: Handler<M>, M>(cell: &ActorCell<A>) {
    crate::base::sim_watch::handling(
        || cell.target(),
        crate::actor::letters::class_of_handler::<A, M>(),
        true,
    );
}

/// Where a failed synchronous delivery leaves its error, or a refused
/// `fast_send_void` its refusal (see `Call::deliver`): written at most
/// once, read once, never dropped in place, so the success path neither
/// initialises nor checks it.
struct ErrorSlot<E>(UnsafeCell<MaybeUninit<E>>);

/// Proof that an [`ErrorSlot`] holds an error: made only by
/// [`ErrorSlot::put`], consumed by [`ErrorSlot::take`]. Not `Clone`.
struct Failed(());

impl<E> ErrorSlot<E> {
    #[inline(always)]
    fn new() -> Self {
        ErrorSlot(UnsafeCell::new(MaybeUninit::uninit()))
    }

    /// Stores the error. Called at most once per slot: each delivery makes
    /// one slot per call, and the entry runs exactly one of its two
    /// closures, each of which puts at most once.
    #[cold]
    fn put(&self, error: E) -> Failed {
        // SAFETY: nothing else borrows the slot's contents (the slot is
        // private to one delivery call, and `take` runs after the entry
        // returned), and it holds no value yet (one put per slot), so
        // overwriting it neither races nor leaks.
        unsafe { (*self.0.get()).write(error) };
        Failed(())
    }

    /// Moves the error out.
    #[inline(always)]
    fn take(&self, _proof: Failed) -> E {
        // SAFETY: `_proof` was made by `put` on this slot (each delivery
        // call has one slot and one outcome, and the token cannot be
        // copied), so the slot holds an initialised error, read once.
        unsafe { (*self.0.get()).assume_init_read() }
    }
}

/// A handler panicked during a synchronous delivery: supervision, then the
/// caller's error.
#[cold]
#[inline(never)]
fn panicked<A: Actor, M>(
    entered: &mut Entered<'_, A>,
    class: ClassId,
    payload: Box<dyn Any + Send>,
) -> FastSendError<M> {
    restart::on_panic(entered, class, payload);
    FastSendError::Panicked {
        target: entered.cell().target(),
    }
}

/// The error a refused synchronous delivery returns, with the message.
#[cold]
#[inline(never)]
fn refused<A: Actor, M>(cell: &ActorCell<A>, refusal: Refusal, msg: M) -> FastSendError<M> {
    let target = cell.target();
    match refusal {
        Refusal::Cycle(chain) => FastSendError::Cycle { target, chain, msg },
        Refusal::Busy => {
            cell.stats.shared.bump(Rare::Busy);
            FastSendError::Busy { target, msg }
        }
        Refusal::Deadlock(cycle) => FastSendError::Deadlock { target, cycle, msg },
        Refusal::Closed => FastSendError::Closed { target, msg },
        Refusal::NotStarted => FastSendError::NotStarted { target, msg },
        Refusal::ThreadBound => FastSendError::ThreadBound { target, msg },
    }
}
