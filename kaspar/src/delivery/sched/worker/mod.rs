//! A pool thread's loop: where it finds the next activation, how it keeps
//! the next-to-run slot bounded, how it searches and sleeps, and what it
//! does when a handler it runs blocks.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_deque::{Steal, Worker};
use crossbeam_utils::CachePadded;

use super::idle::Token;
use super::next_slot::NextSlot;
use super::steal_cost::{StallWatch, StealCost, DEAR_POLL};
use super::{Shared, Task};
use crate::base::backoff::Backoff;
use crate::base::cpu;
use crate::base::sync::{parking, Ordering};
use crate::guard::blocking::{self, BlockingHook};

/// Every this many activations a worker looks at the injector before its
/// own deque, so schedules from outside are not starved by a deque that
/// never empties (tokio's choice of 61, for the same reason).
const INJECTOR_EVERY: u32 = 61;

/// A pool thread's own state, reachable from the handlers it runs (a
/// schedule from them goes to its next-to-run slot).
struct Local {
    shared: Arc<Shared>,
    /// `None` for a spare: what it schedules goes to the injector.
    deque: Option<Worker<Task>>,
    /// The next-to-run slot: a worker's is in `Shared::next`, where the
    /// monitor can take from it; a spare's is its own.
    lifo: Slot,
    /// Where it sleeps.
    token: Arc<Token>,
    /// What its steals cost, and whether one may be made now.
    cost: StealCost,
    /// Its index among the workers (`None` for a spare), under which it
    /// counts its activations (`Shared::progress`).
    index: Option<usize>,
    /// Which other workers have been inside one activation for long
    /// (`steal_cost::STALL`).
    stalls: StallWatch,
}

/// A next-to-run slot, on a line of its own.
pub(super) type Slot = Arc<CachePadded<NextSlot<Task>>>;

std::thread_local! {
    /// How many actors this thread has put in its worker's next-to-run
    /// slot (wrapping). An activation that sees it move while it served a
    /// batch knows an actor waits in the slot, and skips [`linger`]
    /// without looking up [`CURRENT`]: a constant-initialised `Cell`
    /// without a destructor costs an instruction or two to read, the
    /// lookup about fifty, and a chain of pooled actors (a token round a
    /// ring) pays it on every hop.
    static SLOTTED: Cell<u32> = const { Cell::new(0) };
}

/// This thread's count of next-to-run slot schedules ([`SLOTTED`]).
pub(crate) fn slotted() -> u32 {
    SLOTTED.with(Cell::get)
}

std::thread_local! {
    /// The [`Local`] of the pool thread this is, while its loop runs;
    /// null anywhere else ([`as_current`]). A raw pointer in a
    /// constant-initialised `Cell`, which has no destructor to register or
    /// check: reading it costs a load. It was a `RefCell<Option<Rc<_>>>`,
    /// whose every lookup (a schedule from a handler, once per hop of a
    /// chain of pooled actors) cost about fifty instructions.
    static CURRENT: Cell<*const Local> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with `local` as this thread's current worker ([`current`]),
/// and puts back whatever was current before, also when `f` unwinds.
fn as_current<R>(local: &Local, f: impl FnOnce() -> R) -> R {
    struct Restore(*const Local);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(local)));
    f()
}

/// This thread's current worker, if it is a pool thread inside its loop.
#[inline(always)]
fn current<R>(f: impl FnOnce(Option<&Local>) -> R) -> R {
    let local = CURRENT.with(Cell::get);
    // SAFETY: `CURRENT` is this thread's own, and is non-null only inside
    // `as_current`, which set it to a `&Local` borrowed for the whole call
    // and puts the previous value back before that borrow ends (also on an
    // unwind). So a non-null pointer here points to a live `Local`, which
    // this thread alone uses (`Local` is neither `Send` nor `Sync`), and
    // which is only ever borrowed shared.
    f(unsafe { local.as_ref() })
}

/// Puts `task` on a run queue of `shared`'s pool: the calling worker's
/// next-to-run slot if it is one of this pool's threads (the actor a
/// handler just sent to runs next), else the injector.
pub(crate) fn schedule(shared: &Arc<Shared>, task: Task) {
    let outside = current(|local| match local {
        Some(local) if Arc::ptr_eq(&local.shared, shared) => {
            local.push_lifo(task);
            SLOTTED.with(|n| n.set(n.get().wrapping_add(1)));
            None
        }
        _ => Some(task),
    });
    if let Some(task) = outside {
        shared.inject(task);
    }
}

/// How many times [`linger`] looks at an emptied mailbox before the
/// activation goes idle: about a microsecond on the dev VM, the gap
/// between one message and the next from a producer that sends in a loop
/// or asks again as soon as it has its reply.
const LINGER_SPINS: u32 = 64;

