//! A pooled actor: the hook its mailbox calls when a push finds it idle,
//! and one activation of it on a worker.
//!
//! The activation is the run loop of `run_loop.rs` cut into slices: the
//! same `serve`, `stop_under` and `die`, so a pooled actor handles,
//! supervises, records latency, dead-letters and stops exactly as an actor
//! on its own thread does. What differs is the wait: where the thread
//! would sleep, the activation sets its mailbox idle and returns.

use std::any::Any;
use std::mem::{self, ManuallyDrop};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use super::carried::Carried;
use super::parked::Parked;
use super::{worker, Member, Runnable, Shared, Task};
use crate::actor::cell::{ActorCell, Held, STOPPED};
use crate::actor::packed::Stored;
use crate::actor::trace;
use crate::actor::traits::{Actor, ActorConfig};
use crate::base::ids;
use crate::delivery::run_loop::{self, Init};
use crate::failure::drop_quietly;
use crate::guard::chain;
use crate::mailbox::{Polled, Schedule, INFLATE_AFTER, STREAM_AFTER};
use crate::reply as ask;

/// Batch slots an idle pooled actor keeps between activations.
const KEEP_IDLE: usize = 8;

/// `Run::slot` of an actor that left the pool.
const LEFT: u32 = u32::MAX;

/// What a pooled actor's mailbox calls to schedule it, and what its
/// activations carry from one to the next.
struct Hook<A: Actor> {
    /// The running activation's hold on the actor, parked for the push
    /// that ends its next idle period to schedule (`parked`): empty while
    /// the actor is scheduled, and after it stopped. (A hold kept here
    /// for good would keep the cell, which holds the hook, for ever.)
    parked: Parked<ActorCell<A>>,
    pool: Arc<Shared>,
    /// Entered by the running activation. Only one activation is ever
    /// scheduled at a time (module docs of `sched`); the next one can
    /// start the moment this one has set the mailbox idle, and waits in
    /// `Carried::enter` the few instructions until this one has returned.
    run: Carried<Run<A>>,
}

struct Run<A: Actor> {
    /// The state's build and `started`, for the first activation. Boxed:
    /// it is spent once, and inline it would stay in every idle actor.
    init: Option<Box<Init<A>>>,
    /// Reused by every activation: allocated on the first message.
    batch: Vec<Stored<A>>,
    /// Its slot in the pool's member list, or [`LEFT`] once the actor
    /// stopped and left the pool (a stale schedule then finds nothing to
    /// do). This and `max_batch` are `u32`s kept here, in the room a
    /// `done` flag and its padding took, rather than beside the mutex: an
    /// idle pooled actor's every word counts (no pool holds 2^32
    /// members).
    slot: u32,
    max_batch: u32,
    #[cfg(feature = "journal")]
    flight: Option<crate::delivery::flight::FlightRecorder<A::Msg>>,
}

impl<A: Actor> Schedule for Hook<A> {
    fn schedule(&self) {
        // SAFETY: P1 (`parked`): the mailbox calls this from the one push
        // (or `close`) whose read-modify-write ended the actor's idle
        // period, which the activation before began after parking its
        // hold; until this schedules, the slot is this caller's.
        let hold = unsafe { self.parked.take() };
        // An idle period is begun only by an activation, and every
        // activation parks its hold before its first drain.
        let cell = hold.expect("kaspar: a pooled actor scheduled twice for one idle period");
        worker::schedule(&self.pool, cell);
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

    fn help(&self, cx: &mut std::task::Context<'_>, awaited: *const ()) -> crate::mailbox::Helped {
        self.pool.help(cx, awaited)
    }

    fn help_blocked(&self, done: &dyn Fn() -> bool, deadline: Option<std::time::Instant>) -> bool {
        self.pool.help_blocked(done, deadline)
    }
}

impl<A: Actor> Member for ActorCell<A> {
    fn close(&self) {
        self.inbox.close();
    }

