//! How the pool's threads go to sleep when there is nothing to run, and how
//! a schedule wakes one, without a lost wake-up and without waking a
//! thread per message.
//!
//! `state` counts the threads that are *searching* (out of work, polling
//! the queues before they sleep) and those *asleep*. A thread asleep is on
//! the `sleepers` list, waiting on its own [`Token`].
//!
//! * A scheduler pushes its task, then ([`notify_one`](Idle::notify_one))
//!   a `SeqCst` fence and a load of `state`: if a thread is searching, that
//!   thread will find the task; if none is and one is asleep, it takes one
//!   off the list (under the list's lock) and wakes it, counting it as
//!   searching from then on. A busy pool pays the fence and one load.
//! * A searching thread that gives up ([`sleep`](Idle::sleep)) turns from
//!   searching into asleep with one read-modify-write of `state` (under
//!   the list's lock, as it puts itself on the list), then a `SeqCst`
//!   fence, then looks at the queues once more. Only if they are still
//!   empty does it wait for its token; otherwise it takes itself off the
//!   list and runs.
//!
//! **No lost wake-up.** The two fences are totally ordered. If the
//! scheduler's comes first, the sleeper's second look (after its fence)
//! sees the task pushed before it. If the sleeper's comes first, the
//! scheduler's load (after its fence) sees the sleeper's update of
//! `state`, so it finds the sleeper counted (and wakes it) or another
//! thread searching (which, in turn, looks again after its own update
//! before it sleeps). The loom model `tests/loom_sched_idle.rs` checks this
//! code, and fails (a model deadlock) without the second look.
//!
//! A thread woken from the list starts out searching: a burst of schedules
//! wakes one thread, not one per task, and a thread that stops searching
//! because it found work wakes the next sleeper if it was the last
//! searcher (as tokio's workers do), so a backlog spreads across the pool
//! one thread at a time.

use crate::base::cpu;
use crate::base::sync::{fence, AtomicUsize, Condvar, Mutex, Ordering};
use std::sync::Arc;

/// One searching thread in `state`.
const SEARCHER: usize = 1;
/// One sleeping thread in `state`.
const SLEEPER: usize = 1 << 16;
const SEARCHERS: usize = SLEEPER - 1;

/// A one-shot wake-up for one sleeping thread: `notify` before `wait` is
/// not lost.
#[derive(Default)]
pub(crate) struct Token {
    set: Mutex<Notice>,
    cv: Condvar,
}

/// A token's state: whether it is set, and the CPU its notifier ran on.
#[derive(Default)]
struct Notice {
    set: bool,
    by: Option<usize>,
}

impl Token {
    pub(crate) fn new() -> Self {
        Token {
            set: Mutex::new(Notice::default()),
            cv: Condvar::new(),
        }
    }

    /// Sleeps until notified, and takes the notification; returns the CPU
    /// the notifier ran on, if known.
    fn wait(&self) -> Option<usize> {
        let mut notice = self.set.lock();
        while !notice.set {
            notice = self.cv.wait(notice);
        }
        notice.set = false;
        notice.by.take()
    }

    fn notify(&self) {
        // Where this thread runs as it wakes the sleeper: where the kernel
        // may well put the sleeper too (`base::cpu`).
        let by = cpu::current();
        {
            let mut notice = self.set.lock();
            notice.set = true;
            notice.by = by;
        }
        self.cv.notify_one();
    }
}

/// The pool's sleeping threads and the counts that let a scheduler skip
/// waking any.
#[derive(Default)]
pub(crate) struct Idle {
    /// Bits 0..16: threads searching. Bits 16..: threads asleep.
    state: AtomicUsize,
    sleepers: Mutex<Vec<Arc<Token>>>,
}

impl Idle {
    pub(crate) fn new() -> Self {
        Idle {
            state: AtomicUsize::new(0),
            sleepers: Mutex::new(Vec::new()),
        }
    }

    /// The calling thread ran out of work and starts polling the queues.
    pub(crate) fn start_searching(&self) {
        self.state.fetch_add(SEARCHER, Ordering::SeqCst);
    }

