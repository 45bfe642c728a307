//! kaspar against the Rust actor frameworks people use: kameo, ractor,
//! actix and xtra, each through its own documented, idiomatic API.
//!
//! `cargo run --release --manifest-path benches/peers/Cargo.toml [-- --quick]`
//!
//! Workloads, each run three times (median and spread reported):
//! * `ask_rt`: request-reply round trip from outside the actor, one request
//!   in flight; mean, p50, p99, max. Peers ask from a task of their runtime
//!   (tokio; actix's own system); kaspar asks from a plain thread with
//!   `ask().wait()`, and `kaspar_fast_send` runs the handler inline with
//!   `fast_send`;
//! * `tell_throughput`: 2M fire-and-forget messages to one actor, then one
//!   request-reply as a barrier; messages per second;
//! * `pingpong`: 200k actor-to-actor round trips, one ball in flight;
//!   round trips per second. `kaspar_fast_send` is one actor calling another
//!   with `fast_send` from its handler.
//!
//! Prints markdown and writes `benches/peers/target/peers.jsonl`.

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

mod actix_peer;
mod kameo_peer;
mod kaspar_peer;
mod ractor_peer;
mod xtra_peer;

/// Iteration counts.
#[derive(Clone, Copy)]
pub struct Sizes {
    pub asks: u64,
    pub tells: u64,
    pub pingpongs: u64,
}

pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds")
}

/// Records one round trip.
pub fn record(hist: &mut Histogram<u64>, since: Instant) {
    hist.saturating_record(since.elapsed().as_nanos() as u64);
}

/// Messages (or round trips) per second over `elapsed`.
pub fn per_s(n: u64, elapsed: Duration) -> f64 {
    n as f64 / elapsed.as_secs_f64()
}

/// A framework's three workloads. `None`: the framework has no such path.
struct Peer {
    name: &'static str,
    ask: Option<fn(u64) -> Histogram<u64>>,
    tell: Option<fn(u64) -> f64>,
    pingpong: Option<fn(u64) -> f64>,
}

const PEERS: [Peer; 7] = [
    Peer {
        name: "kaspar",
        ask: Some(kaspar_peer::ask),
        tell: Some(kaspar_peer::tell),
        pingpong: Some(kaspar_peer::pingpong),
    },
    Peer {
        name: "kaspar_fast_send",
        ask: Some(kaspar_peer::fast_send),
        tell: None,
        pingpong: Some(kaspar_peer::fast_send_pingpong),
    },
    // Queued ping-pong between two members of one group: both actors on one
    // thread, every hop through the group's queue. The closest match to the
    // peers that run both actors on one runtime thread.
    Peer {
        name: "kaspar_group",
        ask: None,
        tell: None,
        pingpong: Some(kaspar_peer::grouped_pingpong),
    },
    Peer {
        name: "kameo",
        ask: Some(kameo_peer::ask),
        tell: Some(kameo_peer::tell),
        pingpong: Some(kameo_peer::pingpong),
    },
    Peer {
        name: "ractor",
        ask: Some(ractor_peer::ask),
        tell: Some(ractor_peer::tell),
        pingpong: Some(ractor_peer::pingpong),
    },
    Peer {
        name: "actix",
        ask: Some(actix_peer::ask),
        tell: Some(actix_peer::tell),
        pingpong: Some(actix_peer::pingpong),
    },
    Peer {
        name: "xtra",
        ask: Some(xtra_peer::ask),
        tell: Some(xtra_peer::tell),
        pingpong: Some(xtra_peer::pingpong),
    },
];

const RUNS: usize = 3;

/// Median and spread (min, max) of three runs.
#[derive(Clone, Copy)]
struct Spread {
    median: f64,
    min: f64,
    max: f64,
}

fn spread(mut v: Vec<f64>) -> Spread {
    v.sort_by(|a, b| a.total_cmp(b));
    Spread {
        median: v[v.len() / 2],
        min: v[0],
        max: v[v.len() - 1],
    }
}

/// Runs `f` `RUNS` times; a panic becomes the reason the row failed.
fn runs<T>(f: impl Fn() -> T) -> Result<Vec<T>, String> {
    (0..RUNS)
        .map(|_| {
            catch_unwind(AssertUnwindSafe(&f)).map_err(|e| {
                e.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panicked".into())
            })
        })
        .collect()
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn fmt_rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2} M", r / 1e6)
    } else {
        format!("{:.0} k", r / 1e3)
    }
}

struct Json(String);

