//! The charts, through the suite's SVG writer (`kaspar_suite::bench::svg`):
//! a latency CDF per configuration (six streams), and the book streams'
//! median latency against in-packet position with the fitted lines.

use std::path::{Path, PathBuf};

use kaspar_suite::bench::cdf;
use kaspar_suite::bench::svg::{Axis, Chart};
use kaspar_suite::tick_to_book::analysis::ConfigReport;
use kaspar_suite::tick_to_book::feed::Stream;

/// One curve of [`idx_chart`]: label, (idx, samples, median ns) points, and
/// the fitted (floor, slope).
type IdxSeries<'a> = (String, &'a [(u32, usize, f64)], (f64, f64));

/// Median latency against in-packet position (qlen = 0), with each
/// series' fitted floor + slope × idx as a dashed line.
fn idx_chart(title: &str, series: &[IdxSeries<'_>]) -> String {
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
    let x = Axis::linear(
        "idx: position of the message in its packet",
        max_idx,
        (max_idx / 10.0).ceil().max(1.0),
        1.0,
        0,
    );
    let y = Axis::linear("median latency (µs)", max_y, max_y / 5.0, 1000.0, 1);
    let mut chart = Chart::new(title, "", x, y);
    for (name, pts, (floor, slope)) in series {
        let k = chart.series(name);
        let points: Vec<(f64, f64)> = pts.iter().map(|&(i, _, m)| (i as f64, m)).collect();
        chart.dots(k, &points);
        chart.line(k, &points);
        if floor.is_finite() && slope.is_finite() {
            let last = points.last().map_or(0.0, |p| p.0);
            chart.dashed(k, (0.0, *floor), (last, floor + slope * last));
        }
    }
    chart.finish()
}

/// Writes every chart for `configs` into `dir`; returns the paths.
pub fn charts(dir: &Path, configs: &[ConfigReport]) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut paths = Vec::new();
    for c in configs {
        let path = dir.join(format!("tick_to_book_cdf_{}.svg", c.case));
        let series: Vec<(String, cdf::Points)> = c
            .streams
            .iter()
            .map(|s| {
                (
                    format!(
                        "{} (n={})",
                        s.id.map_or_else(String::new, |id| id.name()),
                        s.n
                    ),
                    cdf::from_sorted(&s.sorted),
                )
            })
            .collect();
        let svg = cdf::svg(
            &format!("Socket-to-book latency CDF: {}", c.label),
            "",
            "socket-to-book latency (log scale)",
            "fraction of messages",
            &series,
        );
        std::fs::write(&path, svg)?;
        paths.push(path);
    }
    let path = dir.join("tick_to_book_idx.svg");
    let series: Vec<IdxSeries<'_>> = configs
        .iter()
        .flat_map(|c| {
            c.streams
                .iter()
                .filter_map(|s| {
                    s.id.filter(|id| id.stream == Stream::Book)
                        .map(|id| (id, s))
                })
                .map(move |(id, s)| {
                    (
                        format!("{} {}", c.case.replace('_', "-"), id.name()),
                        &s.by_idx[..],
                        (s.floor, s.slope),
                    )
                })
        })
        .collect();
    let svg = idx_chart(
        "Book streams: median latency vs position in packet (qlen = 0), with floor + slope × idx",
        &series,
    );
    std::fs::write(&path, svg)?;
    paths.push(path);
    Ok(paths)
}
