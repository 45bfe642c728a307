//! Order statistics over samples, and the one histogram shape every
//! latency here is recorded in.

use hdrhistogram::Histogram;

/// The `q` quantile (0..=1) of `values`, by nearest rank; sorts in place.
/// NaN for no values.
pub fn percentile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let rank = (q.clamp(0.0, 1.0) * (values.len() - 1) as f64).round() as usize;
    values[rank]
}

/// The median of `values` (for an even count, the upper of the middle
/// two); sorts in place. NaN for no values.
pub fn median(values: &mut [f64]) -> f64 {
    percentile(values, 0.5)
}

/// An empty latency histogram: 1 ns to 60 s, three significant digits.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds")
}
