//! Reconnecting addresses: a [`RemoteAddr`](crate::RemoteAddr) told, by a
//! [`Reconnect`] policy, to look its actor up again when its link is lost,
//! so that it works again once the actor's process is back (restarted, or
//! reachable again).
//!
//! The policy belongs to the address, not to the node, because what a gap
//! means depends on the use: a market-data feed wants its address back as
//! soon as the publisher is, while an order's address that silently
//! reached a restarted process (which knows nothing of the orders before
//! it) is something its caller should decide on, by looking up anew.
//!
//! How it works, and what it costs:
//!
//! - An address with a policy shares a route ([`route`]) with its clones:
//!   the links it has used, in an append-only list ([`hops`]), and the
//!   index of the current one. A send reads that index and the list's
//!   entry (three acquire loads, plain loads on x86-64) and then sends as
//!   any address does. No lock and no read-modify-write is added to the
//!   send; an address without a policy pays one predictable branch.
//! - The route hears of a loss as a watcher of its current link (the
//!   node's bridge reports a lost link within a millisecond of the
//!   transport's verdict). From then until it is back, sends fail with
//!   [`SendError::Closed`](kaspar::SendError::Closed), the message handed
//!   back, and asks as on any lost link. Sends never look anything up.
//! - One thread per route in a gap runs the lookups, one at a time: the
//!   first at once, then after [`Reconnect::backoff`]'s first wait,
//!   doubling up to its longest. Each lookup is a
//!   [`Node::lookup`](crate::Node::lookup)'s steps (record, schema check,
//!   hello naming the lost session so that a receiver that saw it reports
//!   the gap, authentication as the node's
//!   [`auth`](crate::NodeConfig::auth) requires), bounded by the node's
//!   connect timeout. The thread ends when the address is back, when
//!   [`Reconnect::give_up_after`] has passed (the address is then lost for
//!   good, as one without a policy), when the node closes, or when the
//!   address's last clone is dropped.
//! - The watchers of the address ([`RemoteAddr::watch`](crate::RemoteAddr::watch))
//!   hear of each loss once, and stay watching across reconnects.

pub(crate) mod hops;
pub(crate) mod route;

use std::time::Duration;

/// How a remote address reconnects after its link is lost: given to
/// [`RemoteAddr::with_reconnect`](crate::RemoteAddr::with_reconnect).
///
/// After a loss, the address looks its actor up again at once, then,
/// while that fails, after [`first_wait`](Self::first_wait), then after
/// twice that, and so on up to [`max_wait`](Self::max_wait) between two
/// lookups; one lookup at a time, each bounded by the node's connect
/// timeout. Once the actor's process is back, the address works again
/// within `max_wait` plus one lookup. It keeps trying for as long as the
/// address lives, unless told to [`give_up_after`](Self::give_up_after)
/// some time.
///
/// ```
/// use std::time::Duration;
/// use kaspar_remote::Reconnect;
///
/// let policy = Reconnect::new()
///     .backoff(Duration::from_millis(5), Duration::from_millis(200))
///     .give_up_after(Duration::from_secs(60));
/// assert_eq!(policy.max_wait(), Duration::from_millis(200));
/// assert_eq!(Reconnect::default().give_up(), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Reconnect {
    first: Duration,
    max: Duration,
    give_up: Option<Duration>,
}

impl Reconnect {
    /// The shortest wait between two lookups.
    const MIN_WAIT: Duration = Duration::from_millis(1);

    /// Waits 10 ms after the first failed lookup, doubling up to 1 s, and
    /// never gives up.
    pub const fn new() -> Self {
        Reconnect {
            first: Duration::from_millis(10),
            max: Duration::from_secs(1),
            give_up: None,
        }
    }

    /// Waits `first` after the first failed lookup, doubling after each
    /// failure up to `max`. `first` is at least a millisecond, and `max`
    /// at least `first`: no address looks up in a tight loop.
    pub fn backoff(self, first: Duration, max: Duration) -> Self {
        let first = first.max(Self::MIN_WAIT);
        Reconnect {
            first,
            max: max.max(first),
            ..self
        }
    }

    /// Stops trying once the address has been lost for `after`: it is then
    /// lost for good, as an address without a policy is.
    pub fn give_up_after(self, after: Duration) -> Self {
        Reconnect {
            give_up: Some(after),
            ..self
        }
    }

    /// The wait after the first failed lookup.
    pub fn first_wait(&self) -> Duration {
        self.first
    }

    /// The longest wait between two lookups.
    pub fn max_wait(&self) -> Duration {
        self.max
    }

    /// How long a loss lasts before the address gives up, if ever.
    pub fn give_up(&self) -> Option<Duration> {
        self.give_up
    }

    /// The wait after one of `failed` lookups in a row (1 for the first).
    pub(crate) fn wait_after(&self, failed: u32) -> Duration {
        let doublings = failed.saturating_sub(1).min(31);
        self.first
            .checked_mul(1 << doublings)
            .map_or(self.max, |d| d.min(self.max))
    }
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_from_the_first_up_to_the_longest() {
        let ms = Duration::from_millis;
        let p = Reconnect::new().backoff(ms(5), ms(60));
        let waits: Vec<Duration> = (1..=6).map(|n| p.wait_after(n)).collect();
        assert_eq!(waits, [ms(5), ms(10), ms(20), ms(40), ms(60), ms(60)]);
        assert_eq!(p.wait_after(u32::MAX), ms(60), "no overflow");
    }

    #[test]
    fn a_backoff_never_spins() {
        let p = Reconnect::new().backoff(Duration::ZERO, Duration::ZERO);
        assert_eq!(p.first_wait(), Duration::from_millis(1));
        assert_eq!(p.max_wait(), Duration::from_millis(1));
        let p = Reconnect::new().backoff(Duration::from_secs(2), Duration::from_secs(1));
        assert_eq!(
            p.max_wait(),
            Duration::from_secs(2),
            "max is at least first"
        );
    }
}
