//! Dead letters: the one place every message that could not be handled
//! goes, with the actor it was for and the reason.
//!
//! Nothing accepted is dropped silently. A message ends in exactly one of
//! three ways: its handler ran (and returned or panicked), it was handed
//! back to its sender inside an `Err`, or it was posted here. The places
//! that post:
//!
//! | where | reason |
//! |---|---|
//! | a handler panicked on it (any thread, any mode) | [`Panicked`](DeadLetterReason::Panicked) |
//! | queued for an actor that supervision stopped | [`Stopped`](DeadLetterReason::Stopped) / [`RestartLimit`](DeadLetterReason::RestartLimit) |
//! | queued when [`System::shutdown_timeout`](crate::System::shutdown_timeout) gave up | [`ShutdownTimeout`](DeadLetterReason::ShutdownTimeout) |
//! | a `request` reply or a watch notification its receiver could not take (stopped, or a full mailbox that rejects) | [`Undeliverable`](DeadLetterReason::Undeliverable) |
//! | sent to another process that died before acknowledging it (kaspar-remote's retain buffer) | [`PeerLost`](DeadLetterReason::PeerLost) |
//!
//! A system has one sink ([`System::dead_letters`](crate::System::dead_letters)).
//! It counts every letter by reason, and forwards each to the actors
//! subscribed to it as an ordinary [`DeadLetter`] message. Posting is a
//! failure path: it may allocate and take a mutex.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::base::sync::{AtomicBool, AtomicU64, Mutex, Ordering::Relaxed, Weak};

use crate::error::Target;

/// Why a message went to dead letters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum DeadLetterReason {
    /// Queued for an actor that stopped before handling it: supervision
    /// stopped it ([`Supervision::stop`](crate::Supervision::stop)), or it
    /// never started (a [`Prepared`](crate::Prepared) dropped unspawned, a
    /// [`spawn_with`](crate::System::spawn_with) factory that panicked).
    Stopped,
    /// Queued for an actor that was stopped because it exceeded its
    /// restart limit.
    RestartLimit,
    /// Queued for an actor still running when
    /// [`System::shutdown_timeout`](crate::System::shutdown_timeout) gave
    /// up waiting for it.
    ShutdownTimeout,
    /// Its handler panicked. The message itself was consumed by the
    /// handler; the letter carries the panic payload instead.
    Panicked,
    /// A `request` reply, or a [`Terminated`](crate::Terminated) /
    /// [`Restarted`](crate::Restarted) notification, that its receiver
    /// could not take: it had stopped accepting, its bounded mailbox was
    /// full and rejects ([`WhenFull::Reject`](crate::WhenFull::Reject)),
    /// or waiting for room there would have closed a deadlock. The
    /// replying handler does not see the refusal (it has returned), so
    /// the reply comes here rather than back.
    Undeliverable,
    /// Sent to an actor in another process whose link was lost before
    /// that process acknowledged handling it (kaspar-remote, with a retain
    /// buffer): it may or may not have been handled there. The letter's
    /// message says which peer was lost.
    PeerLost,
}

impl DeadLetterReason {
    const ALL: [DeadLetterReason; 6] = [
        DeadLetterReason::Stopped,
        DeadLetterReason::RestartLimit,
        DeadLetterReason::ShutdownTimeout,
        DeadLetterReason::Panicked,
        DeadLetterReason::Undeliverable,
        DeadLetterReason::PeerLost,
    ];

    fn index(self) -> usize {
        match self {
            DeadLetterReason::Stopped => 0,
            DeadLetterReason::RestartLimit => 1,
            DeadLetterReason::ShutdownTimeout => 2,
            DeadLetterReason::Panicked => 3,
            DeadLetterReason::Undeliverable => 4,
            DeadLetterReason::PeerLost => 5,
        }
    }
}

/// A message that could not be handled, as a subscriber receives it.
///
/// The payload is type-erased. For a queued message it is the target
/// actor's message enum (the `#[actor]`-generated `<Actor>Msg`, holding the
/// message and its reply route): downcast and match it. For an
/// undeliverable reply it is the reply value. A panicked message has no
/// payload (the handler consumed it) but carries the panic's.
///
/// An `ask` whose message lands here resolves with
/// [`AskError::Dropped`](crate::AskError::Dropped) when the letter, and
/// with it the reply route, is dropped.
#[non_exhaustive]
pub struct DeadLetter {
    /// The actor the message was for.
    pub target: Target,
    /// The message's type, as written in the target's `#[handler(..)]`
    /// (or the reply's type name for an undeliverable reply).
    pub class: &'static str,
    /// Why it was not handled.
    pub reason: DeadLetterReason,
    /// The message, if the runtime still had it (see the type's docs). Only
    /// the first subscriber that accepts the letter gets it; later ones see
    /// `None`.
    pub message: Option<Box<dyn Any + Send>>,
    /// For [`Panicked`](DeadLetterReason::Panicked): the panic payload
    /// (what `std::panic::catch_unwind` returned), to the first subscriber.
    pub panic: Option<Box<dyn Any + Send>>,
}

impl fmt::Debug for DeadLetter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadLetter")
            .field("target", &self.target)
            .field("class", &self.class)
            .field("reason", &self.reason)
            .field("message", &self.message.as_ref().map(|_| ".."))
            .field("panic", &self.panic.as_ref().map(|_| ".."))
            .finish()
    }
}

impl DeadLetter {
    /// The panic message, when the payload is a string (as `panic!` makes).
    pub fn panic_message(&self) -> Option<&str> {
        let p = self.panic.as_ref()?;
        p.downcast_ref::<&'static str>()
            .copied()
            .or_else(|| p.downcast_ref::<String>().map(String::as_str))
    }
}

