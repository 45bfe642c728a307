//! Pooled actors hosted on a tokio runtime (`PoolConfig::tokio`): sends,
//! asks awaited from tokio tasks, on current-thread and multi-thread
//! runtimes; many actors with exact accounting; stop, shutdown (from
//! outside the runtime and on its own thread), supervision; and the
//! blocking rule: a hosted handler's wait for another actor's queue is
//! refused as a deadlock instead of hanging the runtime.
//!
//! Every scenario runs on a helper thread under a watchdog, so a hang
//! fails the test instead of stalling the suite.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{AskError, PoolConfig, SendError, SystemConfig, WaitKind, WhenFull};
use tokio::runtime::{Builder, Runtime};

const WATCHDOG: Duration = Duration::from_secs(60);

fn watchdog<R: Send + 'static>(what: &str, scenario: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, finished) = channel();
    std::thread::spawn(move || {
        let _ = done.send(scenario());
    });
    finished
        .recv_timeout(WATCHDOG)
        .unwrap_or_else(|_| panic!("watchdog: {what} hung"))
}

fn current_thread() -> Runtime {
    Builder::new_current_thread().build().unwrap()
}

fn multi_thread(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .unwrap()
}

fn hosted_on(rt: &Runtime) -> System {
    System::with_config(SystemConfig {
        pool: PoolConfig::tokio(rt.handle().clone()),
        ..SystemConfig::default()
    })
}

pub struct Add(pub u64);
pub struct Get;
pub struct WhereAmI;
pub struct Boom;
pub struct StopMe;
pub struct Slow(pub u64);
pub struct AskAndWait(pub Addr<Counter>);
pub struct Flood(pub Addr<Counter>, pub u64);
pub struct FastSendTo(pub Addr<Counter>);

#[actor]
pub struct Counter {
    n: u64,
    stopped: Arc<AtomicU64>,
    log: Arc<Mutex<Vec<String>>>,
}

#[actor]
impl Counter {
    #[handler(Add)]
    fn add(&mut self, m: Add, _ctx: &mut Ctx<Self>) -> u64 {
        self.n += m.0;
        self.n
    }

    #[handler(Get)]
    fn get(&mut self, _m: Get, _ctx: &mut Ctx<Self>) -> u64 {
        self.n
    }

    #[handler(WhereAmI)]
    fn where_am_i(&mut self, _m: WhereAmI, _ctx: &mut Ctx<Self>) -> ThreadId {
        std::thread::current().id()
    }

    #[handler(Boom)]
    fn boom(&mut self, _m: Boom, _ctx: &mut Ctx<Self>) {
        self.n = 999;
        panic!("boom");
    }

    #[handler(StopMe)]
    fn stop_me(&mut self, _m: StopMe, ctx: &mut Ctx<Self>) {
        ctx.stop();
    }

    /// Answers after a pause long enough that no waiter's spin sees it.
    #[handler(Slow)]
    fn slow(&mut self, m: Slow, _ctx: &mut Ctx<Self>) -> u64 {
        std::thread::sleep(Duration::from_millis(100));
        self.n += m.0;
        m.0
    }

    /// Waits for another actor's reply inside the handler.
    #[handler(AskAndWait)]
    fn ask_and_wait(&mut self, m: AskAndWait, _ctx: &mut Ctx<Self>) -> Result<u64, AskError> {
        m.0.ask(Slow(5)).unwrap().wait()
    }

    /// Sends `count` messages into the other's bounded mailbox; returns how
    /// many went in and the refusal that stopped it, if one did.
    #[handler(Flood)]
    fn flood(&mut self, m: Flood, _ctx: &mut Ctx<Self>) -> (u64, Option<(u64, usize, WaitKind)>) {
        for i in 0..m.1 {
            match m.0.send(Add(i)) {
                Ok(()) => {}
                Err(SendError::Deadlock { msg, cycle, .. }) => {
                    return (i, Some((msg.0, cycle.len(), cycle[0].kind)));
                }
                Err(e) => panic!("unexpected {e}"),
            }
        }
        (m.1, None)
    }

    /// A synchronous call: waits for the target's lock, never refused.
    #[handler(FastSendTo)]
    fn fast_send_to(&mut self, m: FastSendTo, _ctx: &mut Ctx<Self>) -> u64 {
        m.0.fast_send(Add(1)).unwrap()
    }

