//! Hand-written SVG line charts: the one writer behind every chart the
//! suite draws (the paper bench's Table 5 CDF, the tick_to_book charts).
//! One look for all: title and subtitle top left, a grey grid, axis
//! labels, the legend in a column right of the plot, six colours in turn.
//!
//! A [`Chart`] is drawn in the units of its two [`Axis`]es: nanoseconds on
//! a log scale, plain numbers on a linear one, or a cumulative fraction.

use std::fmt::Write as _;

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 500.0;
const LEFT: f64 = 70.0;
/// Room right of the plot for the legend.
const RIGHT: f64 = 230.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
const PLOT_H: f64 = HEIGHT - TOP - BOTTOM;
const COLORS: [&str; 6] = [
    "#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b",
];

/// One axis: its label, how values map onto it, where its grid lines go.
#[derive(Clone, Debug)]
pub struct Axis {
    label: String,
    scale: Scale,
}

#[derive(Clone, Debug)]
enum Scale {
    /// Nanoseconds, log10, from `10^lo` to `10^hi`.
    LogNs { lo: i32, hi: i32 },
    /// `0..=max`, a grid line every `step`, labelled `value / unit`.
    Linear {
        max: f64,
        step: f64,
        unit: f64,
        decimals: usize,
    },
    /// A cumulative fraction, `0..=1`.
    Fraction,
}

/// A grid line: where on the axis (0..=1), its label, and whether it is the
/// p99 line (dashed, labelled inside the plot: it sits too close to 1 for
/// an axis label).
struct GridLine {
    at: f64,
    label: String,
    p99: bool,
}

