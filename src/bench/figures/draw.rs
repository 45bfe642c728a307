//! The figures, one function each: the rows a figure reads, how it draws
//! them, and what its captions say. Each returns the SVG document or an
//! error naming the missing row and the command that writes it.

use crate::bench::svg::{Axis, BarChart, Chart};
use crate::bench::{cdf, dispatch, table5};

use super::rows::{Row, Rows};

/// The last caption of every figure.
const DRAWN_BY: &str = "Drawn by `cargo run --release --bin figures`";

/// The captions: where the rows `keep` picks come from, then `notes`, then
/// how the figure was drawn.
fn captions(rows: &Rows, keep: impl Fn(&Row) -> bool, notes: &[&str]) -> Vec<String> {
    let mut lines = rows.provenance(keep);
    lines.extend(notes.iter().map(|n| n.to_string()));
    lines.push(format!(
        "{DRAWN_BY} from target/kaspar-bench/{}.",
        rows.input.file
    ));
    lines
}

/// A log axis for bars of `values` (ns): a third of the smallest is in
/// range too, so that the shortest bar still stands out from the axis.
fn bar_axis(label: &str, values: impl IntoIterator<Item = f64>) -> Axis {
    let values: Vec<f64> = values
        .into_iter()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let least = values.iter().copied().fold(f64::INFINITY, f64::min);
    Axis::log_ns(label, values.into_iter().chain([least / 3.0]))
}

/// The six streams of tick_to_book, in its report's order.
const STREAMS: [&str; 6] = [
    "es_book", "es_trade", "nq_book", "nq_trade", "zn_book", "zn_trade",
];

/// `es_book` as `ES book`.
fn stream_name(key: &str) -> String {
    let (inst, stream) = key.split_once('_').unwrap_or((key, ""));
    format!("{} {stream}", inst.to_uppercase())
}

/// Socket-to-book latency CDF of one tick_to_book configuration's six
/// streams.
fn tick_to_book(rows: &Rows, config: &str, title: &str, subtitle: &str) -> Result<String, String> {
    let mut series = Vec::new();
    for key in STREAMS {
        let case = format!("{config}_{key}");
        let n = rows.need("tick_to_book", &case, "messages")?;
        let q = rows.quantiles("tick_to_book", &case)?;
        series.push((
            format!("{} (n = {n:.0})", stream_name(key)),
            cdf::from_quantiles(&q),
        ));
    }
    // One x axis for both configurations, so that the two figures compare
    // by eye.
    let both: Vec<f64> = rows
        .rows
        .iter()
        .filter(|r| r.table == "tick_to_book" && cdf::metric_fraction(&r.metric).is_some())
        .map(|r| r.value)
        .collect();
    let x = Axis::log_ns("socket-to-book latency (log scale)", both);
    let mut chart = Chart::new(
        title,
        subtitle,
        x,
        Axis::fraction("fraction of messages ≤ x"),
    );
    for (name, points) in &series {
        let k = chart.series(name);
        chart.line(k, points);
    }
    let prefix = format!("{config}_");
    for line in captions(
        rows,
        |r| r.table == "tick_to_book" && r.case.starts_with(&prefix),
        &[
            "A synthetic Hawkes feed sent as two redundant UDP feeds over loopback; per \
             message, from its datagram's return from recv to its book update's publication \
             (the paper's §10). Both configurations ran in one process on the same feed.",
        ],
    ) {
        chart.caption(&line);
    }
    Ok(chart.finish())
}

pub(super) fn tick_to_book_one_thread(rows: &Rows) -> Result<String, String> {
    tick_to_book(
        rows,
        "one_thread",
        "tick_to_book, one thread: socket-to-book latency CDF",
        "each socket reader runs decode → arbitrate → book itself, with fast_send",
    )
}

pub(super) fn tick_to_book_two_stage(rows: &Rows) -> Result<String, String> {
    tick_to_book(
        rows,
        "two_stage",
        "tick_to_book, two stages: socket-to-book latency CDF",
        "each socket reader sends into the group's mailbox; the group's thread runs the chain",
    )
}

