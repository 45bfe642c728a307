//! Savina, the actor benchmark suite of Imam and Sarkar (AGERE 2014), five
//! of its micro-benchmarks, each written once per framework with the
//! semantics of the suite's reference versions:
//!
//! * `ping_pong` (Savina 1): a pinger sends a ping, the ponger answers,
//!   `pings` times; the ponger's count must reach `pings`.
//! * `counting` (2): a producer actor sends `counts` increments to a
//!   counter, then asks it for the total, which must be `counts`.
//! * `thread_ring` (5): `ring_actors` actors in a ring pass a token
//!   `ring_hops` times; the token must stop at actor `ring_hops % ring_actors`.
//! * `fork_join` (3, throughput): the main thread sends `fj_msgs` messages
//!   to each of `fj_workers` workers round-robin; each does Savina's small
//!   computation per message and reports when it has seen all of its own.
//! * `chameneos` (6): `chameneos` creatures meet through a mall until
//!   `meetings` meetings have taken place, changing colour at each; the
//!   creatures' meeting counts must sum to twice `meetings`.
//!
//! Each run is timed from before the actors are created (as Savina times an
//! iteration) to the verified result; runtime start-up and shutdown are
//! outside. As Savina's own runner does, every cell runs several times
//! (`ITERATIONS`) and reports the median: a single run of a few
//! milliseconds on a shared machine is as much the machine's mood as the
//! framework's. The iterations go round-robin over a row's columns
//! (`report::interleaved`), so a mood that comes or goes during a row
//! falls on every framework's iterations alike.
//!
//! kaspar runs each benchmark with one thread per actor (`thread`), with
//! every actor a member of one group (`group`, one thread), and with every
//! actor on the system's pool of worker threads (`pool`).

use std::time::Duration;

use crate::report::{core_to_core_ns, interleaved, machine, JsonLines, Spread};

mod actix;
mod chameneos;
mod kameo;
mod kaspar;
mod kaspar_group;
mod kaspar_pool;
mod ractor;
mod xtra;

/// The benchmarks' sizes (Savina's defaults, except the thread ring's hops,
/// raised from 100k to 1M).
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub pings: u64,
    pub counts: u64,
    pub ring_actors: usize,
    pub ring_hops: u64,
    pub fj_workers: usize,
    pub fj_msgs: u64,
    pub chameneos: usize,
    pub meetings: u64,
}

impl Params {
    fn new(quick: bool) -> Self {
        let scale = if quick { 10 } else { 1 };
        Params {
            pings: 40_000 / scale,
            counts: 1_000_000 / scale,
            ring_actors: 100,
            ring_hops: 1_000_000 / scale,
            fj_workers: 60,
            fj_msgs: 10_000 / scale,
            chameneos: 100,
            meetings: 200_000 / scale,
        }
    }
}

/// How many times each cell runs unless `--iterations` says otherwise.
/// Savina's runner defaults to twelve; five keep the full table (whose
/// thread-per-actor ring takes seconds an iteration) to a few minutes and
/// still give a median that one slow iteration does not move.
pub const ITERATIONS: usize = 5;

/// One benchmark's run: the time taken; panics if the result is wrong.
pub type Bench = fn(&Params) -> Duration;

/// The five benchmarks of one framework, by name.
#[derive(Clone, Copy)]
struct Column {
    framework: &'static str,
    variant: &'static str,
    benches: [Bench; 5],
}

const NAMES: [&str; 5] = [
    "ping_pong",
    "counting",
    "thread_ring",
    "fork_join",
    "chameneos",
];

fn columns() -> [Column; 7] {
    [
        Column {
            framework: "kaspar",
            variant: "thread",
            benches: [
                kaspar::ping_pong,
                kaspar::counting,
                kaspar::thread_ring,
                kaspar::fork_join,
                chameneos::kaspar::chameneos,
            ],
        },
        Column {
            framework: "kaspar",
            variant: "group",
            benches: [
                kaspar_group::ping_pong,
                kaspar_group::counting,
                kaspar_group::thread_ring,
                kaspar_group::fork_join,
                kaspar_group::chameneos,
            ],
        },
        Column {
            framework: "kaspar",
            variant: "pool",
            benches: [
                kaspar_pool::ping_pong,
                kaspar_pool::counting,
                kaspar_pool::thread_ring,
                kaspar_pool::fork_join,
                kaspar_pool::chameneos,
            ],
        },
        Column {
            framework: "kameo",
            variant: "multi_thread",
            benches: [
                kameo::ping_pong,
                kameo::counting,
                kameo::thread_ring,
                kameo::fork_join,
                chameneos::kameo::chameneos,
            ],
        },
        Column {
            framework: "ractor",
            variant: "multi_thread",
            benches: [
                ractor::ping_pong,
                ractor::counting,
                ractor::thread_ring,
                ractor::fork_join,
                chameneos::ractor::chameneos,
            ],
        },
        Column {
            framework: "actix",
            variant: "system",
            benches: [
                actix::ping_pong,
                actix::counting,
                actix::thread_ring,
                actix::fork_join,
                chameneos::actix::chameneos,
            ],
        },
        Column {
            framework: "xtra",
            variant: "multi_thread",
            benches: [
                xtra::ping_pong,
                xtra::counting,
                xtra::thread_ring,
                xtra::fork_join,
                chameneos::xtra::chameneos,
            ],
        },
    ]
}

