//! The consumer-side waiting shared by the queues that do not sleep on their
//! own lock (`ShardedBQueue`, `LockFreeMpsc`).
//!
//! [`Parker`] is a one-token semaphore: `unpark` leaves a token (tokens do
//! not accumulate), `park` sleeps until a token is there and takes it. A
//! token left by an `unpark` that raced ahead of the `park` makes that park
//! return at once, so an unpark is never lost; the price is an occasional
//! spurious return, which every caller handles by re-checking its queue.
//!
//! The queues decide *whether* to unpark with a `SLEEPING` bit kept in an
//! atomic word the producers already read-modify-write on every push. Every
//! read-modify-write of one atomic sees the latest value in its modification
//! order, so "the consumer set `SLEEPING` after seeing the queue empty" and
//! "a producer added a message" are totally ordered without `SeqCst`: either
//! the consumer's bit-set sees the message (and does not sleep), or the
//! producer's update sees the bit (and unparks).

use super::IdleWait;
use crate::base::sync::{Condvar, Mutex};

/// A one-token semaphore over a mutex and a condition variable.
#[derive(Debug, Default)]
pub(super) struct Parker {
    token: Mutex<bool>,
    cv: Condvar,
}

impl Parker {
    pub(super) fn new() -> Self {
        Parker {
            token: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    /// Sleeps until a token is available, then takes it.
    pub(super) fn park(&self) {
        let mut token = self.token.lock();
        while !*token {
            token = self.cv.wait(token);
        }
        *token = false;
    }

    /// Leaves a token and wakes the parked consumer, if any.
    pub(super) fn unpark(&self) {
        *self.token.lock() = true;
        self.cv.notify_one();
    }
}

/// How many more empty polls a consumer makes before it parks.
#[derive(Clone, Copy, Debug)]
pub(super) struct SpinBudget {
    left: u32,
    forever: bool,
}

impl SpinBudget {
    pub(super) fn new(idle: IdleWait) -> Self {
        match idle {
            IdleWait::Park => SpinBudget {
                left: 0,
                forever: false,
            },
            IdleWait::SpinThenPark { spins } => SpinBudget {
                left: spins,
                forever: false,
            },
            IdleWait::Spin => SpinBudget {
                left: 0,
                forever: true,
            },
        }
    }

    /// Spends one poll: spins once and returns `true`, or returns `false`
    /// when the budget is gone and the caller should park.
    #[inline]
    pub(super) fn spin(&mut self) -> bool {
        if self.forever {
            crate::base::sync::hint::spin_loop();
            return true;
        }
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        crate::base::sync::hint::spin_loop();
        true
    }
}
