//! The actor pool: many actors on a few worker threads.
//!
//! A pooled actor holds no thread. Its mailbox carries a hook
//! ([`Schedule`](crate::mailbox::Schedule)) instead of a parked consumer,
//! and the producer whose push finds it idle puts it on a run queue; a
//! worker then runs one *activation*: up to a budget of messages, under the
//! actor's lock, with the worker recorded as the actor's consumer for the
//! deadlock detector. `fast_send` does not change: it takes the actor's
//! lock on the caller's thread, whichever thread runs the actor's queue.
//!
//! # The scheduling state machine
//!
//! An actor is *idle* (its mailbox's `SLEEPING` bit set, or `sleeping` under
//! a blocking queue's lock), *scheduled* (on a run queue), *running* (a
//! worker drains it) or *running and notified* (a push came while it ran).
//! No word of its own says which: the mailbox's consumer-sleep protocol
//! (see `mailbox/park.rs`) already decides it, so a send pays nothing
//! beyond what it pays to a thread-backed actor.
//!
//! * idle → scheduled: the push (or `close`) that clears the bit calls the
//!   hook, which pushes the actor on a run queue. Exactly one does: the bit
//!   is cleared by one read-modify-write, or taken under the queue's lock.
//! * scheduled → running: a worker pops it.
//! * running → running and notified: a push finds the bit clear and does
//!   nothing more; the activation's next drain finds the message.
//! * running → idle: the activation's drain finds the mailbox empty and
//!   sets the bit with a compare-and-swap from the very state it found
//!   empty; if a push came in between, the swap fails and the activation
//!   goes on (or, for a push still being written, goes to the back of the
//!   queue).
//! * running → scheduled: the budget is spent with messages left; the
//!   worker puts the actor at the back of its queue, so one busy actor
//!   cannot starve the rest.
//! * running → done: the mailbox is closed and drained; the `stopped`
//!   hook runs and the actor leaves the pool.
//!
//! Nothing is lost (every push either finds the bit clear, and an
//! activation that is running or queued will drain it, or clears it and
//! schedules) and nothing runs twice at once (the bit is set only by the
//! activation, on its way out, and cleared only by the one scheduler). The
//! loom models `tests/loom_sched_mailbox.rs` check both for every mailbox
//! kind's transition, and `tests/loom_sched_idle.rs` the workers' sleep.
//! What the activations carry from one to the next needs no lock for that
//! reason: the next one waits only for this one's few instructions after
//! it set the mailbox idle ([`Carried`], modelled by
//! `tests/loom_carried.rs`). The actor's place on a run queue (an `Arc`)
//! follows the same turns: each activation parks its own hold in the hook
//! and the push that ends the idle period schedules that hold, so no hop
//! moves the reference count (`parked`, in the same model).
//!
//! # Workers
//!
//! Each worker has a FIFO deque (`crossbeam-deque`, Chase–Lev) that the
//! others steal from, and a next-to-run slot: an actor scheduled by a
//! handler running on a worker goes there, so a reply between two pooled
//! actors runs next on the same core, warm in its cache, a function call
//! away (tokio's LIFO slot). While others wait in its deque or in the
//! injector, a worker runs at most `lifo_limit` activations from the slot
//! in a row before it sends the slot's occupant to the back of its deque:
//! two actors ping-ponging cannot keep the rest of the deque waiting. With
//! nobody waiting, the occupant runs on: sent to the back, it would wake a
//! sleeping worker for nothing (a token passed round a ring of pooled
//! actors did, every `lifo_limit` hops). An activation that drains its
//! actor's mailbox on a worker with nothing else to run (its slot, the
//! injector and every worker's deque empty) *lingers*: it looks at the
//! emptied mailbox a few dozen times (about a microsecond) before it sets
//! it idle, so the next message from a producer sending in a loop, or from
//! a thread asking again as soon as it has its reply, finds the actor
//! still running and costs no schedule, no injector push and no wake-up
//! (`worker::linger`). A thread blocked in a channel's `recv` waits the
//! same way; the worker would spin as long while searching. Schedules from
//! outside the pool go to a global injector. A worker out of work searches
//! (its deque, the injector, the others' deques), spinning and then
//! yielding with the shared [`Backoff`](crate::base::backoff), and then
//! sleeps (see [`idle`] for why no wake-up is lost). An idle pool is
//! asleep: it burns no CPU (its monitor, below, wakes ten times a second).
//!
//! The next-to-run slot is a bet that the handler that filled it returns
//! soon. Where it does not, a monitor thread per pool (`monitor`, the
//! shape of Go's `sysmon`) takes the actor out of the slot of a worker
//! whose activation count has not moved for a millisecond and injects it,
//! so another worker runs it; the slot is shared for this (`next_slot`),
//! at one compare-and-swap per hop for its owner.
//!
//! Stealing is rationed where it is dear. Each worker times its successful
//! steals; where a steal takes more than about 200 ns on average (cores
//! far apart: another socket, or a virtual machine's cores placed so), a
//! worker steals at most once every 10 ms, and while work waits elsewhere
//! it looks again every 250 µs from a timed park instead of spinning on
//! the others' deques. Actors a steal moved then stay where they landed,
//! rather than crossing between the cores with every message. A worker
//! blocked in a wait lifts the ration (what it waits for may be queued
//! behind it), and so does a worker whose activation count has stood
//! still for 500 µs (its deque would wait for that activation); the steals
//! still made keep measuring, so a machine whose cores come near again is
//! noticed. See `steal_cost`.
//!
//! # Blocking inside a pooled handler
//!
//! A handler may block: `ask(..).wait()`, a send waiting for room in a full
//! `WhenFull::Wait` mailbox, `fast_send` or `fast_send_spin` waiting for a
//! lock. The actor it waits for may be queued behind it on the same worker,
//! or no other worker may be free. Refusing these waits would make a pooled
//! handler behave differently from the same handler on its own thread
//! (receiver transparency), and helping while waiting (running other actors
//! on the blocked handler's stack) would nest activations without bound and
//! could make an inner wait hold an outer one up. So the pool compensates,
//! as tokio's `block_in_place` does: every such wait registers with the
//! deadlock detector before it blocks, and that registration tells the
//! worker ([`crate::guard::blocking`]). The worker hands its next-to-run
//! slot to its deque (which the others steal from) and, if every thread of
//! the pool is now blocked, starts a spare thread that works like any
//! worker. A spare stays with the pool (asleep while idle) until the pool
//! stops, so a handler that blocks again finds it ready. While a wait
//! lasts, the pool may run one thread more than its size; the deadlock
//! detector still refuses a wait that could never end.
//!
//! # Shutdown
//!
//! A system's shutdown stops its actors newest first, one at a time,
//! pooled or not (`system::shutdown`). For a run of pooled members it asks
//! the pool ([`stop`]): the pool closes the newest, and each member, as
//! its last activation leaves the pool, closes the next; the shutdown
//! waits once for the whole run. Then [`Shared::close_all`] closes whatever
//! joined meanwhile and lets the workers go once the last member has left.
//! A tokio-hosted pool is stopped the same way, but its shutdown does not
//! sleep while it waits: its thread runs the scheduled activations itself
//! (the runtime's threads may never run them meanwhile; see the `tokio`
//! module). A simulated pool's are stopped in the same order by the
//! simulator's own shutdown, which runs the steps meanwhile, chosen under
//! its seed (`Shared::stop_each_stepping`).
//!
//! # On a tokio runtime
//!
//! With the `tokio` feature a pool can have no threads at all: its
//! activations run on runner tasks of a runtime the user hands in
//! (`PoolConfig::tokio`), taken from the same injector, under the same
//! state machine. There a blocking wait inside a handler cannot be
//! compensated (the runtime's threads are not the pool's), so it is
//! refused; see the `tokio` module.