/// Table 5's four round trips as CDFs.
pub(super) fn table5_cdf(rows: &Rows) -> Result<String, String> {
    let mut series = Vec::new();
    for case in table5::ROUND_TRIPS {
        series.push((
            case.to_string(),
            cdf::from_quantiles(&rows.quantiles("table5", case)?),
        ));
    }
    let x = Axis::log_ns(
        "round-trip latency (log scale)",
        series.iter().flat_map(|s| s.1.iter().map(|p| p.0)),
    );
    let mut chart = Chart::new(
        "Table 5: one round trip four ways, CDF",
        "a ping and its reply; every timed round trip of every pass",
        x,
        Axis::fraction("fraction of round trips ≤ x"),
    );
    for (name, points) in &series {
        let k = chart.series(name);
        chart.line(k, points);
    }
    for line in captions(
        rows,
        |r| r.table == "table5",
        &[
            "Each round trip is timed with the clock, whose own cost is in the local rows' \
           figures; the table's fast_send figure is amortized over a loop instead.",
        ],
    ) {
        chart.caption(&line);
    }
    Ok(chart.finish())
}

/// Table 5 beside the paper: p50 per round trip (fast_send amortized).
pub(super) fn table5_round_trip(rows: &Rows) -> Result<String, String> {
    let labels = [
        "cross-thread\nsleeping",
        "cross-thread\nspinning",
        "grouped",
        "fast_send",
    ];
    let mut ours = Vec::new();
    for case in table5::ROUND_TRIPS {
        let (value, p99) = if case == "fast_send" {
            (rows.need("table5", case, "amortized_ns")?, f64::NAN)
        } else {
            (
                rows.need("table5", case, "p50_ns")?,
                rows.need("table5", case, "p99_ns")?,
            )
        };
        ours.push((value, p99));
    }
    let y = bar_axis(
        "ns per round trip (log scale)",
        ours.iter()
            .flat_map(|&(v, p)| [v, p])
            .chain(table5::PAPER_NS)
            .filter(|v| v.is_finite()),
    );
    let mut chart = BarChart::new(
        "Table 5: one round trip, kaspar beside the paper",
        "p50 per round trip (fast_send: amortized, as the paper gives it); whiskers: kaspar's p99",
        "",
        y,
    );
    let paper = chart.series("paper (EPYC 9374F, pinned)");
    let kaspar = chart.series("kaspar");
    for (k, label) in labels.iter().enumerate() {
        let g = chart.group(label);
        chart.bar(g, paper, table5::PAPER_NS[k]);
        chart.whiskered(g, kaspar, ours[k].0, ours[k].1);
    }
    let ratio = |a: f64, b: f64| a / b;
    let note = format!(
        "Ratios, ours (paper): sleeping / grouped {:.0}x ({:.0}x); grouped / fast_send {:.1}x ({:.1}x).",
        ratio(ours[0].0, ours[2].0),
        ratio(table5::PAPER_NS[0], table5::PAPER_NS[2]),
        rows.need("table5", "grouped", "amortized_ns")? / ours[3].0,
        ratio(table5::PAPER_NS[2], table5::PAPER_NS[3]),
    );
    for line in captions(
        rows,
        |r| r.table == "table5",
        &[
            &note,
            "Paper: its Table 5, median of three runs on two pinned cores.",
        ],
    ) {
        chart.caption(&line);
    }
    Ok(chart.finish())
}

/// The originals of the paper's framework, measured by an earlier session
/// on an AMD EPYC development VM, dispatch only, no reply (the table
/// "Against the paper and its originals" in book/src/performance.md):
/// (direct call, lock + call + unlock, fast_send) in ns.
const CPP_ORIGINAL: [f64; 3] = [1.63, 7.35, 11.5];
/// The same for the originals' Rust port.
const RUST_PORT: [f64; 3] = [1.72, 4.41, 10.0];