impl Json {
    fn record(&mut self, case: &str, metric: &str, value: f64, unit: &str) {
        let value = if value.is_finite() { value } else { -1.0 };
        let _ = writeln!(
            self.0,
            "{{\"table\":\"peers\",\"case\":\"{case}\",\"metric\":\"{metric}\",\"value\":{value},\"unit\":\"{unit}\"}}"
        );
    }
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    format!("_{cores} cores, {cpu}, not pinned_")
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes = if quick {
        Sizes {
            asks: 5_000,
            tells: 200_000,
            pingpongs: 20_000,
        }
    } else {
        Sizes {
            asks: 50_000,
            tells: 2_000_000,
            pingpongs: 200_000,
        }
    };
    let mut json = Json(String::new());

    println!(
        "# kaspar vs kameo 0.22, ractor 0.16, actix 0.13, xtra 0.6{}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{}\n", machine());
    println!(
        "Median of {RUNS} runs; spread = min–max over the runs. Tokio peers run on a \
         multi-threaded runtime with one worker per core; actix on its own system.\n"
    );

    println!(
        "## Request-reply round trip from outside the actor ({} requests)\n",
        sizes.asks
    );
    println!("| framework | mean | p50 | p50 spread | p99 | max |");
    println!("|---|---:|---:|---:|---:|---:|");
    for p in &PEERS {
        let Some(f) = p.ask else { continue };
        let case = format!("{}_ask_rt", p.name);
        match runs(|| f(sizes.asks)) {
            Ok(hists) => {
                let mean = spread(hists.iter().map(|h| h.mean()).collect());
                let p50 = spread(
                    hists
                        .iter()
                        .map(|h| h.value_at_quantile(0.5) as f64)
                        .collect(),
                );
                let p99 = spread(
                    hists
                        .iter()
                        .map(|h| h.value_at_quantile(0.99) as f64)
                        .collect(),
                );
                let max = spread(hists.iter().map(|h| h.max() as f64).collect());
                println!(
                    "| {} | {} | {} | {}–{} | {} | {} |",
                    p.name,
                    fmt_ns(mean.median),
                    fmt_ns(p50.median),
                    fmt_ns(p50.min),
                    fmt_ns(p50.max),
                    fmt_ns(p99.median),
                    fmt_ns(max.median)
                );
                json.record(&case, "mean_ns", mean.median, "ns");
                json.record(&case, "p50_ns", p50.median, "ns");
                json.record(&case, "p99_ns", p99.median, "ns");
                json.record(&case, "max_ns", max.median, "ns");
            }
            Err(why) => println!("| {} | failed: {why} | | | | |", p.name),
        }
    }

    println!(
        "\n## Fire-and-forget throughput ({} messages to one actor)\n",
        sizes.tells
    );
    println!("| framework | msgs/s | spread |");
    println!("|---|---:|---:|");
    for p in &PEERS {
        let Some(f) = p.tell else { continue };
        match runs(|| f(sizes.tells)) {
            Ok(v) => {
                let s = spread(v);
                println!(
                    "| {} | {} | {}–{} |",
                    p.name,
                    fmt_rate(s.median),
                    fmt_rate(s.min),
                    fmt_rate(s.max)
                );
                json.record(
                    &format!("{}_tell_throughput", p.name),
                    "msgs_per_s",
                    s.median,
                    "1/s",
                );
            }
            Err(why) => println!("| {} | failed: {why} | |", p.name),
        }
    }

    println!(
        "\n## Actor-to-actor ping-pong ({} round trips)\n",
        sizes.pingpongs
    );
    println!("| framework | round trips/s | spread | ns per round trip |");
    println!("|---|---:|---:|---:|");
    for p in &PEERS {
        let Some(f) = p.pingpong else { continue };
        match runs(|| f(sizes.pingpongs)) {
            Ok(v) => {
                let s = spread(v);
                println!(
                    "| {} | {} | {}–{} | {} |",
                    p.name,
                    fmt_rate(s.median),
                    fmt_rate(s.min),
                    fmt_rate(s.max),
                    fmt_ns(1e9 / s.median)
                );
                json.record(&format!("{}_pingpong", p.name), "rt_per_s", s.median, "1/s");
            }
            Err(why) => println!("| {} | failed: {why} | | |", p.name),
        }
    }

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&dir).expect("create target/");
    let path = dir.join("peers.jsonl");
    std::fs::write(&path, json.0).expect("write peers.jsonl");
    println!("\nJSON lines: {}", path.display());
}