/// Called by an activation that has just drained its actor's mailbox
/// (`still_empty` says whether it is still empty), before the poll that
/// would set it idle. On a worker of `shared` with nothing else to run
/// (its next-to-run slot, the injector and every worker's deque empty: a
/// task this worker could steal ends the linger too), it spins while the
/// mailbox stays empty, at most [`LINGER_SPINS`] looks, so a message that
/// arrives meanwhile is served in this activation: its push found the
/// actor scheduled, and cost no schedule, no injector push and no wake-up.
/// That is what a thread blocked in a channel's `recv` does. Another actor
/// loses at most the time of one look: any task that appears anywhere in
/// the pool ends the linger, and the worker would spin about as long while
/// searching. Anywhere else (a spare, a hosted runner, the simulator, a
/// shutdown draining) it returns at once. The actor's lock is not held
/// meanwhile (`run_loop::serve` releases it with each batch), so a
/// `fast_send` to the actor does not wait for the linger.
pub(crate) fn linger(shared: &Arc<Shared>, still_empty: impl Fn() -> bool) {
    current(|local| {
        let Some(local) = local else {
            return;
        };
        if !local.works_for(shared) {
            return;
        }
        for _ in 0..LINGER_SPINS {
            if !still_empty() || !local.nothing_else_to_run() {
                return;
            }
            std::hint::spin_loop();
        }
    });
}

/// Whether an activation whose budget is spent may serve on: the calling
/// thread is a worker of `shared` (not a spare) with nothing else to run,
/// its next-to-run slot, its deque, the injector and the other workers'
/// deques empty, as [`linger`] asks. The budget is there to be fair to
/// other actors, and none waits. If so, the renewed budget counts as a new
/// activation (`Shared::progress`), as it would have had the activation
/// gone to the back of the deque and come straight back: the monitor and
/// the thieves read a count that stays put as a worker stuck in one long
/// handler. Anywhere else (a spare, a hosted runner, the simulator)
/// `false`, and the budget holds as configured.
pub(crate) fn renew_budget(shared: &Arc<Shared>) -> bool {
    current(|local| {
        let Some(local) = local else {
            return false;
        };
        let alone = local.works_for(shared) && local.nothing_else_to_run();
        if alone {
            local.count_renewal();
        }
        alone
    })
}

/// The body of worker `index`: runs activations until the pool closes and
/// its last member has left, then joins the spares.
pub(super) fn run_worker(shared: Arc<Shared>, index: usize, deque: Worker<Task>) {
    debug_assert!(index < shared.stealers.len());
    run(Rc::new(Local {
        shared: Arc::clone(&shared),
        deque: Some(deque),
        lifo: Arc::clone(&shared.next[index]),
        token: Arc::new(Token::new()),
        cost: StealCost::default(),
        index: Some(index),
        stalls: StallWatch::new(shared.stealers.len()),
    }));
    // Spares leave as the workers do (the exit condition is sticky), and
    // so does the monitor, once out of its park; the first worker out
    // joins them.
    shared.monitor.poke();
    let spares = std::mem::take(&mut *shared.spares.lock());
    for spare in spares {
        let _ = spare.join();
    }
}

