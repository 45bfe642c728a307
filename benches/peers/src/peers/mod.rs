//! The peers table: kaspar five ways beside the channel baselines and the
//! actor frameworks, on three workloads, plus the CPU that idle kaspar
//! actors burn.
//!
//! * `ask`: request-reply from outside the actor, one request in flight;
//!   mean, p50, p99. Channel baselines and kaspar ask from a plain thread,
//!   tokio-based peers from a task of their runtime, actix from its system;
//!   `kaspar/pool_await_*` asks a pooled actor with `ask(..).await` from a
//!   task of a tokio runtime of either kind, the pool on kaspar's own
//!   threads; `kaspar/pool_hosted_*` the same with the pool hosted on that
//!   runtime (`PoolConfig::tokio`).
//! * `tell`: fire-and-forget messages to one actor, then one request-reply
//!   as a barrier; messages per second.
//! * `ping_pong`: two actors bounce a ball, one in flight; round trips per
//!   second.
//!
//! Every workload checks its result (the counter's total, the ball's count),
//! so a broken path fails its row instead of measuring nothing.

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::report::{
    core_to_core_ns, fmt_ns, fmt_rate, interleaved, machine, paired_ratio, JsonLines, Spread,
};

mod actix;
mod channels;
mod idle;
mod kameo;
mod kaspar;
mod ractor;
mod tokio_task;
mod xtra;

use self::kaspar::Variant;
use channels::{Crossbeam, StdMpsc};

const RUNS: usize = 5;
const IDLE_ACTORS: usize = 100;

/// Iteration counts.
#[derive(Clone, Copy)]
struct Sizes {
    asks: u64,
    tells: u64,
    ping_pongs: u64,
}

/// A workload that returns operations per second for `n` operations.
type Rate = fn(u64) -> f64;

/// A workload that returns the latencies of `n` sequential requests.
type Latencies = fn(u64) -> Histogram<u64>;

/// One way of running the workloads. `None`: the path does not exist, or
/// would measure the same thing as another row.
struct Row {
    framework: &'static str,
    variant: &'static str,
    ask: Option<Latencies>,
    tell: Option<Rate>,
    ping_pong: Option<Rate>,
}

impl Row {
    fn case(&self, test: &str) -> String {
        format!("{}/{}/{test}", self.framework, self.variant)
    }
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            framework: "crossbeam",
            variant: "threads",
            ask: Some(channels::ask::<Crossbeam>),
            tell: Some(channels::tell::<Crossbeam>),
            ping_pong: Some(channels::ping_pong::<Crossbeam>),
        },
        Row {
            framework: "std_mpsc",
            variant: "threads",
            ask: Some(channels::ask::<StdMpsc>),
            tell: Some(channels::tell::<StdMpsc>),
            ping_pong: Some(channels::ping_pong::<StdMpsc>),
        },
        Row {
            framework: "tokio",
            variant: "current_thread",
            ask: Some(|n| tokio_task::ask(false, n)),
            tell: Some(|n| tokio_task::tell(false, n)),
            ping_pong: Some(|n| tokio_task::ping_pong(false, n)),
        },
        Row {
            framework: "tokio",
            variant: "multi_thread",
            ask: Some(|n| tokio_task::ask(true, n)),
            tell: Some(|n| tokio_task::tell(true, n)),
            ping_pong: Some(|n| tokio_task::ping_pong(true, n)),
        },
        Row {
            framework: "kaspar",
            variant: "thread",
            ask: Some(|n| kaspar::ask(Variant::Thread, n)),
            tell: Some(|n| kaspar::tell(Variant::Thread, n)),
            ping_pong: Some(|n| kaspar::ping_pong(Variant::Thread, n)),
        },
        Row {
            framework: "kaspar",
            variant: "thread_compact",
            ask: None,
            tell: Some(|n| kaspar::tell(Variant::ThreadCompact, n)),
            ping_pong: None,
        },
        Row {
            framework: "kaspar",
            variant: "spin",
            ask: Some(|n| kaspar::ask(Variant::Spin, n)),
            tell: Some(|n| kaspar::tell(Variant::Spin, n)),
            ping_pong: Some(|n| kaspar::ping_pong(Variant::Spin, n)),
        },
        Row {
            framework: "kaspar",
            variant: "group",
            ask: None,
            tell: None,
            ping_pong: Some(|n| kaspar::ping_pong(Variant::Group, n)),
        },
        Row {
            framework: "kaspar",
            variant: "pool",
            ask: Some(|n| kaspar::ask(Variant::Pool, n)),
            tell: Some(|n| kaspar::tell(Variant::Pool, n)),
            ping_pong: Some(|n| kaspar::ping_pong(Variant::Pool, n)),
        },
        Row {
            framework: "kaspar",
            variant: "pool_segmented",
            ask: Some(|n| kaspar::ask(Variant::PoolSegmented, n)),
            tell: Some(|n| kaspar::tell(Variant::PoolSegmented, n)),
            ping_pong: None,
        },
        Row {
            framework: "kaspar",
            variant: "pool_await_current_thread",
            ask: Some(|n| kaspar::ask_await(false, false, n)),
            tell: None,
            ping_pong: None,
        },
        Row {
            framework: "kaspar",
            variant: "pool_await_multi_thread",
            ask: Some(|n| kaspar::ask_await(true, false, n)),
            tell: None,
            ping_pong: None,
        },
        Row {
            framework: "kaspar",
            variant: "pool_hosted_current_thread",
            ask: Some(|n| kaspar::ask_await(false, true, n)),
            tell: None,
            ping_pong: None,
        },
        Row {
            framework: "kaspar",
            variant: "pool_hosted_multi_thread",
            ask: Some(|n| kaspar::ask_await(true, true, n)),
            tell: None,
            ping_pong: None,
        },
        Row {
            framework: "kaspar",
            variant: "fast_send",
            ask: Some(|n| kaspar::ask(Variant::FastSend, n)),
            tell: Some(|n| kaspar::tell(Variant::FastSend, n)),
            ping_pong: Some(|n| kaspar::ping_pong(Variant::FastSend, n)),
        },
        Row {
            framework: "kameo",
            variant: "multi_thread",
            ask: Some(kameo::ask),
            tell: Some(kameo::tell),
            ping_pong: Some(kameo::pingpong),
        },
        Row {
            framework: "ractor",
            variant: "multi_thread",
            ask: Some(ractor::ask),
            tell: Some(ractor::tell),
            ping_pong: Some(ractor::pingpong),
        },
        Row {
            framework: "actix",
            variant: "system",
            ask: Some(actix::ask),
            tell: Some(actix::tell),
            ping_pong: Some(actix::pingpong),
        },
        Row {
            framework: "xtra",
            variant: "multi_thread",
            ask: Some(xtra::ask),
            tell: Some(xtra::tell),
            ping_pong: Some(xtra::pingpong),
        },
    ]
}

