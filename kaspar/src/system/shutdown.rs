//! How a system stops: every actor and group, newest first, one at a
//! time, whether it runs on a thread of its own or on the pool; then the
//! pool's own threads. What a shutdown did comes back as a
//! [`ShutdownReport`].
//!
//! Threads and pooled actors share one start order (`SystemInner::
//! next_start`): a thread's place is taken as it registers, a pooled
//! actor's as it joins the pool. The shutdown walks both lists from the
//! newest: a thread is closed and joined; a run of pooled actors that
//! started after the next thread is handed to the pool, which stops them
//! one at a time on its workers (`delivery::sched::stop`), and the
//! shutdown waits for the run to end. Only then are the pool's workers
//! let go. Until this order was kept for the pool, a shutdown closed every
//! pooled actor at once, and an upstream actor draining its backlog found
//! its downstream closed: 1,988 of 2,000 forwarded messages refused in
//! `tests/pool_shutdown_order.rs`, none with the order.

use std::mem;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crate::base::ids::Target;
use crate::base::sync::{Condvar, Mutex, Ordering};
use crate::delivery::sched::Shared;
use crate::guard::chain;
use crate::system::System;

/// What a registered thread runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Role {
    /// An actor or a group: stopped in the start order, and reported.
    Actor,
    /// A worker of the actor pool (or the thread that keeps a hosted
    /// pool): stopped once every actor has, and not reported.
    PoolWorker,
}

/// A started thread (an actor's, a group's, or one of the pool's), as
/// the system tracks it.
pub(crate) struct Running {
    /// As the shutdown report names it.
    pub(crate) target: Target,
    pub(crate) role: Role,
    /// Closes its mailbox (or, for a pool's entry, the pool). Only a
    /// tokio-hosted pool's close waits: it runs its members' last
    /// activations on the calling thread until they have left or the
    /// deadline given passes (`None`: no deadline).
    pub(crate) close: Box<dyn Fn(Option<Instant>) + Send>,
    pub(crate) thread: JoinHandle<()>,
    pub(crate) done: Arc<Done>,
}

/// Set by an actor thread as it exits (also by unwinding), so a shutdown
/// can wait for it with a deadline; `JoinHandle::join` has none.
#[derive(Default)]
pub(crate) struct Done {
    finished: Mutex<bool>,
    cv: Condvar,
}

impl Done {
    /// Whether the thread finished by `deadline` (`None`: wait forever).
    fn wait(&self, deadline: Option<Instant>) -> bool {
        let mut finished = self.finished.lock();
        while !*finished {
            match deadline {
                None => finished = self.cv.wait(finished),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    let (guard, timed_out) = self.cv.wait_timeout(finished, left);
                    finished = guard;
                    if timed_out {
                        return *finished;
                    }
                }
            }
        }
        true
    }
}

/// Marks its thread done when dropped.
pub(crate) struct DoneOnExit(pub(crate) Arc<Done>);

impl Drop for DoneOnExit {
    fn drop(&mut self) {
        *self.0.finished.lock() = true;
        self.0.cv.notify_all();
    }
}

impl System {
    pub(super) fn stop_all(&self, deadline: Option<Instant>) -> ShutdownReport {
        self.inner.closed.store(true, Ordering::SeqCst);
        if chain::runs_actor_code() {
            return self.close_without_waiting();
        }
        let mut report = ShutdownReport::default();
        // Pooled actors that stop during this shutdown without being in
        // one of its runs (spawned meanwhile, say, by a `stopped` hook) are
        // reported too, as they stop, as a thread spawned meanwhile is.
        let logged = self.ordered_pool();
        if let Some(pool) = &logged {
            pool.log_leaves();
        }
        let unlisted = |report: &mut ShutdownReport| {
            if let Some(pool) = &logged {
                report.stopped.extend(pool.unlisted_left(false));
            }
        };
        let mut left = Vec::new();
        let mut pool_threads = Vec::new();
        // Once a deadline has passed, the pool's members are closed all
        // together (`Shared::stop_in_order` gives up) and not waited for
        // again by this shutdown.
        let mut members_given_up = false;
        // A handler still draining may spawn (`Ctx::spawn`): its actor
        // starts closed and is registered (or joins the pool), and is
        // stopped by the next round.
        loop {
            let running = mem::take(&mut *self.inner.running.lock());
            let (mut actors, threads): (Vec<_>, Vec<_>) = running
                .into_iter()
                .partition(|(_, r)| r.role == Role::Actor);
            pool_threads.extend(threads);
            let pool = self.ordered_pool();
            let mut members = match &pool {
                Some(pool) if !members_given_up => pool.members_by_start(),
                _ => Vec::new(),
            };
            if actors.is_empty() && members.is_empty() {
                break;
            }
            // Newest first, one at a time: an actor's downstream was
            // usually started before it (its address had to exist), so it
            // is still open while the upstream actor drains what it had
            // accepted. Both lists are oldest first.
            loop {
                let next_thread = actors.last().map(|(order, _)| *order);
                let newer_members = members
                    .last()
                    .is_some_and(|m| next_thread.is_none_or(|t| m.order > t));
                if newer_members {
                    // The pooled members that started after the next
                    // thread, newest first.
                    let from =
                        members.partition_point(|m| next_thread.is_some_and(|t| m.order < t));
                    let mut run = members.split_off(from);
                    run.reverse();
                    let pool = pool.as_ref().expect("members come from the pool");
                    let stopped = pool.stop_in_order(run, deadline);
                    report.stopped.extend(stopped.stopped);
                    unlisted(&mut report);
                    if !stopped.unfinished.is_empty() {
                        self.abandon();
                        report.unfinished.extend(stopped.unfinished);
                        members_given_up = true;
                        members.clear();
                    }
                    continue;
                }
                let Some((order, r)) = actors.pop() else {
                    break;
                };
                (r.close)(deadline);
                if !r.done.wait(deadline) {
                    self.abandon();
                    left.push((order, r));
                    continue;
                }
                match r.thread.join() {
                    Ok(()) => report.stopped.push(r.target),
                    Err(_) => report.failed.push(r.target),
                }
                unlisted(&mut report);
            }
        }
        // The pool's own threads last, once no member is left for them to
        // run; they are the system's, not actors, and are not reported.
        for (order, r) in pool_threads.into_iter().rev() {
            (r.close)(deadline);
            if r.done.wait(deadline) {
                let _ = r.thread.join();
            } else {
                self.abandon();
                left.push((order, r));
            }
        }
        if let Some(pool) = &logged {
            report.stopped.extend(pool.unlisted_left(true));
        }
        if !left.is_empty() {
            self.inner.gave_up.store(true, Ordering::SeqCst);
            report.unfinished.extend(
                left.iter()
                    .filter(|(_, r)| r.role == Role::Actor)
                    .map(|(_, r)| r.target.clone()),
            );
            left.sort_unstable_by_key(|(order, _)| *order);
            let mut running = self.inner.running.lock();
            // Spawned meanwhile (closed) stay after them, in start order.
            let newer = mem::take(&mut *running);
            running.extend(left);
            running.extend(newer);
        }
        report
    }

