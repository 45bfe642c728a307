//! Savina on kaspar with every actor on the system's pool of worker
//! threads (`Spawn::pooled`): the default pool (one worker per core) and
//! the pooled default mailbox (`MailboxKind::POOLED`), no groups placed by
//! hand. A send between two pooled actors on one worker goes to that
//! worker's next-to-run slot; the others steal what waits in its queue.
//! The actors and drivers are `kaspar.rs`'s; only the spawning differs.

use std::time::Duration;

use super::chameneos::kaspar::{self as kc, Chameneo, Mall};
use super::kaspar::{self as k, Counter, Pinger, Ponger, Producer, RingNode, Worker};
use super::Params;

pub fn ping_pong(p: &Params) -> Duration {
    k::ping_pong_with(p, |s| {
        (
            s.spawn(Pinger::default()).pooled().start(),
            s.spawn(Ponger { pings: 0 }).pooled().start(),
        )
    })
}

pub fn counting(p: &Params) -> Duration {
    k::counting_with(p, |s| {
        (
            s.spawn(Producer::default()).pooled().start(),
            s.spawn(Counter { count: 0 }).pooled().start(),
        )
    })
}

pub fn thread_ring(p: &Params) -> Duration {
    k::thread_ring_with(p, |s, done| {
        (0..p.ring_actors)
            .map(|i| s.spawn(RingNode::new(i, done)).pooled().start())
            .collect()
    })
}

pub fn fork_join(p: &Params) -> Duration {
    k::fork_join_with(p, |s, done| {
        (0..p.fj_workers)
            .map(|_| s.spawn(Worker::new(p.fj_msgs, done)).pooled().start())
            .collect()
    })
}

pub fn chameneos(p: &Params) -> Duration {
    kc::chameneos_with(p, |s, done| {
        let mall = s.spawn(Mall::new(p, done)).pooled().start();
        let creatures = (0..p.chameneos)
            .map(|i| s.spawn(Chameneo::new(i)).pooled().start())
            .collect();
        (mall, creatures)
    })
}
