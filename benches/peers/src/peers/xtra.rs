//! xtra: `#[derive(xtra::Actor)]`, `impl Handler<M>`, `send(..).await` for
//! request-reply and `send(..).detach().await` for tells, on a
//! multi-threaded tokio runtime.

use std::hint::black_box;
use std::time::Instant;

use hdrhistogram::Histogram;
use tokio::sync::oneshot;
use xtra::prelude::*;

use crate::report::{histogram, per_s, record};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

#[derive(xtra::Actor)]
pub struct Counter {
    total: u64,
}

pub struct Add(pub u64);
pub struct Tell(pub u64);

impl Handler<Add> for Counter {
    type Return = u64;

    async fn handle(&mut self, msg: Add, _ctx: &mut Context<Self>) -> u64 {
        self.total = self.total.wrapping_add(msg.0);
        self.total
    }
}

impl Handler<Tell> for Counter {
    type Return = ();

    async fn handle(&mut self, msg: Tell, _ctx: &mut Context<Self>) {
        self.total = self.total.wrapping_add(msg.0);
    }
}

pub fn ask(n: u64) -> Histogram<u64> {
    let rt = runtime();
    // From a task of the runtime, as a tokio program would ask.
    rt.block_on(async {
        tokio::spawn(async move {
            let counter = xtra::spawn_tokio(Counter { total: 0 }, Mailbox::unbounded());
            let mut hist = histogram();
            for i in 0..n {
                let t = Instant::now();
                black_box(counter.send(Add(i)).await.unwrap());
                record(&mut hist, t);
            }
            hist
        })
        .await
        .unwrap()
    })
}

pub fn tell(n: u64) -> f64 {
    let rt = runtime();
    // From a task of the runtime, as a tokio program would ask.
    rt.block_on(async {
        tokio::spawn(async move {
            let counter = xtra::spawn_tokio(Counter { total: 0 }, Mailbox::unbounded());
            let t = Instant::now();
            for i in 0..n {
                drop(counter.send(Tell(i)).detach().await.unwrap());
            }
            black_box(counter.send(Add(0)).await.unwrap());
            per_s(n, t.elapsed())
        })
        .await
        .unwrap()
    })
}

pub struct Ball(pub u64);
pub struct Start {
    rounds: u64,
    done: oneshot::Sender<()>,
}

#[derive(xtra::Actor)]
pub struct Ponger {
    ping: Address<Pinger>,
}

impl Handler<Ball> for Ponger {
    type Return = ();

    async fn handle(&mut self, msg: Ball, _ctx: &mut Context<Self>) {
        drop(self.ping.send(Ball(msg.0 + 1)).detach().await.unwrap());
    }
}

#[derive(xtra::Actor)]
pub struct Pinger {
    pong: Address<Ponger>,
    left: u64,
    done: Option<oneshot::Sender<()>>,
}

impl Handler<Start> for Pinger {
    type Return = ();

    async fn handle(&mut self, msg: Start, _ctx: &mut Context<Self>) {
        self.left = msg.rounds;
        self.done = Some(msg.done);
        drop(self.pong.send(Ball(0)).detach().await.unwrap());
    }
}

impl Handler<Ball> for Pinger {
    type Return = ();

    async fn handle(&mut self, msg: Ball, _ctx: &mut Context<Self>) {
        self.left -= 1;
        if self.left == 0 {
            let _ = self.done.take().unwrap().send(());
        } else {
            drop(self.pong.send(msg).detach().await.unwrap());
        }
    }
}

pub fn pingpong(n: u64) -> f64 {
    runtime().block_on(async {
        let (ping_addr, ping_mailbox) = Mailbox::unbounded();
        let pong = xtra::spawn_tokio(
            Ponger {
                ping: ping_addr.clone(),
            },
            Mailbox::unbounded(),
        );
        let ping = xtra::spawn_tokio(
            Pinger {
                pong,
                left: 0,
                done: None,
            },
            (ping_addr, ping_mailbox),
        );
        let (tx, rx) = oneshot::channel();
        let t = Instant::now();
        ping.send(Start {
            rounds: n,
            done: tx,
        })
        .await
        .unwrap();
        rx.await.unwrap();
        per_s(n, t.elapsed())
    })
}
