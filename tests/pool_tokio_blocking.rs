//! A blocking wait for a hosted actor, outside actor code, on a thread
//! that may be the only one able to run that actor (`PoolConfig::tokio`;
//! `help_blocked` in the `tokio` module of `delivery::sched`): the
//! waiting thread runs the pool's scheduled activations itself until the
//! wait is over. Every case but the last hung before: an
//! `ask(..).wait()` or a push waiting for room in a full
//! `WhenFull::Wait` mailbox, inside a current-thread runtime's
//! `block_on`, in a task of a multi-thread runtime of one or two
//! workers, or on a plain thread while nothing drives the current-thread
//! runtime. The last has a helping plain thread and a driven runtime run
//! one actor in turn, and counts every message once. (Inside a hosted
//! handler the same waits are refused instead: `tests/pool_tokio.rs`.)
//!
//! `cargo test --features tokio --test pool_tokio_blocking`

use std::thread::ThreadId;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{AskError, WhenFull};
use tokio::runtime::{Builder, Runtime};

#[path = "support/hosted.rs"]
mod hosted;
use hosted::{hosted_on, watchdog};

pub struct Add(pub u64);
pub struct Log(pub u64);
pub struct Logged;
/// Where the handler runs: its thread, and the runtime whose context it
/// has, if any.
pub struct WhereAmI;
pub struct Slow(pub Duration);
/// Adds one, noting the thread the handler ran on.
pub struct Tally;
/// How many threads ran `Tally`s.
pub struct Tallied;

#[actor]
#[derive(Default)]
pub struct Counter {
    n: u64,
    log: Vec<u64>,
    threads: std::collections::HashSet<ThreadId>,
}

#[actor]
impl Counter {
    #[handler(Add)]
    fn add(&mut self, m: Add, _ctx: &mut Ctx<Self>) -> u64 {
        self.n += m.0;
        self.n
    }

    #[handler(Log)]
    fn log(&mut self, m: Log, _ctx: &mut Ctx<Self>) {
        self.log.push(m.0);
    }

    #[handler(Logged)]
    fn logged(&mut self, _m: Logged, _ctx: &mut Ctx<Self>) -> Vec<u64> {
        std::mem::take(&mut self.log)
    }

    #[handler(WhereAmI)]
    fn where_am_i(
        &mut self,
        _m: WhereAmI,
        _ctx: &mut Ctx<Self>,
    ) -> (ThreadId, Option<tokio::runtime::Id>) {
        let runtime = tokio::runtime::Handle::try_current().ok().map(|h| h.id());
        (std::thread::current().id(), runtime)
    }

    #[handler(Tally)]
    fn tally(&mut self, _m: Tally, _ctx: &mut Ctx<Self>) -> u64 {
        self.threads.insert(std::thread::current().id());
        self.n += 1;
        self.n
    }

    #[handler(Tallied)]
    fn tallied(&mut self, _m: Tallied, _ctx: &mut Ctx<Self>) -> (u64, usize) {
        (self.n, self.threads.len())
    }

    #[handler(Slow)]
    fn slow(&mut self, m: Slow, _ctx: &mut Ctx<Self>) -> u64 {
        std::thread::sleep(m.0);
        self.n
    }
}

#[group]
pub struct Desk {
    pub counter: Addr<Counter>,
}

fn current_thread() -> Runtime {
    Builder::new_current_thread().build().unwrap()
}

/// A mailbox of four slots that makes a full push wait for room.
fn bounded() -> MailboxKind {
    MailboxKind::LockFree {
        capacity: 4,
        when_full: WhenFull::Wait,
    }
}

/// Inside `block_on` on `rt`'s one thread, sends 1,000 messages into
/// `counter`'s four-slot mailbox (or its group's queue), most of them
/// waiting for room, then asks what arrived.
fn flood_inside_block_on(rt: &Runtime, counter: &Addr<Counter>) -> Vec<u64> {
    rt.block_on(async {
        for i in 0..1_000 {
            counter.send(Log(i)).unwrap_or_else(|e| panic!("{e}"));
        }
        counter.ask(Logged).unwrap().await.unwrap()
    })
}

