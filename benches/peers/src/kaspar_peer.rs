//! kaspar: `ask().wait()` and `fast_send` from a plain thread, `send` for
//! tells, `request` between two actors for the ping-pong.

use std::hint::black_box;
use std::sync::mpsc;
use std::time::Instant;

use hdrhistogram::Histogram;
use kaspar::prelude::*;

use crate::{histogram, per_s, record};

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
        self.total = self.total.wrapping_add(msg.0);
        self.total
    }

    #[handler(Tell)]
    fn tell(&mut self, msg: Tell, _ctx: &mut Ctx<Self>) {
        self.total = self.total.wrapping_add(msg.0);
    }
}

pub fn ask(n: u64) -> Histogram<u64> {
    let system = System::new();
    let counter = system.spawn(Counter { total: 0 }).start();
    let mut hist = histogram();
    for i in 0..n {
        let t = Instant::now();
        black_box(counter.ask(Add(i)).unwrap().wait().unwrap());
        record(&mut hist, t);
    }
    system.shutdown();
    hist
}

pub fn fast_send(n: u64) -> Histogram<u64> {
    let system = System::new();
    let counter = system.spawn(Counter { total: 0 }).start();
    let mut hist = histogram();
    for i in 0..n {
        let t = Instant::now();
        black_box(counter.fast_send(Add(i)).unwrap());
        record(&mut hist, t);
    }
    system.shutdown();
    hist
}

pub fn tell(n: u64) -> f64 {
    let system = System::new();
    let counter = system.spawn(Counter { total: 0 }).start();
    let t = Instant::now();
    for i in 0..n {
        counter.send(Tell(i)).unwrap();
    }
    black_box(counter.ask(Add(0)).unwrap().wait().unwrap());
    let r = per_s(n, t.elapsed());
    system.shutdown();
    r
}

pub struct Ball(pub u64);
pub struct Start {
    pong: Addr<Ponger>,
    rounds: u64,
    done: mpsc::Sender<()>,
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
    done: Option<mpsc::Sender<()>>,
}

#[actor]
impl Pinger {
    #[handler(Start)]
    fn start(&mut self, msg: Start, ctx: &mut Ctx<Self>) {
        self.me = Some(ctx.myself());
        self.left = msg.rounds;
        self.done = Some(msg.done);
        msg.pong
            .request(Ball(0), self.me.as_ref().unwrap())
            .unwrap();
        self.pong = Some(msg.pong);
    }

    #[handler(Ball)]
    fn ball(&mut self, msg: Ball, _ctx: &mut Ctx<Self>) {
        self.left -= 1;
        if self.left == 0 {
            self.me = None;
            let _ = self.done.take().unwrap().send(());
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

fn pair(system: &System) -> (Addr<Pinger>, Addr<Ponger>) {
    let pong = system.spawn(Ponger).start();
    let ping = system
        .spawn(Pinger {
            pong: None,
            me: None,
            left: 0,
            done: None,
        })
        .start();
    (ping, pong)
}

pub fn pingpong(n: u64) -> f64 {
    let system = System::new();
    let (ping, pong) = pair(&system);
    let (tx, rx) = mpsc::channel();
    let t = Instant::now();
    ping.send(Start {
        pong,
        rounds: n,
        done: tx,
    })
    .unwrap();
    rx.recv().unwrap();
    let r = per_s(n, t.elapsed());
    system.shutdown();
    r
}

/// One actor's handler calls the other `n` times with `fast_send`.
pub fn fast_send_pingpong(n: u64) -> f64 {
    let system = System::new();
    let (ping, pong) = pair(&system);
    let (tx, rx) = mpsc::channel();
    // One queued round trip wires `pong` into the pinger.
    ping.send(Start {
        pong,
        rounds: 1,
        done: tx,
    })
    .unwrap();
    rx.recv().unwrap();
    let t = Instant::now();
    black_box(ping.ask(Rally { rounds: n }).unwrap().wait().unwrap());
    let r = per_s(n, t.elapsed());
    system.shutdown();
    r
}

#[group]
pub struct Court {
    pub ping: Addr<Pinger>,
    pub pong: Addr<Ponger>,
}

/// The same queued ping-pong as [`pingpong`], between two members of one
/// group: no hop crosses a thread.
pub fn grouped_pingpong(n: u64) -> f64 {
    let system = System::new();
    let court = system
        .spawn_group::<Court>((
            Pinger {
                pong: None,
                me: None,
                left: 0,
                done: None,
            },
            Ponger,
        ))
        .mailbox(MailboxKind::batched(1024))
        .start();
    let (tx, rx) = mpsc::channel();
    let t = Instant::now();
    court
        .ping
        .send(Start {
            pong: court.pong.clone(),
            rounds: n,
            done: tx,
        })
        .unwrap();
    rx.recv().unwrap();
    let r = per_s(n, t.elapsed());
    system.shutdown();
    r
}
