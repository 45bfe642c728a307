//! The charts, as hand-written SVG: a latency CDF per configuration and
//! the median latency against in-packet position with the fitted lines.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use kaspar_suite::tick_to_book::feed::Stream;

use super::stats::ConfigReport;

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
        // p99 sits too close to 1 for an axis label: name it inside the
        // plot, just under its line.
        let (label, lx, ly, anchor) = if f == 0.99 {
            ("p99".to_string(), L + 4.0, py + 12.0, "start")
        } else {
            (f.to_string(), L - 6.0, py + 4.0, "end")
        };
        let _ = writeln!(
            s,
            r##"<line x1="{L}" y1="{py}" x2="{}" y2="{py}" stroke="#eee"/><text x="{lx}" y="{ly}" text-anchor="{anchor}">{label}</text>"##,
            W - R,
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
