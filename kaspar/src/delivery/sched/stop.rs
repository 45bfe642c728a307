//! A shutdown's stop of the pool's members: one at a time, newest first,
//! as a system stops the actors on threads of their own.
//!
//! An actor's downstream was usually started before it (its address had to
//! exist first), so stopping the newest first leaves the downstream open
//! while the upstream drains what it had accepted: nothing the upstream
//! forwards while it drains is refused. Closing every member at once
//! would refuse it (the downstream may have stopped first).
//!
//! The system hands the pool a run of members, newest first (those that
//! started between two actors on threads of their own, in the system's one
//! start order), and waits for the run to end. The pool closes the first
//! and, from then on, the member's own last activation closes the next as
//! it leaves the pool ([`Shared::leave`]): each step is an activation on a
//! worker (the closed actor is scheduled into the next-to-run slot of the
//! worker that ran the one before), not a wake-up of the waiting thread,
//! so a million idle members stop in about the time their activations
//! take. A tokio-hosted pool's waiting thread runs the activations itself
//! while it waits (`tokio::help_until`), as its `close_all` does.
//!
//! The chain is kept under the member list's lock. A member closed by the
//! chain is *current*; the chain moves on when the member in the current
//! slot leaves, which it does under that lock too, after the chain made it
//! current (it was still in the list then). A member that left before its
//! turn (stopped by `Addr::stop`, or by a failure) is passed over and
//! counted as stopped.

use std::mem;
use std::sync::Arc;
use std::time::Instant;

use super::members::{same, Listed, Members};
use super::{Member, Shared};
use crate::base::ids::Target;
use crate::base::sync::MutexGuard;

/// A run of members being stopped one at a time.
pub(crate) struct Chain {
    /// Still to close, the newest last (the next to pop).
    order: Vec<Listed>,
    /// The member closed last, waited for to leave: its slot and itself.
    current: Option<(usize, Arc<dyn Member>)>,
    /// What has stopped so far, in the order it stopped.
    stopped: Vec<Target>,
    finished: bool,
}

impl Chain {
    /// A chain over `run`, listed newest first.
    fn new(mut run: Vec<Listed>) -> Self {
        run.reverse();
        Chain {
            order: run,
            current: None,
            stopped: Vec::new(),
            finished: false,
        }
    }
}

/// What a run's stop did.
#[derive(Debug, Default)]
pub(crate) struct Stopped {
    /// Stopped, in order.
    pub(crate) stopped: Vec<Target>,
    /// Closed but not stopped by the deadline (still draining, or inside a
    /// handler that does not return); every one of them is closed.
    pub(crate) unfinished: Vec<Target>,
}

impl Shared {
    /// Whether a shutdown stops this pool's members one at a time
    /// ([`stop_in_order`](Self::stop_in_order)): all but a simulated
    /// pool's, which the simulator's own shutdown stops in the same order
    /// (`stop_each_stepping`, feature `sim`): there the
    /// simulator, not a waiting thread, chooses which activation runs
    /// next. A tokio-hosted pool's are stopped in order, the shutdown's
    /// thread running the activations itself while it waits (it may be
    /// the runtime's only thread, or nothing may be driving the runtime).
    pub(crate) fn stops_in_order(&self) -> bool {
        #[cfg(feature = "sim")]
        if self.sim.is_some() {
            return false;
        }
        true
    }

    /// The members now, oldest start first, each marked listed: its leaving
    /// is then the chain's to report, not [`unlisted_left`](Self::unlisted_left)'s.
    pub(crate) fn members_by_start(&self) -> Vec<Listed> {
        self.members.lock().by_start()
    }

    /// A shutdown begins: from now on, members that leave without having
    /// been listed for it (spawned while it runs, or stopped by other
    /// means before their run began) are logged, for its report.
    pub(crate) fn log_leaves(&self) {
        let mut members = self.members.lock();
        if members.unlisted_left.is_none() {
            members.unlisted_left = Some(Vec::new());
        }
    }

    /// The members logged since the last call, in the order they left
    /// ([`log_leaves`](Self::log_leaves)); `end`: the shutdown is over,
    /// and the log stops.
    pub(crate) fn unlisted_left(&self, end: bool) -> Vec<Target> {
        let mut members = self.members.lock();
        if end {
            members.unlisted_left.take().unwrap_or_default()
        } else {
            members
                .unlisted_left
                .as_mut()
                .map(mem::take)
                .unwrap_or_default()
        }
    }