    fn target(&self) -> crate::base::ids::Target {
        ActorCell::target(self)
    }
}

/// Makes `cell`'s actor a pooled one in `pool` (it joined as member
/// `slot`), and schedules its first activation, which runs `init` (the
/// state's build and `started`, if the spawner left them) and then drains
/// whatever was queued.
///
/// # Panics
///
/// If the actor's mailbox is a group's queue, or is pooled already.
pub(crate) fn attach<A: Actor>(
    cell: &Arc<ActorCell<A>>,
    pool: &Arc<Shared>,
    slot: usize,
    max_batch: usize,
    mut init: Init<A>,
) {
    #[cfg(feature = "journal")]
    let flight = init.flight.take();
    // A pooled state is `Send` (the spawn refused a thread-bound actor):
    // it is dropped with its cell, wherever that happens.
    init.thread_bound = false;
    // A thread-bound actor reaches a pool only in a simulated system
    // (`Spawn::pooled` refuses it), whose one thread runs everything: that
    // thread is its home. A state built by the spawner is in already.
    if <A as ActorConfig>::THREAD_BOUND && init.build.is_none() {
        let held = cell.hold();
        cell.bind_home(&held);
    }
    let hook = Hook {
        parked: Parked::new(),
        pool: Arc::clone(pool),
        run: Carried::new(Run {
            init: Some(Box::new(init)),
            batch: Vec::new(),
            slot: u32::try_from(slot)
                .ok()
                .filter(|&s| s != LEFT)
                .expect("kaspar: a pool holds fewer than 2^32 - 1 actors"),
            max_batch: u32::try_from(max_batch.max(1)).unwrap_or(u32::MAX),
            #[cfg(feature = "journal")]
            flight,
        }),
    };
    let mailbox = cell
        .inbox
        .own()
        .expect("kaspar: a pooled actor owns its mailbox");
    if mailbox.set_task(Box::new(hook)).is_err() {
        panic!("kaspar: this actor's mailbox is pooled already");
    }
    worker::schedule(pool, Arc::clone(cell) as Task);
}

impl<A: Actor> Runnable for ActorCell<A> {
    fn run(self: Arc<Self>, budget: usize) -> Option<Task> {
        // The activation reaches the actor through an unowned handle: its
        // hold is parked in the hook below, for the push that ends the
        // idle period this activation may end in (`parked`).
        // SAFETY: made from a live `Arc` and never dropped (`ManuallyDrop`),
        // it takes no count and gives none back. P2 (`parked`): the actor
        // outlives this call, through the pool's member list.
        let this = ManuallyDrop::new(unsafe { Arc::from_raw(Arc::as_ptr(&self)) });
        let hook = hook_of(&this)?;
        // SAFETY: P1: this is the activation the state machine started
        // (below), and its mailbox is not idle before its first drain.
        unsafe { hook.parked.put(self) };
        // SAFETY: a worker (or a runtime's task, or the simulator) runs
        // this for an activation the state machine scheduled: once per
        // idle period, the first one from `attach`, or put back by the
        // activation before, which has returned (`Carried::enter`).
        let ran = unsafe {
            hook.run.enter(|run| {
                if run.slot == LEFT {
                    return None;
                }
                Some(match activate(&this, &hook.pool, run, budget) {
                    Ran::Again => Next::Again,
                    Ran::Idle => {
                        // An idle pooled actor keeps a few slots, not its
                        // largest burst's (as its mailbox does).
                        if run.batch.capacity() > KEEP_IDLE {
                            run.batch = Vec::new();
                        }
                        Next::Idle
                    }
                    Ran::Done => Next::Leave(mem::replace(&mut run.slot, LEFT)),
                })
            })
        };
        if let Some(Next::Idle) = ran {
            // The mailbox went idle: the hold is the next owner's now, and
            // the actor is not this thread's to touch again (P2).
            return None;
        }
        // SAFETY: P1: the mailbox did not go idle, so the slot is still
        // this activation's.
        let me = unsafe { hook.parked.take() }.expect("kaspar: parked at the start");
        match ran {
            Some(Next::Again) => Some(me as Task),
            Some(Next::Leave(slot)) => {
                // Out of the carried state, with the hold back: leaving
                // drops the pool's.
                hook.pool.leave(slot as usize);
                None
            }
            // A stale schedule of an actor that has left: its hold goes.
            Some(Next::Idle) | None => None,
        }
    }

    #[cfg(feature = "sim")]
    fn target(&self) -> crate::base::ids::Target {
        ActorCell::target(self)
    }

