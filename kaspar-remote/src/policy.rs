//! What a sender does when the receiver's buffer is full, and the waiting
//! that the bridge thread and a waiting sender share.

use std::time::{Duration, Instant};

use crossbeam_utils::Backoff;

/// What a remote send does when the receiving process's buffer is full.
///
/// Set per remote address ([`RemoteAddr::with_policy`](crate::RemoteAddr::with_policy));
/// the node's default is [`NodeConfig::policy`](crate::NodeConfig::policy).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum SendPolicy {
    /// Return [`SendError::Full`](kaspar::SendError::Full) at once, with the
    /// message.
    #[default]
    Fail,
    /// Retry, spinning then yielding then sleeping briefly, for at most
    /// this long; then `Full`, with the message. Never waits longer.
    Wait(Duration),
    /// For market data, where the newest update is the one that matters:
    /// when the buffer is full, the oldest frame this sender put there that
    /// the receiver has not taken yet is discarded and the new one takes
    /// its place, so a send succeeds unless the whole buffer holds other
    /// senders' frames (then `Full`). The receiver sees the discarded
    /// frames as a sequence gap ([`Node::gaps`](crate::Node::gaps)).
    ///
    /// Only where the engine can take back an accepted frame
    /// ([`LinkTx::can_drop_oldest`](crate::LinkTx::can_drop_oldest)): the
    /// in-process loopback, and iceoryx2 when its service overflows
    /// (`safe overflow`: the subscriber's oldest sample from that
    /// publisher is replaced). Aeron appends to a log it never rewrites, so
    /// on an Aeron link this policy is refused
    /// ([`PolicyError::DropOldestUnsupported`](crate::PolicyError::DropOldestUnsupported)).
    DropOldest,
}

/// Waiting with a bound: spin, then yield (crossbeam's `Backoff`, as
/// kaspar's own waiters do), then sleep in steps that double up to
/// [`Idle::MAX_SLEEP`].
#[derive(Debug)]
pub(crate) struct Idle {
    spin: Backoff,
    sleep: Duration,
}

impl Idle {
    const FIRST_SLEEP: Duration = Duration::from_micros(20);
    /// The longest an idle bridge sleeps between polls: the latency a
    /// message that arrives after a long silence can pay.
    pub(crate) const MAX_SLEEP: Duration = Duration::from_millis(1);

    pub(crate) fn new() -> Self {
        Idle {
            spin: Backoff::new(),
            sleep: Self::FIRST_SLEEP,
        }
    }

    /// Something happened: the next wait starts spinning again.
    pub(crate) fn reset(&mut self) {
        self.spin.reset();
        self.sleep = Self::FIRST_SLEEP;
    }

    /// Waits one step, never past `until`.
    pub(crate) fn wait(&mut self, until: Option<Instant>) {
        if !self.spin.is_completed() {
            self.spin.snooze();
            return;
        }
        let mut nap = self.sleep;
        if let Some(until) = until {
            nap = nap.min(until.saturating_duration_since(Instant::now()));
        }
        if !nap.is_zero() {
            std::thread::sleep(nap);
        }
        self.sleep = (self.sleep * 2).min(Self::MAX_SLEEP);
    }
}