pub(crate) mod actor;
mod carried;
pub(crate) use carried::Carried;
pub(crate) mod idle;
mod members;
#[cfg(loom)]
pub(crate) mod model;
pub(crate) mod monitor;
pub(crate) mod next_slot;
mod parked;
#[cfg(any(feature = "tokio", loom))]
pub(crate) mod seats;
#[cfg(feature = "sim")]
pub(crate) mod sim;
mod steal_cost;
mod stop;
#[cfg(feature = "tokio")]
pub(crate) mod tokio;
mod worker;

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_deque::{Injector, Stealer, Worker};
use crossbeam_utils::CachePadded;

use crate::base::sync::{AtomicBool, AtomicU32, AtomicUsize, Condvar, Mutex, Ordering};
use idle::Idle;
use members::Members;

pub(crate) use worker::{linger, renew_budget, schedule, slotted};

/// A unit the pool runs: a pooled actor (or group), as its run queues hold
/// it.
pub(crate) type Task = Arc<dyn Runnable>;

/// What a worker runs.
pub(crate) trait Runnable: Send + Sync + 'static {
    /// One activation: at most `budget` messages. Returns the task if it
    /// must run again (budget spent with messages left, or a push still
    /// being written), `None` once it is idle or done.
    fn run(self: Arc<Self>, budget: usize) -> Option<Task>;

    /// The actor (or group) it runs, for the simulator's choices and
    /// trace.
    #[cfg(feature = "sim")]
    fn target(&self) -> crate::base::ids::Target;

    /// Whether its mailbox holds a message now (the simulator runs an
    /// activation that would find it empty at once, not as a step).
    #[cfg(feature = "sim")]
    fn has_messages(&self) -> bool;
}

