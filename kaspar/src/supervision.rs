//! Supervision: what happens to an actor whose handler panicked.
//!
//! A panic is caught at the delivery boundary on whichever thread ran the
//! handler: the actor's own (a queued message) or a caller's (`fast_send`,
//! whose caller still gets `Err(FastSendError::Panicked)`). Either way the
//! panicked message goes to [dead letters](crate::DeadLetters) with its
//! panic payload, and the actor's [`Supervision`] decides about its state:
//!
//! * [`resume`](Supervision::resume) (the default): keep the state as the
//!   panic left it and go on with the next message;
//! * [`restart`](Supervision::restart): replace the state with a fresh one
//!   from a factory. The mailbox and everything in it is kept. At most
//!   `max_restarts` restarts in any `period` (read on the actor's clock);
//!   one more and the actor is stopped instead, as in OTP;
//! * [`stop`](Supervision::stop): stop the actor. It refuses every later
//!   delivery (`Closed`), what is still queued for it goes to dead letters,
//!   its `#[stopped]` hook runs on its own thread (a group member's when
//!   its group stops).
//!
//! Watchers ([`Addr::watch`], [`Addr::watch_restarts`]) are told with an
//! ordinary message: [`Terminated`] once the actor stops for any reason,
//! [`Restarted`] after each restart.
//!
//! The state is replaced only while nothing borrows it: by the thread that
//! holds the actor's lock, from an entry that is the only frame of that
//! actor on the thread's call chain. A panic deeper in a re-entered
//! (`#[actor(reentrant)]`) actor leaves the restart pending; the next entry
//! that is the outermost one performs it before its handler runs. The
//! `#[started]` hook does not run again: the factory is the initializer.

use std::any::Any;
use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use crate::actor::{Actor, ClassId, Handler};
use crate::addr::Addr;
use crate::cell::{ActorCell, Entered, Held, HALTED, RESTART_PENDING, STOPPED};
use crate::clock::Time;
use crate::deadletter::{DeadLetter, DeadLetterReason, DeadLetters};
use crate::error::Target;
use crate::reply::ReplySink;
use crate::stats::SharedCounters;

/// What an actor's panicking handler does to the actor. Set with
/// [`Spawn::supervise`](crate::Spawn::supervise) or [`Addr::supervise`].
pub struct Supervision<A> {
    strategy: Strategy<A>,
    max_restarts: u32,
    period: Duration,
}

enum Strategy<A> {
    Resume,
    Restart(Arc<dyn Fn() -> A + Send + Sync>),
    Stop,
}

impl<A> fmt::Debug for Supervision<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self.strategy {
            Strategy::Resume => "Resume",
            Strategy::Restart(_) => "Restart",
            Strategy::Stop => "Stop",
        };
        f.debug_struct("Supervision")
            .field("strategy", &s)
            .field("max_restarts", &self.max_restarts)
            .field("period", &self.period)
            .finish()
    }
}

impl<A> Default for Supervision<A> {
    fn default() -> Self {
        Self::resume()
    }
}

impl<A> Supervision<A> {
    /// Restarts allowed per period unless [`limit`](Self::limit) says
    /// otherwise: 3 in 5 seconds (OTP's default is 1 in 5).
    pub const DEFAULT_LIMIT: (u32, Duration) = (3, Duration::from_secs(5));

    fn with(strategy: Strategy<A>) -> Self {
        Supervision {
            strategy,
            max_restarts: Self::DEFAULT_LIMIT.0,
            period: Self::DEFAULT_LIMIT.1,
        }
    }

    /// Keep the state and go on (the default).
    pub fn resume() -> Self {
        Self::with(Strategy::Resume)
    }

    /// Replace the state with `factory()` after a panic, keeping the
    /// mailbox. Subject to the [restart limit](Self::limit).
    pub fn restart(factory: impl Fn() -> A + Send + Sync + 'static) -> Self {
        Self::with(Strategy::Restart(Arc::new(factory)))
    }

    /// Stop the actor after a panic; what is queued for it goes to dead
    /// letters.
    pub fn stop() -> Self {
        Self::with(Strategy::Stop)
    }

    /// At most `max_restarts` restarts within any `period`; the next panic
    /// stops the actor (reason [`ExitReason::RestartLimit`]). Only
    /// meaningful for [`restart`](Self::restart).
    pub fn limit(mut self, max_restarts: u32, period: Duration) -> Self {
        self.max_restarts = max_restarts;
        self.period = period;
        self
    }
}

/// Why an actor stopped, in a [`Terminated`] notification.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum ExitReason {
    /// An orderly stop: `Ctx::stop` or system shutdown.
    Stopped,
    /// A handler panicked under [`Supervision::stop`], or a restart's
    /// factory panicked.
    Panicked,
    /// A handler panicked once more than the restart limit allows.
    RestartLimit,
}