/// Runs `timed` as a task of a fresh multi-thread tokio runtime (one
/// worker per core) and returns what it measured. Dropping the runtime
/// afterwards, outside the timing, stops whatever actors remain.
pub fn on_tokio<F>(timed: F) -> Duration
where
    F: std::future::Future<Output = Duration> + Send + 'static,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    // A failed check inside the task panics here again, with its message.
    rt.block_on(rt.spawn(timed))
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// Savina's per-message work in the fork-join benchmarks. `theta` goes
/// through `black_box`: called with the constant [`THETA`], the sine is
/// otherwise computed at compile time, and the benchmark measures
/// messaging alone (as it did until 4 December 2026: the binary had no
/// call to `sin` in it).
pub fn perform_computation(theta: f64) -> f64 {
    let sint = std::hint::black_box(theta).sin();
    let res = sint * sint;
    // As Savina's reference: a result the compiler cannot drop.
    assert!(res > 0.0, "unrealistic result {res}");
    res
}

/// The argument of [`perform_computation`] in Savina's fork-join.
pub const THETA: f64 = 37.2;

/// A chameneo's colour.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Color {
    Red,
    Yellow,
    Blue,
    Faded,
}

impl Color {
    /// The colour creature `i` starts with.
    pub fn initial(i: usize) -> Color {
        [Color::Red, Color::Yellow, Color::Blue][i % 3]
    }

    /// The colour after meeting a creature of colour `other`: the same if
    /// both are alike, otherwise the third colour.
    pub fn complement(self, other: Color) -> Color {
        use Color::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Red, Yellow) | (Yellow, Red) => Blue,
            (Red, Blue) | (Blue, Red) => Yellow,
            (Yellow, Blue) | (Blue, Yellow) => Red,
            _ => Faded,
        }
    }
}

/// The checks every implementation shares, so that they all verify the
/// same thing.
pub mod verify {
    use super::Params;

    pub fn ping_pong(p: &Params, pongs: u64) {
        assert_eq!(pongs, p.pings, "ping_pong: wrong number of pongs");
    }
    pub fn counting(p: &Params, total: u64) {
        assert_eq!(total, p.counts, "counting: wrong total");
    }
    pub fn thread_ring(p: &Params, last: usize) {
        let want = (p.ring_hops % p.ring_actors as u64) as usize;
        assert_eq!(
            last, want,
            "thread_ring: the token stopped at the wrong actor"
        );
    }
    /// `seen`: each worker's count, in any order.
    pub fn fork_join(p: &Params, seen: &[u64]) {
        assert_eq!(
            seen.len(),
            p.fj_workers,
            "fork_join: wrong number of workers done"
        );
        assert!(
            seen.iter().all(|&s| s == p.fj_msgs),
            "fork_join: a worker saw {seen:?}"
        );
    }
    pub fn chameneos(p: &Params, sum: u64) {
        assert_eq!(sum, 2 * p.meetings, "chameneos: wrong sum of meetings");
    }
}

/// Runs the Savina table; `only` keeps the columns of those frameworks,
/// named alone (`actix`) or with a variant (`kaspar/pool`).
pub fn run(quick: bool, only: Option<&[String]>, iterations: usize) {
    let p = Params::new(quick);
    let mut cols = columns().to_vec();
    if let Some(only) = only {
        cols.retain(|c| {
            let full = format!("{}/{}", c.framework, c.variant);
            only.iter().any(|o| *o == c.framework || *o == full)
        });
    }
    let mut json = JsonLines::new("savina");
    println!(
        "# Savina: kaspar vs kameo 0.22, ractor 0.16, actix 0.13, xtra 0.6{}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{}\n", machine());
    println!(
        "Milliseconds (lower is better): the median of {} iterations of each cell, run \
         round-robin over the row's columns, and in brackets the fastest and slowest \
         iteration. ping_pong {} pings; counting {}; \
         thread_ring {} actors, {} hops; fork_join {} workers x {} messages; chameneos {} \
         creatures, {} meetings. kaspar/thread: one OS thread per actor; kaspar/group: all \
         actors of a benchmark in one group (one thread); kaspar/pool: every actor pooled \
         (one worker per core). Tokio peers run on a multi-thread \
         runtime, actix on its single-thread system. The last column is the \
         machine's core-to-core round trip measured just before the row (its mood: see \
         `report::core_to_core_ns`).\n",
        iterations,
        p.pings,
        p.counts,
        p.ring_actors,
        p.ring_hops,
        p.fj_workers,
        p.fj_msgs,
        p.chameneos,
        p.meetings
    );
    let header: Vec<String> = cols
        .iter()
        .map(|c| format!("{}/{}", c.framework, c.variant))
        .collect();
    println!("| benchmark | {} | core-to-core ns |", header.join(" | "));
    println!("|---|{}---:|", "---:|".repeat(cols.len()));
    for (i, name) in NAMES.iter().enumerate() {
        let c2c = core_to_core_ns();
        json.record(&format!("{name}/core_to_core"), "round_trip", c2c, "ns");
        let cases: Vec<_> = cols
            .iter()
            .map(|c| {
                let bench = c.benches[i];
                move || bench(&p).as_secs_f64() * 1e3
            })
            .collect();
        let mut cells = Vec::new();
        for (c, result) in cols.iter().zip(interleaved(iterations, &cases)) {
            let case = format!("{name}/{}/{}", c.framework, c.variant);
            match result {
                Ok(ms) => {
                    for (k, &one) in ms.iter().enumerate() {
                        json.record(&case, &format!("ms_iteration_{k}"), one, "ms");
                    }
                    let s = Spread::of(ms);
                    json.record(&case, "ms", s.median, "ms");
                    cells.push(if iterations > 1 {
                        format!("{:.1} ({:.1}–{:.1})", s.median, s.min, s.max)
                    } else {
                        format!("{:.1}", s.median)
                    });
                }
                Err(why) => cells.push(format!("failed: {why}")),
            }
        }
        println!("| {name} | {} | {c2c:.0} |", cells.join(" | "));
    }
    println!("\nJSON lines: {}", json.write().display());
}
