//! The measurements, as the paper's §10 reports them: the distribution by
//! stream (Tables 8 and 12), the floor + slope × idx model fitted on
//! medians at qlen = 0 (Table 9), the direct floor at qlen = 0, idx = 0
//! (Table 10), and the median by queue length (Figure 4). Markdown, JSON
//! lines and hand-written SVG.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use crate::common::JsonLines;
use crate::feed::Stream;
use crate::pipeline::{Record, QLEN_NONE};

/// Fewest samples an idx or qlen bucket needs to count.
const MIN_BUCKET: usize = 20;
/// Queue lengths shown one by one; longer ones are pooled.
const QLEN_ROWS: u32 = 8;

/// One stream of one configuration, summarised.
#[derive(Clone, Debug, Default)]
pub struct StreamStats {
    /// Messages measured.
    pub n: u64,
    /// Percentiles, ns.
    pub p50: u64,
    /// 90th percentile, ns.
    pub p90: u64,
    /// 99th percentile, ns.
    pub p99: u64,
    /// 99.9th percentile, ns.
    pub p999: u64,
    /// Largest, ns.
    pub max: u64,
    /// Fitted intercept of median ≈ floor + slope × idx at qlen = 0, ns.
    pub floor: f64,
    /// Fitted per-message cost, ns per position.
    pub slope: f64,
    /// Median at qlen = 0 and idx = 0, and its sample size.
    pub floor_direct: (f64, usize),
    /// Messages whose datagram found the queue empty (two-stage only).
    pub empty_queue: Option<f64>,
    /// (idx, samples, median ns) at qlen = 0, buckets with enough samples.
    pub by_idx: Vec<(u32, usize, f64)>,
    /// (qlen, samples, median ns, median ns at idx = 0); the last row
    /// pools every qlen ≥ [`QLEN_ROWS`].
    pub by_qlen: Vec<(u32, usize, f64, f64)>,
    /// Share of messages with another message ahead in their packet.
    pub not_alone: f64,
    /// Every latency, sorted (for the CDF).
    pub sorted: Vec<u64>,
}

