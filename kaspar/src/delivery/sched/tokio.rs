//! Pooled actors on a tokio runtime the user hands in
//! ([`PoolConfig::tokio`](crate::PoolConfig::tokio), feature `tokio`).
//!
//! A *hosted* pool has no worker threads. It keeps what the pool's seam
//! already is: the mailbox hook that schedules an idle actor exactly once,
//! the activation (`actor.rs`) that runs it for up to a budget of
//! messages, the injector that queues scheduled actors, and the member
//! list that shutdown closes. Only the runner of activations differs: in
//! place of worker threads, *runner* tasks on the runtime (one per thread
//! of the runtime), each of which takes the actor at the injector's head
//! and runs one activation per poll, as a worker thread would, then
//! yields to the runtime's other tasks. A runner with nothing to run
//! leaves its waker with the pool and waits; a schedule pushes the actor
//! on the injector and wakes one waiting runner, if any.
//!
//! # Why long-lived runners, and the injector in between
//!
//! A task spawned per schedule would cost an allocation and a task's
//! set-up per activation (measured: the hosted `ask(..).await` of
//! `benches/pool_tokio.rs` took 595 ns that way, against 247 ns for tokio's
//! mpsc + oneshot in the same run). A runner is woken instead, which on
//! the runtime's own thread is a push on its local queue: a tokio task
//! that sends to a hosted actor on a current-thread runtime, or
//! `ask(..).await`s it, has the activation run on its own thread next, and
//! the reply's waker (`reply/ask`) wakes the awaiting task the same
//! way: nothing crosses a thread, and nothing is allocated. An idle hosted
//! actor holds no task (the runners are the pool's, not the actor's).
//! Runners are interchangeable, and the injector (not a runner) holds
//! every scheduled actor, so a thread that cannot let the runtime run
//! (below) can run what is scheduled itself.

//! # An ask awaited on the runtime's own thread
//!
//! The runner an `ask(..).await` wakes is scheduled on the asking thread,
//! behind the asking task: the reply needs two task polls, and on a
//! multi-thread runtime tokio's next-to-run slot, capped at three polls
//! in a row, then hands a task to its queue and wakes the other worker,
//! which finds nothing and parks again. Measured (20,000 asks, 2-core
//! VM): 4% of the asks took about 6 us, the mean 480 ns against a p50 of
//! 230. So the first poll of such an ask, on a thread of the hosting
//! runtime and outside actor code, runs the awaited actor's activation
//! itself if it heads the injector ([`help_ask`]): the reply is there
//! when the poll returns. Another actor at the head is put back: it is
//! not the task's to run, and its handler might need what the task holds.
//! Three rules bound what that costs anyone else (the last has a price,
//! below):
//!
//! - It spends the task's cooperative budget (`coop::poll_proceed`), as a
//!   runner's poll would, so a loop of such asks still yields.
//! - If other activations wait for a runner when it is done (some
//!   scheduled by the handler it ran), the ask yields once before it
//!   returns the reply, so they run first, as they would have had the
//!   task waited for a runner.
//! - A schedule does not wake a second runner when one it woke from the
//!   same thread has yet to poll and the injector holds nothing else
//!   ([`Host::wake_one`]): that runner is on its way. Without this, each
//!   helped ask woke the other runner into the asking thread's
//!   next-to-run slot, pushing the first out to where the other worker
//!   steals it: a wake-up per ask. With more queued, it wakes one, so a
//!   task that asks two actors and awaits the first still has the second
//!   run on another worker meanwhile.
//!
//! The cost of that last rule: a schedule from a task that then computes
//! without yielding waits for the task to yield, as a task woken on that
//! thread does in tokio, if a runner it woke earlier is still queued
//! behind it and the injector holds nothing else.

