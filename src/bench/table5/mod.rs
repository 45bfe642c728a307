//! Paper Table 5: one ping/pong round trip with a reply, four ways, plus
//! the intra-group `fast_send` against a direct call (DESIGN §9).
//!
//! Rows, each removing one operation from the row above:
//! * `cross_thread_sleeping`: two standalone actors on two threads, `BQueue`
//!   mailboxes, `IdleWait::Park`: two wake-ups of a sleeping thread per trip;
//! * `cross_thread_spinning`: the same two threads, `LockFree` mailboxes
//!   busy-polled (`IdleWait::Spin`), as in the paper: no wake-up, two core
//!   crossings;
//! * `grouped`: two members of one `#[group]`; the ping and its reply are
//!   both queued sends through the group's one queue, on one thread;
//! * `fast_send`: `fast_send` from a plain thread, the reply returned by
//!   value: no queue at all.
//!
//! Each queued round trip is `pong.request(Ping, &me)`: the reply travels
//! back as a message. Per-sample latency comes from a timed pass (one clock
//! pair per round trip, into an hdrhistogram); amortized cost from a second,
//! untimed pass (one clock pair around all round trips), which resolves
//! costs below the clock's own overhead.
//!
//! The actors are in `actors.rs`, how each row is measured in `rows.rs`;
//! here are the table's rows, targets and results, and its markdown and
//! JSON lines.

mod actors;
mod rows;

use hdrhistogram::Histogram;
use kaspar::prelude::*;

pub use rows::callgrind;
use rows::{fast_send_row, intra_group, queued_row, Setup};

use super::JsonLines;

/// The rows of the table, in order.
pub const ROUND_TRIPS: [&str; 4] = [
    "cross_thread_sleeping",
    "cross_thread_spinning",
    "grouped",
    "fast_send",
];

/// The paper's figure for each row of [`ROUND_TRIPS`], in ns (p50 for the
/// queued rows, amortized for `fast_send`).
pub const PAPER_NS: [f64; 4] = [3_400.0, 370.0, 90.0, 30.0];

/// DESIGN §9: grouped at least this much faster than sleeping cross-thread.
pub const TARGET_GROUPED_VS_SLEEPING: f64 = 37.0;
/// DESIGN §9: fast_send at least this much faster than grouped.
pub const TARGET_FAST_SEND_VS_GROUPED: f64 = 3.0;
/// DESIGN §9: intra-group fast_send at most this many direct calls.
pub const TARGET_INTRA_VS_DIRECT: f64 = 2.0;

/// Iteration counts.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Round trips per pass for the cross-thread rows.
    pub cross: u64,
    /// Round trips per pass for `grouped` and `fast_send`.
    pub local: u64,
    /// fast_sends / direct calls per intra-group sample.
    pub intra_iters: u64,
    /// Intra-group samples (median taken).
    pub intra_runs: usize,
    /// Passes per round-trip row (medians taken, histograms merged).
    pub runs: usize,
}

impl Sizes {
    pub fn new(quick: bool) -> Self {
        if quick {
            Sizes {
                cross: 20_000,
                local: 500_000,
                // Each sample is a few milliseconds, about one scheduler
                // slice: many interleaved pairs, so that a median is not
                // set by which arm a busy machine happened to preempt.
                intra_iters: 2_000_000,
                intra_runs: 21,
                runs: 3,
            }
        } else {
            Sizes {
                cross: 200_000,
                local: 5_000_000,
                intra_iters: 20_000_000,
                intra_runs: 11,
                runs: 5,
            }
        }
    }
}

/// One round-trip row.
pub struct RoundTrip {
    pub case: &'static str,
    pub p50_ns: f64,
    pub p99_ns: f64,
    pub amortized_ns: f64,
    /// Every timed round trip of every pass.
    pub hist: Histogram<u64>,
}

/// Everything Table 5 measured in one run.
pub struct Table5 {
    pub sizes: Sizes,
    pub rows: Vec<RoundTrip>,
    pub direct_call_ns: f64,
    pub intra_group_ns: f64,
}

impl Table5 {
    pub fn row(&self, case: &str) -> &RoundTrip {
        self.rows
            .iter()
            .find(|r| r.case == case)
            .expect("every row is measured")
    }

    /// grouped p50 over sleeping p50 (the paper's 37x, on medians).
    pub fn grouped_vs_sleeping(&self) -> f64 {
        self.row("cross_thread_sleeping").p50_ns / self.row("grouped").p50_ns
    }

    /// grouped over fast_send, amortized (as the paper computes it).
    pub fn fast_send_vs_grouped(&self) -> f64 {
        self.row("grouped").amortized_ns / self.row("fast_send").amortized_ns
    }

    pub fn intra_vs_direct(&self) -> f64 {
        self.intra_group_ns / self.direct_call_ns
    }
}