#[test]
fn a_blocking_ask_inside_block_on_runs_the_actor_on_that_thread() {
    let (sum, (there, runtime), here, id) = watchdog("ask().wait() inside block_on", || {
        let rt = current_thread();
        let system = hosted_on(rt.handle().clone());
        let counter = system.spawn(Counter::default()).pooled().start();
        let got = rt.block_on(async {
            let mut sum = 0;
            for i in 1..=100 {
                sum = counter.ask(Add(i)).unwrap().wait().unwrap();
            }
            let whereabouts = counter.ask(WhereAmI).unwrap().wait().unwrap();
            (sum, whereabouts, std::thread::current().id())
        });
        let id = rt.handle().id();
        system.shutdown();
        (got.0, got.1, got.2, id)
    });
    assert_eq!(sum, 5_050);
    assert_eq!(there, here, "the waiting thread ran the handler");
    assert_eq!(runtime, Some(id));
}

#[test]
fn a_blocking_ask_to_a_member_of_a_hosted_group_inside_block_on_is_answered() {
    let sum = watchdog("ask().wait() to a group member inside block_on", || {
        let rt = current_thread();
        let system = hosted_on(rt.handle().clone());
        let desk = system
            .spawn_group::<Desk>((Counter::default(),))
            .pooled()
            .start();
        let sum = rt.block_on(async {
            desk.counter.ask(Add(4)).unwrap().wait().unwrap();
            desk.counter.ask(Add(5)).unwrap().wait().unwrap()
        });
        system.shutdown();
        sum
    });
    assert_eq!(sum, 9);
}

#[test]
fn a_send_waiting_for_room_inside_block_on_runs_the_actor_and_loses_nothing() {
    let log = watchdog("a full mailbox inside block_on", || {
        let rt = current_thread();
        let system = hosted_on(rt.handle().clone());
        let counter = system
            .spawn(Counter::default())
            .mailbox(bounded())
            .pooled()
            .start();
        let log = flood_inside_block_on(&rt, &counter);
        system.shutdown();
        log
    });
    assert_eq!(log, (0..1_000).collect::<Vec<_>>(), "all of them, in order");
}

#[test]
fn a_send_waiting_for_room_in_a_hosted_groups_queue_inside_block_on_loses_nothing() {
    let log = watchdog("a full group queue inside block_on", || {
        let rt = current_thread();
        let system = hosted_on(rt.handle().clone());
        let desk = system
            .spawn_group::<Desk>((Counter::default(),))
            .mailbox(bounded())
            .pooled()
            .start();
        let log = flood_inside_block_on(&rt, &desk.counter);
        system.shutdown();
        log
    });
    assert_eq!(log, (0..1_000).collect::<Vec<_>>(), "all of them, in order");
}

/// One worker: nobody else could run the runner. Two: the runner the ask
/// woke is in the waiting worker's next-to-run slot, which tokio does not
/// let the other worker steal (one worker hung with the change stashed;
/// two, in a probe before this case took both, in five tries of five).
#[test]
fn a_blocking_ask_in_a_task_of_a_multi_thread_runtime_is_answered() {
    for workers in [1, 2] {
        let sum = watchdog("ask().wait() in a task", move || {
            let rt = Builder::new_multi_thread()
                .worker_threads(workers)
                .build()
                .unwrap();
            let system = hosted_on(rt.handle().clone());
            let counter = system.spawn(Counter::default()).pooled().start();
            let sum = rt.block_on(async move {
                tokio::spawn(async move {
                    let mut sum = 0;
                    for i in 1..=1_000 {
                        sum = counter.ask(Add(i)).unwrap().wait().unwrap();
                    }
                    sum
                })
                .await
                .unwrap()
            });
            system.shutdown();
            sum
        });
        assert_eq!(sum, 500_500, "{workers} worker(s)");
    }
}

