//! The one place the runtime imports its synchronization primitives from.
//!
//! Normally these are `std` atomics and `parking_lot` locks. Under
//! `RUSTFLAGS="--cfg loom"` they are loom's model-checked equivalents, so the
//! loom models in `tests/loom_*.rs` exercise the very code that ships.
//! Every lock, condition variable, park, thread-local cache and atomic of the
//! runtime comes from here, the actor lock, the deadlock registry and the
//! reply slots included. Three kinds of thing stay std's, on purpose:
//!
//! * `std::sync::Arc` where it holds a `dyn` (actor cells behind
//!   `Arc<dyn ReplySink<_>>`, group sinks, dead-letter boxes): loom's `Arc`
//!   cannot be coerced to an unsized type; the shim's `Arc` is used where
//!   the pointee is sized (reply slots);
//! * process-wide statics initialised at compile time (id counters, the
//!   clock's anchor, the live timer thread's `OnceLock`): loom's types have
//!   no `const` constructors, and no model reaches them;
//! * `std::sync::mpsc` in `system::spawn`, a one-shot start-up handshake.
//!
//! The lock API is parking_lot-shaped (no poisoning): `lock()` returns the
//! guard, and `Condvar::wait` takes the guard by value and hands it back.
//! [`parking`] is what the actor lock (`guard::lock`) waits with:
//! parking_lot_core's address-keyed queue normally, and under loom a
//! yield, so the lock's word protocol is checked by loom against the code
//! that ships.

#[cfg(not(loom))]
mod imp {
    pub(crate) use std::sync::atomic::{
        AtomicBool, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering,
    };
    pub(crate) use std::sync::{Arc, Weak};
    pub(crate) use std::thread_local;

    /// A mutex without poisoning.
    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(parking_lot::Mutex<T>);
    pub(crate) type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub(crate) const fn new(value: T) -> Self {
            Self(parking_lot::Mutex::new(value))
        }
        #[inline]
        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            self.0.lock()
        }
    }

    /// A condition variable paired with [`Mutex`].
    #[derive(Debug, Default)]
    pub(crate) struct Condvar(parking_lot::Condvar);

    impl Condvar {
        pub(crate) fn new() -> Self {
            Self(parking_lot::Condvar::new())
        }
        #[inline]
        pub(crate) fn wait<'a, T>(&self, mut guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
            self.0.wait(&mut guard);
            guard
        }
        /// Waits at most `timeout`; the flag says whether it timed out.
        #[inline]
        pub(crate) fn wait_timeout<'a, T>(
            &self,
            mut guard: MutexGuard<'a, T>,
            timeout: std::time::Duration,
        ) -> (MutexGuard<'a, T>, bool) {
            let timed_out = self.0.wait_for(&mut guard, timeout).timed_out();
            (guard, timed_out)
        }
        #[inline]
        pub(crate) fn notify_one(&self) {
            self.0.notify_one();
        }
        #[inline]
        pub(crate) fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    /// Interior mutability with tokio-style `with`/`with_mut` accessors, so
    /// that loom can track every access.
    #[derive(Debug)]
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(crate) const fn new(value: T) -> Self {
            Self(std::cell::UnsafeCell::new(value))
        }
        #[inline(always)]
        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }
        #[inline(always)]
        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }

    /// Parking on an address, for the actor lock (`guard::lock`):
    /// parking_lot_core's queue, keyed by the lock word's address.
    pub(crate) mod parking {
        use std::cell::Cell;

        use parking_lot_core::{FilterOp, ParkResult, ParkToken, UnparkToken};

        /// Parks the calling thread on `key` if `validate`, called under
        /// the queue's lock, says so; `token` is the thread's token, which
        /// an unparker can read. Returns the unparker's token, or `None`
        /// when validation failed (nothing to wait for: retry).
        #[inline]
        pub(crate) fn park(
            key: usize,
            validate: impl FnOnce() -> bool,
            token: usize,
        ) -> Option<usize> {
            // SAFETY: `key` is the address of a lock word that only
            // `guard::lock` parks on; `validate` neither panics nor calls
            // into parking_lot.
            let result = unsafe {
                parking_lot_core::park(key, validate, || {}, |_, _| {}, ParkToken(token), None)
            };
            match result {
                ParkResult::Unparked(UnparkToken(t)) => Some(t),
                ParkResult::Invalid | ParkResult::TimedOut => None,
            }
        }

        /// Unparks the first thread parked on `key`, if any. `decide` runs
        /// under the queue's lock with that thread's park token (`None` if
        /// none was parked), whether others remain parked, and whether the
        /// queue asks for fairness (about every half millisecond per key);
        /// what it returns is handed to the woken thread.
        #[inline]
        pub(crate) fn unpark_one(
            key: usize,
            decide: impl FnOnce(Option<usize>, bool, bool) -> usize,
        ) {
            let chosen = Cell::new(None);
            // SAFETY: as for `park`; the closures neither panic nor call
            // into parking_lot.
            unsafe {
                parking_lot_core::unpark_filter(
                    key,
                    |ParkToken(t)| {
                        if chosen.get().is_none() {
                            chosen.set(Some(t));
                            FilterOp::Unpark
                        } else {
                            FilterOp::Stop
                        }
                    },
                    |result| {
                        let woken = chosen.get().filter(|_| result.unparked_threads != 0);
                        UnparkToken(decide(woken, result.have_more_threads, result.be_fair))
                    },
                );
            }
        }
    }

    pub(crate) mod hint {
        pub(crate) use std::hint::spin_loop;
    }

    pub(crate) mod thread {
        pub(crate) use std::thread::{current, park, park_timeout, yield_now, Thread};
    }
}

