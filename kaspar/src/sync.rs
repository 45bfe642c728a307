//! The one place the runtime imports its synchronization primitives from.
//!
//! Normally these are `std` atomics and `parking_lot` locks. Under
//! `RUSTFLAGS="--cfg loom"` they are loom's model-checked equivalents, so the
//! loom models in `tests/loom_*.rs` exercise the very code that ships. Nothing
//! else in the crate imports `std::sync` or `parking_lot` directly for the
//! queue and pool algorithms.
//!
//! The lock API is parking_lot-shaped (no poisoning): `lock()` returns the
//! guard, and `Condvar::wait` takes the guard by value and hands it back.

#[cfg(not(loom))]
mod imp {
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    // Only the queues' unit tests share a queue between threads.
    #[cfg(test)]
    pub(crate) use std::sync::Arc;

    /// A mutex without poisoning.
    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(parking_lot::Mutex<T>);
    pub(crate) type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
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

    pub(crate) mod hint {
        pub(crate) use std::hint::spin_loop;
    }

    pub(crate) mod thread {
        pub(crate) use std::thread::yield_now;
    }
}

#[cfg(loom)]
mod imp {
    pub(crate) use loom::cell::UnsafeCell;
    pub(crate) use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    #[cfg(test)]
    pub(crate) use loom::sync::Arc;

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
        pub(crate) fn notify_one(&self) {
            self.0.notify_one();
        }
        pub(crate) fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    pub(crate) mod hint {
        pub(crate) use loom::hint::spin_loop;
    }

    pub(crate) mod thread {
        pub(crate) use loom::thread::yield_now;
    }
}

pub(crate) use imp::*;
