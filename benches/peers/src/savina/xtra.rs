//! Savina (all but chameneos, in `chameneos/`) on xtra: `#[derive(xtra::Actor)]`, `impl Handler<M>`,
//! `send(..).detach().await` for every send, unbounded mailboxes (as
//! Savina's), on a multi-thread tokio runtime. A message that Savina
//! answers to its sender carries the sender's (weak) `Address`; the driver
//! holds every strong one, since an xtra actor stops when its last goes.

use std::hint::black_box;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use xtra::prelude::*;
use xtra::refcount::RefCounter;
use xtra::WeakAddress;

use super::{on_tokio, perform_computation, verify, Params, THETA};

pub(super) fn spawn<A: Actor<Stop = ()>>(actor: A) -> Address<A> {
    xtra::spawn_tokio(actor, Mailbox::unbounded())
}

/// Fire and forget at the default priority: wait only until queued.
pub(super) async fn tell<A, M, Rc>(to: &Address<A, Rc>, msg: M)
where
    A: Handler<M>,
    M: Send + 'static,
    Rc: RefCounter,
{
    tell_at(0, to, msg).await
}

/// xtra 0.6 keeps one priority heap per mailbox, and a heap does not keep
/// the sending order of equal priorities (Restioson/xtra#94). Where Savina
/// relies on one sender's order (increments before the retrieve, a link
/// before the token), the earlier messages go at `FIRST` and the later at
/// the default, so the heap hands them over in the order sent.
const FIRST: u32 = 1;

async fn tell_at<A, M, Rc>(priority: u32, to: &Address<A, Rc>, msg: M)
where
    A: Handler<M>,
    M: Send + 'static,
    Rc: RefCounter,
{
    drop(
        to.send(msg)
            .priority(priority)
            .detach()
            .await
            .expect("actor alive"),
    );
}

// ---- ping_pong ----

pub struct Ping(WeakAddress<Pinger>);
pub struct Pong(u64);
pub struct Serve(u64, UnboundedSender<u64>);

#[derive(xtra::Actor)]
pub struct Ponger {
    pings: u64,
}

impl Handler<Ping> for Ponger {
    type Return = ();
    async fn handle(&mut self, msg: Ping, _ctx: &mut Context<Self>) {
        self.pings += 1;
        tell(&msg.0, Pong(self.pings)).await;
    }
}

#[derive(xtra::Actor)]
pub struct Pinger {
    left: u64,
    pong: Address<Ponger>,
    done: Option<UnboundedSender<u64>>,
}

impl Handler<Serve> for Pinger {
    type Return = ();
    async fn handle(&mut self, msg: Serve, ctx: &mut Context<Self>) {
        self.left = msg.0;
        self.done = Some(msg.1);
        tell(&self.pong, Ping(ctx.mailbox().address())).await;
    }
}

impl Handler<Pong> for Pinger {
    type Return = ();
    async fn handle(&mut self, msg: Pong, ctx: &mut Context<Self>) {
        self.left -= 1;
        if self.left > 0 {
            tell(&self.pong, Ping(ctx.mailbox().address())).await;
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
        tell(&ping, Serve(p.pings, done)).await;
        let pongs = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::ping_pong(&p, pongs);
        elapsed
    })
}

// ---- counting ----

pub struct Increment;
pub struct Retrieve(WeakAddress<Producer>);
pub struct Total(u64);
pub struct Produce(u64, UnboundedSender<u64>);

#[derive(xtra::Actor)]
pub struct Counter {
    count: u64,
}

impl Handler<Increment> for Counter {
    type Return = ();
    async fn handle(&mut self, _msg: Increment, _ctx: &mut Context<Self>) {
        self.count += 1;
    }
}

impl Handler<Retrieve> for Counter {
    type Return = ();
    async fn handle(&mut self, msg: Retrieve, _ctx: &mut Context<Self>) {
        tell(&msg.0, Total(self.count)).await;
    }
}

#[derive(xtra::Actor)]
pub struct Producer {
    counter: Address<Counter>,
    done: Option<UnboundedSender<u64>>,
}

impl Handler<Produce> for Producer {
    type Return = ();
    async fn handle(&mut self, msg: Produce, ctx: &mut Context<Self>) {
        for _ in 0..msg.0 {
            tell_at(FIRST, &self.counter, Increment).await;
        }
        self.done = Some(msg.1);
        tell(&self.counter, Retrieve(ctx.mailbox().address())).await;
    }
}

impl Handler<Total> for Producer {
    type Return = ();
    async fn handle(&mut self, msg: Total, _ctx: &mut Context<Self>) {
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
        tell(&producer, Produce(p.counts, done)).await;
        let total = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::counting(&p, total);
        elapsed
    })
}

// ---- thread_ring ----

pub struct Link(Address<RingNode>);
pub struct Token(u64);

#[derive(xtra::Actor)]
pub struct RingNode {
    id: usize,
    next: Option<Address<RingNode>>,
    done: UnboundedSender<usize>,
}

impl Handler<Link> for RingNode {
    type Return = ();
    async fn handle(&mut self, msg: Link, _ctx: &mut Context<Self>) {
        self.next = Some(msg.0);
    }
}

impl Handler<Token> for RingNode {
    type Return = ();
    async fn handle(&mut self, msg: Token, _ctx: &mut Context<Self>) {
        match msg.0 {
            0 => self.done.send(self.id).unwrap(),
            left => tell(self.next.as_ref().unwrap(), Token(left - 1)).await,
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
            tell_at(FIRST, node, Link(ring[(i + 1) % ring.len()].clone())).await;
        }
        tell(&ring[0], Token(p.ring_hops)).await;
        let last = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::thread_ring(&p, last);
        elapsed
    })
}

// ---- fork_join ----

pub struct Work;

#[derive(xtra::Actor)]
pub struct Worker {
    seen: u64,
    expected: u64,
    done: UnboundedSender<u64>,
}

impl Handler<Work> for Worker {
    type Return = ();
    async fn handle(&mut self, _msg: Work, _ctx: &mut Context<Self>) {
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
                tell(w, Work).await;
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