/// Counters of a dead-letter sink, from
/// [`DeadLetters::counts`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
#[non_exhaustive]
pub struct DeadLetterCounts {
    /// [`DeadLetterReason::Stopped`] letters.
    pub stopped: u64,
    /// [`DeadLetterReason::RestartLimit`] letters.
    pub restart_limit: u64,
    /// [`DeadLetterReason::ShutdownTimeout`] letters.
    pub shutdown_timeout: u64,
    /// [`DeadLetterReason::Panicked`] letters.
    pub panicked: u64,
    /// [`DeadLetterReason::Undeliverable`] letters.
    pub undeliverable: u64,
    /// [`DeadLetterReason::PeerLost`] letters.
    pub peer_lost: u64,
    /// Letters (of any reason, counted above too) that no subscriber
    /// accepted: there was none, or every one had stopped.
    pub unobserved: u64,
}

impl DeadLetterCounts {
    /// Letters of every reason.
    pub fn total(&self) -> u64 {
        self.stopped
            + self.restart_limit
            + self.shutdown_timeout
            + self.panicked
            + self.undeliverable
            + self.peer_lost
    }

    /// Letters of one reason.
    pub fn of(&self, reason: DeadLetterReason) -> u64 {
        match reason {
            DeadLetterReason::Stopped => self.stopped,
            DeadLetterReason::RestartLimit => self.restart_limit,
            DeadLetterReason::ShutdownTimeout => self.shutdown_timeout,
            DeadLetterReason::Panicked => self.panicked,
            DeadLetterReason::Undeliverable => self.undeliverable,
            DeadLetterReason::PeerLost => self.peer_lost,
        }
    }
}

/// A system's dead-letter sink. Cheap to clone; clones share one sink.
#[derive(Clone)]
pub struct DeadLetters {
    inner: Arc<Sink>,
}

struct Sink {
    by_reason: [AtomicU64; 6],
    unobserved: AtomicU64,
    /// Held weakly: a subscriber's cell holds this sink, and a strong link
    /// back would keep both alive forever.
    subscribers: Mutex<Vec<Weak<dyn LetterBox>>>,
    /// Set when a shutdown stopped waiting: run loops still going hand what
    /// they dequeue to dead letters instead of handling it.
    abandoned: AtomicBool,
}

impl fmt::Debug for DeadLetters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadLetters")
            .field("counts", &self.counts())
            .field("subscribers", &self.inner.subscribers.lock().len())
            .finish()
    }
}

impl Default for DeadLetters {
    fn default() -> Self {
        Self::new()
    }
}

impl DeadLetters {
    /// A new sink with no subscribers. Each [`System`](crate::System) makes
    /// its own; this is for tests and embedders.
    pub fn new() -> Self {
        DeadLetters {
            inner: Arc::new(Sink {
                by_reason: Default::default(),
                unobserved: AtomicU64::new(0),
                subscribers: Mutex::new(Vec::new()),
                abandoned: AtomicBool::new(false),
            }),
        }
    }

    /// Adds a subscriber, dropping those that have gone.
    pub(crate) fn add_subscriber(&self, sub: Weak<dyn LetterBox>) {
        let mut subs = self.inner.subscribers.lock();
        subs.retain(|w| w.strong_count() > 0);
        subs.push(sub);
    }

    /// A snapshot of the counters.
    pub fn counts(&self) -> DeadLetterCounts {
        let c = |r: DeadLetterReason| self.inner.by_reason[r.index()].load(Relaxed);
        DeadLetterCounts {
            stopped: c(DeadLetterReason::Stopped),
            restart_limit: c(DeadLetterReason::RestartLimit),
            shutdown_timeout: c(DeadLetterReason::ShutdownTimeout),
            panicked: c(DeadLetterReason::Panicked),
            undeliverable: c(DeadLetterReason::Undeliverable),
            peer_lost: c(DeadLetterReason::PeerLost),
            unobserved: self.inner.unobserved.load(Relaxed),
        }
    }

    /// Letters of every reason so far.
    pub fn total(&self) -> u64 {
        DeadLetterReason::ALL
            .iter()
            .map(|r| self.inner.by_reason[r.index()].load(Relaxed))
            .sum()
    }

    /// Counts `letter` and offers it to the subscribers in turn.
    pub(crate) fn post(&self, mut letter: DeadLetter) {
        self.inner.by_reason[letter.reason.index()].fetch_add(1, Relaxed);
        let subs: Vec<Arc<dyn LetterBox>> = self
            .inner
            .subscribers
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        let mut accepted = false;
        for sub in subs {
            if sub.target() == letter.target {
                continue;
            }
            let (target, class, reason) = (letter.target.clone(), letter.class, letter.reason);
            match sub.offer(letter) {
                Ok(()) => {
                    accepted = true;
                    letter = DeadLetter {
                        target,
                        class,
                        reason,
                        message: None,
                        panic: None,
                    };
                }
                Err(back) => letter = back,
            }
        }
        if !accepted {
            self.inner.unobserved.fetch_add(1, Relaxed);
        }
        // The message and the panic payload are the user's: a destructor
        // that panics must not unwind into whoever posted (a run loop, a
        // supervisor acting after a panic).
        super::drop_quietly(letter);
    }

    pub(crate) fn abandon(&self) {
        self.inner.abandoned.store(true, Relaxed);
    }

    #[inline]
    pub(crate) fn is_abandoned(&self) -> bool {
        self.inner.abandoned.load(Relaxed)
    }
}

/// A subscriber, type-erased. Separate from `ReplySink` so that a failed
/// offer hands the letter back instead of posting a dead letter about a
/// dead letter.
pub(crate) trait LetterBox: Send + Sync {
    fn target(&self) -> Target;
    fn offer(&self, letter: DeadLetter) -> Result<(), DeadLetter>;
}
