//! A group on the pool: the whole group is one schedulable unit. Its one
//! queue carries the pool's hook, and one activation handles up to the
//! pool's budget of the group's messages under the group's one lock, as
//! the group's thread would (`run` in the parent module), so the group
//! keeps its total order and its members' calls to each other stay nested
//! entries.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock, Weak};

use super::{drain_closed, GroupCore, GroupHold, GroupInit, GroupSpec};
use crate::actor::cell::Held;
use crate::actor::trace;
use crate::base::ids::{ActorId, Target};
use crate::delivery::sched::{self, Carried, Member, Runnable, Shared, Task};
use crate::failure::{drop_quietly, quietly};
use crate::guard::chain;
use crate::guard::lock::ActorLock;
use crate::mailbox::{Polled, Schedule};

/// A pooled group: what its activations need, and the pool's member slot.
pub(crate) struct PooledGroup<G: GroupSpec> {
    core: Arc<GroupCore<G>>,
    lock: Arc<ActorLock>,
    /// What the deadlock detector names the group's consumer waiting for.
    group: Target,
    /// What a shutdown report names it: as `group`, with an id of its own
    /// (as a group on a thread of its own is reported), drawn when first
    /// asked for, so that a group that is never reported (a simulated
    /// one) moves no other actor's id.
    report: OnceLock<Target>,
    max_batch: usize,
    /// The pool and this group's slot in it, once joined.
    joined: OnceLock<(Arc<Shared>, usize)>,
    /// Entered by the running activation (one at a time: see `sched`,
    /// and `Carried` for the tail of one and the start of the next).
    run: Carried<GroupRun<G>>,
}

struct GroupRun<G: GroupSpec> {
    /// The members' handles (carried: `G` is `Send`, not `Sync`).
    spec: G,
    init: Option<GroupInit<G>>,
    batch: Vec<G::Msg>,
    done: bool,
    #[cfg(feature = "journal")]
    flight: Option<crate::delivery::flight::FlightRecorder<G::Msg>>,
}

/// The hook in the group's queue.
struct GroupHook<G: GroupSpec> {
    group: Weak<PooledGroup<G>>,
    pool: Arc<Shared>,
}

