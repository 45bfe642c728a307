//! A blocking wait inside a pooled handler never hangs the pool, even a
//! pool of one worker where the actor waited for is queued behind the
//! waiter: `ask(..).wait()`, a send waiting for room in a full
//! `WhenFull::Wait` mailbox, and `fast_send_spin` waiting for a lock whose
//! holder waits for the pool. The worker lends its queue out and the pool
//! starts a spare thread (`System::pool_threads` shows it). A wait that
//! could never end is still refused by the deadlock detector.
//!
//! Each scenario runs on a helper thread under a watchdog, so a hang fails
//! the test instead of stalling the suite.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{AskError, PoolConfig, SystemConfig, WhenFull};

const WATCHDOG: Duration = Duration::from_secs(30);

fn pool_of_one() -> System {
    System::with_config(SystemConfig {
        pool: PoolConfig::new().workers(1),
        ..SystemConfig::default()
    })
}

/// Runs `scenario` on its own thread; fails if it has not finished within
/// the watchdog's time.
fn watchdog<R: Send + 'static>(what: &str, scenario: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, finished) = channel();
    std::thread::spawn(move || {
        let _ = done.send(scenario());
    });
    finished
        .recv_timeout(WATCHDOG)
        .unwrap_or_else(|_| panic!("watchdog: {what} hung the pool"))
}

pub struct Echo(pub u64);
pub struct Sum;
pub struct AskOther(pub Addr<Adder>);
pub struct Flood(pub Addr<Adder>, pub u64);
pub struct AskMyself;

#[actor]
pub struct Adder {
    sum: u64,
}

#[actor]
impl Adder {
    #[handler(Echo)]
    fn echo(&mut self, e: Echo, _ctx: &mut Ctx<Self>) -> u64 {
        self.sum += e.0;
        e.0
    }

    #[handler(Sum)]
    fn get(&mut self, _s: Sum, _ctx: &mut Ctx<Self>) -> u64 {
        self.sum
    }

    /// Asks another pooled actor and waits for the reply inside the
    /// handler: on a pool of one, the other is queued behind this one.
    #[handler(AskOther)]
    fn ask_other(&mut self, a: AskOther, _ctx: &mut Ctx<Self>) -> u64 {
        a.0.ask(Echo(41)).unwrap().wait().unwrap() + 1
    }

    /// Sends more than the other's bounded mailbox holds, waiting for room.
    #[handler(Flood)]
    fn flood(&mut self, f: Flood, _ctx: &mut Ctx<Self>) {
        for i in 0..f.1 {
            f.0.send(Echo(i)).unwrap();
        }
    }

    #[handler(AskMyself)]
    fn ask_myself(&mut self, _a: AskMyself, ctx: &mut Ctx<Self>) -> bool {
        matches!(
            ctx.myself().ask(Sum).unwrap().wait(),
            Err(AskError::Deadlock(_))
        )
    }
}

#[test]
fn ask_wait_inside_a_pooled_handler_on_a_pool_of_one_gets_its_reply() {
    let (reply, spares) = watchdog("ask().wait() inside a pooled handler", || {
        let system = pool_of_one();
        let a = system.spawn(Adder { sum: 0 }).pooled().start();
        let b = system.spawn(Adder { sum: 0 }).pooled().start();
        let reply = a.ask(AskOther(b.clone())).unwrap().wait().unwrap();
        let spares = system.pool_threads() - 1;
        system.shutdown();
        (reply, spares)
    });
    assert_eq!(reply, 42);
    assert_eq!(spares, 1, "the waiting worker was compensated by one spare");
}