/// A task the unit tests only look at (in a slot, a deque), never run.
#[cfg(test)]
pub(crate) struct Named;

#[cfg(test)]
impl Runnable for Named {
    fn run(self: Arc<Self>, _budget: usize) -> Option<Task> {
        None
    }
    #[cfg(feature = "sim")]
    fn target(&self) -> crate::base::ids::Target {
        unreachable!("never simulated")
    }
    #[cfg(feature = "sim")]
    fn has_messages(&self) -> bool {
        false
    }
}

/// A pooled unit as the pool's member list holds it: the list keeps it
/// alive while it is neither stopped nor reachable (as an actor's thread
/// does), and closes it at shutdown.
pub(crate) trait Member: Send + Sync + 'static {
    /// Closes its mailbox: it drains what it accepted, stops, and leaves.
    fn close(&self);

    /// The actor (or group) as a shutdown report names it.
    fn target(&self) -> crate::base::ids::Target;
}

/// How the pool is sized and how it schedules.
#[derive(Clone, Debug)]
pub(crate) struct SchedConfig {
    /// Worker threads (at least one).
    pub(crate) workers: usize,
    /// Messages one activation handles before the actor goes to the back
    /// of the queue.
    pub(crate) budget: usize,
    /// Activations in a row from a worker's next-to-run slot.
    pub(crate) lifo_limit: u32,
    /// The monitor's look interval, or no monitor (`monitor`).
    pub(crate) monitor: Option<Duration>,
}

/// `live` once the workers have left: no member can join any more.
const EXITED: usize = usize::MAX;

/// What the pool's threads share.
pub(crate) struct Shared {
    pub(crate) config: SchedConfig,
    injector: Injector<Task>,
    /// One per worker, in worker order.
    stealers: Vec<Stealer<Task>>,
    /// One per worker, in worker order: how many activations it has begun
    /// (wrapping), stored by the worker alone and read by a thief in the
    /// rationed mode (`steal_cost::STALL`). Padded: each worker writes its
    /// own line, once per activation.
    progress: Box<[CachePadded<AtomicU32>]>,
    /// One per worker, in worker order: its next-to-run slot, which the
    /// monitor may take from (`next_slot`).
    next: Box<[worker::Slot]>,
    /// The thread that frees an actor slotted behind a stuck worker
    /// (`monitor`); none for a hosted or simulated pool.
    monitor: monitor::Monitor,
    idle: Idle,
    /// Members not yet done, or `EXITED`.
    live: AtomicUsize,
    /// `close_all` was called: the workers leave once `live` is 0.
    closing: AtomicBool,
    members: Mutex<Members>,
    /// Signalled as a shutdown's ordered stop moves on or ends (`stop`).
    stop_done: Condvar,
    /// Threads working for the pool (workers and spares), and how many of
    /// them are blocked in a wait inside a handler.
    threads: AtomicUsize,
    blocked: AtomicUsize,
    /// Spare threads, joined by the workers as they leave.
    spares: Mutex<Vec<JoinHandle<()>>>,
    /// Applied by every spare thread before it works (the pool's
    /// placement, unpinned).
    place_spare: Box<dyn Fn() + Send + Sync>,
    /// The tokio runtime's tasks that run this pool's activations instead
    /// of worker threads (see the `tokio` module); `None` for a pool
    /// of its own threads.
    #[cfg(feature = "tokio")]
    host: Option<self::tokio::Host>,
    /// The simulator's ready list, for a simulated pool (see the `sim`
    /// module); `None` otherwise.
    #[cfg(feature = "sim")]
    sim: Option<Arc<self::sim::Host>>,
}

