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
//! parking_lot_core's address-keyed queue normally, and under loom a model
//! of that queue whose parked threads really sleep, so the lock's word
//! protocol, wake-ups included, is checked by loom against the code that
//! ships.

#[cfg(not(loom))]
mod imp {
    pub(crate) use std::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
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

        /// Gives the calling thread its parking record now, without
        /// sleeping. parking_lot makes a thread's record the first time the
        /// thread parks (on any lock or condition variable), and grows its
        /// global table of them as the number of threads with one grows: a
        /// heap allocation. A runtime thread calls this first, so that the
        /// first lock it finds contended, in steady state, does not make
        /// (and allocate) the record then (`tests/alloc_first_contention.rs`).
        pub(crate) fn warm() {
            /// A key nothing else parks on.
            static KEY: u8 = 0;
            // SAFETY: `KEY`'s address is ours alone; `validate` returns
            // false at once (so the thread never sleeps), and neither
            // closure panics or calls into parking_lot.
            unsafe {
                parking_lot_core::park(
                    &KEY as *const u8 as usize,
                    || false,
                    || {},
                    |_, _| {},
                    ParkToken(0),
                    None,
                );
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
        fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
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

    /// The loom model of parking_lot_core's queue: one queue of parked
    /// threads, validation and the unparker's decision under its lock (as
    /// under parking_lot_core's bucket lock), and a parked thread that
    /// really sleeps (`loom::thread::park`) until an unparker picks it, so
    /// a lost wake-up is a deadlock loom reports.
    pub(crate) mod parking {
        use loom::sync::atomic::{AtomicUsize, Ordering};
        use loom::sync::{Arc, Mutex};
        use loom::thread::Thread;

        struct Parked {
            key: usize,
            token: usize,
            thread: Thread,
            /// 0 while asleep; the unparker's token + 1 once picked.
            woken: Arc<AtomicUsize>,
        }

        loom::lazy_static! {
            static ref QUEUE: Mutex<Vec<Parked>> = Mutex::new(Vec::new());
        }

        /// A modelled thread has no parking record to make.
        pub(crate) fn warm() {}

        pub(crate) fn park(
            key: usize,
            validate: impl FnOnce() -> bool,
            token: usize,
        ) -> Option<usize> {
            let woken = Arc::new(AtomicUsize::new(0));
            {
                let mut queue = QUEUE.lock().unwrap();
                if !validate() {
                    return None;
                }
                queue.push(Parked {
                    key,
                    token,
                    thread: loom::thread::current(),
                    woken: Arc::clone(&woken),
                });
            }
            loop {
                match woken.load(Ordering::SeqCst) {
                    0 => loom::thread::park(),
                    picked => return Some(picked - 1),
                }
            }
        }

        pub(crate) fn unpark_one(
            key: usize,
            decide: impl FnOnce(Option<usize>, bool, bool) -> usize,
        ) {
            let mut queue = QUEUE.lock().unwrap();
            match queue.iter().position(|p| p.key == key) {
                Some(at) => {
                    let parked = queue.remove(at);
                    let more = queue.iter().any(|p| p.key == key);
                    let token = decide(Some(parked.token), more, false);
                    parked.woken.store(token + 1, Ordering::SeqCst);
                    parked.thread.unpark();
                }
                None => {
                    decide(None, false, false);
                }
            }
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
