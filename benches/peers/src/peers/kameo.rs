//! kameo: `#[derive(Actor)]`, `impl Message<M>`, `ask(..).await`,
//! `tell(..).await`, on a multi-threaded tokio runtime.

use std::hint::black_box;
use std::time::Instant;

use hdrhistogram::Histogram;
use kameo::prelude::*;
use tokio::sync::oneshot;

use crate::report::{histogram, per_s, record};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

#[derive(Actor)]
pub struct Counter {
    total: u64,
}

pub struct Add(pub u64);
pub struct Tell(pub u64);

impl Message<Add> for Counter {
    type Reply = u64;

    async fn handle(&mut self, msg: Add, _ctx: &mut Context<Self, Self::Reply>) -> u64 {
        self.total = self.total.wrapping_add(msg.0);
        self.total
    }
}

impl Message<Tell> for Counter {
    type Reply = ();

    async fn handle(&mut self, msg: Tell, _ctx: &mut Context<Self, Self::Reply>) {
        self.total = self.total.wrapping_add(msg.0);
    }
}

pub fn ask(n: u64) -> Histogram<u64> {
    let rt = runtime();
    // From a task of the runtime, as a tokio program would ask.
    rt.block_on(async {
        tokio::spawn(async move {
            let counter = Counter::spawn(Counter { total: 0 });
            let mut hist = histogram();
            for i in 0..n {
                let t = Instant::now();
                black_box(counter.ask(Add(i)).await.unwrap());
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
            let counter = Counter::spawn(Counter { total: 0 });
            let t = Instant::now();
            for i in 0..n {
                counter.tell(Tell(i)).await.unwrap();
            }
            black_box(counter.ask(Add(0)).await.unwrap());
            per_s(n, t.elapsed())
        })
        .await
        .unwrap()
    })
}

pub struct Ball(pub u64);
pub struct Meet(pub ActorRef<Pinger>);
pub struct Start {
    rounds: u64,
    done: oneshot::Sender<()>,
}

#[derive(Actor)]
pub struct Ponger {
    ping: Option<ActorRef<Pinger>>,
}

impl Message<Meet> for Ponger {
    type Reply = ();

    async fn handle(&mut self, msg: Meet, _ctx: &mut Context<Self, Self::Reply>) {
        self.ping = Some(msg.0);
    }
}

impl Message<Ball> for Ponger {
    type Reply = ();

    async fn handle(&mut self, msg: Ball, _ctx: &mut Context<Self, Self::Reply>) {
        let ping = self.ping.as_ref().unwrap();
        ping.tell(Ball(msg.0 + 1)).await.unwrap();
    }
}

#[derive(Actor)]
pub struct Pinger {
    pong: ActorRef<Ponger>,
    left: u64,
    done: Option<oneshot::Sender<()>>,
}

impl Message<Start> for Pinger {
    type Reply = ();

    async fn handle(&mut self, msg: Start, _ctx: &mut Context<Self, Self::Reply>) {
        self.left = msg.rounds;
        self.done = Some(msg.done);
        self.pong.tell(Ball(0)).await.unwrap();
    }
}

impl Message<Ball> for Pinger {
    type Reply = ();

    async fn handle(&mut self, msg: Ball, _ctx: &mut Context<Self, Self::Reply>) {
        self.left -= 1;
        if self.left == 0 {
            let _ = self.done.take().unwrap().send(());
        } else {
            self.pong.tell(msg).await.unwrap();
        }
    }
}

pub fn pingpong(n: u64) -> f64 {
    runtime().block_on(async {
        let pong = Ponger::spawn(Ponger { ping: None });
        let ping = Pinger::spawn(Pinger {
            pong: pong.clone(),
            left: 0,
            done: None,
        });
        pong.ask(Meet(ping.clone())).await.unwrap();
        let (tx, rx) = oneshot::channel();
        let t = Instant::now();
        ping.tell(Start {
            rounds: n,
            done: tx,
        })
        .await
        .unwrap();
        rx.await.unwrap();
        per_s(n, t.elapsed())
    })
}