/// Sent to the watchers of an actor when it stops ([`Addr::watch`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct Terminated {
    /// The actor that stopped.
    pub target: Target,
    /// Why.
    pub reason: ExitReason,
}

/// Sent to the restart watchers of an actor after each restart
/// ([`Addr::watch_restarts`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct Restarted {
    /// The actor that restarted.
    pub target: Target,
    /// Its restarts so far, this one included.
    pub restarts: u64,
}

/// An actor cell's supervision state and dead-letter sink.
pub(crate) struct Supervisor<A> {
    state: Mutex<SupState<A>>,
    pub(crate) dead: DeadLetters,
}

struct SupState<A> {
    policy: Supervision<A>,
    /// Times of the restarts inside the current window, oldest first.
    recent: VecDeque<Time>,
    restarts: u64,
    /// Set once the actor halted or stopped.
    exit: Option<ExitReason>,
    on_terminated: Vec<Weak<dyn ReplySink<Terminated>>>,
    on_restarted: Vec<Weak<dyn ReplySink<Restarted>>>,
}

impl<A> Supervisor<A> {
    /// Resume, reporting to `dead`.
    pub(crate) fn new(dead: DeadLetters) -> Self {
        Supervisor {
            state: Mutex::new(SupState {
                policy: Supervision::resume(),
                recent: VecDeque::new(),
                restarts: 0,
                exit: None,
                on_terminated: Vec::new(),
                on_restarted: Vec::new(),
            }),
            dead,
        }
    }

    pub(crate) fn set(&self, policy: Supervision<A>) {
        let mut st = self.state.lock();
        st.policy = policy;
        st.recent.clear();
    }

    /// Why queued messages of a halted or stopped actor are dead.
    fn halt_reason(&self) -> DeadLetterReason {
        match self.state.lock().exit {
            Some(ExitReason::RestartLimit) => DeadLetterReason::RestartLimit,
            _ => DeadLetterReason::Stopped,
        }
    }
}

impl<A: Actor> Addr<A> {
    /// Sets what a panic in one of this actor's handlers does, from the
    /// next panic on. For a group member, this is how its policy is set.
    pub fn supervise(&self, policy: Supervision<A>) {
        self.cell.sup.set(policy);
    }

    /// Sends `watcher` a [`Terminated`] message when this actor stops, for
    /// any reason. If it has stopped already, at once. Compiles only if
    /// `W` has a `#[handler(Terminated)]`.
    pub fn watch<W: Handler<Terminated>>(&self, watcher: &Addr<W>) {
        let sink: Arc<dyn ReplySink<Terminated>> = watcher.cell.clone();
        let exit = {
            let mut st = self.cell.sup.state.lock();
            if st.exit.is_none() {
                st.on_terminated.push(Arc::downgrade(&sink));
            }
            st.exit
        };
        if let Some(reason) = exit {
            sink.deliver(Terminated {
                target: self.target(),
                reason,
            });
        }
    }

    /// Sends `watcher` a [`Restarted`] message after each restart of this
    /// actor. Compiles only if `W` has a `#[handler(Restarted)]`.
    pub fn watch_restarts<W: Handler<Restarted>>(&self, watcher: &Addr<W>) {
        let sink: Arc<dyn ReplySink<Restarted>> = watcher.cell.clone();
        self.cell
            .sup
            .state
            .lock()
            .on_restarted
            .push(Arc::downgrade(&sink));
    }

    /// The system's dead-letter sink this actor reports to.
    pub fn dead_letters(&self) -> DeadLetters {
        self.cell.sup.dead.clone()
    }
}

/// What to do about a panic, decided under the supervisor's mutex.
enum Verdict<A> {
    Resume,
    Restart(Arc<dyn Fn() -> A + Send + Sync>),
    Halt(ExitReason),
}

/// Applies the actor's policy after its handler for `class` panicked with
/// `payload`, under the entry that ran it.
#[cold]
#[inline(never)]
pub(crate) fn on_panic<A: Actor>(
    entered: &mut Entered<'_, A>,
    class: ClassId,
    payload: Box<dyn Any + Send>,
) {
    let cell = entered.cell();
    SharedCounters::bump(&cell.stats.shared.panics);
    SharedCounters::bump(&cell.stats.shared.dead_letters);
    cell.sup.dead.post(DeadLetter {
        target: cell.target(),
        class: A::CLASSES
            .get(class.index() as usize)
            .copied()
            .unwrap_or("lifecycle"),
        reason: DeadLetterReason::Panicked,
        message: None,
        panic: Some(payload),
    });
    if entered.flags() & (HALTED | STOPPED) != 0 {
        return;
    }
    let verdict = {
        let mut st = cell.sup.state.lock();
        match &st.policy.strategy {
            Strategy::Resume => Verdict::Resume,
            Strategy::Stop => Verdict::Halt(ExitReason::Panicked),
            Strategy::Restart(factory) => {
                let factory = Arc::clone(factory);
                let now = cell.clock.now();
                let period = st.policy.period;
                while st
                    .recent
                    .front()
                    .is_some_and(|t| now.saturating_duration_since(*t) >= period)
                {
                    st.recent.pop_front();
                }
                if st.recent.len() >= st.policy.max_restarts as usize {
                    Verdict::Halt(ExitReason::RestartLimit)
                } else {
                    st.recent.push_back(now);
                    Verdict::Restart(factory)
                }
            }
        }
    };
    match verdict {
        Verdict::Resume => {}
        Verdict::Halt(reason) => halt(entered, reason),
        Verdict::Restart(factory) => {
            if entered.may_replace_state() {
                restart(entered, &*factory);
            } else {
                entered.set_flag(RESTART_PENDING);
            }
        }
    }
}