impl<G: GroupSpec> Schedule for GroupHook<G> {
    fn schedule(&self) {
        // Held strongly by the pool's member list until it is done.
        if let Some(group) = self.group.upgrade() {
            sched::schedule(&self.pool, group);
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn hosted(&self) -> bool {
        self.pool.is_hosted()
    }

    fn before_first_wait(&self, begun: &dyn Fn() -> bool) -> bool {
        self.pool.before_first_wait(begun)
    }

    /// The unit the pool schedules is the group, whichever member is
    /// awaited: its activation is the one to run.
    fn help(&self, cx: &mut std::task::Context<'_>, _member: *const ()) -> crate::mailbox::Helped {
        self.pool.help(cx, self.group.as_ptr().cast())
    }

    fn help_blocked(&self, done: &dyn Fn() -> bool, deadline: Option<std::time::Instant>) -> bool {
        self.pool.help_blocked(done, deadline)
    }
}

impl<G: GroupSpec> Member for PooledGroup<G> {
    fn close(&self) {
        self.core.mailbox.close();
    }

    fn target(&self) -> Target {
        self.report
            .get_or_init(|| {
                Target::new(
                    ActorId::next(),
                    self.group.name,
                    self.group.instance.clone(),
                )
            })
            .clone()
    }
}

impl<G: GroupSpec> PooledGroup<G> {
    /// A pooled group; its lock was handed over for the first activation,
    /// which runs `init` (the members' states and `started` hooks).
    pub(crate) fn new(
        spec: G,
        core: Arc<GroupCore<G>>,
        lock: Arc<ActorLock>,
        max_batch: usize,
        #[allow(unused_mut)] mut init: GroupInit<G>,
        group: Target,
    ) -> Self {
        #[cfg(feature = "journal")]
        let flight = init.flight.take();
        PooledGroup {
            core,
            lock,
            report: OnceLock::new(),
            group,
            max_batch: max_batch.max(1),
            joined: OnceLock::new(),
            run: Carried::new(GroupRun {
                spec,
                init: Some(init),
                batch: Vec::new(),
                done: false,
                #[cfg(feature = "journal")]
                flight,
            }),
        }
    }

    /// Records the pool this group joined (as member `slot`), hooks its
    /// queue to the pool and schedules its first activation.
    pub(crate) fn attach(self: &Arc<Self>, pool: &Arc<Shared>, slot: usize) {
        let _ = self.joined.set((Arc::clone(pool), slot));
        let hook = GroupHook {
            group: Arc::downgrade(self),
            pool: Arc::clone(pool),
        };
        if self.core.mailbox.set_task(Box::new(hook)).is_err() {
            panic!("kaspar: this group's queue is pooled already");
        }
        sched::schedule(pool, Arc::clone(self) as Task);
    }

    /// One activation (see `sched`): the members' start the first time,
    /// then up to `budget` messages.
    fn activate(&self, run: &mut GroupRun<G>, budget: usize) -> Ran {
        let _consuming = self.lock.consuming(chain::thread_token());
        // The members' sends keep to one lane of a sharded mailbox, on
        // whichever thread this activation runs (per-sender FIFO).
        let _sender = crate::base::ids::SenderScope::enter(self as *const Self as usize);
        let GroupRun {
            spec,
            init,
            batch,
            #[cfg(feature = "journal")]
            flight,
            ..
        } = run;
        let served = catch_unwind(AssertUnwindSafe(|| {
            if let Some(init) = init.take() {
                self.first(spec, init);
            }
            let queue = trace::consumer(&self.core.mailbox);
            let pool = self.joined.get().map(|(pool, _)| pool);
            let mut left = budget;
            loop {
                let asked = left.min(self.max_batch);
                match queue.poll_batch(batch, asked) {
                    Polled::Got(n) => {
                        #[cfg(feature = "journal")]
                        let flight = flight.as_ref();
                        #[cfg(not(feature = "journal"))]
                        let flight = None::<Flight<'_, G>>;
                        let slotted = sched::slotted();
                        self.serve(spec, batch, flight);
                        left = left.saturating_sub(n);
                        // As a pooled actor's activation does
                        // (`sched::actor`): a spent budget serves on when
                        // nothing else waits, and a poll that drained the
                        // queue lingers for the next message.
                        if left == 0 {
                            if !pool.is_some_and(sched::renew_budget) {
                                return Ran::Again;
                            }
                            left = budget;
                        }
                        if let Some(pool) = pool {
                            if (n < asked || left == budget) && sched::slotted() == slotted {
                                sched::linger(pool, || self.core.mailbox.nothing_published());
                            }
                        }
                    }
                    Polled::Idle => return Ran::Idle,
                    Polled::Busy => return Ran::Again,
                    Polled::Closed => {
                        spec.stopped(&GroupHold {
                            held: Held::acquire(&self.lock),
                            thread_bound: false,
                        });
                        return Ran::Done;
                    }
                }
            }
        }));
        match served {
            Ok(ran) => ran,
            Err(payload) => {
                // As on the group's thread: every member stops, and what
                // the queue accepted goes to dead letters.
                drop_quietly(payload);
                self.core.mailbox.close();
                let hold = GroupHold {
                    held: Held::acquire(&self.lock),
                    thread_bound: false,
                };
                spec.stopped(&hold);
                drain_closed(spec, &self.core, &hold, batch);
                Ran::Done
            }
        }
    }

    /// The members' states and `started` hooks, under the lock the spawner
    /// handed over.
    fn first(&self, spec: &G, init: GroupInit<G>) {
        let hold = GroupHold {
            // SAFETY: the spawner handed this lock over before scheduling
            // the first activation, and only that activation adopts it.
            held: unsafe { Held::adopt(&self.lock) },
            thread_bound: false,
        };
        match quietly(init.build) {
            Some(members) => {
                spec.fill(members, &hold);
                spec.started(&hold);
            }
            None => {
                self.core.mailbox.close();
                spec.stopped(&hold);
            }
        }
    }

    /// One batch under one hold of the group's lock, offered to parked
    /// synchronous callers between messages (as the group's thread does).
    fn serve(&self, spec: &G, batch: &mut Vec<G::Msg>, flight: Option<Flight<'_, G>>) {
        let mut hold = GroupHold {
            held: Held::acquire_watched(&self.lock, || self.group.clone()),
            thread_bound: false,
        };
        // Served from the back, so a message leaves `batch` only as it is
        // served.
        batch.reverse();
        #[cfg(feature = "journal")]
        if let Some(flight) = flight {
            flight.serve_batch(batch, |msg, first| {
                if !first {
                    hold.held.bump(|| self.group.clone());
                }
                spec.dispatch(msg, &hold);
            });
            return;
        }
        #[cfg(not(feature = "journal"))]
        let _ = flight;
        if let Some(msg) = batch.pop() {
            spec.dispatch(msg, &hold);
        }
        while let Some(msg) = batch.pop() {
            hold.held.bump(|| self.group.clone());
            spec.dispatch(msg, &hold);
        }
    }
}

/// The group's flight recorder, if it has one (feature `journal`).
#[cfg(feature = "journal")]
type Flight<'a, G> = &'a crate::delivery::flight::FlightRecorder<<G as GroupSpec>::Msg>;
#[cfg(not(feature = "journal"))]
type Flight<'a, G> = std::marker::PhantomData<&'a G>;

enum Ran {
    Idle,
    Again,
    Done,
}

impl<G: GroupSpec> Runnable for PooledGroup<G> {
    fn run(self: Arc<Self>, budget: usize) -> Option<Task> {
        // SAFETY: a worker (or a runtime's task, or the simulator) runs
        // this for an activation the state machine scheduled: once per
        // idle period, the first one from `attach`, or put back by the
        // activation before, which has returned (`Carried::enter`).
        let ran = unsafe {
            self.run.enter(|run| {
                if run.done {
                    return None;
                }
                let ran = self.activate(run, budget);
                run.done = matches!(ran, Ran::Done);
                Some(ran)
            })
        }?;
        match ran {
            Ran::Again => Some(self as Task),
            Ran::Idle => None,
            Ran::Done => {
                // Out of the carried state: leaving may drop the last hold
                // on this group but ours.
                if let Some((pool, slot)) = self.joined.get() {
                    pool.leave(*slot);
                }
                None
            }
        }
    }

    #[cfg(feature = "sim")]
    fn target(&self) -> Target {
        self.group.clone()
    }

    #[cfg(feature = "sim")]
    fn has_messages(&self) -> bool {
        !self.core.mailbox.is_empty()
    }
}