    #[stopped]
    fn on_stopped(&mut self, _ctx: &mut Ctx<Self>) {
        self.stopped.fetch_add(1, Ordering::SeqCst);
        self.log
            .lock()
            .unwrap()
            .push(format!("stopped at {}", self.n));
    }
}

fn counter(stopped: &Arc<AtomicU64>) -> Counter {
    Counter {
        n: 0,
        stopped: Arc::clone(stopped),
        log: Arc::default(),
    }
}

fn logged(stopped: &Arc<AtomicU64>, log: &Arc<Mutex<Vec<String>>>) -> Counter {
    Counter {
        n: 0,
        stopped: Arc::clone(stopped),
        log: Arc::clone(log),
    }
}

#[test]
fn on_a_current_thread_runtime_sends_and_awaited_asks_run_on_the_runtime_thread() {
    let (sum, handler_thread, runtime_thread, log) = watchdog("current-thread send/ask", || {
        let rt = current_thread();
        let system = hosted_on(&rt);
        let stopped = Arc::new(AtomicU64::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        // Spawned and sent to from outside the runtime: it runs once the
        // runtime does.
        let c = system.spawn(logged(&stopped, &log)).pooled().start();
        c.send(Add(1)).unwrap();
        let (sum, handler_thread, runtime_thread) = rt.block_on(async {
            let c2 = c.clone();
            let task = tokio::spawn(async move {
                for i in 2..=100 {
                    c2.send(Add(i)).unwrap();
                }
                let sum = c2.ask(Get).unwrap().await.unwrap();
                let at = c2.ask(WhereAmI).unwrap().await.unwrap();
                (sum, at, std::thread::current().id())
            });
            task.await.unwrap()
        });
        assert_eq!(system.pool_threads(), 0, "a hosted pool runs no threads");
        system.shutdown();
        assert!(c.is_stopped());
        let log = log.lock().unwrap().clone();
        (sum, handler_thread, runtime_thread, log)
    });
    assert_eq!(sum, (1..=100).sum::<u64>());
    assert_eq!(
        handler_thread, runtime_thread,
        "the activation ran on the awaiting task's thread"
    );
    assert_eq!(
        log,
        [format!("stopped at {sum}")],
        "stopped once, after every message"
    );
}

#[test]
fn many_actors_on_a_multi_thread_runtime_account_for_every_message() {
    const ACTORS: usize = 500;
    const TASKS: u64 = 8;
    const EACH: u64 = 20;
    let (sums, live, stopped) = watchdog("many actors", || {
        let rt = multi_thread(2);
        let system = hosted_on(&rt);
        let stopped = Arc::new(AtomicU64::new(0));
        let actors: Vec<Addr<Counter>> = (0..ACTORS)
            .map(|_| system.spawn(counter(&stopped)).pooled().start())
            .collect();
        let actors = Arc::new(actors);
        let sums = rt.block_on(async {
            let senders: Vec<_> = (0..TASKS)
                .map(|t| {
                    let actors = Arc::clone(&actors);
                    tokio::spawn(async move {
                        for i in 0..EACH {
                            for a in actors.iter() {
                                a.send(Add(t * EACH + i + 1)).unwrap();
                            }
                            tokio::task::yield_now().await;
                        }
                    })
                })
                .collect();
            for s in senders {
                s.await.unwrap();
            }
            let mut sums = Vec::new();
            for a in actors.iter() {
                sums.push(a.ask(Get).unwrap().await.unwrap());
            }
            sums
        });
        let live = system.pooled_actors();
        system.shutdown();
        (sums, live, stopped.load(Ordering::SeqCst))
    });
    let expected: u64 = (1..=TASKS * EACH).sum();
    assert_eq!(sums.len(), ACTORS);
    assert!(
        sums.iter().all(|&s| s == expected),
        "every actor got every message once"
    );
    assert_eq!(live, ACTORS);
    assert_eq!(stopped, ACTORS as u64, "every actor stopped once");
}

/// Each ask from a plain thread comes after the reply to the one before,
/// so it usually finds the runners waiting in their seats: every schedule
/// must find one to wake (or be found by a runner about to wait), or a
/// round hangs and the watchdog fails the test. Three asking threads
/// against three runners on two cores keep the two sides racing.
#[test]
fn asks_from_plain_threads_always_find_a_runner_to_wake() {
    const THREADS: usize = 3;
    const ROUNDS: u64 = 2_000;
    let totals = watchdog("asks from plain threads", || {
        let rt = multi_thread(3);
        let system = hosted_on(&rt);
        let stopped = Arc::new(AtomicU64::new(0));
        let askers: Vec<_> = (0..THREADS)
            .map(|_| {
                let actor = system.spawn(counter(&stopped)).pooled().start();
                std::thread::spawn(move || {
                    let mut total = 0;
                    for i in 1..=ROUNDS {
                        total = actor.ask(Add(i)).unwrap().wait().unwrap();
                    }
                    total
                })
            })
            .collect();
        let totals: Vec<_> = askers.into_iter().map(|t| t.join().unwrap()).collect();
        system.shutdown();
        totals
    });
    assert_eq!(totals, vec![ROUNDS * (ROUNDS + 1) / 2; THREADS]);
}

#[test]
fn stop_drains_what_was_accepted_and_refuses_the_rest() {
    let (log, closed) = watchdog("stop", || {
        let rt = current_thread();
        let system = hosted_on(&rt);
        let stopped = Arc::new(AtomicU64::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        let c = system.spawn(logged(&stopped, &log)).pooled().start();
        let closed = rt.block_on(async {
            for _ in 0..50 {
                c.send(Add(1)).unwrap();
            }
            c.send(StopMe).unwrap();
            // The actor has not run yet: this task has not yielded.
            c.send(Add(1)).unwrap();
            while !c.is_stopped() {
                tokio::task::yield_now().await;
            }
            c.send(Add(1)).unwrap_err().is_closed()
        });
        assert_eq!(system.pooled_actors(), 0);
        system.shutdown();
        let log = log.lock().unwrap().clone();
        (log, closed)
    });
    // The stop closes the mailbox: what it had accepted (the message sent
    // after `StopMe`, before the actor ran) is still handled, as on a
    // thread; what comes after the close is refused.
    assert_eq!(log, ["stopped at 51"]);
    assert!(closed, "a stopped actor refuses");
}

#[test]
fn shutdown_on_the_runtime_thread_runs_the_last_activations_itself() {
    let (log, live) = watchdog("shutdown inside block_on", || {
        let rt = current_thread();
        let system = hosted_on(&rt);
        let stopped = Arc::new(AtomicU64::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        let live = rt.block_on(async {
            let c = system.spawn(logged(&stopped, &log)).pooled().start();
            for _ in 0..1000 {
                c.send(Add(1)).unwrap();
            }
            // Never yielded: the runner for `c` is queued on this very
            // thread, which the shutdown now holds.
            system.shutdown();
            assert!(c.is_stopped());
            system.pooled_actors()
        });
        let log = log.lock().unwrap().clone();
        (log, live)
    });
    assert_eq!(
        log,
        ["stopped at 1000"],
        "every accepted message handled, once"
    );
    assert_eq!(live, 0);
}

#[test]
fn a_dropped_system_on_a_multi_thread_runtime_stops_every_actor() {
    let stopped = watchdog("drop on a worker", || {
        let rt = multi_thread(2);
        let stopped = Arc::new(AtomicU64::new(0));
        let s2 = Arc::clone(&stopped);
        let handle = rt.handle().clone();
        rt.block_on(async move {
            tokio::spawn(async move {
                let system = System::with_config(SystemConfig {
                    pool: PoolConfig::tokio(handle),
                    ..SystemConfig::default()
                });
                for _ in 0..100 {
                    let c = system.spawn(counter(&s2)).pooled().start();
                    c.send(Add(1)).unwrap();
                }
                drop(system);
            })
            .await
            .unwrap();
        });
        stopped.load(Ordering::SeqCst)
    });
    assert_eq!(stopped, 100);
}

#[test]
fn supervision_restarts_a_hosted_actor_and_keeps_its_mailbox() {
    let got = watchdog("restart", || {
        let rt = current_thread();
        let system = hosted_on(&rt);
        let stopped = Arc::new(AtomicU64::new(0));
        let fresh = Arc::clone(&stopped);
        let c = system
            .spawn(counter(&stopped))
            .restart_with(move || counter(&fresh))
            .pooled()
            .start();
        let got = rt.block_on(async {
            c.send(Add(5)).unwrap();
            c.send(Boom).unwrap();
            c.send(Add(1)).unwrap();
            c.ask(Get).unwrap().await.unwrap()
        });
        system.shutdown();
        got
    });
    assert_eq!(
        got, 1,
        "restarted from the factory, the message after the panic kept"
    );
}

#[test]
fn a_blocking_ask_inside_a_hosted_handler_is_refused_on_a_current_thread_runtime() {
    let (refused, later) = watchdog("ask().wait() on a current-thread runtime", || {
        let rt = current_thread();
        let system = hosted_on(&rt);
        let stopped = Arc::new(AtomicU64::new(0));
        let a = system.spawn(counter(&stopped)).pooled().start();
        let b = system.spawn(counter(&stopped)).pooled().start();
        let got = rt.block_on(async {
            let refused = a.ask(AskAndWait(b.clone())).unwrap().await.unwrap();
            // The asked message was delivered all the same: `b` handles it.
            let later = b.ask(Get).unwrap().await.unwrap();
            (refused, later)
        });
        system.shutdown();
        got
    });
    match refused {
        Err(AskError::Deadlock(cycle)) => {
            assert_eq!(cycle.len(), 1, "one edge: the waiter's own");
            assert_eq!(cycle[0].kind, WaitKind::Reply);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(later, 5, "nothing lost: the request was handled");
}

#[test]
fn a_blocking_ask_inside_a_hosted_handler_is_refused_on_a_multi_thread_runtime() {
    let refused = watchdog("ask().wait() on a multi-thread runtime", || {
        let rt = multi_thread(2);
        let system = hosted_on(&rt);
        let stopped = Arc::new(AtomicU64::new(0));
        let a = system.spawn(counter(&stopped)).pooled().start();
        let b = system.spawn(counter(&stopped)).pooled().start();
        let refused = rt.block_on(async { a.ask(AskAndWait(b.clone())).unwrap().await.unwrap() });
        system.shutdown();
        refused
    });
    assert!(
        matches!(&refused, Err(AskError::Deadlock(c)) if c.len() == 1),
        "the same rule on either runtime: {refused:?}"
    );
}

#[test]
fn a_send_waiting_for_room_inside_a_hosted_handler_is_refused_with_the_message_back() {
    let ((sent, refusal), sum) = watchdog("a send waiting for room", || {
        let rt = current_thread();
        let system = hosted_on(&rt);
        let stopped = Arc::new(AtomicU64::new(0));
        let a = system.spawn(counter(&stopped)).pooled().start();
        let b = system
            .spawn(counter(&stopped))
            .mailbox(MailboxKind::LockFree {
                capacity: 4,
                when_full: WhenFull::Wait,
            })
            .pooled()
            .start();
        let got = rt.block_on(async {
            let flood = a.ask(Flood(b.clone(), 100)).unwrap().await.unwrap();
            let sum = b.ask(Get).unwrap().await.unwrap();
            (flood, sum)
        });
        system.shutdown();
        got
    });
    let (back, edges, kind) = refusal.expect("the full mailbox's wait is refused");
    assert!((1..100).contains(&sent), "refused once full, after {sent}");
    assert_eq!(back, sent, "the refused message is handed back");
    assert_eq!((edges, kind), (1, WaitKind::Room));
    assert_eq!(
        sum,
        (0..sent).sum::<u64>(),
        "exactly what was accepted arrived"
    );
}

#[test]
fn fast_send_inside_a_hosted_handler_is_not_refused() {
    let got = watchdog("fast_send inside a hosted handler", || {
        let rt = current_thread();
        let system = hosted_on(&rt);
        let stopped = Arc::new(AtomicU64::new(0));
        let a = system.spawn(counter(&stopped)).pooled().start();
        let b = system.spawn(counter(&stopped)).pooled().start();
        let got = rt.block_on(async {
            let mut last = 0;
            for _ in 0..10 {
                last = a.ask(FastSendTo(b.clone())).unwrap().await.unwrap();
            }
            last
        });
        system.shutdown();
        got
    });
    assert_eq!(got, 10);
}

#[test]
fn a_system_of_its_own_threads_is_untouched_by_the_feature() {
    // The same handler on a thread of its own blocks in `wait` as ever:
    // the refusal belongs to hosted activations only.
    let got = watchdog("a thread actor's wait", || {
        let system = System::new();
        let stopped = Arc::new(AtomicU64::new(0));
        let a = system.spawn(counter(&stopped)).start();
        let b = system.spawn(counter(&stopped)).pooled().start();
        let got = a.ask(AskAndWait(b)).unwrap().wait().unwrap();
        system.shutdown();
        got
    });
    assert_eq!(got, Ok(5));
}