    /// The calling thread, searching, found work. If it was the last one
    /// searching, it wakes a sleeper to look for more (there may be).
    pub(crate) fn found_work(&self) {
        let prev = self.state.fetch_sub(SEARCHER, Ordering::SeqCst);
        debug_assert!(prev & SEARCHERS != 0, "found work without searching");
        if prev & SEARCHERS == SEARCHER && prev >= SLEEPER {
            self.notify_one();
        }
    }

    /// The calling thread, searching, found nothing: puts it to sleep on
    /// `me` unless `has_work` (called after the fence of the module docs)
    /// says there is something to do after all. Returns with the thread
    /// searching again (woken threads search first), to look for work and
    /// then report [`found_work`](Self::found_work) or sleep again.
    ///
    /// Returns the CPU the thread that woke it ran on, if it slept and that
    /// is known: a woken pool thread on that same CPU steps off it
    /// (`worker::search`).
    pub(crate) fn sleep(&self, me: &Arc<Token>, has_work: impl Fn() -> bool) -> Option<usize> {
        {
            let mut list = self.sleepers.lock();
            list.push(Arc::clone(me));
            self.state
                .fetch_add(SLEEPER.wrapping_sub(SEARCHER), Ordering::SeqCst);
        }
        // Pairs with the fence in `notify_one` (module docs).
        fence(Ordering::SeqCst);
        if has_work() {
            let mut list = self.sleepers.lock();
            if let Some(at) = list.iter().position(|t| Arc::ptr_eq(t, me)) {
                list.swap_remove(at);
                self.state
                    .fetch_add(SEARCHER.wrapping_sub(SLEEPER), Ordering::SeqCst);
                return None;
            }
            // A scheduler took us off the list already: its notification
            // is on its way (it counted us as searching); take it, so that
            // the token is clean for the next sleep.
        }
        // Woken as a searcher (see `wake`).
        me.wait()
    }

    /// Threads asleep now (a snapshot).
    pub(crate) fn sleepers(&self) -> usize {
        self.state.load(Ordering::SeqCst) / SLEEPER
    }

    /// The calling thread, searching, leaves the pool for good.
    pub(crate) fn stop_searching(&self) {
        self.state.fetch_sub(SEARCHER, Ordering::SeqCst);
    }

    /// After a schedule: wakes one sleeping thread unless one is searching
    /// already (or none sleeps).
    pub(crate) fn notify_one(&self) {
        // Pairs with the fence in `sleep` (module docs).
        fence(Ordering::SeqCst);
        let s = self.state.load(Ordering::SeqCst);
        if s & SEARCHERS != 0 || s < SLEEPER {
            return;
        }
        self.wake(1);
    }

    /// Wakes every sleeping thread (shutdown, or a change every thread
    /// must see).
    pub(crate) fn notify_all(&self) {
        fence(Ordering::SeqCst);
        self.wake(usize::MAX);
    }

    /// Takes up to `n` threads off the list, counts them as searching, and
    /// wakes them.
    fn wake(&self, n: usize) {
        for _ in 0..n {
            let token = {
                let mut list = self.sleepers.lock();
                let Some(token) = list.pop() else { return };
                // Asleep to searching: a woken thread searches first.
                self.state
                    .fetch_add(SEARCHER.wrapping_sub(SLEEPER), Ordering::SeqCst);
                token
            };
            token.notify();
        }
    }
}

#[cfg(all(test, target_os = "linux", not(miri), not(loom)))]
mod tests {
    use super::*;
    use crate::base::cpu::tests::{allowed, pin};

    #[test]
    fn a_woken_sleeper_learns_the_cpu_its_waker_ran_on() {
        std::thread::spawn(|| {
            let here = allowed()[0];
            pin(&[here]);
            let idle = Idle::new();
            let me = Arc::new(Token::new());
            idle.start_searching();
            let sleeper = {
                let me = Arc::clone(&me);
                std::thread::spawn(move || me.wait())
            };
            me.notify();
            assert_eq!(sleeper.join().unwrap(), Some(here));
            // A sleep that a schedule ended before it began learns nothing.
            assert_eq!(idle.sleep(&me, || true), None);
        })
        .join()
        .unwrap();
    }
}