//! # Blocking inside a hosted handler
//!
//! A wait for another actor (`ask(..).wait()`, a send waiting for room in
//! a full `WhenFull::Wait` mailbox) inside a hosted handler would block a
//! thread of the runtime; on a current-thread runtime, the only one, and
//! the actor waited for may be queued for that very thread: a hang that no
//! spare thread can end (a runtime's threads are the runtime's). tokio's
//! own answer, `block_in_place`, needs the wait as a closure, and works on
//! a multi-thread runtime only. So a hosted activation refuses these waits
//! on either kind of runtime, the same way: the wait returns the deadlock
//! detector's error (`AskError::Deadlock`, `SendError::Deadlock` with the
//! message back) with one edge, the caller's own, before it blocks. A
//! handler that needs an answer sends its request with a reply route
//! (`tell` and `reply_to`) and handles the answer as a message, as async
//! code awaits. Waits for an actor's lock (`fast_send`) are not refused:
//! the lock's holder is a handler running on some thread, which returns.
//! The exception is a lock still handed over to an actor's first
//! activation, which has yet to begin and may need this very thread:
//! that wait is refused the same way inside a hosted activation, and
//! outside actor code the waiting thread runs the pool's queued
//! activations until it has begun (`Shared::before_first_wait`).
//!
//! # Blocking outside actor code
//!
//! The same two waits outside actor code (an `ask(..).wait()` or
//! `wait_timeout` in a task or inside `block_on`, a send waiting for room
//! in a hosted actor's full mailbox) have nothing to refuse: no handler
//! waits, and the caller chose to block. But a thread of the runtime that
//! blocks takes itself from the runners, and may be the only one that
//! could run the actor: a current-thread runtime's one thread, or a
//! worker whose next-to-run slot holds the runner that wait woke (tokio
//! does not steal from that slot: tokio-rs/tokio#4941). Each of these
//! hung. So where the
//! waiting thread may be the only one ([`help_blocked`]: it is one of
//! the runtime's threads, or the runtime is a current-thread one, whose
//! tasks run only while some thread is inside its `block_on`, perhaps
//! none), it runs the pool's scheduled activations itself until the wait
//! is over, as a shutdown does ([`help_until`], in the runtime's context
//! when off its threads). These are every scheduled actor's activations,
//! not only the awaited one's, as they must be: the awaited actor may
//! answer only after another has run. A thread of its own waiting for a
//! multi-thread runtime's actor waits as before, and the runtime's
//! workers run it. Two costs, both the caller's: a `wait_timeout` can end
//! late, by as long as the handler this thread runs when the deadline
//! passes (a handler is not cut short); and while nothing is scheduled
//! and the reply is not in (its handler runs on another thread), the
//! wait polls every 50 us instead of sleeping until it is woken.
//!
//! # Shutdown
//!
//! `System::shutdown` waits for every actor to stop, and the runners that
//! would stop them may never run while it waits: called on a thread of a
//! current-thread runtime (inside `block_on`, or as the system is dropped
//! there), it holds the only thread; called from outside, nothing may be
//! driving a current-thread runtime at all (it runs tasks only inside
//! `block_on`), or the runtime may be gone. So the shutdown's thread runs
//! the scheduled activations itself ([`help_until`]), beside whatever
//! runners the runtime runs: the injector, not the runners, holds what is
//! scheduled, and an actor's activations never overlap wherever they run.
//! It does so while the shutdown stops the members one at a time, newest
//! first (`stop.rs`: each member's last activation closes the next, which
//! schedules it on the injector), and then until the last member has
//! left. Until the order was kept here too, a hosted pool's members were
//! closed together, and a hosted relay draining 2,000 queued messages
//! had every forward to its hosted sink refused
//! (`tests/pool_tokio_shutdown.rs`). A `shutdown_timeout` stops running
//! them at its deadline, as it stops waiting for a thread: a handler
//! still running elsewhere on the runtime is left to return, and its actor
//! is listed unfinished. (One running on the shutdown's own thread
//! returns first: that thread is running it.)

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use crossbeam_deque::{Injector, Steal};
use tokio::runtime::{Handle, RuntimeFlavor};

use super::idle::Token;
use super::seats::Seats;
use super::{SchedConfig, Shared, Task, WorkerBody};
use crate::base::backoff::Backoff;
use crate::guard::blocking::{self, BlockingHook};
use crate::guard::chain;
use crate::guard::deadlock::WaitKind;
use crate::mailbox::Helped;