impl Axis {
    /// Nanoseconds on a log scale, one grid line a decade (`1 ns`,
    /// `10 µs`, `1 ms`, ...), covering every positive value in `values`
    /// (1 ns to 10 ns when there is none). Values below 1 ns sit at 1 ns.
    pub fn log_ns(label: &str, values: impl IntoIterator<Item = f64>) -> Axis {
        let (lo, hi) = values
            .into_iter()
            .filter(|&v| v > 0.0)
            .fold((f64::INFINITY, 1.0f64), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        let lo = (if lo.is_finite() { lo } else { 1.0 }).max(1.0);
        let lo = lo.log10().floor() as i32;
        let hi = (hi.log10().ceil() as i32).max(lo + 1);
        Axis::new(label, Scale::LogNs { lo, hi })
    }

    /// `0..=max` (`max > 0`) on a linear scale, a grid line every `step`
    /// (`step > 0`), each labelled `value / unit` to `decimals` places.
    pub fn linear(label: &str, max: f64, step: f64, unit: f64, decimals: usize) -> Axis {
        Axis::new(
            label,
            Scale::Linear {
                max,
                step,
                unit,
                decimals,
            },
        )
    }

    /// A cumulative fraction, `0..=1`: grid lines at the quartiles, 0.9
    /// and p99.
    pub fn fraction(label: &str) -> Axis {
        Axis::new(label, Scale::Fraction)
    }

    fn new(label: &str, scale: Scale) -> Axis {
        Axis {
            label: label.to_string(),
            scale,
        }
    }

    /// Where `v` falls along the axis, from 0 (start) to 1 (end).
    fn at(&self, v: f64) -> f64 {
        let f = match self.scale {
            Scale::LogNs { lo, hi } => (v.max(1.0).log10() - lo as f64) / (hi - lo) as f64,
            Scale::Linear { max, .. } => v / max,
            Scale::Fraction => v,
        };
        f.clamp(0.0, 1.0)
    }

    /// The axis's grid lines, from its start to its end.
    fn grid(&self) -> Vec<GridLine> {
        let line = |v: f64, label: String| GridLine {
            at: self.at(v),
            label,
            p99: false,
        };
        match self.scale {
            Scale::LogNs { lo, hi } => (lo..=hi)
                .map(|e| line(10f64.powi(e), decade_label(e)))
                .collect(),
            Scale::Linear {
                max,
                step,
                unit,
                decimals,
            } => (0..=(max / step + 1e-9).floor() as u32)
                .map(|k| {
                    let v = k as f64 * step;
                    line(v, format!("{:.*}", decimals, v / unit))
                })
                .collect(),
            Scale::Fraction => [0.0, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0]
                .into_iter()
                .map(|q| {
                    let p99 = q == 0.99;
                    let label = if p99 { "p99".into() } else { q.to_string() };
                    GridLine {
                        p99,
                        ..line(q, label)
                    }
                })
                .collect(),
        }
    }
}

/// `1 ns`, `10 ns`, ..., `1 µs`, ..., `1 s`, ...: the label of `10^exp` ns.
fn decade_label(exp: i32) -> String {
    match exp {
        e if e < 3 => format!("{} ns", 10u64.pow(e.max(0) as u32)),
        e if e < 6 => format!("{} µs", 10u64.pow((e - 3) as u32)),
        e if e < 9 => format!("{} ms", 10u64.pow((e - 6) as u32)),
        e => format!("{} s", 10u64.pow((e - 9) as u32)),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// An SVG document being drawn. Series are drawn in the order they are
/// added, each in its own colour, and listed in the legend.
#[derive(Debug)]
pub struct Chart {
    svg: String,
    x: Axis,
    y: Axis,
    legend: Vec<String>,
}

impl Chart {
    /// A chart with its frame, grid and axis labels drawn; an empty
    /// `subtitle` is left out.
    pub fn new(title: &str, subtitle: &str, x: Axis, y: Axis) -> Chart {
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(
            s,
            r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{LEFT}" y="22" font-size="15" font-weight="bold">{}</text>"#,
            escape(title)
        );
        if !subtitle.is_empty() {
            let _ = writeln!(
                s,
                r##"<text x="{LEFT}" y="38" fill="#555">{}</text>"##,
                escape(subtitle)
            );
        }
        let bottom = TOP + PLOT_H;
        for g in x.grid() {
            let px = LEFT + g.at * PLOT_W;
            let _ = writeln!(
                s,
                r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{bottom:.1}" stroke="#ddd"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                bottom + 18.0,
                escape(&g.label)
            );
        }
        for g in y.grid() {
            let py = TOP + (1.0 - g.at) * PLOT_H;
            let (dash, lx, ly, anchor) = if g.p99 {
                (r#" stroke-dasharray="4 3""#, LEFT + 4.0, py + 12.0, "start")
            } else {
                ("", LEFT - 6.0, py + 4.0, "end")
            };
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#ddd"{dash}/><text x="{lx:.1}" y="{ly:.1}" text-anchor="{anchor}">{}</text>"##,
                LEFT + PLOT_W,
                escape(&g.label)
            );
        }
        let _ = writeln!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="#333"/>"##
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + PLOT_W / 2.0,
            HEIGHT - 14.0,
            escape(&x.label)
        );
        let _ = writeln!(
            s,
            r#"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + PLOT_H / 2.0,
            escape(&y.label)
        );
        Chart {
            svg: s,
            x,
            y,
            legend: Vec::new(),
        }
    }

    /// Adds a series to the legend; returns its number, for the drawing
    /// calls, which draw in its colour.
    pub fn series(&mut self, name: &str) -> usize {
        self.legend.push(name.to_string());
        self.legend.len() - 1
    }

    /// A line through `points` (x, y in axis units). A point within half a
    /// pixel of the last one drawn is skipped, which the eye cannot tell,
    /// except the final point.
    pub fn line(&mut self, series: usize, points: &[(f64, f64)]) {
        let mut drawn = String::new();
        let mut last = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for (k, &p) in points.iter().enumerate() {
            let (px, py) = self.pixel(p);
            let close = (px - last.0).abs() < 0.5 && (py - last.1).abs() < 0.5;
            if close && k + 1 < points.len() {
                continue;
            }
            last = (px, py);
            let _ = write!(drawn, "{px:.1},{py:.1} ");
        }
        if drawn.is_empty() {
            return;
        }
        let _ = writeln!(
            self.svg,
            r#"<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>"#,
            color(series),
            drawn.trim_end()
        );
    }

    /// A dot at each of `points`.
    pub fn dots(&mut self, series: usize, points: &[(f64, f64)]) {
        for &p in points {
            let (px, py) = self.pixel(p);
            let _ = writeln!(
                self.svg,
                r#"<circle cx="{px:.1}" cy="{py:.1}" r="2.5" fill="{}"/>"#,
                color(series)
            );
        }
    }

    /// A dashed straight line from `from` to `to`.
    pub fn dashed(&mut self, series: usize, from: (f64, f64), to: (f64, f64)) {
        let ((x1, y1), (x2, y2)) = (self.pixel(from), self.pixel(to));
        let _ = writeln!(
            self.svg,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{}" stroke-dasharray="5,4"/>"#,
            color(series)
        );
    }

    /// The finished document: the legend, then the closing tag.
    pub fn finish(mut self) -> String {
        let lx = LEFT + PLOT_W + 14.0;
        for (k, name) in self.legend.iter().enumerate() {
            let ly = TOP + 10.0 + k as f64 * 20.0;
            let _ = writeln!(
                self.svg,
                r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{}" stroke-width="3"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                lx + 22.0,
                color(k),
                lx + 28.0,
                ly + 4.0,
                escape(name)
            );
        }
        self.svg.push_str("</svg>\n");
        self.svg
    }

    fn pixel(&self, (x, y): (f64, f64)) -> (f64, f64) {
        (
            LEFT + self.x.at(x) * PLOT_W,
            TOP + (1.0 - self.y.at(y)) * PLOT_H,
        )
    }
}

fn color(series: usize) -> &'static str {
    COLORS[series % COLORS.len()]
}
