//! The text outputs: the markdown tables on stdout and the JSON lines
//! rows (`table` = `tick_to_book`, `case` = `<config>_<stream>`).

use std::fmt::Write as _;

use kaspar_suite::bench::JsonLines;
use kaspar_suite::tick_to_book::feed::Stream;

use super::stats::{ConfigReport, MIN_BUCKET, QLEN_ROWS};

fn us(ns: f64) -> String {
    if ns.is_nan() {
        "—".into()
    } else {
        format!("{:.2}", ns / 1000.0)
    }
}

/// The side-by-side markdown tables.
pub fn markdown(configs: &[ConfigReport]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### Socket-to-book latency (µs), by configuration and stream\n"
    );
    let _ = writeln!(
        out,
        "| configuration | stream | messages | p50 | p90 | p99 | p99.9 | max | floor | slope | floor (qlen=0, idx=0) | empty queue | with msgs ahead |"
    );
    let _ = writeln!(
        out,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for c in configs {
        for (stream, s) in Stream::ALL.iter().zip(&c.streams) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} (n={}) | {} | {:.1}% |",
                c.label,
                stream.name(),
                s.n,
                us(s.p50 as f64),
                us(s.p90 as f64),
                us(s.p99 as f64),
                us(s.p999 as f64),
                us(s.max as f64),
                us(s.floor),
                us(s.slope),
                us(s.floor_direct.0),
                s.floor_direct.1,
                s.empty_queue
                    .map_or("—".into(), |f| format!("{:.1}%", 100.0 * f)),
                100.0 * s.not_alone,
            );
        }
    }
    let _ = writeln!(
        out,
        "\nfloor and slope: least-squares fit of median ≈ floor + slope × idx over the \
         per-idx medians at qlen = 0 (idx buckets with ≥ {MIN_BUCKET} messages)."
    );
    for c in configs {
        for (stream, s) in Stream::ALL.iter().zip(&c.streams) {
            if s.by_qlen.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "\n### Median latency (µs) by queue length: {}, {}\n",
                c.label,
                stream.name()
            );
            let _ = writeln!(
                out,
                "| qlen | messages | share | median | median at idx=0 |"
            );
            let _ = writeln!(out, "|---:|---:|---:|---:|---:|");
            for &(q, n, m, m0) in &s.by_qlen {
                let q = if q == QLEN_ROWS {
                    format!("≥{q}")
                } else {
                    q.to_string()
                };
                let _ = writeln!(
                    out,
                    "| {q} | {n} | {:.2}% | {} | {} |",
                    100.0 * n as f64 / s.n as f64,
                    us(m),
                    us(m0)
                );
            }
        }
    }
    out
}

/// Adds the JSON rows: `case` = `<config>_<stream>`.
pub fn json(configs: &[ConfigReport], rows: &mut JsonLines) {
    for c in configs {
        for (stream, s) in Stream::ALL.iter().zip(&c.streams) {
            let case = format!("{}_{}", c.case, stream.name());
            let mut put = |metric: &str, v: f64, unit: &str| {
                rows.record("tick_to_book", &case, metric, v, unit)
            };
            put("p50_ns", s.p50 as f64, "ns");
            put("p99_ns", s.p99 as f64, "ns");
            put("p999_ns", s.p999 as f64, "ns");
            put("max_ns", s.max as f64, "ns");
            put("floor_ns", s.floor, "ns");
            put("slope_ns", s.slope, "ns");
            if let Some(f) = s.empty_queue {
                put("empty_queue_fraction", f, "fraction");
            }
        }
    }
}