/// Performs a restart left pending by a panic in a nested entry; called by
/// the outermost entry that finds the flag.
#[cold]
#[inline(never)]
pub(crate) fn restart_pending<A: Actor>(entered: &mut Entered<'_, A>) {
    if !entered.may_replace_state() {
        return;
    }
    let factory = match &entered.cell().sup.state.lock().policy.strategy {
        Strategy::Restart(f) => Some(Arc::clone(f)),
        _ => None,
    };
    match factory {
        Some(f) => restart(entered, &*f),
        // The policy changed since the panic: nothing to restart.
        None => entered.clear_flag(RESTART_PENDING),
    }
}

fn restart<A: Actor>(entered: &mut Entered<'_, A>, factory: &(dyn Fn() -> A + Send + Sync)) {
    let cell = entered.cell();
    entered.clear_flag(RESTART_PENDING);
    let fresh = match catch_unwind(AssertUnwindSafe(factory)) {
        Ok(fresh) => fresh,
        Err(_) => {
            SharedCounters::bump(&cell.stats.shared.panics);
            halt(entered, ExitReason::Panicked);
            return;
        }
    };
    match entered.replace_state(fresh) {
        Ok(old) => {
            // A panicking destructor must not take the caller down.
            if catch_unwind(AssertUnwindSafe(move || drop(old))).is_err() {
                SharedCounters::bump(&cell.stats.shared.panics);
            }
        }
        Err(_) => {
            entered.set_flag(RESTART_PENDING);
            return;
        }
    }
    SharedCounters::bump(&cell.stats.shared.restarts);
    let (restarts, watchers) = {
        let mut st = cell.sup.state.lock();
        st.restarts += 1;
        st.on_restarted.retain(|w| w.strong_count() > 0);
        (st.restarts, live(&st.on_restarted))
    };
    for w in watchers {
        w.deliver(Restarted {
            target: cell.target(),
            restarts,
        });
    }
}

/// Stops the actor now: it refuses later entries and sends, its queue is
/// handed to dead letters by its run loop, its watchers are told.
fn halt<A: Actor>(entered: &mut Entered<'_, A>, reason: ExitReason) {
    let cell = entered.cell();
    entered.set_flag(HALTED);
    cell.inbox.close();
    notify_terminated(cell, reason);
}

/// Tells the watchers, once, that the actor stopped; later calls only
/// keep the first reason.
pub(crate) fn notify_terminated<A: Actor>(cell: &ActorCell<A>, reason: ExitReason) {
    let (reason, watchers) = {
        let mut st = cell.sup.state.lock();
        if st.exit.is_some() {
            return;
        }
        st.exit = Some(reason);
        (reason, live(&std::mem::take(&mut st.on_terminated)))
    };
    for w in watchers {
        w.deliver(Terminated {
            target: cell.target(),
            reason,
        });
    }
}

fn live<T: ?Sized>(list: &[Weak<T>]) -> Vec<Arc<T>> {
    list.iter().filter_map(Weak::upgrade).collect()
}

/// Called by a run loop, under `held`, before it serves a queued message
/// of an actor whose flags are set or whose system gave up waiting.
/// Performs a pending restart; returns why the message must go to dead
/// letters instead of being handled, if it must.
#[cold]
#[inline(never)]
pub(crate) fn before_queued<A: Actor>(
    cell: &ActorCell<A>,
    held: &Held<'_>,
) -> Option<DeadLetterReason> {
    let flags = cell.flags();
    if flags & (HALTED | STOPPED) != 0 {
        return Some(cell.sup.halt_reason());
    }
    if cell.sup.dead.is_abandoned() {
        return Some(DeadLetterReason::ShutdownTimeout);
    }
    if flags & RESTART_PENDING != 0 {
        let mut entered = cell.enter_held(held, ClassId::LIFECYCLE);
        restart_pending(&mut entered);
        if entered.flags() & HALTED != 0 {
            return Some(cell.sup.halt_reason());
        }
    }
    None
}
