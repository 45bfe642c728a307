//! Two actors, two ways to talk.
//!
//! 1. Async ping-pong: `Pinger` asks `Ponger` by `request`; each `Pong`
//!    comes back to `Pinger`'s mailbox as a message, which sends the next
//!    `Ping`. Every hop crosses threads.
//! 2. `fast_send` round trips: the main thread runs `Ponger`'s handler
//!    itself and gets the `Pong` back by value.
//!
//! Both actors record their handlers' service times
//! (`Spawn::record_latency`), printed per message class at the end. That
//! costs two clock reads per handler run; `--no-latency` leaves it off, to
//! see the rates without it.
//!
//! Run: `cargo run --release --example ping_pong [round_trips] [--no-latency]`

use std::sync::mpsc;
use std::time::Instant;

use kaspar::prelude::*;

pub struct Ping(pub u64);
pub struct Pong(pub u64);
pub struct Serve {
    pub ponger: Addr<Ponger>,
    pub rounds: u64,
    pub done: mpsc::Sender<u64>,
}

#[actor]
pub struct Ponger {
    pings: u64,
}

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn ping(&mut self, msg: Ping, _ctx: &mut Ctx<Self>) -> Pong {
        self.pings += 1;
        Pong(msg.0 + 1)
    }
}

#[actor]
pub struct Pinger {
    game: Option<Serve>,
}

#[actor]
impl Pinger {
    #[handler(Serve)]
    fn serve(&mut self, msg: Serve, ctx: &mut Ctx<Self>) {
        msg.ponger
            .request(Ping(0), &ctx.myself())
            .expect("ponger alive");
        self.game = Some(msg);
    }

    #[handler(Pong)]
    fn pong(&mut self, msg: Pong, ctx: &mut Ctx<Self>) {
        let game = self.game.as_ref().expect("served first");
        if msg.0 < game.rounds {
            game.ponger
                .request(Ping(msg.0), &ctx.myself())
                .expect("ponger alive");
        } else {
            game.done.send(msg.0).expect("main waits");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let timed = !args.iter().any(|a| a == "--no-latency");
    let rounds: u64 = args.iter().find_map(|s| s.parse().ok()).unwrap_or(200_000);
    let system = System::new();
    let ponger = system
        .spawn(Ponger { pings: 0 })
        .record_latency(timed)
        .start();
    let pinger = system
        .spawn(Pinger { game: None })
        .record_latency(timed)
        .start();

    let (done, finished) = mpsc::channel();
    let t = Instant::now();
    pinger
        .send(Serve {
            ponger: ponger.clone(),
            rounds,
            done,
        })
        .expect("pinger alive");
    let last = finished.recv().expect("game finishes");
    let async_secs = t.elapsed().as_secs_f64();
    assert_eq!(last, rounds);

    let t = Instant::now();
    let mut n = 0;
    for _ in 0..rounds {
        n = ponger.fast_send(Ping(n)).expect("ponger alive").0;
    }
    let sync_secs = t.elapsed().as_secs_f64();
    assert_eq!(n, rounds);

    let async_rate = rounds as f64 / async_secs;
    let sync_rate = rounds as f64 / sync_secs;
    println!(
        "round trips: {rounds} each way, {} cores, handler timing {}",
        cores(),
        if timed { "on" } else { "off" }
    );
    println!(
        "async request/reply (two threads): {:>12.0} round trips/s  ({:.0} ns each)",
        async_rate,
        1e9 / async_rate
    );
    println!(
        "fast_send (caller's thread):       {:>12.0} round trips/s  ({:.1} ns each)",
        sync_rate,
        1e9 / sync_rate
    );
    println!("fast_send / async: {:.0}x", sync_rate / async_rate);
    system.shutdown();
    assert_eq!(ponger.stats().handled, 2 * rounds);
    // After the shutdown: every run is recorded, and nothing runs any more.
    for (name, latency) in [("Ponger", ponger.latency()), ("Pinger", pinger.latency())] {
        if let Some(latency) = latency {
            println!("\n{name}: handler service times\n{latency}");
        }
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