/// A worker thread's body, to be run on a thread the system starts (and
/// places, and joins).
pub(crate) type WorkerBody = Box<dyn FnOnce() + Send>;

impl Shared {
    /// A pool and its workers' bodies; nothing runs until the caller
    /// starts a thread for each.
    pub(crate) fn start(
        config: SchedConfig,
        place_spare: Box<dyn Fn() + Send + Sync>,
    ) -> (Arc<Shared>, Vec<WorkerBody>) {
        let workers = config.workers.max(1);
        let deques: Vec<Worker<Task>> = (0..workers).map(|_| Worker::new_fifo()).collect();
        let shared = Arc::new(Shared {
            stealers: deques.iter().map(Worker::stealer).collect(),
            threads: AtomicUsize::new(workers),
            place_spare,
            ..Shared::threadless(SchedConfig { workers, ..config })
        });
        if let Some(every) = shared.config.monitor {
            monitor::start(&shared, every);
        }
        let bodies = deques
            .into_iter()
            .enumerate()
            .map(|(index, deque)| {
                let shared = Arc::clone(&shared);
                Box::new(move || worker::run_worker(shared, index, deque)) as WorkerBody
            })
            .collect();
        (shared, bodies)
    }

    /// A pool with no threads of its own and nothing hosting it yet: what
    /// [`start`](Self::start) gives workers, and what a hosted pool (on
    /// tokio, or the simulator) gives its host.
    fn threadless(config: SchedConfig) -> Shared {
        let workers = config.workers;
        Shared {
            config,
            injector: Injector::new(),
            stealers: Vec::new(),
            progress: (0..workers)
                .map(|_| CachePadded::new(AtomicU32::new(0)))
                .collect(),
            next: (0..workers).map(|_| worker::Slot::default()).collect(),
            monitor: monitor::Monitor::default(),
            idle: Idle::new(),
            live: AtomicUsize::new(0),
            closing: AtomicBool::new(false),
            members: Mutex::new(Members::default()),
            stop_done: Condvar::new(),
            threads: AtomicUsize::new(0),
            blocked: AtomicUsize::new(0),
            spares: Mutex::new(Vec::new()),
            place_spare: Box::new(|| {}),
            #[cfg(feature = "tokio")]
            host: None,
            #[cfg(feature = "sim")]
            sim: None,
        }
    }