/// A row's time per operation against crossbeam's, in the same run.
fn vs(ratio: Option<f64>) -> String {
    match ratio {
        None => "–".into(),
        Some(r) if r < 0.1 => format!("{r:.3}x"),
        Some(r) => format!("{r:.2}x"),
    }
}

/// After a table: the machine's core-to-core round trip, which names its
/// mood (`report::core_to_core_ns`); the channels' wake-ups and every
/// cross-thread row move with it.
fn mood(table: &str, json: &mut JsonLines) {
    let ns = core_to_core_ns();
    println!("\n_core-to-core round trip after this table: {ns:.0} ns_");
    json.record(&format!("{table}/core_to_core"), "round_trip", ns, "ns");
}

fn ask_table(rows: &[Row], n: u64, json: &mut JsonLines) {
    println!("## ask: request-reply from outside the actor ({n} sequential)\n");
    println!("| case | mean | p50 | p50 spread | p99 | time vs crossbeam |");
    println!("|---|---:|---:|---:|---:|---:|");
    let rows: Vec<(&Row, Latencies)> = rows.iter().filter_map(|r| Some((r, r.ask?))).collect();
    let cases: Vec<_> = rows.iter().map(|&(_, f)| move || f(n)).collect();
    let mut floor: Option<Vec<f64>> = None;
    for ((row, _), result) in rows.iter().zip(interleaved(RUNS, &cases)) {
        let case = row.case("ask");
        match result {
            Ok(hists) => {
                let q = |q: f64| {
                    Spread::of(
                        hists
                            .iter()
                            .map(|h| h.value_at_quantile(q) as f64)
                            .collect(),
                    )
                };
                let means: Vec<f64> = hists.iter().map(|h| h.mean()).collect();
                let mean = Spread::of(means.clone());
                let (p50, p99) = (q(0.5), q(0.99));
                if row.framework == "crossbeam" {
                    floor = Some(means.clone());
                }
                let ratio = floor.as_deref().and_then(|f| paired_ratio(&means, f));
                println!(
                    "| {case} | {} | {} | {}–{} | {} | {} |",
                    fmt_ns(mean.median),
                    fmt_ns(p50.median),
                    fmt_ns(p50.min),
                    fmt_ns(p50.max),
                    fmt_ns(p99.median),
                    vs(ratio)
                );
                json.record(&case, "mean_ns", mean.median, "ns");
                json.record(&case, "p50_ns", p50.median, "ns");
                json.record(&case, "p99_ns", p99.median, "ns");
                if let Some(r) = ratio {
                    json.record(&case, "time_vs_crossbeam", r, "x");
                }
            }
            Err(why) => println!("| {case} | failed: {why} | | | | |"),
        }
    }
}

