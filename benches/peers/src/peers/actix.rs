//! actix: `impl Actor` + `Handler<M>` with `#[derive(Message)]`,
//! `send(..).await` for request-reply and `do_send` for tells, on actix's
//! own (single-threaded) system.

use std::hint::black_box;
use std::time::Instant;

use actix::prelude::*;
use hdrhistogram::Histogram;
use tokio::sync::oneshot;

use crate::report::{histogram, per_s, record};

pub struct Counter {
    total: u64,
}

impl Actor for Counter {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "u64")]
pub struct Add(pub u64);

#[derive(Message)]
#[rtype(result = "()")]
pub struct Tell(pub u64);

impl Handler<Add> for Counter {
    type Result = u64;

    fn handle(&mut self, msg: Add, _ctx: &mut Context<Self>) -> u64 {
        self.total = self.total.wrapping_add(msg.0);
        self.total
    }
}

impl Handler<Tell> for Counter {
    type Result = ();

    fn handle(&mut self, msg: Tell, _ctx: &mut Context<Self>) {
        self.total = self.total.wrapping_add(msg.0);
    }
}

pub fn ask(n: u64) -> Histogram<u64> {
    System::new().block_on(async {
        let counter = Counter { total: 0 }.start();
        let mut hist = histogram();
        for i in 0..n {
            let t = Instant::now();
            black_box(counter.send(Add(i)).await.unwrap());
            record(&mut hist, t);
        }
        hist
    })
}

pub fn tell(n: u64) -> f64 {
    System::new().block_on(async {
        let counter = Counter { total: 0 }.start();
        let t = Instant::now();
        for i in 0..n {
            counter.do_send(Tell(i));
        }
        black_box(counter.send(Add(0)).await.unwrap());
        per_s(n, t.elapsed())
    })
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Ball(pub u64);

#[derive(Message)]
#[rtype(result = "()")]
pub struct Meet(pub Addr<Pinger>);

#[derive(Message)]
#[rtype(result = "()")]
pub struct Start {
    rounds: u64,
    done: oneshot::Sender<()>,
}

pub struct Ponger {
    ping: Option<Addr<Pinger>>,
}

impl Actor for Ponger {
    type Context = Context<Self>;
}

impl Handler<Meet> for Ponger {
    type Result = ();

    fn handle(&mut self, msg: Meet, _ctx: &mut Context<Self>) {
        self.ping = Some(msg.0);
    }
}

impl Handler<Ball> for Ponger {
    type Result = ();

    fn handle(&mut self, msg: Ball, _ctx: &mut Context<Self>) {
        self.ping.as_ref().unwrap().do_send(Ball(msg.0 + 1));
    }
}

pub struct Pinger {
    pong: Addr<Ponger>,
    left: u64,
    done: Option<oneshot::Sender<()>>,
}

impl Actor for Pinger {
    type Context = Context<Self>;
}

impl Handler<Start> for Pinger {
    type Result = ();

    fn handle(&mut self, msg: Start, _ctx: &mut Context<Self>) {
        self.left = msg.rounds;
        self.done = Some(msg.done);
        self.pong.do_send(Ball(0));
    }
}

impl Handler<Ball> for Pinger {
    type Result = ();

    fn handle(&mut self, msg: Ball, _ctx: &mut Context<Self>) {
        self.left -= 1;
        if self.left == 0 {
            let _ = self.done.take().unwrap().send(());
        } else {
            self.pong.do_send(msg);
        }
    }
}

pub fn pingpong(n: u64) -> f64 {
    System::new().block_on(async {
        let pong = Ponger { ping: None }.start();
        let ping = Pinger {
            pong: pong.clone(),
            left: 0,
            done: None,
        }
        .start();
        pong.send(Meet(ping.clone())).await.unwrap();
        let (tx, rx) = oneshot::channel();
        let t = Instant::now();
        ping.do_send(Start {
            rounds: n,
            done: tx,
        });
        rx.await.unwrap();
        per_s(n, t.elapsed())
    })
}