fn median(v: &mut [u64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable(mid);
    *m as f64
}

/// Least squares fit of `y = a + b x`; `(NaN, NaN)` with under two points.
pub fn fit(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    if points.len() < 2 {
        return points
            .first()
            .map_or((f64::NAN, f64::NAN), |p| (p.1, f64::NAN));
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    if sxx == 0.0 {
        return (my, f64::NAN);
    }
    let b = sxy / sxx;
    (my - b * mx, b)
}

/// Summarises `stream`'s records.
pub fn analyse(records: &[Record], stream: Stream) -> StreamStats {
    let mut hist = Histogram::<u64>::new_with_bounds(1, 600_000_000_000, 3).expect("bounds");
    let mut sorted = Vec::new();
    let mut at_idx: Vec<Vec<u64>> = Vec::new();
    let mut at_qlen: Vec<Vec<u64>> = vec![Vec::new(); QLEN_ROWS as usize + 1];
    let mut at_qlen0: Vec<Vec<u64>> = vec![Vec::new(); QLEN_ROWS as usize + 1];
    let (mut queued, mut empty, mut not_alone) = (0u64, 0u64, 0u64);
    for r in records.iter().filter(|r| r.stream == stream) {
        hist.saturating_record(r.latency_ns.max(1));
        sorted.push(r.latency_ns);
        if r.idx > 0 {
            not_alone += 1;
        }
        if r.qlen != QLEN_NONE {
            queued += 1;
            let row = r.qlen.min(QLEN_ROWS) as usize;
            at_qlen[row].push(r.latency_ns);
            if r.idx == 0 {
                at_qlen0[row].push(r.latency_ns);
            }
            if r.qlen != 0 {
                continue;
            }
            empty += 1;
        }
        let i = r.idx as usize;
        if at_idx.len() <= i {
            at_idx.resize(i + 1, Vec::new());
        }
        at_idx[i].push(r.latency_ns);
    }
    sorted.sort_unstable();
    let n = sorted.len() as u64;
    let mut s = StreamStats {
        n,
        sorted,
        ..StreamStats::default()
    };
    if n == 0 {
        s.floor = f64::NAN;
        s.slope = f64::NAN;
        s.floor_direct = (f64::NAN, 0);
        return s;
    }
    s.p50 = hist.value_at_quantile(0.5);
    s.p90 = hist.value_at_quantile(0.9);
    s.p99 = hist.value_at_quantile(0.99);
    s.p999 = hist.value_at_quantile(0.999);
    s.max = hist.max();
    s.not_alone = not_alone as f64 / n as f64;
    s.floor_direct = match at_idx.first_mut() {
        Some(v) => (median(v), v.len()),
        None => (f64::NAN, 0),
    };
    for (i, v) in at_idx.iter_mut().enumerate() {
        if v.len() >= MIN_BUCKET {
            s.by_idx.push((i as u32, v.len(), median(v)));
        }
    }
    let points: Vec<(f64, f64)> = s.by_idx.iter().map(|p| (p.0 as f64, p.2)).collect();
    (s.floor, s.slope) = fit(&points);
    if queued > 0 {
        s.empty_queue = Some(empty as f64 / queued as f64);
        for (q, (all, first)) in at_qlen.iter_mut().zip(at_qlen0.iter_mut()).enumerate() {
            if !all.is_empty() {
                s.by_qlen
                    .push((q as u32, all.len(), median(all), median(first)));
            }
        }
    }
    s
}

/// One configuration's run, ready to report.
#[derive(Debug)]
pub struct ConfigReport {
    /// `one_thread` or `two_stage`.
    pub case: &'static str,
    /// `one-thread` or `two-stage (BQueue)`.
    pub label: String,
    /// Per stream, in [`Stream::ALL`] order.
    pub streams: Vec<StreamStats>,
}

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

const COLORS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];
const W: f64 = 720.0;
const H: f64 = 420.0;
const L: f64 = 70.0;
const R: f64 = 20.0;
const T: f64 = 40.0;
const B: f64 = 60.0;

fn svg_frame(title: &str, xlabel: &str, ylabel: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        W / 2.0,
        escape(title)
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        L + (W - L - R) / 2.0,
        H - 15.0,
        escape(xlabel)
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">{}</text>"#,
        T + (H - T - B) / 2.0,
        T + (H - T - B) / 2.0,
        escape(ylabel)
    );
    let _ = writeln!(
        s,
        r##"<rect x="{L}" y="{T}" width="{}" height="{}" fill="none" stroke="#444"/>"##,
        W - L - R,
        H - T - B
    );
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn legend(s: &mut String, labels: &[String]) {
    for (k, label) in labels.iter().enumerate() {
        let y = T + 16.0 + 16.0 * k as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            W - R - 190.0,
            W - R - 170.0,
            COLORS[k % COLORS.len()],
            W - R - 165.0,
            y + 4.0,
            escape(label)
        );
    }
}

/// A latency CDF, log-scaled x axis in µs: one curve per series.
pub fn svg_cdf(path: &Path, title: &str, series: &[(String, &[u64])]) -> std::io::Result<()> {
    let all = series.iter().flat_map(|(_, v)| v.iter().copied());
    let lo = all.clone().filter(|&v| v > 0).min().unwrap_or(1).max(1) as f64;
    let hi = all.max().unwrap_or(2).max(2) as f64;
    let (lx0, lx1) = (
        lo.log10().floor(),
        hi.log10().ceil().max(lo.log10().floor() + 1.0),
    );
    let x = |ns: f64| L + (ns.max(lo).log10() - lx0) / (lx1 - lx0) * (W - L - R);
    let y = |f: f64| H - B - f * (H - T - B);
    let mut s = svg_frame(
        title,
        "socket-to-book latency (µs, log scale)",
        "fraction of messages",
    );
    let mut d = lx0;
    while d <= lx1 + 1e-9 {
        let px = x(10f64.powf(d));
        let _ = writeln!(
            s,
            r##"<line x1="{px}" y1="{T}" x2="{px}" y2="{}" stroke="#ddd"/><text x="{px}" y="{}" text-anchor="middle">{}</text>"##,
            H - B,
            H - B + 16.0,
            fmt_us(10f64.powf(d))
        );
        d += 1.0;
    }
    for f in [0.0, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0] {
        let py = y(f);
        let _ = writeln!(
            s,
            r##"<line x1="{L}" y1="{py}" x2="{}" y2="{py}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{f}</text>"##,
            W - R,
            L - 6.0,
            py + 4.0
        );
    }
    for (k, (_, v)) in series.iter().enumerate() {
        if v.is_empty() {
            continue;
        }
        let mut pts = String::new();
        let steps = 600.min(v.len());
        for i in 0..=steps {
            let idx = ((v.len() - 1) * i) / steps.max(1);
            let f = (idx + 1) as f64 / v.len() as f64;
            let _ = write!(pts, "{:.1},{:.1} ", x(v[idx] as f64), y(f));
        }
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{}" stroke-width="1.5" points="{pts}"/>"#,
            COLORS[k % COLORS.len()]
        );
    }
    legend(
        &mut s,
        &series.iter().map(|p| p.0.clone()).collect::<Vec<_>>(),
    );
    s.push_str("</svg>\n");
    std::fs::write(path, s)
}