#[test]
fn a_plain_thread_runs_an_undriven_current_thread_runtimes_actor_in_its_context() {
    let (sum, log, (there, runtime), here, id) = watchdog("waits with nothing driving", || {
        let rt = current_thread();
        let system = hosted_on(rt.handle().clone());
        let counter = system
            .spawn(Counter::default())
            .mailbox(bounded())
            .pooled()
            .start();
        // Nothing is inside `rt.block_on`: no runner ever runs.
        let sum = counter.ask(Add(7)).unwrap().wait().unwrap();
        for i in 0..100 {
            counter.send(Log(i)).unwrap_or_else(|e| panic!("{e}"));
        }
        let log = counter.ask(Logged).unwrap().wait().unwrap();
        let whereabouts = counter.ask(WhereAmI).unwrap().wait().unwrap();
        let id = rt.handle().id();
        system.shutdown();
        (sum, log, whereabouts, std::thread::current().id(), id)
    });
    assert_eq!(sum, 7);
    assert_eq!(log, (0..100).collect::<Vec<_>>());
    assert_eq!(there, here, "the waiting thread ran the handler");
    assert_eq!(runtime, Some(id), "in the runtime's context");
}

#[test]
fn a_timed_wait_inside_block_on_still_times_out_while_another_actor_runs() {
    let (first, timed, late) = watchdog("wait_timeout inside block_on", || {
        let rt = current_thread();
        let system = hosted_on(rt.handle().clone());
        let busy = system.spawn(Counter::default()).pooled().start();
        let counter = system.spawn(Counter::default()).pooled().start();
        let got = rt.block_on(async {
            // The asked actor's handler runs on this thread, inside the
            // wait: it is not cut short at the deadline, and answers.
            let first = counter
                .ask(Slow(Duration::from_millis(50)))
                .unwrap()
                .wait_timeout(Duration::from_millis(5));
            // Another actor scheduled first runs first; the deadline
            // passes during its handler, and the wait ends there.
            let _busy = busy.ask(Slow(Duration::from_millis(50))).unwrap();
            let mut second = counter.ask(Add(1)).unwrap();
            let timed = second.wait_timeout(Duration::from_millis(5));
            // The handle stays valid: waited on again, it is answered.
            let late = second.wait();
            (first, timed, late)
        });
        system.shutdown();
        got
    });
    assert!(first.is_ok(), "{first:?}");
    assert!(matches!(timed, Err(AskError::Timeout(_))), "{timed:?}");
    assert_eq!(late.unwrap(), 1);
}

/// A plain thread's blocking asks run the actor beside the runner that a
/// `block_on` on another thread drives: the two take activations from the
/// same queue, never the same one twice, and every message is counted
/// once.
#[test]
fn a_plain_thread_and_a_driven_runtime_run_one_actor_in_turn_and_count_every_message() {
    const ASKS: u64 = 5_000;
    let (total, threads) = watchdog("a plain thread beside a driven runtime", || {
        let rt = current_thread();
        let system = hosted_on(rt.handle().clone());
        let counter = system.spawn(Counter::default()).pooled().start();
        let plain = {
            let counter = counter.clone();
            std::thread::spawn(move || {
                for _ in 0..ASKS {
                    counter.ask(Tally).unwrap().wait().unwrap();
                }
            })
        };
        let got = rt.block_on(async {
            for _ in 0..ASKS {
                counter.send(Tally).unwrap_or_else(|e| panic!("{e}"));
                tokio::task::yield_now().await;
            }
            while !plain.is_finished() {
                tokio::task::yield_now().await;
            }
            counter.ask(Tallied).unwrap().await.unwrap()
        });
        plain.join().unwrap();
        system.shutdown();
        got
    });
    assert_eq!(total, 2 * ASKS, "every message counted once");
    assert_eq!(threads, 2, "both threads ran the actor");
}
