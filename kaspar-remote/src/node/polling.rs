//! Waiting for a remote reply on the asking thread, which polls the
//! node's inbox itself instead of sleeping until the bridge thread
//! delivers the reply: [`Node::wait_polling`] for an [`Ask`] already
//! sent, [`Node::ask_polling`] to send and wait in one.

use std::time::{Duration, Instant};

use kaspar::{Ask, AskError, Handler, SendError};

use crate::actor::RemoteHandler;
use crate::link::Transport;
use crate::node::addr::RemoteAddr;
use crate::node::Node;
use crate::session::pending::Outcome;
use crate::wire::Wire;

/// How long a polling wait polls back to back before it yields its core
/// between polls. A reply over shared memory comes well within it; one
/// that takes longer (Aeron over UDP, whose media driver threads need a
/// core to carry it) is not held up by a waiter that keeps the core to
/// itself. On the 2-core development VM, polling without ever yielding
/// put the `aeron_udp/kaspar` round trip's p99 at 3 to 4 ms, a scheduler
/// tick.
const SPIN: Duration = Duration::from_micros(20);

/// The clock is read once per this many polls (a clock read costs about
/// as much as an empty poll on a VM).
const POLLS_PER_CLOCK: u32 = 64;

/// A polling wait's pace: back to back for [`SPIN`], then yielding between
/// polls, until its timeout, which counts from the first clock read.
struct Patience {
    timeout: Duration,
    started: Option<Instant>,
    polls: u32,
    yielding: bool,
}

impl Patience {
    fn new(timeout: Duration) -> Self {
        Patience {
            timeout,
            started: None,
            polls: 0,
            yielding: false,
        }
    }

    /// After a poll that did not end the wait: waits as the pace says;
    /// returns whether the timeout has passed.
    fn next(&mut self) -> bool {
        self.polls = self.polls.wrapping_add(1);
        if self.yielding {
            std::thread::yield_now();
        }
        if !self.polls.is_multiple_of(POLLS_PER_CLOCK) {
            return false;
        }
        let now = Instant::now();
        let waited = now - *self.started.get_or_insert(now);
        self.yielding = waited >= SPIN;
        waited >= self.timeout
    }
}

