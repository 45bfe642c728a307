//! The actors of Table 5: a `Ponger` that answers each `Ping` with a
//! `Pong`, and a `Pinger` that runs sequential round trips against it
//! (timed or not) or times `fast_send`s to it from inside a handler. Both
//! run standalone or as the two members of a [`Pair`] group.

use std::hint::black_box;
use std::sync::mpsc;
use std::time::Instant;

use hdrhistogram::Histogram;
use kaspar::prelude::*;

use crate::bench::histogram;

/// The request of every round trip, carrying a number to add.
pub struct Ping(pub u64);
/// The reply: the ponger's running total.
pub struct Pong(pub u64);

/// The work behind every handler here, never inlined, so that
/// `direct_call` and the handler pay one real call each.
#[inline(never)]
pub fn work(total: &mut u64, x: u64) -> u64 {
    *total = total.wrapping_add(x);
    *total
}

/// Answers each [`Ping`] with a [`Pong`], doing [`work`] once.
#[actor]
#[derive(Default)]
pub struct Ponger {
    total: u64,
}

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, msg: Ping, _ctx: &mut Ctx<Self>) -> Pong {
        Pong(work(&mut self.total, msg.0))
    }
}

/// Tells a `Pinger` whom to ping.
pub struct Meet(pub Addr<Ponger>);

/// Starts `rounds` sequential round trips; the outcome comes back on `done`.
pub struct Run {
    /// Round trips to make, one after the other.
    pub rounds: u64,
    /// Whether to time each round trip (into [`Outcome::hist`]).
    pub timed: bool,
    /// Where the [`Outcome`] goes.
    pub done: mpsc::Sender<Outcome>,
}

/// Times `iters` fast_sends to the group mate from inside a handler; the
/// reply is ns per fast_send.
pub struct IntraLoop(pub u64);

/// What one `Run` measured.
pub struct Outcome {
    /// Per round trip, when the run was timed.
    pub hist: Option<Histogram<u64>>,
    /// Wall time of the whole run over its round trips.
    pub amortized_ns: f64,
}

/// A [`Run`] in progress.
struct Running {
    left: u64,
    rounds: u64,
    hist: Option<Histogram<u64>>,
    started: Instant,
    sample: Instant,
    done: mpsc::Sender<Outcome>,
}

/// Runs round trips to its [`Ponger`] (each reply arriving as a message
/// fires the next), or times `fast_send`s to it from inside a handler.
#[actor]
pub struct Pinger {
    pong: Option<Addr<Ponger>>,
    me: Option<Addr<Pinger>>,
    running: Option<Running>,
}

#[actor]
impl Pinger {
    #[handler(Meet)]
    fn on_meet(&mut self, msg: Meet, _ctx: &mut Ctx<Self>) {
        self.pong = Some(msg.0);
    }

    #[handler(Run)]
    fn on_run(&mut self, msg: Run, ctx: &mut Ctx<Self>) {
        // Held for the run only: an actor holding its own address forever
        // would keep its cell alive after shutdown.
        self.me = Some(ctx.myself());
        let now = Instant::now();
        self.running = Some(Running {
            left: msg.rounds,
            rounds: msg.rounds,
            hist: msg.timed.then(histogram),
            started: now,
            sample: now,
            done: msg.done,
        });
        self.fire();
    }

    #[handler(Pong)]
    fn on_pong(&mut self, msg: Pong, _ctx: &mut Ctx<Self>) {
        black_box(msg.0);
        let r = self.running.as_mut().expect("a run is in progress");
        if let Some(hist) = r.hist.as_mut() {
            hist.saturating_record(r.sample.elapsed().as_nanos() as u64);
        }
        r.left -= 1;
        if r.left > 0 {
            self.fire();
            return;
        }
        let r = self.running.take().expect("checked above");
        self.me = None;
        let amortized_ns = r.started.elapsed().as_nanos() as f64 / r.rounds as f64;
        let _ = r.done.send(Outcome {
            hist: r.hist,
            amortized_ns,
        });
    }

    #[handler(IntraLoop)]
    fn on_intra(&mut self, msg: IntraLoop, _ctx: &mut Ctx<Self>) -> f64 {
        // The mate's address in a local, as the direct-call loop holds its
        // state: the loop pays for the call, not for reaching `self.pong`.
        let mate = self.pong.clone().expect("met");
        let t = Instant::now();
        for i in 0..msg.0 {
            let Pong(x) = mate.fast_send(Ping(black_box(i))).expect("mate is free");
            black_box(x);
        }
        t.elapsed().as_nanos() as f64 / msg.0 as f64
    }
}

impl Pinger {
    pub(super) fn new() -> Self {
        Pinger {
            pong: None,
            me: None,
            running: None,
        }
    }

    fn fire(&mut self) {
        let r = self.running.as_mut().expect("a run is in progress");
        let n = r.rounds - r.left;
        if r.hist.is_some() {
            r.sample = Instant::now();
        }
        let (pong, me) = (self.pong.as_ref(), self.me.as_ref());
        pong.expect("met")
            .request(Ping(n), me.expect("met"))
            .expect("ponger accepts");
    }
}

/// The grouped rows' pair: both actors on one thread, one queue.
#[group]
pub struct Pair {
    /// The side that runs the round trips.
    pub ping: Addr<Pinger>,
    /// The side that answers.
    pub pong: Addr<Ponger>,
}
