//! kaspar five ways: an actor per thread with the default spawn
//! (`thread`; and `thread_compact`, tell only: the same with
//! `MailboxKind::Compact`, the queue the book recommends for a threaded
//! actor that receives a stream), the same with `IdleWait::Spin`
//! (`spin`), two members of one
//! group (`group`, ping-pong only: from a plain thread, an ask or tell to a
//! group member takes the same queue-and-wake path as `thread`), actors on
//! the system's pool of worker threads (`pool`: `Spawn::pooled`, the
//! default pool of one worker per core, `MailboxKind::POOLED`; and
//! `pool_segmented`, tell only: the same with `MailboxKind::DEFAULT`, the
//! lock-free `Segmented` queue, which the book recommended for a pooled
//! actor that receives a stream until the default's spill became a
//! stack), and
//! `fast_send` (the handler runs on the caller's thread). Asks come from a
//! plain thread with `ask().wait()`, tells are `send` (`fast_send_void`
//! for `fast_send`), the ping-pong is `request` between two actors.
//!
//! [`ask_await`] asks a pooled actor from a task of a tokio runtime with
//! `ask(..).await` (`Ask` is a `Future`), as a tokio program would: the
//! rows beside the tokio-based frameworks' asks. The pool is kaspar's own
//! worker threads, or (`hosted`) that same runtime (`PoolConfig::tokio`),
//! so the actor runs as the asking task's neighbour.

use std::hint::black_box;
use std::sync::mpsc;
use std::time::Instant;

use hdrhistogram::Histogram;
use kaspar::prelude::*;
use kaspar::{PoolConfig, SystemConfig};

use crate::report::{histogram, per_s, record};

/// How the actors under test run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Variant {
    Thread,
    Spin,
    Group,
    Pool,
    /// Pooled, with the `Segmented` mailbox (`MailboxKind::DEFAULT`).
    PoolSegmented,
    /// A thread of its own, with the `Compact` mailbox.
    ThreadCompact,
    FastSend,
}

fn spawn<A: kaspar::Actor + Send>(system: &System, actor: A, v: Variant) -> Addr<A> {
    match v {
        Variant::Spin => system.spawn(actor).idle(IdleWait::Spin).start(),
        Variant::Pool => system.spawn(actor).pooled().start(),
        Variant::PoolSegmented => system
            .spawn(actor)
            .pooled()
            .mailbox(kaspar::MailboxKind::DEFAULT)
            .start(),
        Variant::ThreadCompact => system
            .spawn(actor)
            .mailbox(kaspar::MailboxKind::Compact)
            .start(),
        _ => system.spawn(actor).start(),
    }
}

pub struct Add(pub u64);
pub struct Tell(pub u64);

#[actor]
pub struct Counter {
    total: u64,
}

#[actor]
impl Counter {
    #[handler(Add)]
    fn add(&mut self, msg: Add, _ctx: &mut Ctx<Self>) -> u64 {
        self.total += msg.0;
        self.total
    }

    #[handler(Tell)]
    fn tell(&mut self, msg: Tell, _ctx: &mut Ctx<Self>) {
        self.total += msg.0;
    }
}

