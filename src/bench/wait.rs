//! How a waiting thread's strategy shows in latency and in idle CPU.
//!
//! * **Ask round trip from a plain thread**: `addr.ask(Echo(i))?.wait()`
//!   against one standalone actor, once per `IdleWait` the actor's run loop
//!   uses (`Park`, the default, `Spin`); the asking thread waits with
//!   `Ask::wait`'s own strategy in every case. The reference is a
//!   request-reply over two `std::sync::mpsc` channels between the same two
//!   kinds of thread (std's channel is crossbeam-channel's algorithm).
//! * **Idle CPU**: 100 standalone actors, each sent one message, then left
//!   alone; after a settling pause, the CPU time all the process's threads
//!   use during one second of wall time, as a share of one core (from
//!   `/proc/self/task/*/schedstat`, so Linux only; elsewhere the case
//!   reports nothing).

use std::hint::black_box;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use kaspar::prelude::*;

use crate::bench::{histogram, median};

/// The request: a number to echo back, plus one.
pub struct Echo(pub u64);
/// The reply.
pub struct Echoed(pub u64);

/// Answers each [`Echo`].
#[actor]
#[derive(Default)]
pub struct Echoer {
    seen: u64,
}

#[actor]
impl Echoer {
    #[handler(Echo)]
    fn on_echo(&mut self, msg: Echo, _ctx: &mut Ctx<Self>) -> Echoed {
        self.seen += 1;
        Echoed(msg.0 + 1)
    }
}

/// The strategies measured, by name.
pub fn strategies() -> [(&'static str, IdleWait); 3] {
    [
        ("park", IdleWait::Park),
        ("default", IdleWait::default()),
        ("spin", IdleWait::Spin),
    ]
}

/// One round-trip case.
#[derive(Clone, Debug)]
pub struct RoundTrip {
    pub case: String,
    pub p50_ns: f64,
    pub p99_ns: f64,
    pub amortized_ns: f64,
}

/// One idle-CPU case.
#[derive(Clone, Debug)]
pub struct IdleCpu {
    pub case: String,
    pub actors: usize,
    /// CPU seconds per wall second, in percent of one core; NaN where the
    /// platform cannot tell.
    pub percent_of_core: f64,
}

/// Everything one run measured.
pub struct Wait {
    pub rounds: u64,
    pub runs: usize,
    pub round_trips: Vec<RoundTrip>,
    pub idle: Vec<IdleCpu>,
}

/// Runs every case.
pub fn measure(quick: bool) -> Wait {
    let (rounds, runs) = if quick { (20_000, 3) } else { (200_000, 5) };
    let mut round_trips = Vec::new();
    for (name, idle) in strategies() {
        round_trips.push(ask_row(name, idle, rounds, runs));
    }
    round_trips.push(mpsc_row(rounds, runs));
    let idle = [("park", IdleWait::Park), ("default", IdleWait::default())]
        .into_iter()
        .map(|(name, idle)| idle_cpu(name, idle, 100))
        .collect();
    Wait {
        rounds,
        runs,
        round_trips,
        idle,
    }
}

/// Times `rounds` round trips made by `trip` one by one (p50, p99), then
/// `rounds` more under one clock pair (amortized); medians over `runs`.
fn time_rows(case: String, rounds: u64, runs: usize, mut trip: impl FnMut(u64)) -> RoundTrip {
    for i in 0..rounds / 10 {
        trip(i);
    }
    let (mut p50s, mut p99s, mut amortized) = (vec![], vec![], vec![]);
    for _ in 0..runs {
        let mut hist = histogram();
        for i in 0..rounds {
            let t = Instant::now();
            trip(i);
            hist.saturating_record(t.elapsed().as_nanos() as u64);
        }
        p50s.push(hist.value_at_quantile(0.5) as f64);
        p99s.push(hist.value_at_quantile(0.99) as f64);
        let t = Instant::now();
        for i in 0..rounds {
            trip(i);
        }
        amortized.push(t.elapsed().as_nanos() as f64 / rounds as f64);
    }
    RoundTrip {
        case,
        p50_ns: median(&mut p50s),
        p99_ns: median(&mut p99s),
        amortized_ns: median(&mut amortized),
    }
}

fn ask_row(name: &str, idle: IdleWait, rounds: u64, runs: usize) -> RoundTrip {
    let system = System::new();
    let echo = system.spawn(Echoer::default()).idle(idle).start();
    let row = time_rows(format!("ask_{name}"), rounds, runs, |i| {
        let Echoed(x) = echo
            .ask(Echo(black_box(i)))
            .expect("accepts")
            .wait()
            .expect("answers");
        black_box(x);
    });
    system.shutdown();
    row
}

fn mpsc_row(rounds: u64, runs: usize) -> RoundTrip {
    let (to_tx, to_rx) = mpsc::channel::<u64>();
    let (back_tx, back_rx) = mpsc::channel::<u64>();
    let echo = thread::spawn(move || {
        while let Ok(x) = to_rx.recv() {
            if back_tx.send(x + 1).is_err() {
                break;
            }
        }
    });
    let row = time_rows("std_mpsc_reference".into(), rounds, runs, |i| {
        to_tx.send(black_box(i)).expect("echo thread runs");
        black_box(back_rx.recv().expect("echo thread answers"));
    });
    drop(to_tx);
    echo.join().expect("echo thread ends");
    row
}

/// CPU time, in ns, all of this process's threads have used so far; `None`
/// where `/proc/self/task/*/schedstat` cannot be read.
fn process_cpu_ns() -> Option<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("schedstat");
        let stat = std::fs::read_to_string(path).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}