/// What a hosted pool keeps of its runtime: a seat per runner, where it
/// waits for work ([`Seats`]: which runner a schedule wakes), and each
/// runner's waker.
pub(crate) struct Host {
    seats: Seats,
    /// One per seat: its runner's waker, kept from the runner's first
    /// wait, not renewed at each. A runner is a task spawned on the
    /// runtime, never polled through anything else, and such a task's
    /// waker wakes that task for as long as the task lives (tokio hands a
    /// task the same waker at every poll, which a debug build checks). So
    /// a wait costs one store and a fence and a wake-up one swap, where a
    /// waker cloned into a locked list and taken out again cost a lock and
    /// an unlock on each side and a clone (seven locked instructions an
    /// `ask(..).await`, four then).
    wakers: Box<[OnceLock<Waker>]>,
    /// The runtime the runners are tasks of: a future polled on one of
    /// its threads may run an activation itself ([`help_ask`]).
    runtime: tokio::runtime::Id,
    /// Its handle: activations run off its threads ([`help_until`]) run
    /// in its context, as a runner's do.
    handle: Handle,
    /// It is a current-thread runtime: its tasks run only while some
    /// thread is inside its `block_on`, perhaps none ([`help_blocked`]).
    current_thread: bool,
}

impl Host {
    fn new(runners: usize, handle: &Handle) -> Self {
        Host {
            seats: Seats::new(runners),
            wakers: (0..runners).map(|_| OnceLock::new()).collect(),
            runtime: handle.id(),
            handle: handle.clone(),
            current_thread: handle.runtime_flavor() == RuntimeFlavor::CurrentThread,
        }
    }

    /// Whether the calling thread is one of the runtime's (inside its
    /// `block_on`, or one of its workers).
    fn here(&self) -> bool {
        Handle::try_current().ok().map(|h| h.id()) == Some(self.runtime)
    }

    /// After a schedule pushed an actor on the injector: wakes a runner
    /// that waits for work, if one does (one that is running comes back
    /// to the injector before it waits; see [`Runner`]), unless a runner
    /// this thread woke has yet to poll and the injector holds only this
    /// push: that runner looks at the injector when it polls (module
    /// docs, "An ask awaited on the runtime's own thread").
    pub(super) fn wake_one(&self, injector: &Injector<Task>) {
        if let Some(seat) = self
            .seats
            .wake_one(chain::thread_token(), || injector.len())
        {
            self.wake(seat);
        }
    }

    fn wake_all(&self) {
        self.seats.take_all(|seat| self.wake(seat));
    }

    fn wake(&self, seat: usize) {
        // Set before the seat's `waiting` was (release), and read after
        // it was taken (acquire): a runner waits only after keeping its
        // waker.
        if let Some(waker) = self.wakers[seat].get() {
            waker.wake_by_ref();
        }
    }
}

/// A pool whose activations run on `handle`'s runtime, and the body of the
/// one thread it needs: a keeper that sleeps until the pool is closed and
/// empty, so the system's shutdown can wait for the pool as it waits for a
/// worker. The keeper runs nothing. The pool's runners (one per thread of
/// the runtime) are spawned on the runtime here.
pub(crate) fn start(config: SchedConfig, handle: &Handle) -> (Arc<Shared>, WorkerBody) {
    let runners = match handle.runtime_flavor() {
        RuntimeFlavor::CurrentThread => 1,
        _ => handle.metrics().num_workers().max(1),
    };
    let shared = Arc::new(Shared {
        host: Some(Host::new(runners, handle)),
        ..Shared::threadless(SchedConfig {
            workers: 0,
            budget: config.budget.max(1),
            ..config
        })
    });
    for seat in 0..runners {
        // Detached: a runner ends once the pool has exited.
        drop(handle.spawn(Runner {
            shared: Arc::clone(&shared),
            seat,
        }));
    }
    let kept = Arc::clone(&shared);
    (shared, Box::new(move || keep(&kept)))
}