/// fast_send and its lock (Table 6) beside the paper and its originals.
pub(super) fn dispatch(rows: &Rows) -> Result<String, String> {
    let cases = ["direct_call", "lock_call_unlock", "fast_send_no_reply"];
    let mut ours = [0.0; 3];
    for (k, case) in cases.iter().enumerate() {
        ours[k] = rows.need("dispatch", case, "ns_per_op")?;
    }
    let paper = [
        dispatch::paper_ns("direct_call").unwrap_or(f64::NAN),
        f64::NAN,
        dispatch::paper_ns("fast_send_no_reply").unwrap_or(f64::NAN),
    ];
    let top = ours
        .iter()
        .chain(&paper)
        .chain(&CPP_ORIGINAL)
        .chain(&RUST_PORT)
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let mut chart = BarChart::new(
        "fast_send and its lock, beside the paper and its originals",
        &format!(
            "dispatch only, no reply, ns per call; fast_send / its own lock: C++ {:.2}x, \
             Rust port {:.2}x, kaspar {:.2}x",
            CPP_ORIGINAL[2] / CPP_ORIGINAL[1],
            RUST_PORT[2] / RUST_PORT[1],
            ours[2] / ours[1]
        ),
        "",
        Axis::linear_to("ns per call", top),
    );
    let columns: [(&str, [f64; 3]); 4] = [
        ("paper (its text)", paper),
        ("C++ original (EPYC VM)", CPP_ORIGINAL),
        ("Rust port (EPYC VM)", RUST_PORT),
        ("kaspar (this run)", ours),
    ];
    let series: Vec<usize> = columns.iter().map(|c| chart.series(c.0)).collect();
    let labels = [
        "direct call (not inlined)",
        "lock + call + unlock",
        "fast_send",
    ];
    for (k, label) in labels.iter().enumerate() {
        let g = chart.group(label);
        for (s, (_, values)) in series.iter().zip(&columns) {
            chart.bar(g, *s, values[k]);
        }
    }
    for line in captions(
        rows,
        |r| r.table == "dispatch",
        &[
            "Paper: its text's figures (about 1.5 ns for a direct call, 9 ns for fast_send; \
              no lock figure), AMD EPYC 9374F. C++ original and Rust port: the paper's \
              framework and its port, built and measured on an AMD EPYC development VM by an \
              earlier session (the performance chapter's table). Each framework's lock is its \
              own (std::mutex, std Mutex, parking_lot).",
        ],
    ) {
        chart.caption(&line);
    }
    Ok(chart.finish())
}

/// The batching ladder: burst ping-pong by mailbox, beside the paper.
pub(super) fn batching(rows: &Rows) -> Result<String, String> {
    // (label, our case, the paper's M round trips/s)
    let ladder: [(&str, Option<&str>, Option<f64>); 5] = [
        ("pop one\n(BQueue)", Some("pop_one"), Some(5.5)),
        ("drain\n(BQueueBatched)", Some("batch_drain"), Some(8.96)),
        ("drain + pool\n(paper only)", None, Some(13.6)),
        ("lock-free\n(LockFree)", Some("lockfree"), None),
        ("segmented\n(Segmented)", Some("segmented"), None),
    ];
    let mut ours = Vec::new();
    for (_, case, _) in ladder {
        ours.push(match case {
            Some(c) => Some(rows.need("batching", c, "mrt_per_s")?),
            None => None,
        });
    }
    let top = ours
        .iter()
        .flatten()
        .copied()
        .chain(ladder.iter().filter_map(|l| l.2))
        .fold(0.0, f64::max);
    let mut chart = BarChart::new(
        "The batching ladder: burst ping-pong by mailbox",
        "two actors, bursts of 10,000 balls; M round trips per second, higher is better",
        "",
        Axis::linear_to("M round trips / s", top),
    );
    let paper = chart.series("paper (its companion note)");
    let kaspar = chart.series("kaspar");
    for (k, (label, _, p)) in ladder.iter().enumerate() {
        let g = chart.group(label);
        if let Some(p) = p {
            chart.bar(g, paper, *p);
        }
        if let Some(v) = ours[k] {
            chart.bar(g, kaspar, v);
        }
    }
    let m = |case: &str| {
        rows.get("batching", case, "mrt_per_s")
            .map_or("—".into(), |v| format!("{v:.2}"))
    };
    let note = format!(
        "kaspar's mailboxes allocate nothing, so there is no pool to add. Sender-side \
         batching is left out: the paper's fell to 11.3 M from 13.6; kaspar's, which no \
         mailbox offers, runs in a two-thread harness on a bench-local queue, at {} M round \
         trips/s against {} M for the same harness over BQueueBatched.",
        m("sender_batching"),
        m("sender_batching_control")
    );
    for line in captions(rows, |r| r.table == "batching", &[&note]) {
        chart.caption(&line);
    }
    Ok(chart.finish())
}

