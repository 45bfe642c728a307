//! Savina (all but chameneos, in `chameneos/`) on kaspar: the actors, and each benchmark's driver over a
//! `make` step that spawns them. Here every actor gets its own thread
//! (default spawn); `kaspar_group` spawns the same actors as one group.
//! Sends are `send`; a request whose answer comes back as a message is
//! `request`, as Savina's actors reply to the sender.

use std::hint::black_box;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kaspar::prelude::*;

use super::{perform_computation, verify, Params, THETA};

// ---- ping_pong ----

pub struct Ping;
pub struct Pong(pub u64);
pub struct Serve {
    pub pong: Addr<Ponger>,
    pub pings: u64,
    pub done: mpsc::Sender<u64>,
}

#[actor]
pub struct Ponger {
    pub pings: u64,
}

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) -> Pong {
        self.pings += 1;
        Pong(self.pings)
    }
}

#[actor]
#[derive(Default)]
pub struct Pinger {
    left: u64,
    game: Option<Serve>,
}

#[actor]
impl Pinger {
    #[handler(Serve)]
    fn serve(&mut self, msg: Serve, ctx: &mut Ctx<Self>) {
        self.left = msg.pings;
        msg.pong.request(Ping, &ctx.myself()).unwrap();
        self.game = Some(msg);
    }

    #[handler(Pong)]
    fn pong(&mut self, msg: Pong, ctx: &mut Ctx<Self>) {
        let game = self.game.as_ref().unwrap();
        self.left -= 1;
        if self.left > 0 {
            game.pong.request(Ping, &ctx.myself()).unwrap();
        } else {
            game.done.send(msg.0).unwrap();
        }
    }
}

pub fn ping_pong_with(
    p: &Params,
    make: impl FnOnce(&System) -> (Addr<Pinger>, Addr<Ponger>),
) -> Duration {
    let system = System::new();
    let (done, finished) = mpsc::channel();
    let t = Instant::now();
    let (ping, pong) = make(&system);
    ping.send(Serve {
        pong,
        pings: p.pings,
        done,
    })
    .unwrap();
    let pongs = finished.recv().unwrap();
    let elapsed = t.elapsed();
    verify::ping_pong(p, pongs);
    system.shutdown();
    elapsed
}

pub fn ping_pong(p: &Params) -> Duration {
    ping_pong_with(p, |s| {
        (
            s.spawn(Pinger::default()).start(),
            s.spawn(Ponger { pings: 0 }).start(),
        )
    })
}

// ---- counting ----

pub struct Increment;
pub struct Retrieve;
pub struct Total(pub u64);
pub struct Produce {
    pub counter: Addr<Counter>,
    pub n: u64,
    pub done: mpsc::Sender<u64>,
}

#[actor]
pub struct Counter {
    pub count: u64,
}

#[actor]
impl Counter {
    #[handler(Increment)]
    fn increment(&mut self, _msg: Increment, _ctx: &mut Ctx<Self>) {
        self.count += 1;
    }

    #[handler(Retrieve)]
    fn retrieve(&mut self, _msg: Retrieve, _ctx: &mut Ctx<Self>) -> Total {
        Total(self.count)
    }
}

#[actor]
#[derive(Default)]
pub struct Producer {
    done: Option<mpsc::Sender<u64>>,
}

#[actor]
impl Producer {
    #[handler(Produce)]
    fn produce(&mut self, msg: Produce, ctx: &mut Ctx<Self>) {
        for _ in 0..msg.n {
            msg.counter.send(Increment).unwrap();
        }
        msg.counter.request(Retrieve, &ctx.myself()).unwrap();
        self.done = Some(msg.done);
    }

    #[handler(Total)]
    fn total(&mut self, msg: Total, _ctx: &mut Ctx<Self>) {
        self.done.take().unwrap().send(msg.0).unwrap();
    }
}

pub fn counting_with(
    p: &Params,
    make: impl FnOnce(&System) -> (Addr<Producer>, Addr<Counter>),
) -> Duration {
    let system = System::new();
    let (done, finished) = mpsc::channel();
    let t = Instant::now();
    let (producer, counter) = make(&system);
    producer
        .send(Produce {
            counter,
            n: p.counts,
            done,
        })
        .unwrap();
    let total = finished.recv().unwrap();
    let elapsed = t.elapsed();
    verify::counting(p, total);
    system.shutdown();
    elapsed
}