/// A rate table (`tell`, `ping_pong`): median, spread, and time per
/// operation against the first row (crossbeam).
fn rate_table(
    rows: &[Row],
    test: &str,
    metric: &str,
    pick: fn(&Row) -> Option<Rate>,
    n: u64,
    json: &mut JsonLines,
) {
    println!("| case | {metric} | spread | ns per op | time vs crossbeam |");
    println!("|---|---:|---:|---:|---:|");
    let rows: Vec<(&Row, Rate)> = rows.iter().filter_map(|r| Some((r, pick(r)?))).collect();
    let cases: Vec<_> = rows.iter().map(|&(_, f)| move || f(n)).collect();
    let mut floor: Option<Vec<f64>> = None;
    for ((row, _), result) in rows.iter().zip(interleaved(RUNS, &cases)) {
        let case = row.case(test);
        match result {
            Ok(v) => {
                if row.framework == "crossbeam" {
                    floor = Some(v.clone());
                }
                // Time per operation over crossbeam's: its rate over ours.
                let ratio = floor.as_deref().and_then(|f| paired_ratio(f, &v));
                let s = Spread::of(v);
                println!(
                    "| {case} | {} | {}–{} | {} | {} |",
                    fmt_rate(s.median),
                    fmt_rate(s.min),
                    fmt_rate(s.max),
                    fmt_ns(1e9 / s.median),
                    vs(ratio)
                );
                json.record(&case, metric, s.median, "1/s");
                if let Some(r) = ratio {
                    json.record(&case, "time_vs_crossbeam", r, "x");
                }
            }
            Err(why) => println!("| {case} | failed: {why} | | | |"),
        }
    }
}

/// Runs the peers table; `only` keeps the rows of those frameworks (and
/// crossbeam's, the floor).
pub fn run(quick: bool, only: Option<&[String]>) {
    let scale = if quick { 10 } else { 1 };
    let sizes = Sizes {
        asks: 200_000 / scale,
        tells: 2_000_000 / scale,
        ping_pongs: 200_000 / scale,
    };
    let mut rows = rows();
    if let Some(only) = only {
        rows.retain(|r| r.framework == "crossbeam" || only.iter().any(|o| o == r.framework));
    }
    let mut json = JsonLines::new("peers");

    println!(
        "# kaspar vs channels and kameo 0.22, ractor 0.16, actix 0.13, xtra 0.6{}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{}\n", machine());
    println!(
        "Median of {RUNS} runs in this process, the rows' runs interleaved (every row's \
         run i before any row's run i + 1); spread = min–max. \"time vs crossbeam\" is \
         time per operation over crossbeam's, the median of the runs' ratios, each run \
         against crossbeam's run of the same round (below 1: faster). Tokio \
         peers run on a multi-thread runtime with one worker per core, actix on its own \
         single-thread system. Every queue is unbounded.\n"
    );

    ask_table(&rows, sizes.asks, &mut json);
    mood("ask", &mut json);
    println!(
        "\n## tell: fire-and-forget to one actor ({} messages, then one reply)\n",
        sizes.tells
    );
    rate_table(
        &rows,
        "tell",
        "msgs_per_s",
        |r| r.tell,
        sizes.tells,
        &mut json,
    );
    mood("tell", &mut json);
    println!(
        "\n## ping_pong: two actors, one ball ({} round trips)\n",
        sizes.ping_pongs
    );
    rate_table(
        &rows,
        "ping_pong",
        "rt_per_s",
        |r| r.ping_pong,
        sizes.ping_pongs,
        &mut json,
    );
    mood("ping_pong", &mut json);

    let pct = idle::cpu_pct(
        IDLE_ACTORS,
        Duration::from_millis(200),
        Duration::from_secs(1),
    );
    println!(
        "\n## Idle CPU\n\n{IDLE_ACTORS} idle kaspar actors (default spawn), 200 ms to \
         settle, then 1 s of wall time: **{pct:.2} %** of one core (process user + system \
         time, `getrusage`).\n"
    );
    json.record("kaspar/idle100/cpu", "pct_of_core", pct, "%");

    println!("JSON lines: {}", json.write().display());
}
