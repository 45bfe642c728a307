//! Savina (all but chameneos, in `chameneos/`) on actix: `impl Actor` + `Handler<M>` with `#[derive(Message)]`,
//! `do_send` for every send (it ignores the mailbox's capacity, as
//! Savina's mailboxes are unbounded), on actix's own single-thread system.
//! A message that Savina answers to its sender carries the sender's `Addr`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use super::{perform_computation, verify, Params, THETA};

/// Runs `timed` on a fresh actix system and returns what it measured.
pub(super) fn on_actix(timed: impl std::future::Future<Output = Duration>) -> Duration {
    System::new().block_on(timed)
}

// ---- ping_pong ----

#[derive(Message)]
#[rtype(result = "()")]
pub struct Ping(Addr<Pinger>);
#[derive(Message)]
#[rtype(result = "()")]
pub struct Pong(u64);
#[derive(Message)]
#[rtype(result = "()")]
pub struct Serve(u64, UnboundedSender<u64>);

pub struct Ponger {
    pings: u64,
}

impl Actor for Ponger {
    type Context = Context<Self>;
}

impl Handler<Ping> for Ponger {
    type Result = ();
    fn handle(&mut self, msg: Ping, _ctx: &mut Context<Self>) {
        self.pings += 1;
        msg.0.do_send(Pong(self.pings));
    }
}

pub struct Pinger {
    left: u64,
    pong: Addr<Ponger>,
    done: Option<UnboundedSender<u64>>,
}

impl Actor for Pinger {
    type Context = Context<Self>;
}

impl Handler<Serve> for Pinger {
    type Result = ();
    fn handle(&mut self, msg: Serve, ctx: &mut Context<Self>) {
        self.left = msg.0;
        self.done = Some(msg.1);
        self.pong.do_send(Ping(ctx.address()));
    }
}

impl Handler<Pong> for Pinger {
    type Result = ();
    fn handle(&mut self, msg: Pong, ctx: &mut Context<Self>) {
        self.left -= 1;
        if self.left > 0 {
            self.pong.do_send(Ping(ctx.address()));
        } else {
            self.done.take().unwrap().send(msg.0).unwrap();
        }
    }
}

pub fn ping_pong(p: &Params) -> Duration {
    on_actix(async {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let pong = Ponger { pings: 0 }.start();
        let ping = Pinger {
            left: 0,
            pong,
            done: None,
        }
        .start();
        ping.do_send(Serve(p.pings, done));
        let pongs = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::ping_pong(p, pongs);
        elapsed
    })
}

// ---- counting ----

#[derive(Message)]
#[rtype(result = "()")]
pub struct Increment;
#[derive(Message)]
#[rtype(result = "()")]
pub struct Retrieve(Addr<Producer>);
#[derive(Message)]
#[rtype(result = "()")]
pub struct Total(u64);
#[derive(Message)]
#[rtype(result = "()")]
pub struct Produce(u64, UnboundedSender<u64>);

pub struct Counter {
    count: u64,
}

impl Actor for Counter {
    type Context = Context<Self>;
}

impl Handler<Increment> for Counter {
    type Result = ();
    fn handle(&mut self, _msg: Increment, _ctx: &mut Context<Self>) {
        self.count += 1;
    }
}

impl Handler<Retrieve> for Counter {
    type Result = ();
    fn handle(&mut self, msg: Retrieve, _ctx: &mut Context<Self>) {
        msg.0.do_send(Total(self.count));
    }
}

pub struct Producer {
    counter: Addr<Counter>,
    done: Option<UnboundedSender<u64>>,
}

impl Actor for Producer {
    type Context = Context<Self>;
}

impl Handler<Produce> for Producer {
    type Result = ();
    fn handle(&mut self, msg: Produce, ctx: &mut Context<Self>) {
        for _ in 0..msg.0 {
            self.counter.do_send(Increment);
        }
        self.done = Some(msg.1);
        self.counter.do_send(Retrieve(ctx.address()));
    }
}

impl Handler<Total> for Producer {
    type Result = ();
    fn handle(&mut self, msg: Total, _ctx: &mut Context<Self>) {
        self.done.take().unwrap().send(msg.0).unwrap();
    }
}

pub fn counting(p: &Params) -> Duration {
    on_actix(async {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let counter = Counter { count: 0 }.start();
        let producer = Producer {
            counter,
            done: None,
        }
        .start();
        producer.do_send(Produce(p.counts, done));
        let total = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::counting(p, total);
        elapsed
    })
}

// ---- thread_ring ----

#[derive(Message)]
#[rtype(result = "()")]
pub struct Link(Addr<RingNode>);
#[derive(Message)]
#[rtype(result = "()")]
pub struct Token(u64);

pub struct RingNode {
    id: usize,
    next: Option<Addr<RingNode>>,
    done: UnboundedSender<usize>,
}

impl Actor for RingNode {
    type Context = Context<Self>;
}

impl Handler<Link> for RingNode {
    type Result = ();
    fn handle(&mut self, msg: Link, _ctx: &mut Context<Self>) {
        self.next = Some(msg.0);
    }
}

impl Handler<Token> for RingNode {
    type Result = ();
    fn handle(&mut self, msg: Token, _ctx: &mut Context<Self>) {
        match msg.0 {
            0 => self.done.send(self.id).unwrap(),
            left => self.next.as_ref().unwrap().do_send(Token(left - 1)),
        }
    }
}

pub fn thread_ring(p: &Params) -> Duration {
    on_actix(async {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let ring: Vec<_> = (0..p.ring_actors)
            .map(|id| {
                RingNode {
                    id,
                    next: None,
                    done: done.clone(),
                }
                .start()
            })
            .collect();
        for (i, node) in ring.iter().enumerate() {
            node.do_send(Link(ring[(i + 1) % ring.len()].clone()));
        }
        ring[0].do_send(Token(p.ring_hops));
        let last = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::thread_ring(p, last);
        elapsed
    })
}

// ---- fork_join ----

#[derive(Message)]
#[rtype(result = "()")]
pub struct Work;

pub struct Worker {
    seen: u64,
    expected: u64,
    done: UnboundedSender<u64>,
}

impl Actor for Worker {
    type Context = Context<Self>;
}

impl Handler<Work> for Worker {
    type Result = ();
    fn handle(&mut self, _msg: Work, _ctx: &mut Context<Self>) {
        black_box(perform_computation(THETA));
        self.seen += 1;
        if self.seen == self.expected {
            self.done.send(self.seen).unwrap();
        }
    }
}

pub fn fork_join(p: &Params) -> Duration {
    on_actix(async {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let workers: Vec<_> = (0..p.fj_workers)
            .map(|_| {
                Worker {
                    seen: 0,
                    expected: p.fj_msgs,
                    done: done.clone(),
                }
                .start()
            })
            .collect();
        for _ in 0..p.fj_msgs {
            for w in &workers {
                w.do_send(Work);
            }
        }
        let mut seen = Vec::new();
        for _ in 0..workers.len() {
            seen.push(finished.recv().await.unwrap());
        }
        let elapsed = t.elapsed();
        verify::fork_join(p, &seen);
        elapsed
    })
}