#[test]
fn a_pooled_handler_waiting_for_room_in_a_full_pooled_mailbox_finishes() {
    let sum = watchdog("a send waiting for room", || {
        let system = pool_of_one();
        let a = system.spawn(Adder { sum: 0 }).pooled().start();
        let b = system
            .spawn(Adder { sum: 0 })
            .mailbox(MailboxKind::LockFree {
                capacity: 2,
                when_full: WhenFull::Wait,
            })
            .pooled()
            .start();
        a.ask(Flood(b.clone(), 100)).unwrap().wait().unwrap();
        let sum = b.ask(Sum).unwrap().wait().unwrap();
        system.shutdown();
        sum
    });
    assert_eq!(sum, (0..100).sum::<u64>(), "every message arrived, once");
}

pub struct SpinOn {
    pub target: Addr<Holder>,
    pub locked: Arc<AtomicBool>,
    pub running: Sender<()>,
}
pub struct HoldWhileAsking {
    pub slow: Addr<Adder>,
    pub locked: Arc<AtomicBool>,
}
pub struct Go(pub HoldWhileAsking, pub Addr<Holder>);

#[actor]
pub struct Holder {
    asked: u64,
}

#[actor]
impl Holder {
    /// Runs under this actor's lock (reached by `fast_send` from a thread
    /// actor) and waits for a pooled actor.
    #[handler(HoldWhileAsking)]
    fn hold(&mut self, h: HoldWhileAsking, _ctx: &mut Ctx<Self>) -> u64 {
        h.locked.store(true, Ordering::SeqCst);
        self.asked = h.slow.ask(Echo(7)).unwrap().wait().unwrap();
        self.asked
    }

    #[handler(u8)]
    fn poke(&mut self, _p: u8, _ctx: &mut Ctx<Self>) -> u64 {
        self.asked
    }
}

#[actor]
pub struct Spinner;

#[actor]
impl Spinner {
    /// Busy on the only worker until `target`'s lock is held, then spins
    /// for it: its holder waits for a pooled actor that only the pool can
    /// run.
    #[handler(SpinOn)]
    fn spin_on(&mut self, s: SpinOn, _ctx: &mut Ctx<Self>) -> u64 {
        s.running.send(()).unwrap();
        while !s.locked.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        s.target.fast_send_spin(1u8).unwrap()
    }

    #[handler(Go)]
    fn go(&mut self, g: Go, _ctx: &mut Ctx<Self>) -> u64 {
        g.1.fast_send(g.0).unwrap()
    }
}

#[test]
fn fast_send_spin_inside_a_pooled_handler_waits_out_a_holder_that_waits_for_the_pool() {
    let got = watchdog("fast_send_spin inside a pooled handler", || {
        let system = pool_of_one();
        let slow = system.spawn(Adder { sum: 0 }).pooled().start();
        let holder = system.spawn(Holder { asked: 0 }).start();
        // A thread actor, to hold `holder`'s lock from outside the pool.
        let outside = system.spawn(Spinner).start();
        let spinner = system.spawn(Spinner).pooled().start();
        let locked = Arc::new(AtomicBool::new(false));
        let (running, is_running) = channel();
        let spun = spinner
            .ask(SpinOn {
                target: holder.clone(),
                locked: Arc::clone(&locked),
                running,
            })
            .unwrap();
        is_running.recv().unwrap();
        let held = outside
            .ask(Go(
                HoldWhileAsking {
                    slow: slow.clone(),
                    locked,
                },
                holder.clone(),
            ))
            .unwrap();
        let got = (spun.wait().unwrap(), held.wait().unwrap());
        system.shutdown();
        got
    });
    assert_eq!(got, (7, 7));
}

#[test]
fn a_pooled_handler_that_waits_for_itself_is_refused_not_compensated() {
    let (refused, threads) = watchdog("a pooled actor asking itself", || {
        let system = pool_of_one();
        let a = system.spawn(Adder { sum: 0 }).pooled().start();
        let refused = a.ask(AskMyself).unwrap().wait().unwrap();
        let threads = system.pool_threads();
        system.shutdown();
        (refused, threads)
    });
    assert!(refused, "the deadlock detector refuses the wait");
    assert_eq!(threads, 1, "a refused wait starts no spare");
}