/// The `framework/variant` columns of `cases`: the two parts of each case
/// (split at `/`) that start at part `first`, in order of first
/// appearance; a case with fewer parts is left out.
fn columns(cases: &[String], first: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in cases {
        let parts: Vec<&str> = c.split('/').collect();
        let Some(pair) = parts.get(first..first + 2) else {
            continue;
        };
        let col = pair.join("/");
        if !out.contains(&col) {
            out.push(col);
        }
    }
    out
}

/// The Savina suite, one bar per framework, log scale.
pub(super) fn savina(rows: &Rows) -> Result<String, String> {
    let cases = rows.cases("savina", "ms");
    if cases.is_empty() {
        return Err(format!(
            "{} has no Savina rows: make it with `{}`",
            rows.input.file, rows.input.command
        ));
    }
    let mut benches: Vec<String> = Vec::new();
    for c in &cases {
        let b = c.split('/').next().unwrap_or(c).to_string();
        if !benches.contains(&b) {
            benches.push(b);
        }
    }
    let frameworks = columns(&cases, 1);
    let ns = |b: &str, f: &str| {
        rows.get("savina", &format!("{b}/{f}"), "ms")
            .map(|ms| ms * 1e6)
    };
    let y = bar_axis(
        "time to the verified result (log scale)",
        benches
            .iter()
            .flat_map(|b| frameworks.iter().filter_map(|f| ns(b, f))),
    );
    let mut chart = BarChart::new(
        "Savina: kaspar and four actor frameworks",
        "the median of each cell's iterations, from actor creation to the verified result; lower is better",
        "",
        y,
    );
    let series: Vec<usize> = frameworks.iter().map(|f| chart.series(f)).collect();
    for b in &benches {
        let g = chart.group(b);
        for (s, f) in series.iter().zip(&frameworks) {
            if let Some(v) = ns(b, f) {
                chart.bar(g, *s, v);
            }
        }
    }
    for line in captions(
        rows,
        |r| r.table == "savina",
        &[
            "kaspar/thread: one OS thread per actor (the ring is 100 threads); kaspar/group: all \
              of a benchmark's actors in one group, one thread. Peers on a multi-thread tokio \
              runtime, actix on its single-thread system. A missing bar is a run that failed.",
        ],
    ) {
        chart.caption(&line);
    }
    Ok(chart.finish())
}

/// ask, tell and ping-pong: time per operation for every row of the peers
/// table.
pub(super) fn peers(rows: &Rows) -> Result<String, String> {
    let mut cases = rows.cases("peers", "p50_ns");
    for metric in ["msgs_per_s", "rt_per_s"] {
        cases.extend(rows.cases("peers", metric));
    }
    let frameworks = columns(&cases, 0);
    if frameworks.is_empty() {
        return Err(format!(
            "{} has no ask, tell or ping-pong rows: make it with `{}`",
            rows.input.file, rows.input.command
        ));
    }
    let per_op = |f: &str, test: &str| -> Option<(f64, f64)> {
        let case = format!("{f}/{test}");
        match test {
            "ask" => Some((
                rows.get("peers", &case, "p50_ns")?,
                rows.get("peers", &case, "p99_ns").unwrap_or(f64::NAN),
            )),
            "tell" => Some((1e9 / rows.get("peers", &case, "msgs_per_s")?, f64::NAN)),
            _ => Some((1e9 / rows.get("peers", &case, "rt_per_s")?, f64::NAN)),
        }
    };
    let tests = [
        ("ask", "ask: p50 (whisker p99)"),
        ("tell", "tell: per message"),
        ("ping_pong", "ping-pong: per round trip"),
    ];
    let y = bar_axis(
        "time per operation (log scale)",
        tests
            .iter()
            .flat_map(|t| frameworks.iter().filter_map(move |f| per_op(f, t.0)))
            .flat_map(|(v, p)| [v, p])
            .filter(|v| v.is_finite()),
    );
    let mut chart = BarChart::new(
        "ask, tell and ping-pong: kaspar, channels and four frameworks",
        "time per operation, lower is better; each value the median of the run's passes",
        "",
        y,
    );
    let series: Vec<usize> = frameworks.iter().map(|f| chart.series(f)).collect();
    for (test, label) in tests {
        let g = chart.group(label);
        for (s, f) in series.iter().zip(&frameworks) {
            if let Some((v, p99)) = per_op(f, test) {
                chart.whiskered(g, *s, v, p99);
            }
        }
    }
    for line in captions(
        rows,
        |r| r.table == "peers" && !r.case.starts_with("kaspar/idle"),
        &[
            "ask: sequential request-replies from outside the actor; tell: fire-and-forget \
              messages, then one reply as a barrier (time per message = 1 / rate); ping-pong: \
              two actors, one ball. kaspar/fast_send's ping-pong is one handler calling the \
              other.",
        ],
    ) {
        chart.caption(&line);
    }
    Ok(chart.finish())
}