#[cfg(loom)]
mod imp {
    pub(crate) use loom::cell::UnsafeCell;
    pub(crate) use loom::sync::atomic::{
        AtomicBool, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering,
    };
    pub(crate) use loom::sync::Arc;
    pub(crate) use loom::thread_local;
    // Loom's `Arc` has no `Weak`, and unsized `Arc<dyn Trait>` (which is
    // what every `Weak` in the runtime points at) cannot be made from a
    // loom `Arc` anyway: those stay std's, outside what the models explore.
    pub(crate) use std::sync::Weak;

    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);
    pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(loom::sync::Mutex::new(value))
        }
        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            self.0.lock().unwrap()
        }
    }

    #[derive(Debug, Default)]
    pub(crate) struct Condvar(loom::sync::Condvar);

    impl Condvar {
        pub(crate) fn new() -> Self {
            Self(loom::sync::Condvar::new())
        }
        pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
            self.0.wait(guard).unwrap()
        }
        pub(crate) fn wait_timeout<'a, T>(
            &self,
            guard: MutexGuard<'a, T>,
            timeout: std::time::Duration,
        ) -> (MutexGuard<'a, T>, bool) {
            let (guard, result) = self.0.wait_timeout(guard, timeout).unwrap();
            (guard, result.timed_out())
        }
        pub(crate) fn notify_one(&self) {
            self.0.notify_one();
        }
        pub(crate) fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    /// The loom model of parking: a park is a yield (loom explores every
    /// interleaving of the yields) that reports a failed validation, so
    /// the waiter retries; an unpark finds nobody parked. The lock's word
    /// protocol (who holds it, the flag bits, hand-over and adoption) is
    /// modelled exactly; the direct hand-off to a woken waiter is not.
    pub(crate) mod parking {
        pub(crate) fn park(
            _key: usize,
            _validate: impl FnOnce() -> bool,
            _token: usize,
        ) -> Option<usize> {
            loom::thread::yield_now();
            None
        }

        pub(crate) fn unpark_one(
            _key: usize,
            decide: impl FnOnce(Option<usize>, bool, bool) -> usize,
        ) {
            decide(None, false, false);
        }
    }

    pub(crate) mod hint {
        pub(crate) use loom::hint::spin_loop;
    }

    pub(crate) mod thread {
        pub(crate) use loom::thread::{current, park, yield_now, Thread};

        /// Loom has no timed park. A timed park may return early anyway
        /// (a spurious wake-up), and every caller re-checks its condition
        /// and its deadline, so the model returns at once after a yield.
        pub(crate) fn park_timeout(_: std::time::Duration) {
            yield_now();
        }
    }
}

pub(crate) use imp::*;
