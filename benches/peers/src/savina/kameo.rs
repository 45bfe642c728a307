//! Savina (all but chameneos, in `chameneos/`) on kameo: `#[derive(Actor)]`, `impl Message<M>`, `tell(..).await`,
//! unbounded mailboxes (Savina's actors have unbounded mailboxes; kameo's
//! default is bounded to 64), on a multi-thread tokio runtime. A message
//! that Savina answers to its sender carries the sender's `ActorRef`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use kameo::prelude::*;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use super::{on_tokio, perform_computation, verify, Params, THETA};

pub(super) fn spawn<A: Actor<Args = A>>(actor: A) -> ActorRef<A> {
    A::spawn_with_mailbox(actor, mailbox::unbounded())
}

// ---- ping_pong ----

pub struct Ping(ActorRef<Pinger>);
pub struct Pong(u64);
pub struct Serve(u64, UnboundedSender<u64>);

#[derive(Actor)]
pub struct Ponger {
    pings: u64,
}

impl Message<Ping> for Ponger {
    type Reply = ();
    async fn handle(&mut self, msg: Ping, _ctx: &mut Context<Self, ()>) {
        self.pings += 1;
        msg.0.tell(Pong(self.pings)).await.unwrap();
    }
}

#[derive(Actor)]
pub struct Pinger {
    left: u64,
    pong: ActorRef<Ponger>,
    done: Option<UnboundedSender<u64>>,
}

impl Message<Serve> for Pinger {
    type Reply = ();
    async fn handle(&mut self, msg: Serve, ctx: &mut Context<Self, ()>) {
        self.left = msg.0;
        self.done = Some(msg.1);
        self.pong.tell(Ping(ctx.actor_ref().clone())).await.unwrap();
    }
}

impl Message<Pong> for Pinger {
    type Reply = ();
    async fn handle(&mut self, msg: Pong, ctx: &mut Context<Self, ()>) {
        self.left -= 1;
        if self.left > 0 {
            self.pong.tell(Ping(ctx.actor_ref().clone())).await.unwrap();
        } else {
            self.done.take().unwrap().send(msg.0).unwrap();
        }
    }
}

pub fn ping_pong(p: &Params) -> Duration {
    let p = *p;
    on_tokio(async move {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let pong = spawn(Ponger { pings: 0 });
        let ping = spawn(Pinger {
            left: 0,
            pong,
            done: None,
        });
        ping.tell(Serve(p.pings, done)).await.unwrap();
        let pongs = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::ping_pong(&p, pongs);
        elapsed
    })
}

// ---- counting ----

pub struct Increment;
pub struct Retrieve(ActorRef<Producer>);
pub struct Total(u64);
pub struct Produce(u64, UnboundedSender<u64>);

#[derive(Actor)]
pub struct Counter {
    count: u64,
}

impl Message<Increment> for Counter {
    type Reply = ();
    async fn handle(&mut self, _msg: Increment, _ctx: &mut Context<Self, ()>) {
        self.count += 1;
    }
}

impl Message<Retrieve> for Counter {
    type Reply = ();
    async fn handle(&mut self, msg: Retrieve, _ctx: &mut Context<Self, ()>) {
        msg.0.tell(Total(self.count)).await.unwrap();
    }
}

#[derive(Actor)]
pub struct Producer {
    counter: ActorRef<Counter>,
    done: Option<UnboundedSender<u64>>,
}

impl Message<Produce> for Producer {
    type Reply = ();
    async fn handle(&mut self, msg: Produce, ctx: &mut Context<Self, ()>) {
        for _ in 0..msg.0 {
            self.counter.tell(Increment).await.unwrap();
        }
        self.done = Some(msg.1);
        self.counter
            .tell(Retrieve(ctx.actor_ref().clone()))
            .await
            .unwrap();
    }
}

impl Message<Total> for Producer {
    type Reply = ();
    async fn handle(&mut self, msg: Total, _ctx: &mut Context<Self, ()>) {
        self.done.take().unwrap().send(msg.0).unwrap();
    }
}

pub fn counting(p: &Params) -> Duration {
    let p = *p;
    on_tokio(async move {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let counter = spawn(Counter { count: 0 });
        let producer = spawn(Producer {
            counter,
            done: None,
        });
        producer.tell(Produce(p.counts, done)).await.unwrap();
        let total = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::counting(&p, total);
        elapsed
    })
}

// ---- thread_ring ----

pub struct Link(ActorRef<RingNode>);
pub struct Token(u64);

#[derive(Actor)]
pub struct RingNode {
    id: usize,
    next: Option<ActorRef<RingNode>>,
    done: UnboundedSender<usize>,
}

impl Message<Link> for RingNode {
    type Reply = ();
    async fn handle(&mut self, msg: Link, _ctx: &mut Context<Self, ()>) {
        self.next = Some(msg.0);
    }
}

impl Message<Token> for RingNode {
    type Reply = ();
    async fn handle(&mut self, msg: Token, _ctx: &mut Context<Self, ()>) {
        match msg.0 {
            0 => self.done.send(self.id).unwrap(),
            left => self
                .next
                .as_ref()
                .unwrap()
                .tell(Token(left - 1))
                .await
                .unwrap(),
        }
    }
}

pub fn thread_ring(p: &Params) -> Duration {
    let p = *p;
    on_tokio(async move {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let ring: Vec<_> = (0..p.ring_actors)
            .map(|id| {
                spawn(RingNode {
                    id,
                    next: None,
                    done: done.clone(),
                })
            })
            .collect();
        for (i, node) in ring.iter().enumerate() {
            node.tell(Link(ring[(i + 1) % ring.len()].clone()))
                .await
                .unwrap();
        }
        ring[0].tell(Token(p.ring_hops)).await.unwrap();
        let last = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::thread_ring(&p, last);
        elapsed
    })
}

// ---- fork_join ----

pub struct Work;

#[derive(Actor)]
pub struct Worker {
    seen: u64,
    expected: u64,
    done: UnboundedSender<u64>,
}

impl Message<Work> for Worker {
    type Reply = ();
    async fn handle(&mut self, _msg: Work, _ctx: &mut Context<Self, ()>) {
        black_box(perform_computation(THETA));
        self.seen += 1;
        if self.seen == self.expected {
            self.done.send(self.seen).unwrap();
        }
    }
}

pub fn fork_join(p: &Params) -> Duration {
    let p = *p;
    on_tokio(async move {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let workers: Vec<_> = (0..p.fj_workers)
            .map(|_| {
                spawn(Worker {
                    seen: 0,
                    expected: p.fj_msgs,
                    done: done.clone(),
                })
            })
            .collect();
        for _ in 0..p.fj_msgs {
            for w in &workers {
                w.tell(Work).await.unwrap();
            }
        }
        let mut seen = Vec::new();
        for _ in 0..workers.len() {
            seen.push(finished.recv().await.unwrap());
        }
        let elapsed = t.elapsed();
        verify::fork_join(&p, &seen);
        elapsed
    })
}