/// The keeper's body: asleep until the pool is closed and its last member
/// has left (`Shared::leave` and `close_all` wake it).
fn keep(shared: &Shared) {
    let token = Arc::new(Token::new());
    shared.idle.start_searching();
    while !shared.exit_now() {
        // The keeper runs nothing: where it wakes does not matter.
        let _waker_cpu = shared.idle.sleep(&token, || shared.exit_now());
    }
    shared.idle.stop_searching();
}

/// A task of the runtime that runs the pool's activations, one per poll,
/// as a worker thread runs them: whichever actor is at the injector's
/// head. Out of work, it waits in its seat of the [`Host`].
struct Runner {
    shared: Arc<Shared>,
    /// Its place in the host's `seats`.
    seat: usize,
}

impl Runner {
    fn host(&self) -> &Host {
        self.shared.host.as_ref().expect("a hosted pool has a host")
    }
}

impl Future for Runner {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let shared = &self.shared;
        // Woken by a schedule: no longer on its way (before the take).
        self.host().seats.arrive(self.seat);
        if let Some(task) = take(shared) {
            let again = {
                let _hosted = Hosted::enter();
                task.run(shared.config.budget)
            };
            if let Some(task) = again {
                // Budget spent (or a push still being written): to the
                // back of the queue.
                shared.injector.push(task);
            }
            // One activation per poll: the runtime's other tasks (the one
            // awaiting this actor's reply, say) get their turn first. With
            // more scheduled, this runner comes back after them (the
            // injector check below); with nothing, it waits for a schedule
            // now, rather than in a poll of its own that would find nothing
            // (one poll and one reschedule fewer per activation).
        }
        if shared.exit_now() {
            self.host().wake_all();
            return Poll::Ready(());
        }
        let host = self.host();
        let kept = host.wakers[self.seat].get_or_init(|| cx.waker().clone());
        debug_assert!(kept.will_wake(cx.waker()), "a runner's waker changed");
        // Either the push (or the exit) is seen here, or the scheduler
        // (or the close's `wake_all`) sees this runner waiting: no
        // schedule is left without a runner (`seats`).
        host.seats.sit(self.seat);
        if (!shared.injector.is_empty() || shared.exit_now()) && host.seats.rise(self.seat) {
            // Still ours: run again. (Taken by a scheduler meanwhile, the
            // seat's waker has been woken already.)
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

/// The first poll of an `ask(..).await` whose actor this pool hosts, on a
/// thread of the hosting runtime and outside actor code: if the actor at
/// the injector's head is the awaited one (`awaited`, its cell's
/// address), runs its activation here, as the runner the ask's schedule
/// woke would on this thread next (module docs). Another actor's is put
/// back: it is not this task's to run, and may need what the task holds.
/// Counts against the task's cooperative budget, as a runner's poll
/// would: a loop of asks answered this way still yields to the runtime's
/// other tasks.
pub(super) fn help_ask(
    shared: &Shared,
    host: &Host,
    cx: &mut Context<'_>,
    awaited: *const (),
) -> Helped {
    if chain::runs_actor_code() || blocking::refuses(WaitKind::Reply) {
        return Helped::Nothing;
    }
    if !host.here() {
        return Helped::Nothing;
    }
    let Poll::Ready(coop) = tokio::task::coop::poll_proceed(cx) else {
        return Helped::Nothing;
    };
    let Some(task) = take(shared) else {
        return Helped::Nothing;
    };
    if Arc::as_ptr(&task).cast::<()>() != awaited {
        // Back for a runner: the one woken for it, unless it has come
        // and gone meanwhile (then this wakes one).
        shared.injector.push(task);
        host.wake_one(&shared.injector);
        return Helped::Nothing;
    }
    coop.made_progress();
    let again = {
        let _hosted = Hosted::enter();
        task.run(shared.config.budget)
    };
    if let Some(task) = again {
        shared.injector.push(task);
        host.wake_one(&shared.injector);
    }
    if shared.injector.is_empty() {
        Helped::Ran
    } else {
        Helped::OthersWait
    }
}

/// A blocking wait outside actor code until `done` (an `ask(..).wait()`
/// for a reply, a push waiting for room) for a member of this pool, on a
/// thread that may be the only one able to run it: one of the runtime's
/// threads (a task's, or a `block_on`'s), which the wait would take from
/// the runners, or any thread when the runtime is a current-thread one,
/// which runs its tasks only while a `block_on` drives it. Runs the pool's
/// scheduled activations here until `done` or `deadline`, as a shutdown
/// does ([`help_until`]), and returns `true`. Elsewhere (a thread of its
/// own waiting on a multi-thread runtime's actor) `false`: the runtime's
/// workers run the runners.
pub(super) fn help_blocked(
    shared: &Shared,
    host: &Host,
    done: &dyn Fn() -> bool,
    deadline: Option<Instant>,
) -> bool {
    if chain::runs_actor_code() || !(host.current_thread || host.here()) {
        return false;
    }
    help_until(shared, deadline, done);
    true
}

fn take(shared: &Shared) -> Option<Task> {
    loop {
        match shared.injector.steal() {
            Steal::Success(task) => return Some(task),
            Steal::Empty => return None,
            Steal::Retry => {}
        }
    }
}

/// The blocking hook of a thread while it runs a hosted activation: it
/// refuses waits for another actor's queue (module docs).
struct Hosted;

impl BlockingHook for Hosted {
    fn enter(&self) {}

    fn exit(&self) {}

    fn refuses(&self, kind: WaitKind) -> bool {
        kind != WaitKind::Lock
    }
}

std::thread_local! {
    /// One hook per thread, set around each activation without allocating.
    /// Made by a runtime thread's first activation, which also makes the
    /// thread's parking record: the runtime's threads are not ours to warm
    /// when they start (`parking::warm`), so the first lock an activation
    /// finds taken on this thread, later, does not make the record then.
    /// (Untested: which runtime thread runs an activation first is the
    /// runtime's choice.)
    static HOSTED: Rc<dyn BlockingHook> = {
        crate::base::sync::parking::warm();
        Rc::new(Hosted)
    };
}

/// While alive, the calling thread's blocking hook is [`Hosted`]; the hook
/// it had before comes back on drop.
struct HostedScope(Option<Rc<dyn BlockingHook>>);

impl Hosted {
    fn enter() -> HostedScope {
        HostedScope(blocking::replace_hook(Some(HOSTED.with(Rc::clone))))
    }
}

impl Drop for HostedScope {
    fn drop(&mut self) {
        blocking::replace_hook(self.0.take());
    }
}

/// From `close_all`: runs the scheduled activations on the calling
/// thread until the pool's last member has left, or `deadline` passes
/// (module docs). A thread
/// that runs actor code does not wait for the pool (its shutdown only
/// closes), and neither does this.
pub(super) fn drain_here(shared: &Shared, deadline: Option<Instant>) {
    if chain::runs_actor_code() {
        return;
    }
    help_until(shared, deadline, || shared.exit_now());
    // Runners waiting for work find the pool gone, and end.
    if let Some(host) = &shared.host {
        host.wake_all();
    }
}

/// Runs the pool's scheduled activations on the calling thread, beside
/// the runtime's runners, until `done` holds or `deadline` passes: a
/// shutdown's wait for the pool (`drain_here`, and the ordered stop's
/// wait for each member to leave, `stop.rs`). With nothing scheduled, an
/// activation is running on another thread of the runtime: it backs off,
/// then looks every 50 µs.
pub(super) fn help_until(shared: &Shared, deadline: Option<Instant>, done: impl Fn() -> bool) {
    let budget = shared.config.budget;
    // Off the runtime's threads, its context all the same: a handler may
    // spawn on it (`tokio::spawn`), as it may on a runner.
    let _context = shared
        .host
        .as_ref()
        .filter(|host| !host.here())
        .map(|host| host.handle.enter());
    let mut backoff = Backoff::new();
    while !done() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return;
        }
        match take(shared) {
            Some(task) => {
                let again = {
                    let _hosted = Hosted::enter();
                    task.run(budget)
                };
                if let Some(task) = again {
                    shared.injector.push(task);
                }
                backoff = Backoff::new();
            }
            None if !backoff.snooze() => {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            None => {}
        }
    }
}
