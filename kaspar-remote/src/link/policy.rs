//! What a sender does when the receiver's buffer is full, and the waiting
//! that the bridge thread and a waiting sender share.

use std::time::{Duration, Instant};

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

/// How a node's bridge thread (and a topic subscriber's thread) waits
/// while its inbox is empty. Set per node with
/// [`NodeConfig::idle`](crate::NodeConfig::idle).
///
/// Whatever the strategy, the bridge also wakes for its periodic work
/// (lost links, ask deadlines) about every millisecond.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IdleStrategy {
    /// Poll with spin hints in growing runs for `spin`, then poll and
    /// yield the core for `yield_for`, then sleep between polls in steps
    /// that double from 20 µs up to `max_sleep`. A frame that arrives
    /// while the bridge polls costs nothing extra; one that finds it
    /// asleep waits out the rest of the sleep (at most `max_sleep`). Any
    /// frame starts the budget afresh.
    Backoff {
        /// How long to spin after the last frame.
        spin: Duration,
        /// How long to yield after spinning.
        yield_for: Duration,
        /// The longest sleep between two polls.
        max_sleep: Duration,
    },
    /// Poll forever, back to back: the lowest latency, a whole core per
    /// node, all the time. No spin hint between polls: a pause instruction
    /// costs tens of nanoseconds on recent x86, and each one would be
    /// added to the moment a frame is seen (the `remote` bench's iceoryx2
    /// round trip measured about 0.15 µs faster without it). Only for a
    /// node that owns a core (pinned, isolated, its hyperthread sibling
    /// idle); on a shared core it slows every thread that runs there, the
    /// other end of a round trip included. (The
    /// bridge does yield once after handing a reply to an asking thread
    /// of its process, so that an asker queued for its core is not held
    /// up for a whole time slice.)
    Spin,
}

impl IdleStrategy {
    /// The default: [`Backoff`](IdleStrategy::Backoff) with 50 µs of
    /// spinning, 200 µs of yielding and naps of at most 1 ms. Traffic
    /// that keeps coming within a quarter of a millisecond is picked up
    /// without a sleep; a node idle for longer wakes about a thousand
    /// times a second, which measured 2% to 6% of one core on the 2-core
    /// development VM, the transport's own threads included (the
    /// `idle node` rows of `benches/remote.rs`). Use
    /// [`sleep`](IdleStrategy::sleep) for less, at the cost of a wake-up
    /// for the first frame after a pause.
    pub const DEFAULT: IdleStrategy = IdleStrategy::Backoff {
        spin: Duration::from_micros(50),
        yield_for: Duration::from_micros(200),
        max_sleep: Duration::from_millis(1),
    };

    /// Sleeps as soon as the inbox is empty, in naps of at most
    /// `max_sleep`: the least CPU, the most latency.
    pub const fn sleep(max_sleep: Duration) -> IdleStrategy {
        IdleStrategy::Backoff {
            spin: Duration::ZERO,
            yield_for: Duration::ZERO,
            max_sleep,
        }
    }
}

impl Default for IdleStrategy {
    fn default() -> Self {
        IdleStrategy::DEFAULT
    }
}

/// Waiting with a bound, as an [`IdleStrategy`] says: spin, then yield,
/// then sleep in steps that double up to its longest sleep.
#[derive(Debug)]
pub(crate) struct Idle {
    strategy: IdleStrategy,
    /// When the current wait began; `None` right after a reset.
    since: Option<Instant>,
    spins: u32,
    sleep: Duration,
}

impl Idle {
    const FIRST_SLEEP: Duration = Duration::from_micros(20);
    /// Spin hints per poll at most, once the runs stop growing.
    const MAX_SPIN_RUN: u32 = 64;

    /// The strategy a waiting sender uses: a few
    /// microseconds of spinning, then short naps.
    pub(crate) fn new() -> Self {
        Idle::with(IdleStrategy::Backoff {
            spin: Duration::from_micros(5),
            yield_for: Duration::from_micros(20),
            max_sleep: Duration::from_millis(1),
        })
    }

    pub(crate) fn with(strategy: IdleStrategy) -> Self {
        Idle {
            strategy,
            since: None,
            spins: 1,
            sleep: Self::FIRST_SLEEP,
        }
    }

    /// Something happened: the next wait starts spinning again.
    pub(crate) fn reset(&mut self) {
        self.since = None;
        self.spins = 1;
        self.sleep = Self::FIRST_SLEEP;
    }

    /// Waits one step, never sleeping past `until`.
    pub(crate) fn wait(&mut self, until: Option<Instant>) {
        let IdleStrategy::Backoff {
            spin,
            yield_for,
            max_sleep,
        } = self.strategy
        else {
            return;
        };
        let since = *self.since.get_or_insert_with(Instant::now);
        let waited = since.elapsed();
        if waited < spin {
            for _ in 0..self.spins {
                std::hint::spin_loop();
            }
            self.spins = (self.spins * 2).min(Self::MAX_SPIN_RUN);
            return;
        }
        if waited < spin + yield_for {
            std::thread::yield_now();
            return;
        }
        let mut nap = self.sleep.min(max_sleep);
        if let Some(until) = until {
            nap = nap.min(until.saturating_duration_since(Instant::now()));
        }
        if !nap.is_zero() {
            std::thread::sleep(nap);
        }
        self.sleep = (self.sleep * 2).min(max_sleep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_never_sleeps_and_backoff_sleeps_at_most_its_longest_nap() {
        let mut spin = Idle::with(IdleStrategy::Spin);
        for _ in 0..1000 {
            spin.wait(None);
        }
        assert!(spin.since.is_none(), "Spin keeps no budget");
        assert_eq!(spin.sleep, Idle::FIRST_SLEEP, "Spin never sleeps");

        let mut sleepy = Idle::with(IdleStrategy::sleep(Duration::from_micros(80)));
        for _ in 0..10 {
            sleepy.wait(None);
        }
        assert_eq!(
            sleepy.sleep,
            Duration::from_micros(80),
            "naps double up to the cap"
        );
        sleepy.reset();
        assert_eq!(sleepy.sleep, Idle::FIRST_SLEEP);
        assert!(sleepy.since.is_none());
    }

    #[test]
    fn backoff_spins_before_it_sleeps() {
        let mut idle = Idle::with(IdleStrategy::Backoff {
            spin: Duration::from_secs(60),
            yield_for: Duration::ZERO,
            max_sleep: Duration::from_millis(1),
        });
        for _ in 0..20 {
            idle.wait(None);
        }
        assert_eq!(idle.spins, Idle::MAX_SPIN_RUN, "spin runs grow to the cap");
        assert_eq!(
            idle.sleep,
            Idle::FIRST_SLEEP,
            "no sleep inside the spin budget"
        );
    }
}
