//! Latency CDFs: a distribution's cumulative fraction as points, from an
//! hdrhistogram or from sorted samples, and the chart of several of them
//! (latency on a log x axis, one curve per series); and the CDF as JSON
//! rows, one per fraction of a fixed [`ladder`] (`metric` `cdf@0.995`),
//! from which `cargo run --release --bin figures` draws it again.

use hdrhistogram::Histogram;

use super::svg::{Axis, Chart};
use super::JsonLines;

/// The `metric` of a quantile row starts with this, then the fraction.
pub const METRIC_PREFIX: &str = "cdf@";

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

/// The fractions a CDF is recorded at: 0 (the minimum), every 0.5 % to
/// 99.5 %, then 99.6, 99.7, 99.8, 99.9, 99.95, 99.99 % and 1 (the maximum):
/// 207 rows, enough for a curve that the eye cannot tell from the full one.
pub fn ladder() -> Vec<f64> {
    (0..200u32)
        .map(|k| f64::from(k) * 50.0)
        .chain([
            9_960.0, 9_970.0, 9_980.0, 9_990.0, 9_995.0, 9_999.0, 10_000.0,
        ])
        .map(|per_10k| per_10k / 10_000.0)
        .collect()
}

/// `(fraction, ns)` at each fraction of [`ladder`]: the smallest latency
/// whose cumulative fraction reaches it (the first point's at 0), from
/// `points` by increasing latency and fraction, as [`Points`]. Empty for no
/// points.
pub fn quantiles(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let Some(last) = points.last() else {
        return Vec::new();
    };
    ladder()
        .into_iter()
        .map(|q| {
            let k = points.partition_point(|p| p.1 < q - 1e-12);
            (q, points.get(k).unwrap_or(last).0)
        })
        .collect()
}

/// Records the [`quantiles`] of `points` as rows of `table` and `case`,
/// `metric` [`METRIC_PREFIX`] + the fraction, in ns.
pub fn record(json: &mut JsonLines, table: &str, case: &str, points: &[(f64, f64)]) {
    for (q, ns) in quantiles(points) {
        json.record(table, case, &format!("{METRIC_PREFIX}{q}"), ns, "ns");
    }
}

/// The fraction a quantile row's `metric` names; `None` for another metric.
pub fn metric_fraction(metric: &str) -> Option<f64> {
    metric.strip_prefix(METRIC_PREFIX)?.parse().ok()
}

/// A curve to draw from `(fraction, ns)` quantiles (in any order): the
/// points by increasing fraction, as [`Points`].
pub fn from_quantiles(quantiles: &[(f64, f64)]) -> Points {
    let mut q = quantiles.to_vec();
    q.sort_by(|a, b| a.0.total_cmp(&b.0));
    q.into_iter().map(|(f, ns)| (ns, f)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_runs_from_the_minimum_to_the_maximum() {
        let l = ladder();
        assert_eq!(l.len(), 207);
        assert_eq!(l[0], 0.0);
        assert_eq!(l[1], 0.005);
        assert_eq!(l[199], 0.995);
        assert_eq!(*l.last().unwrap(), 1.0);
        assert!(l.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(format!("{METRIC_PREFIX}{}", l[203]), "cdf@0.999");
    }

    #[test]
    fn quantiles_of_samples_round_trip_through_their_metric_names() {
        let sorted: Vec<u64> = (1..=1000).collect();
        let q = quantiles(&from_sorted(&sorted));
        let at = |f: f64| q.iter().find(|p| p.0 == f).unwrap().1;
        assert_eq!(at(0.0), 1.0);
        assert_eq!(at(0.5), 500.0);
        assert_eq!(at(0.999), 999.0);
        assert_eq!(at(1.0), 1000.0);
        assert_eq!(
            metric_fraction(&format!("{METRIC_PREFIX}{}", 0.9995)),
            Some(0.9995)
        );
        assert_eq!(metric_fraction("p99_ns"), None);
        let curve = from_quantiles(&[(1.0, 9.0), (0.0, 1.0), (0.5, 4.0)]);
        assert_eq!(curve, vec![(1.0, 0.0), (4.0, 0.5), (9.0, 1.0)]);
        assert!(quantiles(&[]).is_empty());
    }
}