/// Remote round trips: raw transports against kaspar-remote's layers.
pub(super) fn remote(rows: &Rows) -> Result<String, String> {
    let cases: Vec<String> = rows
        .cases("remote", "p50_ns")
        .into_iter()
        .filter(|c| c.split('/').count() == 2)
        .collect();
    if cases.is_empty() {
        return Err(format!(
            "{} has no round-trip rows: make it with `{}`",
            rows.input.file, rows.input.command
        ));
    }
    let mut transports: Vec<&str> = Vec::new();
    let mut layers: Vec<&str> = Vec::new();
    for c in &cases {
        let (t, l) = c.split_once('/').unwrap_or((c, ""));
        if !transports.contains(&t) {
            transports.push(t);
        }
        if !layers.contains(&l) {
            layers.push(l);
        }
    }
    let value = |t: &str, l: &str, m: &str| rows.get("remote", &format!("{t}/{l}"), m);
    let y = bar_axis(
        "round trip (log scale)",
        cases.iter().flat_map(|c| {
            ["p50_ns", "p99_ns"]
                .into_iter()
                .filter_map(move |m| rows.get("remote", c, m))
        }),
    );
    let mut chart = BarChart::new(
        "Remote round trips: the raw transport against kaspar-remote",
        "a 64-byte frame between two processes; bar: p50, whisker: p99",
        "",
        y,
    );
    let series: Vec<usize> = layers.iter().map(|l| chart.series(l)).collect();
    for t in &transports {
        let g = chart.group(t);
        for (s, l) in series.iter().zip(&layers) {
            if let Some(p50) = value(t, l, "p50_ns") {
                chart.whiskered(g, *s, p50, value(t, l, "p99_ns").unwrap_or(f64::NAN));
            }
        }
    }
    let mut notes = vec![
        "raw: the engine's own API; link: kaspar-remote's LinkTx/LinkRx over it; kaspar: an ask \
         to an actor exported with fast_send (an order's eleven fields); kaspar_bytes: the same \
         with opaque bytes."
            .to_string(),
    ];
    if !transports.iter().any(|t| t.starts_with("aeron")) {
        notes.push(
            "No Aeron rows: remote.jsonl holds only the transports a run measured, and this \
             one was built without the `aeron` feature (see the performance chapter)."
                .into(),
        );
    }
    let notes: Vec<&str> = notes.iter().map(String::as_str).collect();
    for line in captions(
        rows,
        |r| r.table == "remote" && cases.contains(&r.case),
        &notes,
    ) {
        chart.caption(&line);
    }
    Ok(chart.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_the_framework_and_variant_in_first_appearance_order() {
        let cases: Vec<String> = [
            "crossbeam/threads/ask",
            "kaspar/thread/ask",
            "crossbeam/threads/tell",
            "kaspar/group/ping_pong",
            "kaspar/idle100",
            "x",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            columns(&cases, 0),
            [
                "crossbeam/threads",
                "kaspar/thread",
                "kaspar/group",
                "kaspar/idle100"
            ]
        );
        let savina = [
            "ring/kaspar/thread".to_string(),
            "ring/actix/system".to_string(),
        ];
        assert_eq!(columns(&savina, 1), ["kaspar/thread", "actix/system"]);
        assert_eq!(stream_name("zn_trade"), "ZN trade");
    }
}