    #[cfg(feature = "sim")]
    fn has_messages(&self) -> bool {
        self.inbox.own().is_some_and(|m| !m.is_empty())
    }
}

fn hook_of<A: Actor>(cell: &ActorCell<A>) -> Option<&Hook<A>> {
    cell.inbox.own()?.task()?.as_any().downcast_ref::<Hook<A>>()
}

/// How an activation ended.
enum Ran {
    /// The mailbox is idle: the next push schedules the actor again.
    Idle,
    /// Messages are left (the budget is spent) or on their way.
    Again,
    /// Closed, drained and stopped.
    Done,
}

/// What `run` does once out of the carried state.
enum Next {
    Again,
    Idle,
    /// The actor is done: it leaves the pool's member slot given.
    Leave(u32),
}

/// One activation: the state and `started` the first time, then up to
/// `budget` messages in batches of at most `max_batch`, each batch under
/// one hold of the actor's lock (as on a thread). Should anything unwind
/// out of the serving (never a handler: those are caught), the actor ends
/// as a stopped actor ([`run_loop::die`]), as on a thread.
fn activate<A: Actor>(
    cell: &Arc<ActorCell<A>>,
    pool: &Arc<Shared>,
    run: &mut Run<A>,
    budget: usize,
) -> Ran {
    let max_batch = run.max_batch as usize;
    // While it runs, this thread handles the actor's queue: a thread
    // waiting on an `ask` to it waits for this thread (deadlock detector).
    let _consuming = cell.lock().consuming(chain::thread_token());
    // What the actor sends keeps to one lane of a sharded mailbox, on
    // whichever thread this activation runs (per-sender FIFO).
    let _sender = ids::SenderScope::enter(Arc::as_ptr(cell).cast::<()>() as usize);
    let Run {
        init,
        batch,
        #[cfg(feature = "journal")]
        flight,
        ..
    } = run;
    let served = catch_unwind(AssertUnwindSafe(|| {
        if let Some(init) = init.take() {
            first(cell, *init);
        }
        let own = cell
            .inbox
            .own()
            .expect("kaspar: a pooled actor owns its mailbox");
        let mailbox = trace::consumer(own);
        let mut left = budget;
        // Lone asks answered in a row: askers handing their messages over
        // one at a time and waiting for each reply, for whom a compact
        // queue inflates (`compact::lane`).
        let mut lone_asks = 0;
        // Messages served in batches of more than one: a producer ahead
        // of this consumer, for whom a compact queue inflates too once
        // the consumer keeps up (`compact::lane`).
        let mut streamed = 0;
        // Whether this activation's last poll drained a stream's batch
        // past `STREAM_AFTER`: the next one inflates.
        let mut caught_up = false;
        loop {
            let asked = left.min(max_batch);
            // A stream this consumer keeps up with (its last poll drained
            // the queue): caught up, it would take the lock every few
            // messages, on the line every push takes it on. It inflates
            // the queue instead of polling it, taking what its producers
            // pushed meanwhile (up to a batch) as this poll's batch; with
            // more queued, the next drained poll tries again.
            let inflated = match caught_up {
                true => mailbox.inflate_into(batch, asked),
                false => None,
            };
            if inflated.is_some() {
                // Inflated for good: a later try finds the lane and
                // returns at once.
                streamed = 0;
            }
            let polled = match inflated {
                Some(n) if n > 0 => Err(Polled::Got(n)),
                // A journaled actor records every message as a batch.
                #[cfg(feature = "journal")]
                _ => match flight {
                    Some(_) => Err(mailbox.poll_batch(batch, asked)),
                    None => mailbox.poll(batch, asked),
                },
                #[cfg(not(feature = "journal"))]
                _ => mailbox.poll(batch, asked),
            };
            // Each arm reads the next-to-run slot's count before it serves.
            let (n, slotted) = match polled {
                Ok(msg) => {
                    caught_up = false;
                    let slotted = worker::slotted();
                    let answered = ask::answered();
                    run_loop::serve_lone(cell, msg);
                    if ask::answered() == answered {
                        lone_asks = 0;
                    } else {
                        lone_asks += 1;
                        if lone_asks == INFLATE_AFTER {
                            own.inflate();
                        }
                    }
                    (1, slotted)
                }
                Err(Polled::Got(n)) => {
                    lone_asks = 0;
                    if n > 1 {
                        streamed += n;
                    }
                    caught_up = streamed >= STREAM_AFTER && n < asked;
                    let slotted = worker::slotted();
                    // A journaled actor's batch is recorded as it is
                    // served; it budgets, serves on and lingers as any.
                    #[cfg(feature = "journal")]
                    match flight {
                        Some(flight) => {
                            crate::delivery::flight::serve_recorded(cell, flight, batch)
                        }
                        None => run_loop::serve(cell, batch),
                    }
                    #[cfg(not(feature = "journal"))]
                    run_loop::serve(cell, batch);
                    (n, slotted)
                }
                Err(Polled::Idle) => return Ran::Idle,
                Err(Polled::Busy) => {
                    // A push reserved its slot and has yet to write it:
                    // give its thread the core before this one comes back.
                    std::thread::yield_now();
                    return Ran::Again;
                }
                Err(Polled::Closed) => {
                    let held = cell.hold();
                    run_loop::stop_under(cell, &held);
                    return Ran::Done;
                }
            };
            left = left.saturating_sub(n);
            if left == 0 {
                if !worker::renew_budget(pool) {
                    return Ran::Again;
                }
                // Budget spent with nobody to be fair to: serve on. Sent
                // to the back, the activation came straight back to an
                // empty mailbox (an asker waits for the last reply) and
                // went idle without the linger, so every budget's worth
                // of lone asks paid a trip through the injector and left
                // a worker searching (the peers bench's pooled ask).
                left = budget;
            }
            // `left == budget`: a budget just began, and its last poll
            // (`asked` 1) may have drained the queue without showing it.
            if (n < asked || left == budget) && worker::slotted() == slotted {
                // The poll drained the queue, and what it served put no
                // actor in this worker's next-to-run slot: with nothing
                // else to run, wait a moment for the next message before
                // going idle (`worker::linger`).
                worker::linger(pool, || own.nothing_published());
            }
        }
    }));
    match served {
        Ok(ran) => ran,
        Err(payload) => {
            drop_quietly(payload);
            run_loop::die(cell, batch);
            Ran::Done
        }
    }
}

/// The first activation's part of a thread's start: build the state under
/// the lock the spawner handed over, then `started`.
fn first<A: Actor>(cell: &Arc<ActorCell<A>>, init: Init<A>) {
    let Some(build) = init.build else {
        return;
    };
    // SAFETY: the spawner handed the lock over before scheduling this
    // first activation (it does whenever there is a `build`), and only
    // this activation adopts it: there is one first activation.
    let held = unsafe { Held::adopt(cell.lock()) };
    if <A as ActorConfig>::THREAD_BOUND {
        // Simulated only (see `attach`): the simulator's thread is home.
        cell.bind_home(&held);
    }
    run_loop::build_under(cell, &held, build);
    if cell.flags() & STOPPED == 0 {
        run_loop::start_under(cell, &held);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    /// Counts what it is told.
    #[crate::actor]
    #[derive(Default)]
    struct Count(u64);

    #[crate::actor]
    impl Count {
        #[crate::handler(u64)]
        fn add(&mut self, k: u64, _ctx: &mut crate::Ctx<Self>) -> u64 {
            self.0 += k;
            self.0
        }
    }

    /// The holds on a pooled actor are its address's, the pool's member
    /// list's and its own, which its activations park for the push that
    /// ends the idle period (`parked`): three whether it runs, waits on a
    /// run queue or is idle, so no hop moves the count. Taken and given
    /// back a hop, the count of an idle actor was two.
    #[test]
    fn a_pooled_actors_holds_do_not_move_with_its_hops() {
        let system = crate::System::new();
        let count = system.spawn(Count::default()).pooled().start();
        let mailbox = count
            .cell
            .inbox
            .own()
            .expect("a pooled actor's own mailbox");
        for k in 1..=5u64 {
            assert_eq!(count.ask(k).unwrap().wait(), Ok(k * (k + 1) / 2));
            while !mailbox.consumer_asleep() {
                std::thread::yield_now();
            }
            // Idle, and the activation's tail long done.
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(Arc::strong_count(&count.cell), 3, "after hop {k}");
        }
        system.shutdown();
        // The last activation gives its own hold back as it returns, just
        // after leaving the pool lets the shutdown go on.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while Arc::strong_count(&count.cell) > 1 && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(
            Arc::strong_count(&count.cell),
            1,
            "stopped: the pool's hold and its own given back"
        );
    }
}
