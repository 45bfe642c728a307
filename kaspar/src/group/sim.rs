//! `Simulation`: a group run deterministically on the calling thread
//! (documented on the type).

use std::fmt;
use std::sync::Arc;

use crate::actor::addr::Addr;
use crate::actor::cell::ActorCell;
use crate::actor::instance::Instance;
use crate::actor::packed::Stored;
use crate::actor::traits::{Actor, Handler};
use crate::base::clock::{Clock, Time, VirtualClock};
#[cfg(feature = "journal")]
use crate::base::timer::QueueKey;
use crate::delivery::run_loop;
use crate::error::SendError;
use crate::failure::dead_letters::DeadLetters;
use crate::group::{self, GroupCore, GroupSpec};
use crate::guard::chain::CyclePolicy;
use crate::guard::lock::ActorLock;
use crate::mailbox::inbox::Inbox;
use crate::mailbox::{Mailbox, MailboxKind};

/// Drains one outside actor; returns how many messages it handled.
type Drainer = Box<dyn FnMut() -> usize>;

/// Deterministic simulation of a group (paper §11): the same actor types,
/// unchanged, driven on the calling thread from an input sequence, in
/// virtual time, as fast as the host allows.
///
/// A [`Simulation`] builds a group whose clock is a [`VirtualClock`] and
/// runs it without a thread: every input is queued on the group's one queue
/// and handled before the next input is looked at, and timers fire when
/// virtual time reaches them, in (due time, scheduling order). Actors that
/// read time only through [`Ctx::now`](crate::Ctx::now) and schedule only
/// through `Ctx` therefore behave identically on every run: the same
/// inputs give the same state transitions and the same outputs, bit for
/// bit.
///
/// What the group sends outside itself goes to actors created with
/// [`Simulation::spawn`]: they too run on the simulating thread, after the
/// group has settled, so their state records the group's outputs.
pub struct Simulation<G: GroupSpec> {
    clock: VirtualClock,
    dead: DeadLetters,
    spec: G,
    core: Arc<GroupCore<G>>,
    lock: Arc<ActorLock>,
    batch: Vec<G::Msg>,
    outside: Vec<Drainer>,
    finished: bool,
}

impl<G: GroupSpec> fmt::Debug for Simulation<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulation")
            .field("group", &G::NAME)
            .field("now", &self.clock.now())
            .finish()
    }
}

const MAX_BATCH: usize = 256;

impl<G: GroupSpec> Simulation<G> {
    /// Builds the group with virtual time starting at zero and runs its
    /// members' `started` hooks.
    pub fn new(members: G::Members) -> Self
    where
        G::Members: Send,
    {
        Self::starting_at(Time::from_nanos(0), members)
    }

    /// Builds the group with virtual time starting at `start`.
    pub fn starting_at(start: Time, members: G::Members) -> Self
    where
        // A simulation may move to another thread, and its members with it.
        G::Members: Send,
    {
        let clock = VirtualClock::new(start);
        let dead = DeadLetters::new();
        let (spec, core, lock) = group::reserve::<G>(
            Mailbox::new(MailboxKind::batched(1024)),
            CyclePolicy::Conservative,
            &Clock::Virtual(clock.clone()),
            &dead,
            Instance::detached(),
        );
        group::fill_and_start(&spec, members, &lock);
        let mut sim = Simulation {
            clock,
            dead,
            spec,
            core,
            lock,
            batch: Vec::with_capacity(MAX_BATCH),
            outside: Vec::new(),
            finished: false,
        };
        sim.settle();
        sim
    }

    /// The members' addresses.
    pub fn group(&self) -> &G {
        &self.spec
    }

    /// The simulation's clock.
    pub fn clock(&self) -> &VirtualClock {
        &self.clock
    }

    /// The simulation's dead-letter sink: what the simulated actors could
    /// not handle, with the reason.
    pub fn dead_letters(&self) -> &DeadLetters {
        &self.dead
    }