    /// A simulated pool's shutdown, on the simulator's thread: closes the
    /// members newest first, one at a time, as [`stop_in_order`] does,
    /// each once the one before has left the pool; `step` runs one of the
    /// ready activations (which one is the simulator's choice: the closed
    /// member's, or one of those it sends to) and says whether any was
    /// ready. With none ready and the member still in the pool, or once
    /// `step` has run out of steps, the next is closed anyway. Then
    /// everything left is closed at once ([`close_all`]).
    ///
    /// [`stop_in_order`]: Self::stop_in_order
    /// [`close_all`]: Self::close_all
    #[cfg(feature = "sim")]
    pub(crate) fn stop_each_stepping(&self, mut step: impl FnMut() -> bool) {
        for listed in self.members_by_start().into_iter().rev() {
            let holds = || self.members.lock().holds(listed.slot, &listed.member);
            if !holds() {
                continue;
            }
            listed.member.close();
            while holds() && step() {}
        }
        self.close_all(None);
    }

    /// Stops `run` (members listed by [`members_by_start`], newest first)
    /// one at a time, and waits until the last has left the pool or
    /// `deadline` passes; then every member of `run` not yet stopped is
    /// closed at once and listed unfinished. If another shutdown's run is
    /// under way, this one begins once that one has ended (its members
    /// that stopped meanwhile are passed over), or gives up at `deadline`.
    ///
    /// [`members_by_start`]: Self::members_by_start
    pub(crate) fn stop_in_order(&self, run: Vec<Listed>, deadline: Option<Instant>) -> Stopped {
        let (mut members, free) =
            self.wait_for(self.members.lock(), deadline, |m| m.chain.is_none());
        if !free {
            drop(members);
            return give_up(Chain::new(run));
        }
        members.chain = Some(Chain::new(run));
        drop(members);
        self.advance();
        let (mut members, finished) = self.wait_for(self.members.lock(), deadline, |m| {
            m.chain.as_ref().is_some_and(|c| c.finished)
        });
        let chain = members
            .chain
            .take()
            .expect("only its starter takes a chain");
        drop(members);
        self.stop_done.notify_all();
        if finished {
            Stopped {
                stopped: chain.stopped,
                unfinished: Vec::new(),
            }
        } else {
            give_up(chain)
        }
    }

    /// Waits until `done` holds of the member list, or `deadline` passes;
    /// whether it holds (decided under the lock handed back). The chain's
    /// end and its start's wait are told by `stop_done`. A tokio-hosted
    /// pool's waiter runs the scheduled activations meanwhile instead
    /// (`tokio::help_until`): the runtime's threads may never run them
    /// while it waits.
    fn wait_for<'a>(
        &'a self,
        mut members: MutexGuard<'a, Members>,
        deadline: Option<Instant>,
        done: impl Fn(&Members) -> bool,
    ) -> (MutexGuard<'a, Members>, bool) {
        #[cfg(feature = "tokio")]
        if self.host.is_some() {
            drop(members);
            super::tokio::help_until(self, deadline, || done(&self.members.lock()));
            members = self.members.lock();
            let held = done(&members);
            return (members, held);
        }
        loop {
            if done(&members) {
                return (members, true);
            }
            match deadline {
                None => members = self.stop_done.wait(members),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return (members, false);
                    }
                    members = self.stop_done.wait_timeout(members, left).0;
                }
            }
        }
    }

    /// Closes the chain's next member that is still in the pool, making it
    /// current; past the last, marks the chain finished and wakes its
    /// waiter. Called by the shutdown to begin, and then by each current
    /// member as it leaves.
    pub(super) fn advance(&self) {
        let mut passed = Vec::new();
        let next = {
            let mut members = self.members.lock();
            let Some(mut chain) = members.chain.take() else {
                return;
            };
            let next = loop {
                match chain.order.pop() {
                    None => {
                        chain.finished = true;
                        break None;
                    }
                    Some(listed) if members.holds(listed.slot, &listed.member) => {
                        chain.current = Some((listed.slot, Arc::clone(&listed.member)));
                        break Some(listed.member);
                    }
                    // Stopped before its turn.
                    Some(listed) => {
                        chain.stopped.push(listed.member.target());
                        passed.push(listed.member);
                    }
                }
            };
            members.chain = Some(chain);
            next
        };
        // Out of the lock: a member passed over may be the last hold on
        // its actor, whose drop runs user code.
        drop(passed);
        match next {
            // Outside the lock: the close schedules the member.
            Some(member) => member.close(),
            None => self.stop_done.notify_all(),
        }
    }

    /// Called by [`leave`](Shared::leave) under the member list's lock,
    /// for the member that left `slot`: whether it was the chain's current
    /// member (then it is counted stopped, and the caller advances the
    /// chain once out of the lock).
    pub(super) fn left_current(
        chain: Option<&mut Chain>,
        slot: usize,
        member: &Arc<dyn Member>,
    ) -> bool {
        let Some(chain) = chain else {
            return false;
        };
        match &chain.current {
            Some((at, current)) if *at == slot && same(current, member) => {
                chain.current = None;
                chain.stopped.push(member.target());
                true
            }
            _ => false,
        }
    }
}