impl<T: Transport> Node<T> {
    /// Waits for `ask`'s reply on this thread, polling the node's inbox
    /// itself rather than sleeping until the bridge thread delivers the
    /// reply: the caller spins, and takes over the bridge's polling while
    /// it waits (the bridge keeps its periodic work: lost links, reply
    /// deadlines). For a thread with nothing else to do until the reply
    /// comes, on a core of its own, where a wake-up would cost more than
    /// the round trip; the bridge can then keep its default idle strategy,
    /// so the process needs one spinning thread, not two.
    ///
    /// Frames that arrive meanwhile for other asks or for exported actors
    /// are delivered as the bridge would deliver them, so the handler of
    /// an actor exported with [`Export::fast_send`](crate::Export::fast_send) may run on this
    /// thread. Call it from a plain thread, not from inside a handler.
    ///
    /// Returns the reply, the ask's own error (a remote ask fails with
    /// [`AskError::PeerLost`] after [`NodeConfig::reply_timeout`](crate::NodeConfig::reply_timeout)), or
    /// [`AskError::Timeout`] once `timeout` has passed, leaving the ask
    /// to be waited on again. `timeout` counts from the first clock read,
    /// a few dozen polls in (a microsecond or two): a reply that comes at
    /// once costs no clock read, about 20 ns on a VM. The thread polls
    /// back to back for 20 µs, then yields its core between polls. Any
    /// [`Ask`] can be waited on this way; a local one simply polls too.
    pub fn wait_polling<R: Send + 'static>(
        &self,
        ask: &mut Ask<R>,
        timeout: Duration,
    ) -> Result<R, AskError> {
        let batch = self.shared.config.poll_batch.max(1);
        if let Some(outcome) = ask.try_take() {
            return outcome;
        }
        // Polling the engine is the wait: no spin hint between polls (a
        // pause instruction costs tens of nanoseconds on recent x86, added
        // to the moment the reply is seen). The reply is looked for after a
        // poll that took frames, and every few polls in case the bridge
        // took it; the clock is read every few dozen.
        let mut pace = Patience::new(timeout);
        loop {
            let mut took = 0;
            if let Some(mut inbox) = self.inbox.try_lock() {
                // A failed poll is the bridge's to report (its periodic
                // work finds the lost link); here it is only no frames.
                took = inbox.poll(&self.shared, batch).0.unwrap_or(0);
            }
            if took > 0 || pace.polls.is_multiple_of(16) {
                if let Some(outcome) = ask.try_take() {
                    return outcome;
                }
            }
            if pace.next() {
                return ask
                    .try_take()
                    .unwrap_or_else(|| Err(AskError::Timeout(ask.target())));
            }
        }
    }

    /// Asks `remote` and waits for the reply on this thread, polling the
    /// node's inbox itself: [`RemoteAddr::ask`] and
    /// [`wait_polling`](Self::wait_polling) in one, for the same callers
    /// (a plain thread with nothing else to do until the reply comes),
    /// and faster. The thread holds the inbox from before it sends until
    /// the reply is in, so the reply is caught as it is polled: no entry
    /// in the table of pending asks, no reply slot, no lock taken per
    /// poll (0.07 µs less than `ask` and `wait_polling` over Aeron IPC on
    /// the development VM, and no allocation in steady state). Frames for other asks and
    /// for exported actors that arrive meanwhile are delivered as the
    /// bridge would deliver them. Call it from a plain thread, not from a
    /// handler that runs on the bridge. An address looked up through
    /// another node gets its replies in that node's inbox: it is asked and
    /// waited for the ordinary way ([`RemoteAddr::ask`], then
    /// [`Ask::wait_timeout`]), with the same results.
    ///
    /// The outer result is the send's, as from [`RemoteAddr::ask`]: the
    /// message comes back if it was not sent, also as
    /// [`SendError::Full`] when another thread held the inbox for all of
    /// `timeout` (another `ask_polling` waiting for its own reply). The
    /// inner result is the reply's: the reply, the handler's
    /// [`AskError::Panicked`], [`AskError::Dropped`] for any other
    /// refusal, [`AskError::PeerLost`] once the link is lost, or
    /// [`AskError::Timeout`] after `timeout` (counted as in
    /// `wait_polling`); a reply that comes after that is dropped.
    #[allow(clippy::type_complexity)]
    pub fn ask_polling<A, M>(
        &self,
        remote: &RemoteAddr<A>,
        msg: M,
        timeout: Duration,
    ) -> Result<Result<<A as Handler<M>>::Reply, AskError>, SendError<M>>
    where
        A: RemoteHandler<M>,
        M: Wire,
    {
        if !remote.is_through(&self.shared) {
            return remote.ask(msg).map(|mut ask| ask.wait_timeout(timeout));
        }
        let Some(mut inbox) = self.inbox.try_lock_for(timeout) else {
            return Err(SendError::Full {
                target: Some(remote.target()),
                msg,
            });
        };
        let id = self.shared.pending.next_id();
        inbox.catch.expect(id);
        if let Err(e) = remote.send_ask(id, msg) {
            inbox.catch.expect(0);
            return Err(e);
        }
        let batch = self.shared.config.poll_batch.max(1);
        let mut pace = Patience::new(timeout);
        loop {
            // A failed poll is the bridge's to report, as in `wait_polling`.
            let _ = inbox.poll(&self.shared, batch);
            if let Some(kind) = inbox.catch.caught.take() {
                let trailing = &self.shared.counters.trailing;
                return Ok(Outcome::of_frame(kind, &inbox.catch.body, trailing).into_reply());
            }
            let failed = if pace.next() {
                Some(AskError::Timeout(None))
            } else if pace.polls.is_multiple_of(POLLS_PER_CLOCK) && remote.is_lost() {
                Some(AskError::PeerLost)
            } else {
                None
            };
            if let Some(why) = failed {
                inbox.catch.expect(0);
                return Ok(Err(why));
            }
        }
    }
}