fn fmt_us(ns: f64) -> String {
    let us = ns / 1000.0;
    if us >= 1.0 {
        format!("{us:.0}")
    } else {
        format!("{us}")
    }
}

/// One curve of [`svg_idx`]: label, (idx, samples, median ns) points, and
/// the fitted (floor, slope).
pub type IdxSeries<'a> = (String, &'a [(u32, usize, f64)], (f64, f64));

/// Median latency against in-packet position (qlen = 0), with each
/// series' fitted floor + slope × idx as a dashed line.
pub fn svg_idx(path: &Path, title: &str, series: &[IdxSeries<'_>]) -> std::io::Result<()> {
    let max_idx = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let max_y = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.2))
        .fold(1.0f64, f64::max)
        * 1.1;
    let x = |i: f64| L + i / max_idx * (W - L - R);
    let y = |ns: f64| H - B - (ns / max_y).clamp(0.0, 1.0) * (H - T - B);
    let mut s = svg_frame(
        title,
        "idx: position of the message in its packet",
        "median latency (µs)",
    );
    for k in 0..=5 {
        let v = max_y * k as f64 / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{L}" y1="{0}" x2="{1}" y2="{0}" stroke="#eee"/><text x="{2}" y="{3}" text-anchor="end">{4:.1}</text>"##,
            y(v),
            W - R,
            L - 6.0,
            y(v) + 4.0,
            v / 1000.0
        );
    }
    let step = (max_idx / 10.0).ceil().max(1.0);
    let mut i = 0.0;
    while i <= max_idx {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{i}</text>"#,
            x(i),
            H - B + 16.0
        );
        i += step;
    }
    for (k, (_, pts, (floor, slope))) in series.iter().enumerate() {
        let c = COLORS[k % COLORS.len()];
        let mut line = String::new();
        for &(i, _, m) in pts.iter() {
            let _ = write!(line, "{:.1},{:.1} ", x(i as f64), y(m));
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{c}"/>"#,
                x(i as f64),
                y(m)
            );
        }
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{c}" stroke-width="1" points="{line}"/>"#
        );
        if floor.is_finite() && slope.is_finite() {
            let last = pts.last().map_or(0.0, |p| p.0 as f64);
            let _ = writeln!(
                s,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{c}" stroke-dasharray="5,4"/>"#,
                x(0.0),
                y(*floor),
                x(last),
                y(floor + slope * last)
            );
        }
    }
    legend(
        &mut s,
        &series.iter().map(|p| p.0.clone()).collect::<Vec<_>>(),
    );
    s.push_str("</svg>\n");
    std::fs::write(path, s)
}

/// Writes every chart for `configs` into `dir`; returns the paths.
pub fn charts(dir: &Path, configs: &[ConfigReport]) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut paths = Vec::new();
    for c in configs {
        let path = dir.join(format!("tick_to_book_cdf_{}.svg", c.case));
        let series: Vec<(String, &[u64])> = Stream::ALL
            .iter()
            .zip(&c.streams)
            .map(|(st, s)| (format!("{} (n={})", st.name(), s.n), &s.sorted[..]))
            .collect();
        svg_cdf(
            &path,
            &format!("Socket-to-book latency CDF: {}", c.label),
            &series,
        )?;
        paths.push(path);
    }
    let path = dir.join("tick_to_book_idx.svg");
    let series: Vec<IdxSeries<'_>> = configs
        .iter()
        .flat_map(|c| {
            Stream::ALL.iter().zip(&c.streams).map(move |(st, s)| {
                (
                    format!("{} {}", c.case.replace('_', "-"), st.name()),
                    &s.by_idx[..],
                    (s.floor, s.slope),
                )
            })
        })
        .collect();
    svg_idx(
        &path,
        "Median latency vs position in packet (qlen = 0), with floor + slope × idx",
        &series,
    )?;
    paths.push(path);
    Ok(paths)
}