/// The chain the deadline cut short: what stopped, and the rest, closed.
fn give_up(mut chain: Chain) -> Stopped {
    let mut unfinished = Vec::new();
    if let Some((_, current)) = chain.current.take() {
        unfinished.push(current.target());
    }
    for listed in mem::take(&mut chain.order).into_iter().rev() {
        listed.member.close();
        unfinished.push(listed.member.target());
    }
    Stopped {
        stopped: chain.stopped,
        unfinished,
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::{Mutex, Weak};
    use std::time::Duration;

    use super::super::SchedConfig;
    use super::*;
    use crate::base::ids::ActorId;

    /// A member that records its close and, if `leaves`, leaves the pool
    /// there and then (as a closed, idle actor's last activation would).
    struct Probe {
        name: &'static str,
        leaves: bool,
        pool: Weak<Shared>,
        slot: Mutex<Option<usize>>,
        log: Arc<Mutex<Vec<&'static str>>>,
    }

    impl Member for Probe {
        fn close(&self) {
            self.log.lock().unwrap().push(self.name);
            if self.leaves {
                if let (Some(pool), Some(slot)) =
                    (self.pool.upgrade(), self.slot.lock().unwrap().take())
                {
                    pool.leave(slot);
                }
            }
        }

        fn target(&self) -> Target {
            Target::new(ActorId::GROUP, "Probe", Some(self.name.into()))
        }
    }

    fn pool() -> Arc<Shared> {
        Arc::new(Shared::threadless(SchedConfig {
            workers: 1,
            budget: 64,
            lifo_limit: 8,
            monitor: None,
        }))
    }

    fn join(
        pool: &Arc<Shared>,
        log: &Arc<Mutex<Vec<&'static str>>>,
        order: u64,
        name: &'static str,
        leaves: bool,
    ) -> usize {
        let probe = Arc::new(Probe {
            name,
            leaves,
            pool: Arc::downgrade(pool),
            slot: Mutex::new(None),
            log: Arc::clone(log),
        });
        let slot = pool
            .join(order, Arc::clone(&probe) as Arc<dyn Member>)
            .unwrap();
        *probe.slot.lock().unwrap() = Some(slot);
        slot
    }

    fn instances(targets: &[Target]) -> Vec<&str> {
        targets
            .iter()
            .map(|t| t.instance.as_deref().unwrap())
            .collect()
    }

    #[test]
    fn members_are_closed_newest_first_each_after_the_last_has_left() {
        let pool = pool();
        let log = Arc::new(Mutex::new(Vec::new()));
        // Joined out of order: the start order decides, not the slot.
        join(&pool, &log, 5, "b", true);
        join(&pool, &log, 9, "c", true);
        join(&pool, &log, 2, "a", true);
        let mut run = pool.members_by_start();
        assert_eq!(run.iter().map(|l| l.order).collect::<Vec<_>>(), [2, 5, 9]);
        run.reverse();
        let done = pool.stop_in_order(run, None);
        assert_eq!(*log.lock().unwrap(), ["c", "b", "a"]);
        assert_eq!(instances(&done.stopped), ["c", "b", "a"]);
        assert!(done.unfinished.is_empty());
        assert_eq!(pool.live(), 0);
        assert!(pool.members.lock().chain.is_none(), "the chain is gone");
    }

    #[test]
    fn a_member_that_left_before_its_turn_is_passed_over_as_stopped() {
        let pool = pool();
        let log = Arc::new(Mutex::new(Vec::new()));
        join(&pool, &log, 1, "a", true);
        let b = join(&pool, &log, 2, "b", true);
        join(&pool, &log, 3, "c", true);
        let mut run = pool.members_by_start();
        run.reverse();
        pool.leave(b);
        let done = pool.stop_in_order(run, None);
        assert_eq!(*log.lock().unwrap(), ["c", "a"], "b is not closed again");
        assert_eq!(instances(&done.stopped), ["c", "b", "a"]);
    }

    #[test]
    fn at_the_deadline_the_member_waited_for_and_the_rest_are_unfinished_and_closed() {
        let pool = pool();
        let log = Arc::new(Mutex::new(Vec::new()));
        join(&pool, &log, 1, "a", true);
        join(&pool, &log, 2, "b", false);
        join(&pool, &log, 3, "c", true);
        let mut run = pool.members_by_start();
        run.reverse();
        let deadline = Instant::now() + Duration::from_millis(20);
        let done = pool.stop_in_order(run, Some(deadline));
        assert_eq!(instances(&done.stopped), ["c"]);
        assert_eq!(instances(&done.unfinished), ["b", "a"]);
        assert_eq!(
            *log.lock().unwrap(),
            ["c", "b", "a"],
            "a closed at the deadline"
        );
        assert!(pool.members.lock().chain.is_none());
        // A late leave of the member waited for moves nothing.
        assert_eq!(pool.live(), 1);
    }
}
