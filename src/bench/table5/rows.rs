//! How each row of Table 5 is measured: the queued round trips (standalone
//! on two threads, or grouped), the `fast_send` round trip from a plain
//! thread, the intra-group `fast_send` against a direct call, and the
//! callgrind mode that runs one case and nothing else.

use std::hint::black_box;
use std::sync::mpsc;
use std::time::Instant;

use kaspar::prelude::*;

use super::actors::{work, IntraLoop, Meet, Outcome, Pair, Ping, Pinger, Pong, Ponger, Run};
use super::RoundTrip;
use crate::bench::{histogram, median};

/// A queued round trip between two actors, either standalone or grouped.
pub(super) enum Setup {
    Standalone {
        idle: IdleWait,
        mailbox: MailboxKind,
    },
    Grouped,
}

fn queued_pass(pinger: &Addr<Pinger>, rounds: u64, timed: bool) -> Outcome {
    let (tx, rx) = mpsc::channel();
    pinger
        .send(Run {
            rounds,
            timed,
            done: tx,
        })
        .expect("pinger accepts");
    rx.recv().expect("pinger reports")
}

/// A [`Pair`] group on `system`, its pinger introduced to its ponger.
fn start_pair(system: &System) -> Pair {
    let pair = system
        .spawn_group::<Pair>((Pinger::new(), Ponger::default()))
        .start();
    pair.ping
        .send(Meet(pair.pong.clone()))
        .expect("pinger accepts");
    pair
}

pub(super) fn queued_row(case: &'static str, setup: Setup, rounds: u64, runs: usize) -> RoundTrip {
    let system = System::new();
    let pinger = match setup {
        Setup::Standalone { idle, mailbox } => {
            let pong = system
                .spawn(Ponger::default())
                .idle(idle)
                .mailbox(mailbox)
                .start();
            let ping = system
                .spawn(Pinger::new())
                .idle(idle)
                .mailbox(mailbox)
                .start();
            ping.send(Meet(pong)).expect("pinger accepts");
            ping
        }
        Setup::Grouped => start_pair(&system).ping,
    };
    queued_pass(&pinger, (rounds / 10).max(1), false); // warm-up
    let mut all = histogram();
    let (mut p50s, mut p99s, mut amortized) = (vec![], vec![], vec![]);
    for _ in 0..runs {
        let timed = queued_pass(&pinger, rounds, true);
        let hist = timed.hist.expect("a timed pass records");
        p50s.push(hist.value_at_quantile(0.5) as f64);
        p99s.push(hist.value_at_quantile(0.99) as f64);
        all.add(&hist).expect("same bounds");
        amortized.push(queued_pass(&pinger, rounds, false).amortized_ns);
    }
    system.shutdown();
    RoundTrip {
        case,
        p50_ns: median(&mut p50s),
        p99_ns: median(&mut p99s),
        amortized_ns: median(&mut amortized),
        hist: all,
    }
}

pub(super) fn fast_send_row(rounds: u64, runs: usize) -> RoundTrip {
    let system = System::new();
    let pong = system.spawn(Ponger::default()).start();
    let mut all = histogram();
    let (mut p50s, mut p99s, mut amortized) = (vec![], vec![], vec![]);
    for i in 0..rounds / 10 {
        black_box(pong.fast_send(Ping(i)).expect("free").0);
    }
    for _ in 0..runs {
        let mut hist = histogram();
        for i in 0..rounds {
            let t = Instant::now();
            let Pong(x) = pong.fast_send(Ping(black_box(i))).expect("free");
            hist.saturating_record(t.elapsed().as_nanos() as u64);
            black_box(x);
        }
        p50s.push(hist.value_at_quantile(0.5) as f64);
        p99s.push(hist.value_at_quantile(0.99) as f64);
        all.add(&hist).expect("same bounds");
        let t = Instant::now();
        for i in 0..rounds {
            black_box(pong.fast_send(Ping(black_box(i))).expect("free").0);
        }
        amortized.push(t.elapsed().as_nanos() as f64 / rounds as f64);
    }
    system.shutdown();
    RoundTrip {
        case: "fast_send",
        p50_ns: median(&mut p50s),
        p99_ns: median(&mut p99s),
        amortized_ns: median(&mut amortized),
        hist: all,
    }
}

/// `(direct_call, fast_send_intra_group)` ns per op, medians of
/// interleaved samples.
pub(super) fn intra_group(iters: u64, runs: usize) -> (f64, f64) {
    let system = System::new();
    let pair = start_pair(&system);
    let mut total = 0u64;
    let (mut direct, mut intra) = (vec![], vec![]);
    for _ in 0..runs {
        let t = Instant::now();
        for i in 0..iters {
            black_box(work(&mut total, black_box(i)));
        }
        direct.push(t.elapsed().as_nanos() as f64 / iters as f64);
        let ns = pair
            .ping
            .ask(IntraLoop(iters))
            .expect("pinger accepts")
            .wait()
            .expect("pinger replies");
        intra.push(ns);
    }
    system.shutdown();
    (median(&mut direct), median(&mut intra))
}

/// For instruction counting under `valgrind --tool=callgrind`: runs
/// `fast_send_intra_group` (N fast_sends from a member to its mate on the
/// group thread) or `direct_call`, exactly `n` times.
pub fn callgrind(case: &str, n: u64) {
    let system = System::new();
    let pair = start_pair(&system);
    match case {
        "direct_call" => {
            let mut total = 0u64;
            for i in 0..n {
                black_box(work(&mut total, black_box(i)));
            }
        }
        "fast_send_intra_group" => {
            let ask = pair.ping.ask(IntraLoop(n)).expect("pinger accepts");
            black_box(ask.wait().expect("pinger replies"));
        }
        other => panic!("unknown table5 callgrind case {other}"),
    }
    system.shutdown();
}
