//! Time, as handlers see it: only through [`Ctx::now`](crate::Ctx::now).
//!
//! Live, the clock is the system's: nanoseconds since the Unix epoch,
//! anchored once and advanced by the monotonic clock so it never goes back.
//! In simulation it is virtual and moves only when the simulator moves it,
//! which is what makes a simulated run repeatable bit for bit.

use crate::base::sync::{AtomicU64, Ordering};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::base::timer::{self, TimerQueue};

/// A point in time: nanoseconds since the Unix epoch.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(u64);

impl Time {
    /// From nanoseconds since the Unix epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Time(nanos)
    }

    /// Nanoseconds since the Unix epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// `self + d`, saturating.
    pub fn saturating_add(self, d: Duration) -> Time {
        Time(
            self.0
                .saturating_add(d.as_nanos().min(u64::MAX as u128) as u64),
        )
    }

    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Time({}.{:09})",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

/// Where [`Ctx::now`](crate::Ctx::now) reads the time from.
#[derive(Clone, Debug, Default)]
pub enum Clock {
    /// Wall time, made monotonic.
    #[default]
    System,
    /// Time that moves only when told to.
    Virtual(VirtualClock),
}

impl Clock {
    /// The current time.
    pub fn now(&self) -> Time {
        match self {
            Clock::System => system_now(),
            Clock::Virtual(v) => v.now(),
        }
    }

    /// The timer queue that runs on this clock.
    pub(crate) fn timers(&self) -> &TimerQueue {
        match self {
            Clock::System => timer::live(),
            Clock::Virtual(v) => &v.0.timers,
        }
    }
}

fn system_now() -> Time {
    static ANCHOR: OnceLock<(Instant, u64)> = OnceLock::new();
    let (instant, epoch_nanos) = ANCHOR.get_or_init(|| {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        (Instant::now(), since.as_nanos() as u64)
    });
    Time(epoch_nanos + instant.elapsed().as_nanos() as u64)
}

/// A clock that moves only when [`advance_to`](VirtualClock::advance_to)
/// moves it, with its own timer queue that only a
/// [`Simulation`](crate::Simulation) fires. Clones share one time.
#[derive(Clone, Debug, Default)]
pub struct VirtualClock(Arc<VirtualInner>);

#[derive(Debug, Default)]
struct VirtualInner {
    now: AtomicU64,
    timers: TimerQueue,
}

impl VirtualClock {
    /// A virtual clock reading `start`.
    pub fn new(start: Time) -> Self {
        VirtualClock(Arc::new(VirtualInner {
            now: AtomicU64::new(start.0),
            timers: TimerQueue::default(),
        }))
    }

    /// The current virtual time.
    pub fn now(&self) -> Time {
        Time(self.0.now.load(Ordering::Acquire))
    }

    /// Its timer queue (the whole-system simulator fires it).
    #[cfg(feature = "sim")]
    pub(crate) fn timers(&self) -> &TimerQueue {
        &self.0.timers
    }

    /// Moves forward to `t`; never moves back.
    pub fn advance_to(&self, t: Time) {
        self.0.now.fetch_max(t.0, Ordering::AcqRel);
    }
}
