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

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::base::clock::Time;
use crate::base::sync::{Mutex, Weak};
use crate::error::Target;
use crate::failure::dead_letters::{DeadLetterReason, DeadLetters};
use crate::reply::ReplySink;

#[cfg(doc)]
use crate::Addr;

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
    /// The actor lives in another process, and the link to it was lost
    /// (the process died or left, or was silent past the transport's
    /// liveness timeout). Sent by kaspar-remote to the watchers of a
    /// remote address; the actor itself may still be running.
    PeerLost,
}

/// Sent to the watchers of an actor when it stops ([`Addr::watch`]).
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct Terminated {
    /// The actor that stopped.
    pub target: Target,
    /// Why.
    pub reason: ExitReason,
}

/// Sent to the restart watchers of an actor after each restart
/// ([`Addr::watch_restarts`]).
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct Restarted {
    /// The actor that restarted.
    pub target: Target,
    /// Its restarts so far, this one included.
    pub restarts: u64,
}

/// An actor cell's supervision state and dead-letter sink.
///
/// Most actors never get a policy other than resume, a watcher or a
/// restart, so all of that lives in a box made on first use: an idle
/// actor's supervisor is 32 bytes, not 160. The exit reason stays inline,
/// so that stopping an actor nobody watches does not make the box.
pub(crate) struct Supervisor<A> {
    state: Mutex<SupCore<A>>,
    pub(crate) dead: DeadLetters,
}

struct SupCore<A> {
    /// Set once the actor halted or stopped.
    exit: Option<ExitReason>,
    /// `None`: resume, no restart so far, nobody watching.
    more: Option<Box<SupState<A>>>,
}

struct SupState<A> {
    policy: Supervision<A>,
    /// Times of the restarts inside the current window, oldest first.
    recent: VecDeque<Time>,
    restarts: u64,
    on_terminated: Vec<Weak<dyn ReplySink<Terminated>>>,
    on_restarted: Vec<Weak<dyn ReplySink<Restarted>>>,
}

impl<A> SupCore<A> {
    /// The boxed state, made (resume, no restarts, no watchers) if absent.
    fn more(&mut self) -> &mut SupState<A> {
        self.more.get_or_insert_with(|| {
            Box::new(SupState {
                policy: Supervision::resume(),
                recent: VecDeque::new(),
                restarts: 0,
                on_terminated: Vec::new(),
                on_restarted: Vec::new(),
            })
        })
    }
}

impl<A> Supervisor<A> {
    /// Resume, reporting to `dead`.
    pub(crate) fn new(dead: DeadLetters) -> Self {
        Supervisor {
            state: Mutex::new(SupCore {
                exit: None,
                more: None,
            }),
            dead,
        }
    }

    pub(crate) fn set(&self, policy: Supervision<A>) {
        let mut core = self.state.lock();
        let st = core.more();
        st.policy = policy;
        st.recent.clear();
    }

    /// Why queued messages of a halted or stopped actor are dead.
    pub(crate) fn halt_reason(&self) -> DeadLetterReason {
        match self.state.lock().exit {
            Some(ExitReason::RestartLimit) => DeadLetterReason::RestartLimit,
            _ => DeadLetterReason::Stopped,
        }
    }

    /// Decides what a panic at `now` does, counting it against the restart
    /// window if the policy restarts.
    pub(crate) fn verdict(&self, now: Time) -> Verdict<A> {
        let mut core = self.state.lock();
        let Some(st) = core.more.as_deref_mut() else {
            return Verdict::Resume;
        };
        match &st.policy.strategy {
            Strategy::Resume => Verdict::Resume,
            Strategy::Stop => Verdict::Halt(ExitReason::Panicked),
            Strategy::Restart(factory) => {
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
                    Verdict::Restart(Arc::clone(factory))
                }
            }
        }
    }

    /// The factory of the current policy, if it restarts.
    pub(crate) fn factory(&self) -> Option<Factory<A>> {
        match &self.state.lock().more.as_deref()?.policy.strategy {
            Strategy::Restart(f) => Some(Arc::clone(f)),
            _ => None,
        }
    }

    /// Counts a completed restart; returns the count and the live restart
    /// watchers to tell.
    pub(crate) fn restarted(&self) -> (u64, Vec<Arc<dyn ReplySink<Restarted>>>) {
        let mut core = self.state.lock();
        let st = core.more();
        st.restarts += 1;
        st.on_restarted.retain(|w| w.strong_count() > 0);
        (st.restarts, live(&st.on_restarted))
    }

    /// Records that the actor stopped. The first call returns the watchers
    /// to tell (taking them: each is told once); later calls keep the first
    /// reason and return `None`.
    pub(crate) fn exited(&self, reason: ExitReason) -> Option<Vec<Arc<dyn ReplySink<Terminated>>>> {
        let mut core = self.state.lock();
        if core.exit.is_some() {
            return None;
        }
        core.exit = Some(reason);
        Some(match core.more.as_deref_mut() {
            Some(st) => live(&std::mem::take(&mut st.on_terminated)),
            None => Vec::new(),
        })
    }

    /// Adds a termination watcher, unless the actor has stopped already:
    /// then returns why, and the caller tells the watcher at once.
    pub(crate) fn watch(&self, sink: &Arc<dyn ReplySink<Terminated>>) -> Option<ExitReason> {
        let mut core = self.state.lock();
        if core.exit.is_none() {
            core.more().on_terminated.push(Arc::downgrade(sink));
        }
        core.exit
    }

    /// Adds a restart watcher.
    pub(crate) fn watch_restarts(&self, sink: &Arc<dyn ReplySink<Restarted>>) {
        self.state
            .lock()
            .more()
            .on_restarted
            .push(Arc::downgrade(sink));
    }
}

/// A restart policy's state factory.
pub(crate) type Factory<A> = Arc<dyn Fn() -> A + Send + Sync>;

/// What to do about a panic, decided under the supervisor's mutex.
pub(crate) enum Verdict<A> {
    Resume,
    Restart(Factory<A>),
    Halt(ExitReason),
}

fn live<T: ?Sized>(list: &[Weak<T>]) -> Vec<Arc<T>> {
    list.iter().filter_map(Weak::upgrade).collect()
}