    /// Adds a member, started as number `order` of its system (a shutdown
    /// stops the newest first); its slot, for [`leave`](Self::leave).
    /// `None` if the workers have left already (the caller starts a new
    /// pool).
    pub(crate) fn join(&self, order: u64, member: Arc<dyn Member>) -> Option<usize> {
        self.live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n != EXITED).then(|| n + 1)
            })
            .ok()?;
        Some(self.members.lock().insert(order, member))
    }

    /// The member in `slot` is done: it leaves the list (which drops the
    /// pool's hold on it). If a shutdown was waiting for it, the next
    /// member in the shutdown's order is closed (`stop`). The last member
    /// to leave a closing pool lets the workers go.
    pub(crate) fn leave(&self, slot: usize) {
        let (member, next) = {
            let mut members = self.members.lock();
            let member = members.remove(slot);
            let next = member
                .as_ref()
                .is_some_and(|m| Shared::left_current(members.chain.as_mut(), slot, m));
            (member, next)
        };
        // Out of the lock: it may be the last hold on the actor.
        drop(member);
        if next {
            self.advance();
        }
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 && self.closing.load(Ordering::Acquire) {
            self.idle.notify_all();
        }
    }

    /// Closes every member still in the pool at once (the end of the
    /// system's shutdown, after it stopped them in order; the whole of it
    /// for a hosted pool, or from actor code): each drains what it
    /// accepted, stops and leaves; then the workers leave. Members that
    /// join later are closed by their spawn (the system is closed by
    /// then).
    ///
    /// A tokio-hosted pool's close then runs its members' last activations
    /// on the calling thread until the last has left, or until `deadline`
    /// (`None`: no deadline; see the `tokio` module). A thread pool's
    /// returns at once, and `deadline` is not used.
    pub(crate) fn close_all(&self, deadline: Option<Instant>) {
        self.closing.store(true, Ordering::Release);
        let members = self.members.lock().all();
        for m in members {
            m.close();
        }
        self.idle.notify_all();
        #[cfg(feature = "tokio")]
        if self.host.is_some() {
            self::tokio::drain_here(self, deadline);
        }
        #[cfg(not(feature = "tokio"))]
        let _ = deadline;
    }

    /// Whether this pool's activations run as tasks of a tokio runtime, or
    /// as the simulator's steps, rather than on worker threads of its own.
    pub(crate) fn is_hosted(&self) -> bool {
        #[cfg(feature = "tokio")]
        if self.host.is_some() {
            return true;
        }
        #[cfg(feature = "sim")]
        if self.sim.is_some() {
            return true;
        }
        false
    }

    /// [`Schedule::before_first_wait`](crate::mailbox::Schedule::before_first_wait)
    /// for a member of this pool. A simulated pool refuses: only a step
    /// the simulator chooses runs an activation. A tokio-hosted pool
    /// refuses inside one of its activations (the blocking rule of the
    /// `tokio` module: a wait there may need the very thread it blocks),
    /// and elsewhere outside actor code runs the scheduled activations on
    /// the calling thread until the first has begun (`tokio::help_until`),
    /// as a shutdown does; a thread running another actor's handler waits
    /// for the runtime's threads. Before this, a `fast_send` right after
    /// `start` on a current-thread runtime hung.
    pub(crate) fn before_first_wait(&self, begun: &dyn Fn() -> bool) -> bool {
        #[cfg(feature = "sim")]
        if self.sim.is_some() {
            return false;
        }
        #[cfg(feature = "tokio")]
        if self.host.is_some() {
            use crate::guard::{blocking, chain, deadlock::WaitKind};
            if blocking::refuses(WaitKind::Reply) {
                return false;
            }
            if !chain::runs_actor_code() {
                self::tokio::help_until(self, None, begun);
            }
        }
        let _ = begun;
        true
    }

    /// [`Schedule::help`](crate::mailbox::Schedule::help) for a member of
    /// this pool: only a tokio-hosted pool helps (`tokio::help_ask`).
    pub(crate) fn help(
        &self,
        cx: &mut std::task::Context<'_>,
        awaited: *const (),
    ) -> crate::mailbox::Helped {
        #[cfg(feature = "tokio")]
        if let Some(host) = &self.host {
            return self::tokio::help_ask(self, host, cx, awaited);
        }
        let _ = (cx, awaited);
        crate::mailbox::Helped::Nothing
    }

    /// [`Schedule::help_blocked`](crate::mailbox::Schedule::help_blocked)
    /// for a member of this pool: only a tokio-hosted pool helps
    /// (`tokio::help_blocked`).
    pub(crate) fn help_blocked(
        &self,
        done: &dyn Fn() -> bool,
        deadline: Option<std::time::Instant>,
    ) -> bool {
        #[cfg(feature = "tokio")]
        if let Some(host) = &self.host {
            return self::tokio::help_blocked(self, host, done, deadline);
        }
        let _ = (done, deadline);
        false
    }

    /// Whether the workers should leave: closing, and no member left.
    /// Once true, stays true.
    fn exit_now(&self) -> bool {
        match self.live.load(Ordering::Acquire) {
            EXITED => true,
            0 if self.closing.load(Ordering::Acquire) => {
                let _ = self
                    .live
                    .compare_exchange(0, EXITED, Ordering::AcqRel, Ordering::Acquire);
                self.live.load(Ordering::Acquire) == EXITED
            }
            _ => false,
        }
    }

    /// Whether any run queue but a worker's own next-to-run slot holds a
    /// task (a snapshot).
    fn has_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }

    /// Whether the workers have left (a pooled spawn then starts a new
    /// pool).
    pub(crate) fn exited(&self) -> bool {
        self.live.load(Ordering::Acquire) == EXITED
    }

    /// Members not yet done (a snapshot).
    pub(crate) fn live(&self) -> usize {
        match self.live.load(Ordering::Relaxed) {
            EXITED => 0,
            n => n,
        }
    }

    /// Threads working for the pool now: its workers and the spares that
    /// blocking waits started.
    pub(crate) fn threads(&self) -> usize {
        self.threads.load(Ordering::Relaxed)
    }

    /// A schedule from outside the pool.
    fn inject(&self, task: Task) {
        #[cfg(feature = "sim")]
        if let Some(host) = &self.sim {
            host.push(task);
            return;
        }
        self.injector.push(task);
        #[cfg(feature = "tokio")]
        if let Some(host) = &self.host {
            host.wake_one(&self.injector);
            return;
        }
        self.idle.notify_one();
    }
}