    /// A deadline passed: from now on every run loop of this system hands
    /// what it dequeues to dead letters instead of handling it.
    fn abandon(&self) {
        if !self.inner.dead.is_abandoned() {
            self.inner.dead.abandon();
        }
    }

    /// The system's pool, if it has one running whose members a shutdown
    /// stops in order (`Shared::stops_in_order`).
    fn ordered_pool(&self) -> Option<Arc<Shared>> {
        self.inner
            .pool
            .lock()
            .clone()
            .filter(|pool| pool.stops_in_order() && !pool.exited())
    }

    /// [`shutdown`](Self::shutdown) from a thread that runs actor code (a
    /// handler, a hook, a run loop): every mailbox is closed, so every
    /// actor drains, runs its `stopped` hook and exits as usual, but none
    /// is waited for. Waiting could not end: this thread holds a lock, or
    /// is the very run loop, that one of them needs to finish. Every actor
    /// is reported unfinished; a later `shutdown` from outside any actor
    /// (or dropping the `System` there) joins them.
    #[cold]
    fn close_without_waiting(&self) -> ShutdownReport {
        let mut report = ShutdownReport {
            not_waited: true,
            ..ShutdownReport::default()
        };
        if let Some(pool) = self.ordered_pool() {
            for member in pool.members_by_start().into_iter().rev() {
                report.unfinished.push(member.target());
            }
        }
        let running = self.inner.running.lock();
        for (_, r) in running.iter().rev() {
            // Closes without waiting: this thread runs actor code.
            (r.close)(Some(Instant::now()));
            if r.role == Role::Actor {
                report.unfinished.push(r.target.clone());
            }
        }
        report
    }
}
impl Drop for System {
    fn drop(&mut self) {
        if self.inner.gave_up.load(Ordering::SeqCst) {
            // Join what has finished; detach what a timeout gave up on.
            self.stop_all(Some(Instant::now()));
        } else {
            self.shutdown();
        }
    }
}

/// What [`System::shutdown`] did.
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct ShutdownReport {
    /// Actors that drained, ran `stopped`, and exited, in the order they
    /// were stopped, on threads of their own and pooled alike. A group is
    /// one entry: its type name, its instance name if it was given one,
    /// and an id of its own. A pooled actor that had stopped before the
    /// shutdown began has left the pool and is not listed (an actor on a
    /// thread of its own is, as its thread is joined); one that starts
    /// while the shutdown runs (spawned by a `stopped` hook, say) starts
    /// closed and is listed once it has stopped, as on a thread. The
    /// pool's worker threads are not actors and are not listed.
    pub stopped: Vec<Target>,
    /// Actor threads that died outside a handler (a runtime bug).
    pub failed: Vec<Target>,
    /// Actors and groups still running when
    /// [`System::shutdown_timeout`] stopped waiting (a handler that does
    /// not return), and those not yet stopped by then (closed at once).
    /// Their queued messages go to dead letters as each gets back to its
    /// run loop or its next activation. After a shutdown called from
    /// actor code (see [`not_waited`](Self::not_waited)): every actor,
    /// none of them waited for.
    pub unfinished: Vec<Target>,
    /// Whether this shutdown was called from a thread running actor code
    /// (inside a handler or a hook, or on an actor's thread), where it
    /// cannot wait: it closed every mailbox and returned at once, and the
    /// actors stop on their own threads. (Dropping the last `System` there
    /// does the same and detaches the threads.)
    pub not_waited: bool,
}