pub fn counting(p: &Params) -> Duration {
    counting_with(p, |s| {
        (
            s.spawn(Producer::default()).start(),
            s.spawn(Counter { count: 0 }).start(),
        )
    })
}

// ---- thread_ring ----

pub struct Link(pub Addr<RingNode>);
pub struct Token(pub u64);

#[actor]
pub struct RingNode {
    id: usize,
    next: Option<Addr<RingNode>>,
    done: mpsc::Sender<usize>,
}

impl RingNode {
    pub fn new(id: usize, done: &mpsc::Sender<usize>) -> Self {
        RingNode {
            id,
            next: None,
            done: done.clone(),
        }
    }
}

#[actor]
impl RingNode {
    #[handler(Link)]
    fn link(&mut self, msg: Link, _ctx: &mut Ctx<Self>) {
        self.next = Some(msg.0);
    }

    #[handler(Token)]
    fn token(&mut self, msg: Token, _ctx: &mut Ctx<Self>) {
        match msg.0 {
            0 => self.done.send(self.id).unwrap(),
            left => self.next.as_ref().unwrap().send(Token(left - 1)).unwrap(),
        }
    }
}

/// `make` spawns `ring_actors` nodes from `RingNode::new(i, done)`.
pub fn thread_ring_with(
    p: &Params,
    make: impl FnOnce(&System, &mpsc::Sender<usize>) -> Vec<Addr<RingNode>>,
) -> Duration {
    let system = System::new();
    let (done, finished) = mpsc::channel();
    let t = Instant::now();
    let ring = make(&system, &done);
    assert_eq!(ring.len(), p.ring_actors);
    for (i, node) in ring.iter().enumerate() {
        // Links reach every node before the token can: the token's path
        // starts with this thread's last send.
        node.send(Link(ring[(i + 1) % ring.len()].clone())).unwrap();
    }
    ring[0].send(Token(p.ring_hops)).unwrap();
    let last = finished.recv().unwrap();
    let elapsed = t.elapsed();
    verify::thread_ring(p, last);
    system.shutdown();
    elapsed
}

pub fn thread_ring(p: &Params) -> Duration {
    thread_ring_with(p, |s, done| {
        (0..p.ring_actors)
            .map(|i| s.spawn(RingNode::new(i, done)).start())
            .collect()
    })
}

// ---- fork_join ----

pub struct Work;

#[actor]
pub struct Worker {
    seen: u64,
    expected: u64,
    done: mpsc::Sender<u64>,
}

impl Worker {
    pub fn new(expected: u64, done: &mpsc::Sender<u64>) -> Self {
        Worker {
            seen: 0,
            expected,
            done: done.clone(),
        }
    }
}

#[actor]
impl Worker {
    #[handler(Work)]
    fn work(&mut self, _msg: Work, _ctx: &mut Ctx<Self>) {
        black_box(perform_computation(THETA));
        self.seen += 1;
        if self.seen == self.expected {
            self.done.send(self.seen).unwrap();
        }
    }
}

/// `make` spawns `fj_workers` workers from `Worker::new(fj_msgs, done)`.
pub fn fork_join_with(
    p: &Params,
    make: impl FnOnce(&System, &mpsc::Sender<u64>) -> Vec<Addr<Worker>>,
) -> Duration {
    let system = System::new();
    let (done, finished) = mpsc::channel();
    let t = Instant::now();
    let workers = make(&system, &done);
    for _ in 0..p.fj_msgs {
        for w in &workers {
            w.send(Work).unwrap();
        }
    }
    let seen: Vec<u64> = (0..workers.len())
        .map(|_| finished.recv().unwrap())
        .collect();
    let elapsed = t.elapsed();
    verify::fork_join(p, &seen);
    system.shutdown();
    elapsed
}

pub fn fork_join(p: &Params) -> Duration {
    fork_join_with(p, |s, done| {
        (0..p.fj_workers)
            .map(|_| s.spawn(Worker::new(p.fj_msgs, done)).start())
            .collect()
    })
}