/// `0 + 1 + .. + (n - 1)`: what the counter must hold after `n` messages.
pub fn sum_below(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

pub fn ask(v: Variant, n: u64) -> Histogram<u64> {
    let system = System::new();
    let counter = spawn(&system, Counter { total: 0 }, v);
    let mut hist = histogram();
    let mut last = 0;
    // One loop per path, the variant decided outside it, as the channel
    // baselines' loops are: a `match` in the loop cost kaspar's tell a
    // quarter of its rate.
    if v == Variant::FastSend {
        for i in 0..n {
            let t = Instant::now();
            last = black_box(counter.fast_send(Add(i)).unwrap());
            record(&mut hist, t);
        }
    } else {
        for i in 0..n {
            let t = Instant::now();
            last = black_box(counter.ask(Add(i)).unwrap().wait().unwrap());
            record(&mut hist, t);
        }
    }
    assert_eq!(last, sum_below(n), "kaspar ask: wrong total");
    system.shutdown();
    hist
}

/// `n` sequential asks to a pooled counter, each `ask(..).await`ed from a
/// task of a tokio runtime (current-thread or multi-thread, one worker per
/// core). The reply wakes the task through its waker. The pool's workers
/// are kaspar's own threads, or, `hosted`, tasks of the same runtime.
pub fn ask_await(multi_thread: bool, hosted: bool, n: u64) -> Histogram<u64> {
    let mut builder = if multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let rt = builder.enable_all().build().expect("tokio runtime");
    let system = if hosted {
        System::with_config(SystemConfig {
            pool: PoolConfig::tokio(rt.handle().clone()),
            ..SystemConfig::default()
        })
    } else {
        System::new()
    };
    let counter = spawn(&system, Counter { total: 0 }, Variant::Pool);
    let (hist, last) = rt.block_on(async move {
        tokio::spawn(async move {
            let mut hist = histogram();
            let mut last = 0;
            for i in 0..n {
                let t = Instant::now();
                last = black_box(counter.ask(Add(i)).unwrap().await.unwrap());
                record(&mut hist, t);
            }
            (hist, last)
        })
        .await
        .unwrap()
    });
    assert_eq!(last, sum_below(n), "kaspar ask().await: wrong total");
    system.shutdown();
    hist
}

pub fn tell(v: Variant, n: u64) -> f64 {
    let system = System::new();
    let counter = spawn(&system, Counter { total: 0 }, v);
    let t = Instant::now();
    if v == Variant::FastSend {
        for i in 0..n {
            let _ = counter.fast_send_void(Tell(i)).unwrap();
        }
    } else {
        for i in 0..n {
            counter.send(Tell(i)).unwrap();
        }
    }
    let total = counter.ask(Add(0)).unwrap().wait().unwrap();
    let r = per_s(n, t.elapsed());
    assert_eq!(total, sum_below(n), "kaspar tell: wrong total");
    system.shutdown();
    r
}

pub struct Ball(pub u64);
pub struct Start {
    pong: Addr<Ponger>,
    rounds: u64,
    done: mpsc::Sender<u64>,
}
pub struct Rally {
    rounds: u64,
}

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ball)]
    fn ball(&mut self, msg: Ball, _ctx: &mut Ctx<Self>) -> Ball {
        Ball(msg.0 + 1)
    }
}

#[actor]
pub struct Pinger {
    pong: Option<Addr<Ponger>>,
    me: Option<Addr<Pinger>>,
    left: u64,
    done: Option<mpsc::Sender<u64>>,
}

impl Pinger {
    fn new() -> Self {
        Pinger {
            pong: None,
            me: None,
            left: 0,
            done: None,
        }
    }
}

#[actor]
impl Pinger {
    #[handler(Start)]
    fn start(&mut self, msg: Start, ctx: &mut Ctx<Self>) {
        let me = ctx.myself();
        msg.pong.request(Ball(0), &me).unwrap();
        self.me = Some(me);
        self.left = msg.rounds;
        self.done = Some(msg.done);
        self.pong = Some(msg.pong);
    }

    #[handler(Ball)]
    fn ball(&mut self, msg: Ball, _ctx: &mut Ctx<Self>) {
        self.left -= 1;
        if self.left == 0 {
            // Drop the address of itself, or the actor would keep itself alive.
            self.me = None;
            let _ = self.done.take().unwrap().send(msg.0);
            return;
        }
        let (pong, me) = (self.pong.as_ref().unwrap(), self.me.as_ref().unwrap());
        pong.request(msg, me).unwrap();
    }

    #[handler(Rally)]
    fn rally(&mut self, msg: Rally, _ctx: &mut Ctx<Self>) -> u64 {
        let pong = self.pong.as_ref().unwrap();
        let mut ball = Ball(0);
        for _ in 0..msg.rounds {
            ball = pong.fast_send(ball).unwrap();
        }
        ball.0
    }
}

#[group]
pub struct Court {
    pub ping: Addr<Pinger>,
    pub pong: Addr<Ponger>,
}

/// `n` queued round trips (`request` there, a reply back as a message);
/// for `fast_send`, one actor's handler calls the other `n` times inline.
pub fn ping_pong(v: Variant, n: u64) -> f64 {
    let system = System::new();
    let (ping, pong) = match v {
        Variant::Group => {
            let court = system
                .spawn_group::<Court>((Pinger::new(), Ponger))
                .mailbox(MailboxKind::batched(1024))
                .start();
            (court.ping, court.pong)
        }
        _ => (spawn(&system, Pinger::new(), v), spawn(&system, Ponger, v)),
    };
    let (done, finished) = mpsc::channel();
    let rounds = if v == Variant::FastSend { 1 } else { n };
    let t = Instant::now();
    ping.send(Start { pong, rounds, done }).unwrap();
    let mut ball = finished.recv().unwrap();
    let mut elapsed = t.elapsed();
    if v == Variant::FastSend {
        // The queued round trip above only wired `pong` into the pinger.
        let t = Instant::now();
        ball = ping.ask(Rally { rounds: n }).unwrap().wait().unwrap();
        elapsed = t.elapsed();
    }
    assert_eq!(ball, n, "kaspar ping-pong: wrong number of round trips");
    system.shutdown();
    per_s(n, elapsed)
}
