//! The floor: two OS threads and a channel, no actor framework. The same
//! three workloads over `crossbeam-channel` and over `std::sync::mpsc`, both
//! unbounded, as kaspar's default mailbox is. A blocked `recv` spins
//! briefly, then parks the thread, as an idle kaspar actor does by default.

use std::hint::black_box;
use std::thread;
use std::time::Instant;

use hdrhistogram::Histogram;

use super::kaspar::sum_below;
use crate::report::{histogram, per_s, record};

/// The little of a channel the workloads use.
pub trait Channel {
    type Tx<T: Send + 'static>: Send + 'static;
    type Rx<T: Send + 'static>: Send + 'static;
    fn unbounded<T: Send + 'static>() -> (Self::Tx<T>, Self::Rx<T>);
    fn send<T: Send + 'static>(tx: &Self::Tx<T>, v: T);
    /// `None` once every sender is gone.
    fn recv<T: Send + 'static>(rx: &Self::Rx<T>) -> Option<T>;
}

pub struct Crossbeam;

impl Channel for Crossbeam {
    type Tx<T: Send + 'static> = crossbeam_channel::Sender<T>;
    type Rx<T: Send + 'static> = crossbeam_channel::Receiver<T>;
    fn unbounded<T: Send + 'static>() -> (Self::Tx<T>, Self::Rx<T>) {
        crossbeam_channel::unbounded()
    }
    fn send<T: Send + 'static>(tx: &Self::Tx<T>, v: T) {
        tx.send(v).expect("receiver alive");
    }
    fn recv<T: Send + 'static>(rx: &Self::Rx<T>) -> Option<T> {
        rx.recv().ok()
    }
}

pub struct StdMpsc;

impl Channel for StdMpsc {
    type Tx<T: Send + 'static> = std::sync::mpsc::Sender<T>;
    type Rx<T: Send + 'static> = std::sync::mpsc::Receiver<T>;
    fn unbounded<T: Send + 'static>() -> (Self::Tx<T>, Self::Rx<T>) {
        std::sync::mpsc::channel()
    }
    fn send<T: Send + 'static>(tx: &Self::Tx<T>, v: T) {
        tx.send(v).expect("receiver alive");
    }
    fn recv<T: Send + 'static>(rx: &Self::Rx<T>) -> Option<T> {
        rx.recv().ok()
    }
}

enum Req {
    /// Add, and reply with the total.
    Add(u64),
    /// Add; no reply.
    Tell(u64),
}

/// The counter "actor": a thread serving requests until every sender is
/// gone, replying on one reply channel (no allocation per request).
fn counter<C: Channel>() -> (C::Tx<Req>, C::Rx<u64>, thread::JoinHandle<()>) {
    let (req_tx, req_rx) = C::unbounded::<Req>();
    let (reply_tx, reply_rx) = C::unbounded::<u64>();
    let server = thread::spawn(move || {
        let mut total = 0u64;
        while let Some(req) = C::recv(&req_rx) {
            match req {
                Req::Add(x) => {
                    total += x;
                    C::send(&reply_tx, total);
                }
                Req::Tell(x) => total += x,
            }
        }
    });
    (req_tx, reply_rx, server)
}

pub fn ask<C: Channel>(n: u64) -> Histogram<u64> {
    let (tx, replies, server) = counter::<C>();
    let mut hist = histogram();
    let mut last = 0;
    for i in 0..n {
        let t = Instant::now();
        C::send(&tx, Req::Add(i));
        last = black_box(C::recv(&replies).expect("server alive"));
        record(&mut hist, t);
    }
    assert_eq!(last, sum_below(n), "channel ask: wrong total");
    drop(tx);
    server.join().unwrap();
    hist
}

pub fn tell<C: Channel>(n: u64) -> f64 {
    let (tx, replies, server) = counter::<C>();
    let t = Instant::now();
    for i in 0..n {
        C::send(&tx, Req::Tell(i));
    }
    C::send(&tx, Req::Add(0));
    let total = C::recv(&replies).expect("server alive");
    let r = per_s(n, t.elapsed());
    assert_eq!(total, sum_below(n), "channel tell: wrong total");
    drop(tx);
    server.join().unwrap();
    r
}

/// Two threads, each with its own channel, bounce a ball `n` times; timed
/// by the pinging thread from its first send to its last receive.
pub fn ping_pong<C: Channel>(n: u64) -> f64 {
    let (to_pong, pong_rx) = C::unbounded::<u64>();
    let (to_ping, ping_rx) = C::unbounded::<u64>();
    let pong = thread::spawn(move || {
        while let Some(ball) = C::recv(&pong_rx) {
            C::send(&to_ping, ball + 1);
        }
    });
    let ping = thread::spawn(move || {
        let t = Instant::now();
        let mut ball = 0;
        for _ in 0..n {
            C::send(&to_pong, ball);
            ball = C::recv(&ping_rx).expect("pong alive");
        }
        (ball, t.elapsed())
    });
    let (ball, elapsed) = ping.join().unwrap();
    pong.join().unwrap();
    assert_eq!(ball, n, "channel ping-pong: wrong number of round trips");
    per_s(n, elapsed)
}
