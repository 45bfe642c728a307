//! The batching measurements' burst ping-pong through actors: `Ping`
//! fires a burst of balls at `Pong`, which sends each back; when the whole
//! burst is back, `Ping` fires the next.

use std::sync::mpsc;
use std::time::Instant;

use kaspar::prelude::*;

use super::PINGPONG_BURST;

struct Ball(u64);

struct Start {
    pong: Addr<Pong>,
    rounds: u64,
    done: mpsc::Sender<()>,
}

struct Meet(Addr<Ping>);

/// Fires a burst, waits for all of it to come back, fires the next;
/// reports on `done` after the last.
#[actor]
pub struct Ping {
    pong: Option<Addr<Pong>>,
    done: Option<mpsc::Sender<()>>,
    rounds: u64,
    fired: u64,
    back_in_burst: u64,
}

#[actor]
impl Ping {
    #[handler(Start)]
    fn on_start(&mut self, msg: Start, _ctx: &mut Ctx<Self>) {
        self.pong = Some(msg.pong);
        self.done = Some(msg.done);
        self.rounds = msg.rounds;
        self.fire();
    }

    #[handler(Ball)]
    fn on_ball(&mut self, msg: Ball, _ctx: &mut Ctx<Self>) {
        std::hint::black_box(msg.0);
        self.back_in_burst += 1;
        if self.back_in_burst == PINGPONG_BURST {
            self.back_in_burst = 0;
            if self.fired >= self.rounds {
                if let Some(done) = &self.done {
                    let _ = done.send(());
                }
            } else {
                self.fire();
            }
        }
    }
}

impl Ping {
    fn fire(&mut self) {
        let pong = self.pong.as_ref().expect("started");
        for n in self.fired..self.fired + PINGPONG_BURST {
            pong.send(Ball(n)).expect("pong accepts");
        }
        self.fired += PINGPONG_BURST;
    }
}

/// Sends every ball straight back.
#[actor]
pub struct Pong {
    ping: Option<Addr<Ping>>,
}

#[actor]
impl Pong {
    #[handler(Meet)]
    fn on_meet(&mut self, msg: Meet, _ctx: &mut Ctx<Self>) {
        self.ping = Some(msg.0);
    }

    #[handler(Ball)]
    fn on_ball(&mut self, msg: Ball, _ctx: &mut Ctx<Self>) {
        let ping = self.ping.as_ref().expect("met");
        ping.send(msg).expect("ping accepts");
    }
}

/// Runs the actor ping-pong; returns millions of round trips per second.
pub(super) fn pingpong(kind: MailboxKind, rounds: u64) -> f64 {
    let rounds = rounds.max(PINGPONG_BURST) / PINGPONG_BURST * PINGPONG_BURST;
    let system = System::new();
    let ping = system
        .spawn(Ping {
            pong: None,
            done: None,
            rounds,
            fired: 0,
            back_in_burst: 0,
        })
        .mailbox(kind)
        .max_batch(PINGPONG_BURST as usize)
        .start();
    let pong = system
        .spawn(Pong { ping: None })
        .mailbox(kind)
        .max_batch(PINGPONG_BURST as usize)
        .start();
    pong.send(Meet(ping.clone())).expect("pong accepts");
    let (done_tx, done_rx) = mpsc::channel();
    let t0 = Instant::now();
    ping.send(Start {
        pong: pong.clone(),
        rounds,
        done: done_tx,
    })
    .expect("ping accepts");
    done_rx.recv().expect("ping reports");
    let secs = t0.elapsed().as_secs_f64();
    system.shutdown();
    rounds as f64 / secs / 1e6
}