fn idle_cpu(name: &str, idle: IdleWait, actors: usize) -> IdleCpu {
    let system = System::new();
    let addrs: Vec<_> = (0..actors)
        .map(|_| system.spawn(Echoer::default()).idle(idle).start())
        .collect();
    for (i, a) in addrs.iter().enumerate() {
        a.ask(Echo(i as u64))
            .expect("accepts")
            .wait()
            .expect("answers");
    }
    // Long past any spin budget: every consumer has gone to sleep (or, for
    // a strategy that never sleeps, is spinning).
    thread::sleep(Duration::from_millis(200));
    let window = Duration::from_secs(1);
    let percent_of_core = match process_cpu_ns() {
        Some(before) => {
            let t = Instant::now();
            thread::sleep(window);
            let wall = t.elapsed().as_nanos() as f64;
            process_cpu_ns().map_or(f64::NAN, |after| {
                100.0 * after.saturating_sub(before) as f64 / wall
            })
        }
        None => f64::NAN,
    };
    system.shutdown();
    IdleCpu {
        case: format!("idle_{name}"),
        actors,
        percent_of_core,
    }
}

/// `12.3 ns` / `1.23 µs`.
fn fmt_ns(ns: f64) -> String {
    super::table5::fmt_ns(ns)
}

/// The markdown tables `benches/wait.rs` prints.
pub fn print(w: &Wait) {
    println!(
        "Ask round trip from a plain thread to one actor, by the actor's IdleWait \
         ({} round trips per pass, median of {} passes; p50/p99 include one clock \
         pair per trip).\n",
        w.rounds, w.runs
    );
    let reference = w
        .round_trips
        .iter()
        .find(|r| r.case == "std_mpsc_reference")
        .map_or(f64::NAN, |r| r.amortized_ns);
    println!("| case | p50 | p99 | amortized | vs std mpsc |");
    println!("|---|---:|---:|---:|---:|");
    for r in &w.round_trips {
        println!(
            "| {} | {} | {} | {} | {:.1}x |",
            r.case,
            fmt_ns(r.p50_ns),
            fmt_ns(r.p99_ns),
            fmt_ns(r.amortized_ns),
            r.amortized_ns / reference
        );
    }
    println!("\n| idle case | actors | CPU, % of one core |");
    println!("|---|---:|---:|");
    for c in &w.idle {
        println!("| {} | {} | {:.2} |", c.case, c.actors, c.percent_of_core);
    }
}

/// The JSON lines (`table` = `wait`).
pub fn record(w: &Wait, json: &mut crate::bench::JsonLines) {
    for r in &w.round_trips {
        json.record("wait", &r.case, "p50", r.p50_ns, "ns");
        json.record("wait", &r.case, "p99", r.p99_ns, "ns");
        json.record("wait", &r.case, "amortized", r.amortized_ns, "ns");
    }
    for c in &w.idle {
        json.record("wait", &c.case, "cpu", c.percent_of_core, "percent_of_core");
    }
}