/// Runs every row.
pub fn measure(quick: bool) -> Table5 {
    let sizes = Sizes::new(quick);
    let rows = vec![
        queued_row(
            "cross_thread_sleeping",
            Setup::Standalone {
                idle: IdleWait::Park,
                mailbox: MailboxKind::bqueue(1024),
            },
            sizes.cross,
            sizes.runs,
        ),
        queued_row(
            "cross_thread_spinning",
            Setup::Standalone {
                idle: IdleWait::Spin,
                mailbox: MailboxKind::lock_free(1024),
            },
            sizes.cross,
            sizes.runs,
        ),
        queued_row("grouped", Setup::Grouped, sizes.local, sizes.runs),
        fast_send_row(sizes.local, sizes.runs),
    ];
    let (direct_call_ns, intra_group_ns) = intra_group(sizes.intra_iters, sizes.intra_runs);
    Table5 {
        sizes,
        rows,
        direct_call_ns,
        intra_group_ns,
    }
}

/// `12.3 ns` / `123 ns` / `1.23 µs` / `12.3 µs` / `1.23 ms`.
pub fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e4 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns >= 100.0 {
        format!("{ns:.0} ns")
    } else {
        format!("{ns:.1} ns")
    }
}

pub fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "missed"
    }
}

/// The markdown table `benches/table5.rs` prints (and `paper.rs` reuses).
pub fn print(t: &Table5) {
    println!(
        "Work per round trip: one ping, one reply. {} round trips per cross-thread pass, \
         {} per grouped/fast_send pass, median of {} pass(es). p50/p99: one clock pair \
         per round trip (clock cost included); amortized: one clock pair per pass.\n",
        t.sizes.cross, t.sizes.local, t.sizes.runs
    );
    println!(
        "| case | p50 | p99 | amortized | paper | vs row above (ours) | vs row above (paper) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (i, r) in t.rows.iter().enumerate() {
        let (ours, paper) = if i == 0 {
            ("—".to_string(), "—".to_string())
        } else {
            let prev = &t.rows[i - 1];
            // The paper compares fast_send on amortized figures, the rest on p50.
            let ours = if r.case == "fast_send" {
                prev.amortized_ns / r.amortized_ns
            } else {
                prev.p50_ns / r.p50_ns
            };
            (
                format!("{ours:.1}x"),
                format!("{:.1}x", PAPER_NS[i - 1] / PAPER_NS[i]),
            )
        };
        println!(
            "| {} | {} | {} | {} | {} | {ours} | {paper} |",
            r.case,
            fmt_ns(r.p50_ns),
            fmt_ns(r.p99_ns),
            fmt_ns(r.amortized_ns),
            fmt_ns(PAPER_NS[i]),
        );
    }
    let g = t.grouped_vs_sleeping();
    let f = t.fast_send_vs_grouped();
    println!();
    println!(
        "* grouped vs cross_thread_sleeping (p50): {g:.1}x faster; paper {:.1}x; target ≥ {TARGET_GROUPED_VS_SLEEPING}x: {}",
        PAPER_NS[0] / PAPER_NS[2],
        met(g >= TARGET_GROUPED_VS_SLEEPING)
    );
    println!(
        "* fast_send vs grouped (amortized): {f:.1}x faster; paper {:.1}x; target ≥ {TARGET_FAST_SEND_VS_GROUPED}x: {}",
        PAPER_NS[2] / PAPER_NS[3],
        met(f >= TARGET_FAST_SEND_VS_GROUPED)
    );
    let x = t.intra_vs_direct();
    println!();
    println!("| case | ns/op | vs direct_call |");
    println!("|---|---:|---:|");
    println!("| direct_call | {:.2} | 1.00x |", t.direct_call_ns);
    println!(
        "| fast_send_intra_group | {:.2} | {x:.2}x |",
        t.intra_group_ns
    );
    println!();
    println!(
        "* fast_send between members of one group, on the group thread (nested entry, no \
         second lock): {x:.2}x a direct call; target ≤ {TARGET_INTRA_VS_DIRECT}x: {}",
        met(x <= TARGET_INTRA_VS_DIRECT)
    );
}

/// The JSON lines of Table 5, each row's CDF included (its
/// [`cdf::quantiles`](super::cdf::quantiles), `metric` `cdf@<fraction>`).
pub fn record(t: &Table5, json: &mut JsonLines) {
    for r in &t.rows {
        json.record("table5", r.case, "p50_ns", r.p50_ns, "ns");
        json.record("table5", r.case, "p99_ns", r.p99_ns, "ns");
        json.record("table5", r.case, "amortized_ns", r.amortized_ns, "ns");
        super::cdf::record(json, "table5", r.case, &super::cdf::from_histogram(&r.hist));
    }
    json.record("table5", "direct_call", "ns_per_op", t.direct_call_ns, "ns");
    json.record(
        "table5",
        "fast_send_intra_group",
        "ns_per_op",
        t.intra_group_ns,
        "ns",
    );
}