/// Starts a spare thread: every thread of the pool is blocked in a wait.
fn start_spare(shared: &Arc<Shared>) {
    let spare = Arc::clone(shared);
    let started = std::thread::Builder::new()
        .name("kaspar:pool-spare".into())
        .spawn(move || {
            // As for every runtime thread (`launch::spawn_thread`).
            parking::warm();
            (spare.place_spare)();
            run(Rc::new(Local {
                shared: spare,
                deque: None,
                lifo: Slot::default(),
                token: Arc::new(Token::new()),
                cost: StealCost::default(),
                index: None,
                stalls: StallWatch::default(),
            }));
        });
    match started {
        Ok(handle) => shared.spares.lock().push(handle),
        Err(_) => {
            // The OS refused a thread: the pool runs on what it has; a wait
            // that needed the spare is still in the deadlock detector's
            // graph.
            shared.threads.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The loop of a worker or a spare.
fn run(local: Rc<Local>) {
    as_current(&local, || run_current(&local));
}

/// [`run`]'s loop, with `local` current.
fn run_current(local: &Rc<Local>) {
    blocking::set_hook(Some(Rc::clone(local) as Rc<dyn BlockingHook>));
    let budget = local.shared.config.budget.max(1);
    let mut lifo_streak = 0;
    let mut tick = 0u32;
    loop {
        tick = tick.wrapping_add(1);
        let task = match local.next(&mut lifo_streak, tick) {
            Some(task) => task,
            None => match local.search() {
                Some(task) => task,
                None => break,
            },
        };
        local.begin_activation(tick);
        if let Some(again) = task.run(budget) {
            // Budget spent, or a push still being written: to the back.
            local.requeue(again);
        }
    }
    blocking::set_hook(None);
}

impl Local {
    /// Counts an activation this worker is about to run (`tick`, which
    /// moves with each), for thieves that look for a stalled worker.
    #[inline]
    fn begin_activation(&self, tick: u32) {
        if let Some(count) = self.index.and_then(|i| self.shared.progress.get(i)) {
            count.store(tick, Ordering::Relaxed);
        }
    }

    /// Whether this is a worker (not a spare) of `shared`'s pool.
    fn works_for(&self, shared: &Arc<Shared>) -> bool {
        self.deque.is_some() && Arc::ptr_eq(&self.shared, shared)
    }

    /// Nothing waits in this worker's next-to-run slot, its deque, the
    /// injector or any other worker's deque (a snapshot).
    fn nothing_else_to_run(&self) -> bool {
        !self.has_next() && !self.shared.has_work()
    }

    /// Moves this worker's activation count on by one, for a budget an
    /// activation renewed ([`renew_budget`]): only this worker writes it.
    fn count_renewal(&self) {
        if let Some(count) = self.index.and_then(|i| self.shared.progress.get(i)) {
            let now = count.load(Ordering::Relaxed);
            count.store(now.wrapping_add(1), Ordering::Relaxed);
        }
    }

    /// Schedules `task` to run next on this thread; what was in the slot
    /// goes to the back of the deque.
    fn push_lifo(&self, task: Task) {
        if let Some(prev) = self.lifo.take() {
            self.push_back(prev);
        }
        if let Err(task) = self.lifo.put(task) {
            // The monitor is taking what was in the slot (`take` found it
            // gone): this one waits in the deque.
            self.push_back(task);
        }
    }

    /// To the back of this thread's deque (the injector, for a spare),
    /// waking a sleeper to steal it if none is searching.
    fn push_back(&self, task: Task) {
        match &self.deque {
            Some(deque) => {
                deque.push(task);
                self.shared.idle.notify_one();
            }
            None => self.shared.inject(task),
        }
    }

    /// An activation that must run again goes to the back of the deque.
    /// Unlike a new schedule, it wakes no sleeper unless others wait in
    /// the deque too: alone there, this thread takes it straight back, and
    /// a wake-up (a system call) per spent budget is what a stream of
    /// messages into one busy actor would pay otherwise.
    fn requeue(&self, task: Task) {
        match &self.deque {
            Some(deque) => {
                deque.push(task);
                if deque.len() > 1 {
                    self.shared.idle.notify_one();
                }
            }
            None => self.shared.inject(task),
        }
    }

    /// The next activation: the next-to-run slot (at most `lifo_limit` in
    /// a row while others wait), then the deque, then the injector (first,
    /// every `INJECTOR_EVERY` ticks), then the other workers' deques.
    fn next(&self, lifo_streak: &mut u32, tick: u32) -> Option<Task> {
        if let Some(task) = self.lifo.take() {
            let limit = self.shared.config.lifo_limit;
            if *lifo_streak < limit {
                *lifo_streak += 1;
                return Some(task);
            }
            if limit > 0 && self.nobody_waits() {
                // A chain of sends (a ring passing a token) with nothing
                // else here to be fair to: the occupant runs on. Sent to
                // the back, it would wake a sleeping worker every `limit`
                // hops, for nothing (this worker pops it straight back)
                // or to steal the chain onto another core.
                *lifo_streak = 1;
                return Some(task);
            }
            // Two actors ping-ponging would hold the slot for ever: the
            // occupant waits its turn at the back like anyone.
            self.push_back(task);
        }
        *lifo_streak = 0;
        if tick.is_multiple_of(INJECTOR_EVERY) {
            if let Some(task) = self.take_injected() {
                return Some(task);
            }
        }
        if let Some(task) = self.deque.as_ref().and_then(Worker::pop) {
            return Some(task);
        }
        self.take_injected().or_else(|| self.steal())
    }

    /// Whether the next-to-run slot holds an actor.
    fn has_next(&self) -> bool {
        self.lifo.is_full()
    }

    /// Nothing waits in this worker's deque or in the injector (a spare
    /// has no deque: what it runs waits in the injector).
    fn nobody_waits(&self) -> bool {
        self.deque.as_ref().is_some_and(Worker::is_empty) && self.shared.injector.is_empty()
    }

    fn take_injected(&self) -> Option<Task> {
        loop {
            let stolen = match &self.deque {
                Some(deque) => self.shared.injector.steal_batch_and_pop(deque),
                None => self.shared.injector.steal(),
            };
            match stolen {
                Steal::Success(task) => return Some(task),
                Steal::Empty => return None,
                Steal::Retry => {}
            }
        }
    }

    /// Takes tasks from another worker's deque, unless stealing is dear
    /// here and the last steal was too recent (`steal_cost`). A worker of
    /// the pool blocked in a wait lifts that limit: what waits behind it
    /// may be what it waits for. So does a victim that has been inside one
    /// activation for [`STALL`](super::steal_cost::STALL): what waits in
    /// its deque would wait for that activation to end.
    fn steal(&self) -> Option<Task> {
        self.steal_at(Instant::now)
    }

    /// [`steal`](Self::steal), with `clock` for the time (tests move it).
    fn steal_at(&self, clock: impl FnOnce() -> Instant) -> Option<Task> {
        // `Some(now)` while rationed: the clock is read only when dear.
        let ration = if self.cost.is_dear() && self.shared.blocked.load(Ordering::Relaxed) == 0 {
            let now = clock();
            (!self.cost.may_steal(|| now)).then_some(now)
        } else {
            None
        };
        let stealers = &self.shared.stealers;
        // Start at a different victim each time, so thieves spread out.
        let start = self.token_index() % stealers.len().max(1);
        for i in 0..stealers.len() {
            let at = (start + i) % stealers.len();
            let victim = &stealers[at];
            if victim.is_empty() || ration.is_some_and(|now| !self.stalled(at, now)) {
                continue;
            }
            let began = Instant::now();
            loop {
                let stolen = match &self.deque {
                    Some(deque) => victim.steal_batch_and_pop(deque),
                    None => victim.steal(),
                };
                match stolen {
                    Steal::Success(task) => {
                        self.cost.record(began, began.elapsed());
                        return Some(task);
                    }
                    Steal::Empty => break,
                    Steal::Retry => {}
                }
            }
        }
        None
    }

    /// Whether worker `at` has been inside one activation for at least
    /// `STALL`, as this worker's looks have seen its count.
    fn stalled(&self, at: usize, now: Instant) -> bool {
        if self.index == Some(at) {
            return false;
        }
        self.shared
            .progress
            .get(at)
            .is_some_and(|count| self.stalls.stalled(at, count.load(Ordering::Relaxed), now))
    }

    /// A cheap, per-thread starting point for stealing.
    fn token_index(&self) -> usize {
        Arc::as_ptr(&self.token) as usize / 64
    }

    /// Out of work: spins and yields while looking (the shared backoff),
    /// then sleeps until a schedule wakes it. `None` when the pool is
    /// closed and its last member has left.
    fn search(&self) -> Option<Task> {
        let shared = &self.shared;
        shared.idle.start_searching();
        let mut backoff = Backoff::new();
        loop {
            if let Some(task) = self.next(&mut 0, 1) {
                shared.idle.found_work();
                return Some(task);
            }
            if shared.exit_now() {
                shared.idle.stop_searching();
                shared.idle.notify_all();
                return None;
            }
            if !backoff.snooze() {
                if self.cost.is_dear() && shared.has_work() {
                    // Work waits on another worker, and taking it would
                    // cost more than it saves (`steal_cost`): look again
                    // in a while, still counted as searching, so no
                    // schedule meanwhile pays a wake-up for this thread.
                    std::thread::park_timeout(DEAR_POLL);
                    continue;
                }
                let waker = shared
                    .idle
                    .sleep(&self.token, || shared.has_work() || shared.exit_now());
                // Awake again: the monitor watches while anyone is.
                shared.monitor.poke();
                if let Some(cpu) = waker {
                    self.step_off(cpu);
                }
                backoff = Backoff::new();
            }
        }
    }
}

impl Local {
    /// Woken by a thread that ran on `waker`: if the kernel put this
    /// thread on that same CPU, moves it to another, unless the pool's
    /// threads awake (this one included) fill every CPU it may use. The
    /// waker is most likely still running there (a producer streaming
    /// into the actor it scheduled, an asker spinning for its reply), and
    /// until it stops or is preempted, this thread cannot run at all
    /// (`base::cpu`).
    fn step_off(&self, waker: usize) {
        let shared = &self.shared;
        let awake = shared
            .threads
            .load(Ordering::Relaxed)
            .saturating_sub(shared.idle.sleepers());
        let _moved_to = cpu::step_off(waker, awake);
    }
}

impl BlockingHook for Local {
    /// A handler on this thread is about to block: what it scheduled to
    /// run next goes where the others can steal it, and if every thread of
    /// the pool is blocked now, a spare starts.
    fn enter(&self) {
        if let Some(task) = self.lifo.take() {
            self.push_back(task);
        }
        let shared = &self.shared;
        let blocked = shared.blocked.fetch_add(1, Ordering::AcqRel) + 1;
        if blocked >= shared.threads.load(Ordering::Acquire) {
            shared.threads.fetch_add(1, Ordering::AcqRel);
            start_spare(shared);
        } else if self.deque.as_ref().is_some_and(|d| !d.is_empty()) {
            shared.idle.notify_one();
        }
    }

    fn exit(&self) {
        self.shared.blocked.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests;
