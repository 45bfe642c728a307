//! The text outputs: the markdown tables on stdout and the JSON lines
//! rows (`table` = `tick_to_book`, `case` = `<config>_<stream>`, e.g.
//! `two_stage_es_book`).

use std::fmt::Write as _;

use kaspar_suite::bench::{cdf, JsonLines};
use kaspar_suite::tick_to_book::analysis::{
    ConfigReport, StreamStats, MIN_BUCKET, PEAK_WINDOW_NS, QLEN_ROWS,
};
use kaspar_suite::tick_to_book::feed::Stream;

fn us(ns: f64) -> String {
    if ns.is_nan() {
        "—".into()
    } else {
        format!("{:.2}", ns / 1000.0)
    }
}

fn name(s: &StreamStats) -> String {
    s.id.map_or_else(|| "?".into(), |id| id.name())
}

fn books(c: &ConfigReport) -> impl Iterator<Item = &StreamStats> {
    c.streams
        .iter()
        .filter(|s| s.id.is_some_and(|id| id.stream == Stream::Book))
}

/// The markdown tables: the distribution (Tables 8 and 12), the model
/// (Tables 9 and 10), the three floors (Table 11), medians by qlen
/// (Figure 4).
pub fn markdown(configs: &[ConfigReport]) -> String {
    let mut out = String::new();
    distribution(&mut out, configs);
    model(&mut out, configs);
    floors(&mut out, configs);
    for c in configs {
        by_qlen(&mut out, c);
    }
    out
}

fn distribution(out: &mut String, configs: &[ConfigReport]) {
    let _ = writeln!(
        out,
        "### Socket-to-book latency (µs) by stream (Tables 8 and 12)\n\n\
         | configuration | stream | messages | p50 | p90 | p99 | p99.9 | max | p99/p50 | empty queue | with msgs ahead |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for c in configs {
        for s in &c.streams {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1}x | {} | {:.1}% |",
                c.label,
                name(s),
                s.n,
                us(s.p50 as f64),
                us(s.p90 as f64),
                us(s.p99 as f64),
                us(s.p999 as f64),
                us(s.max as f64),
                s.p99 as f64 / s.p50.max(1) as f64,
                s.empty_queue
                    .map_or("—".into(), |f| format!("{:.1}%", 100.0 * f)),
                100.0 * s.not_alone,
            );
        }
    }
}

fn model(out: &mut String, configs: &[ConfigReport]) {
    let _ = writeln!(
        out,
        "\n### median ≈ floor + slope × idx at qlen = 0 (Table 9), and the direct floor (Table 10)\n\n\
         | configuration | stream | floor (fit) | slope | idx buckets | floor (qlen=0, idx=0) | n |\n\
         |---|---|---:|---:|---:|---:|---:|"
    );
    for c in configs {
        for s in &c.streams {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                c.label,
                name(s),
                us(s.floor),
                us(s.slope),
                s.by_idx.len(),
                us(s.floor_direct.0),
                s.floor_direct.1,
            );
        }
    }
    let _ = writeln!(
        out,
        "\nThe fit is least squares over the per-idx medians at qlen = 0 (idx buckets with \
         ≥ {MIN_BUCKET} messages); on the one-thread path there is no queue, so every \
         message counts as qlen = 0."
    );
}

fn floors(out: &mut String, configs: &[ConfigReport]) {
    let _ = writeln!(
        out,
        "\n### Three estimates of the floor (µs), book streams (Table 11)\n\n\
         | configuration | stream | fitted intercept | qlen=0, idx=0 (n) | peak load, single-message packets (n) | peak window | packet rate rise |\n\
         |---|---|---:|---:|---:|---:|---:|"
    );
    for c in configs {
        for s in books(c) {
            let (peak, window, rise) = match s.peak {
                Some(p) => (
                    format!("{} ({})", us(p.floor), p.n),
                    format!(
                        "+{:.1} s, {} packets",
                        p.window.start_ns.saturating_sub(c.start_ns) as f64 / 1e9,
                        p.window.packets
                    ),
                    format!("{:.1}x", p.window.rise),
                ),
                _ => ("—".into(), "—".into(), "—".into()),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} ({}) | {peak} | {window} | {rise} |",
                c.label,
                name(s),
                us(s.floor),
                us(s.floor_direct.0),
                s.floor_direct.1,
            );
        }
    }
    let _ = writeln!(
        out,
        "\nPeak load: the instrument's {} ms window with the most packets; the rise is its \
         packet count over the median window's. Its start is counted from the run's \
         first datagram.",
        PEAK_WINDOW_NS / 1_000_000
    );
}

/// Figure 4's data: the book streams' medians by queue length (two-stage
/// only: the one-thread path has no queue).
fn by_qlen(out: &mut String, c: &ConfigReport) {
    let streams: Vec<&StreamStats> = books(c).filter(|s| !s.by_qlen.is_empty()).collect();
    if streams.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "\n### Median latency (µs) by queue length, book streams: {} (Figure 4)\n\n| qlen |",
        c.label
    );
    for s in &streams {
        let _ = write!(out, " {0} n | {0} median | {0} at idx=0 |", name(s));
    }
    let _ = write!(out, "\n|---:|");
    for _ in &streams {
        let _ = write!(out, "---:|---:|---:|");
    }
    let _ = writeln!(out);
    for q in 0..=QLEN_ROWS {
        let label = if q == QLEN_ROWS {
            format!("≥{q}")
        } else {
            q.to_string()
        };
        let _ = write!(out, "| {label} |");
        for s in &streams {
            match s.by_qlen.iter().find(|r| r.0 == q) {
                Some(&(_, n, m, m0)) => {
                    let _ = write!(out, " {n} | {} | {} |", us(m), us(m0));
                }
                None => {
                    let _ = write!(out, " 0 | — | — |");
                }
            }
        }
        let _ = writeln!(out);
    }
}

/// Adds the JSON rows: `case` = `<config>_<stream>`, each stream's CDF
/// included (`metric` `cdf@<fraction>`, for `cargo run --release --bin
/// figures`).
pub fn json(configs: &[ConfigReport], rows: &mut JsonLines) {
    for c in configs {
        for s in &c.streams {
            let Some(id) = s.id else { continue };
            let case = format!("{}_{}", c.case, id.key());
            let mut put = |metric: &str, v: f64, unit: &str| {
                rows.record("tick_to_book", &case, metric, v, unit)
            };
            put("messages", s.n as f64, "messages");
            put("p50_ns", s.p50 as f64, "ns");
            put("p99_ns", s.p99 as f64, "ns");
            put("p999_ns", s.p999 as f64, "ns");
            put("max_ns", s.max as f64, "ns");
            put("floor_ns", s.floor, "ns");
            put("slope_ns", s.slope, "ns");
            put("floor_direct_ns", s.floor_direct.0, "ns");
            if let Some(p) = s.peak {
                put("floor_peak_ns", p.floor, "ns");
                put("peak_rate_rise", p.window.rise, "x");
            }
            if let Some(f) = s.empty_queue {
                put("empty_queue_fraction", f, "fraction");
            }
            cdf::record(rows, "tick_to_book", &case, &cdf::from_sorted(&s.sorted));
        }
    }
}
