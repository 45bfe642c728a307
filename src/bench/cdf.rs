//! Latency CDFs: a distribution's cumulative fraction as points, from an
//! hdrhistogram or from sorted samples, and the chart of several of them
//! (latency on a log x axis, one curve per series).

use hdrhistogram::Histogram;

use super::svg::{Axis, Chart};

/// One curve of a CDF: `(latency ns, fraction of samples ≤ it)` points,
/// by increasing latency.
pub type Points = Vec<(f64, f64)>;

/// The CDF of a histogram of nanoseconds: one point per recorded value.
/// Empty for an empty histogram.
pub fn from_histogram(hist: &Histogram<u64>) -> Points {
    let total = hist.len().max(1) as f64;
    let mut seen = 0u64;
    hist.iter_recorded()
        .map(|v| {
            seen += v.count_since_last_iteration();
            (v.value_iterated_to() as f64, seen as f64 / total)
        })
        .collect()
}

/// The CDF of samples of nanoseconds, sorted ascending: one point per
/// distinct value. Empty for no samples.
pub fn from_sorted(sorted: &[u64]) -> Points {
    let n = sorted.len() as f64;
    (0..sorted.len())
        .filter(|&i| sorted.get(i + 1) != Some(&sorted[i]))
        .map(|i| (sorted[i] as f64, (i + 1) as f64 / n))
        .collect()
}

/// The SVG document of `series` (name, points): nanoseconds on a log x
/// axis labelled `x_label`, the cumulative fraction on y, labelled
/// `y_label`. An empty series is listed in the legend and draws nothing.
pub fn svg(
    title: &str,
    subtitle: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Points)],
) -> String {
    let x = Axis::log_ns(
        x_label,
        series.iter().flat_map(|(_, p)| p.iter().map(|p| p.0)),
    );
    let mut chart = Chart::new(title, subtitle, x, Axis::fraction(y_label));
    for (name, points) in series {
        let k = chart.series(name);
        chart.line(k, points);
    }
    chart.finish()
}