    /// The current virtual time.
    pub fn now(&self) -> Time {
        self.clock.now()
    }

    /// Creates an actor outside the group that runs on the simulating
    /// thread, on virtual time: where the group's outputs go.
    pub fn spawn<A: Actor + Send>(&mut self, actor: A) -> Addr<A> {
        let cell = Arc::new(ActorCell::new(
            actor,
            Arc::new(ActorLock::new(false)),
            A::POLICY.unwrap_or(CyclePolicy::Conservative),
            Inbox::Own(Mailbox::new(
                A::MAILBOX.unwrap_or(MailboxKind::batched(1024)),
            )),
            Clock::Virtual(self.clock.clone()),
            self.dead.clone(),
            Instance::detached(),
        ));
        if A::HAS_STARTED {
            run_loop::start_under(&cell, &cell.hold());
        }
        let drained = Arc::clone(&cell);
        let mut batch: Vec<Stored<A>> = Vec::with_capacity(MAX_BATCH);
        self.outside.push(Box::new(move || {
            let mailbox = drained.inbox.own().expect("outside actors own a mailbox");
            let mailbox = crate::actor::trace::consumer(mailbox);
            let mut handled = 0;
            while mailbox.try_pop_batch(&mut batch, MAX_BATCH) > 0 {
                handled += batch.len();
                run_loop::serve(&drained, &mut batch);
            }
            handled
        }));
        Addr::from_cell(cell)
    }

    /// Handles everything queued, in the group and outside it, until
    /// nothing is left. Returns how many messages were handled.
    pub fn settle(&mut self) -> usize {
        let mut total = 0;
        loop {
            let mut round = group::drain(
                &self.spec,
                &self.core,
                &self.lock,
                &mut self.batch,
                MAX_BATCH,
            );
            for drain in &mut self.outside {
                round += drain();
            }
            if round == 0 {
                return total;
            }
            total += round;
        }
    }

    /// Moves virtual time to `t`, firing every timer due on the way in
    /// (due time, scheduling order) and settling after each. Never moves
    /// time back.
    pub fn advance_to(&mut self, t: Time) {
        let timers = Clock::Virtual(self.clock.clone());
        while let Some(due) = timers.timers().next_due() {
            if due > t {
                break;
            }
            self.clock.advance_to(due);
            timers.timers().fire_next(due);
            self.settle();
        }
        self.clock.advance_to(t);
    }

    /// Moves virtual time to `t` (never back) without firing any timer.
    #[cfg(feature = "journal")]
    pub(crate) fn move_clock_to(&mut self, t: Time) {
        self.clock.advance_to(t);
    }

    /// Fires the group's timer tagged `timer` (with no tag, the group's
    /// first in due order), whatever its due time, and no outside actor's;
    /// false if it is not pending. For a journal's timer records.
    #[cfg(feature = "journal")]
    pub(crate) fn fire_recorded(&mut self, timer: Option<u64>) -> bool {
        let group = QueueKey::of(Arc::as_ptr(&self.lock));
        Clock::Virtual(self.clock.clone())
            .timers()
            .fire_recorded(group, timer, self.clock.now())
    }

    /// Delivers one input: moves time to `at`, queues `msg` for `to`, and
    /// settles.
    pub fn deliver<A, M>(&mut self, at: Time, to: &Addr<A>, msg: M) -> Result<(), SendError<M>>
    where
        A: Handler<M>,
    {
        self.advance_to(at);
        to.send(msg)?;
        self.settle();
        Ok(())
    }

    /// Settles, then runs the members' `stopped` hooks. Also done on drop.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if !self.finished {
            self.finished = true;
            self.settle();
            group::stop_members(&self.spec, &self.core, &self.lock);
        }
    }
}

impl<G: GroupSpec> Drop for Simulation<G> {
    fn drop(&mut self) {
        self.stop();
    }
}
