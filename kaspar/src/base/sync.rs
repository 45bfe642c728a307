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
//! [`RawLock`] is the raw mutex under every actor lock: parking_lot's
//! `RawMutex` normally, and under loom a model with the same contract
//! (including `bump`'s hand-over), so the actor lock's owner protocol is
//! checked by loom against the code that ships.

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

    /// A raw mutex: no data, no guard. The safe layer over it is
    /// `guard::lock::ActorLock` and the guards that call its `unsafe fn`s.
    pub(crate) struct RawLock(parking_lot::RawMutex);

    impl RawLock {
        pub(crate) const fn new() -> Self {
            use parking_lot::lock_api::RawMutex as _;
            Self(parking_lot::RawMutex::INIT)
        }
        #[inline(always)]
        pub(crate) fn try_lock(&self) -> bool {
            use parking_lot::lock_api::RawMutex as _;
            self.0.try_lock()
        }
        #[inline]
        pub(crate) fn lock(&self) {
            use parking_lot::lock_api::RawMutex as _;
            self.0.lock()
        }
        /// # Safety
        ///
        /// The calling thread holds the lock.
        #[inline(always)]
        pub(crate) unsafe fn unlock(&self) {
            use parking_lot::lock_api::RawMutex as _;
            // SAFETY: forwarded from the caller.
            unsafe { self.0.unlock() }
        }
        /// Hands the lock to a parked waiter, if there is one, and takes
        /// it back; a no-op otherwise.
        ///
        /// # Safety
        ///
        /// The calling thread holds the lock.
        #[inline]
        pub(crate) unsafe fn bump(&self) {
            use parking_lot::lock_api::RawMutexFair as _;
            // SAFETY: forwarded from the caller.
            unsafe { self.0.bump() }
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

    /// The loom model of parking_lot's `RawMutex`: a flag taken by
    /// compare-and-swap, waiting by yielding (loom explores every
    /// interleaving of the yields), and `bump` as release, yield, retake,
    /// which lets any waiter in exactly where parking_lot's fair hand-over
    /// would.
    #[derive(Debug)]
    pub(crate) struct RawLock(loom::sync::atomic::AtomicBool);

    impl RawLock {
        pub(crate) fn new() -> Self {
            Self(loom::sync::atomic::AtomicBool::new(false))
        }
        pub(crate) fn try_lock(&self) -> bool {
            self.0
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        }
        pub(crate) fn lock(&self) {
            while !self.try_lock() {
                loom::thread::yield_now();
            }
        }
        /// # Safety
        ///
        /// The calling thread holds the lock.
        pub(crate) unsafe fn unlock(&self) {
            self.0.store(false, Ordering::Release);
        }
        /// # Safety
        ///
        /// The calling thread holds the lock.
        pub(crate) unsafe fn bump(&self) {
            // SAFETY: forwarded from the caller.
            unsafe { self.unlock() };
            loom::thread::yield_now();
            self.lock();
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
