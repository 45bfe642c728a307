//! Hand-written SVG charts: the one writer behind every chart the suite
//! draws (the paper bench's Table 5 CDF, the tick_to_book charts, the
//! book's figures). One look for all: title and subtitle top left, a grey
//! grid, axis labels, the legend in a column right of the plot, twelve
//! colours in turn, and under the plot, if any, caption lines (the book's
//! figures put their machine, date and command there).
//!
//! A [`Chart`] draws lines and dots in the units of its two [`Axis`]es:
//! nanoseconds on a log scale, plain numbers on a linear one, or a
//! cumulative fraction. A [`BarChart`] draws groups of bars, one per
//! series, against one such axis, each bar labelled with its value and
//! optionally with a whisker (a p99 over a p50 bar).

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
const COLORS: [&str; 12] = [
    "#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#e7969c",
];
/// A caption line's height; the captions start under the x axis's label.
const CAPTION_LINE: f64 = 15.0;
/// Characters of a caption line (11 px sans-serif, the width right of
/// `LEFT`), where [`wrap`] breaks it.
const CAPTION_CHARS: usize = 122;

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

    /// `0` to a round number at or above `top` (at least 5 % above it, for
    /// the labels of bars), a grid line every 1, 2, 2.5 or 5 times a power
    /// of ten, about five in all, labelled in the values' own unit.
    pub fn linear_to(label: &str, top: f64) -> Axis {
        let top = if top.is_finite() && top > 0.0 {
            top
        } else {
            1.0
        };
        let step = nice_step(top / 5.0);
        let max = (top * 1.05 / step).ceil() * step;
        let decimals = (0..6)
            .find(|&d| {
                let scaled = step * 10f64.powi(d as i32);
                (scaled - scaled.round()).abs() < 1e-9
            })
            .unwrap_or(6);
        Axis::linear(label, max, step, 1.0, decimals)
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

    /// `v` written for a bar's label, in the axis's unit, three significant
    /// digits: `38.2 ns`, `1.60 µs`; `12.5` on a linear axis (its label
    /// names the unit).
    pub fn value_label(&self, v: f64) -> String {
        match self.scale {
            Scale::LogNs { .. } => fmt_ns(v),
            Scale::Linear { unit, .. } => sig3(v / unit),
            Scale::Fraction => format!("{v:.3}"),
        }
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

/// 1, 2, 2.5, 5 or 10 times a power of ten: the smallest at or above `raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = [1.0, 2.0, 2.5, 5.0]
        .into_iter()
        .find(|&m| norm <= m + 1e-9)
        .unwrap_or(10.0);
    m * mag
}

/// `x` to three significant digits (whole numbers keep all theirs).
fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.decimals$}")
}

/// Nanoseconds in the largest unit that keeps them at or above 1, three
/// significant digits: `5.41 ns`, `38.2 ns`, `1.60 µs`, `23.1 ms`, `8.86 s`.
fn fmt_ns(ns: f64) -> String {
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", sig3(v))
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

/// `text` broken into lines of at most `width` characters at spaces (a
/// longer word keeps a line of its own); a `\n` always breaks.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            let len = line.chars().count();
            if len > 0 && len + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

/// What a legend entry shows: a stroke (lines) or a filled square (bars).
#[derive(Clone, Copy)]
enum Swatch {
    Line,
    Square,
}

/// What every chart draws around its marks: the title, the axes' labels,
/// the legend, the caption lines.
#[derive(Debug)]
struct Frame {
    title: String,
    subtitle: String,
    x_label: String,
    y: Axis,
    legend: Vec<String>,
    captions: Vec<String>,
}

impl Frame {
    fn new(title: &str, subtitle: &str, x_label: &str, y: Axis) -> Frame {
        Frame {
            title: title.to_string(),
            subtitle: subtitle.to_string(),
            x_label: x_label.to_string(),
            y,
            legend: Vec::new(),
            captions: Vec::new(),
        }
    }

    fn caption(&mut self, text: &str) {
        self.captions.extend(wrap(text, CAPTION_CHARS));
    }

    /// The document: the frame with `x_marks` (the x axis's grid or the
    /// bar groups' labels) and `marks` (the data) drawn in it.
    fn document(&self, x_marks: &str, marks: &str, swatch: Swatch) -> String {
        let height = if self.captions.is_empty() {
            HEIGHT
        } else {
            HEIGHT + 8.0 + self.captions.len() as f64 * CAPTION_LINE
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(
            s,
            r#"<rect width="{WIDTH}" height="{height}" fill="white"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{LEFT}" y="22" font-size="15" font-weight="bold">{}</text>"#,
            escape(&self.title)
        );
        if !self.subtitle.is_empty() {
            let _ = writeln!(
                s,
                r##"<text x="{LEFT}" y="38" fill="#555">{}</text>"##,
                escape(&self.subtitle)
            );
        }
        s.push_str(x_marks);
        for g in self.y.grid() {
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
        if !self.x_label.is_empty() {
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                LEFT + PLOT_W / 2.0,
                HEIGHT - 14.0,
                escape(&self.x_label)
            );
        }
        let _ = writeln!(
            s,
            r#"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + PLOT_H / 2.0,
            escape(&self.y.label)
        );
        s.push_str(marks);
        let lx = LEFT + PLOT_W + 14.0;
        for (k, name) in self.legend.iter().enumerate() {
            let ly = TOP + 10.0 + k as f64 * 20.0;
            let mark = match swatch {
                Swatch::Line => format!(
                    r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{}" stroke-width="3"/>"#,
                    lx + 22.0,
                    color(k)
                ),
                Swatch::Square => format!(
                    r#"<rect x="{:.1}" y="{:.1}" width="12" height="12" fill="{}"/>"#,
                    lx + 5.0,
                    ly - 6.0,
                    color(k)
                ),
            };
            let _ = writeln!(
                s,
                r#"{mark}<text x="{:.1}" y="{:.1}">{}</text>"#,
                lx + 28.0,
                ly + 4.0,
                escape(name)
            );
        }
        if !self.captions.is_empty() {
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#bbb"/>"##,
                HEIGHT + 1.0,
                WIDTH - 16.0,
                HEIGHT + 1.0
            );
        }
        for (k, line) in self.captions.iter().enumerate() {
            let _ = writeln!(
                s,
                r##"<text x="{LEFT}" y="{:.1}" font-size="11" fill="#444">{}</text>"##,
                HEIGHT + 2.0 + (k + 1) as f64 * CAPTION_LINE,
                escape(line)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

/// An SVG line chart being drawn. Series are drawn in the order they are
/// added, each in its own colour, and listed in the legend.
#[derive(Debug)]
pub struct Chart {
    frame: Frame,
    marks: String,
    x: Axis,
}

impl Chart {
    /// A chart with its frame, grid and axis labels; an empty `subtitle`
    /// is left out.
    pub fn new(title: &str, subtitle: &str, x: Axis, y: Axis) -> Chart {
        Chart {
            frame: Frame::new(title, subtitle, &x.label, y),
            marks: String::new(),
            x,
        }
    }

    /// Adds a series to the legend; returns its number, for the drawing
    /// calls, which draw in its colour.
    pub fn series(&mut self, name: &str) -> usize {
        self.frame.legend.push(name.to_string());
        self.frame.legend.len() - 1
    }

    /// Adds a caption under the chart, broken into lines that fit it.
    pub fn caption(&mut self, text: &str) {
        self.frame.caption(text);
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
            self.marks,
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
                self.marks,
                r#"<circle cx="{px:.1}" cy="{py:.1}" r="2.5" fill="{}"/>"#,
                color(series)
            );
        }
    }

    /// A dashed straight line from `from` to `to`.
    pub fn dashed(&mut self, series: usize, from: (f64, f64), to: (f64, f64)) {
        let ((x1, y1), (x2, y2)) = (self.pixel(from), self.pixel(to));
        let _ = writeln!(
            self.marks,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{}" stroke-dasharray="5,4"/>"#,
            color(series)
        );
    }

    /// The finished document.
    pub fn finish(self) -> String {
        let bottom = TOP + PLOT_H;
        let mut grid = String::new();
        for g in self.x.grid() {
            let px = LEFT + g.at * PLOT_W;
            let _ = writeln!(
                grid,
                r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{bottom:.1}" stroke="#ddd"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                bottom + 18.0,
                escape(&g.label)
            );
        }
        self.frame.document(&grid, &self.marks, Swatch::Line)
    }

    fn pixel(&self, (x, y): (f64, f64)) -> (f64, f64) {
        (
            LEFT + self.x.at(x) * PLOT_W,
            TOP + (1.0 - self.frame.y.at(y)) * PLOT_H,
        )
    }
}

/// One bar: its group, its series, its value and its whisker's end.
#[derive(Debug)]
struct Bar {
    group: usize,
    series: usize,
    value: f64,
    whisker: Option<f64>,
}

/// An SVG bar chart being drawn: groups along x (labelled under the plot),
/// in each a bar per series that has a value there, side by side in the
/// order the series were added, each in its series' colour and labelled
/// with its value; the value axis on y.
#[derive(Debug)]
pub struct BarChart {
    frame: Frame,
    groups: Vec<String>,
    bars: Vec<Bar>,
}

impl BarChart {
    /// A chart with its frame, `y` and its grid; the groups' axis is
    /// labelled `x_label` (left out when empty), and an empty `subtitle`
    /// is left out.
    pub fn new(title: &str, subtitle: &str, x_label: &str, y: Axis) -> BarChart {
        BarChart {
            frame: Frame::new(title, subtitle, x_label, y),
            groups: Vec::new(),
            bars: Vec::new(),
        }
    }

    /// Adds a group; returns its number. A `\n` in `label` breaks it.
    pub fn group(&mut self, label: &str) -> usize {
        self.groups.push(label.to_string());
        self.groups.len() - 1
    }

    /// Adds a series to the legend; returns its number.
    pub fn series(&mut self, name: &str) -> usize {
        self.frame.legend.push(name.to_string());
        self.frame.legend.len() - 1
    }

    /// Adds a caption under the chart, broken into lines that fit it.
    pub fn caption(&mut self, text: &str) {
        self.frame.caption(text);
    }

    /// A bar of `value` for `series` in `group`. A value that is not
    /// positive and finite draws nothing.
    pub fn bar(&mut self, group: usize, series: usize, value: f64) {
        self.push(group, series, value, None);
    }

    /// A bar of `value` with a whisker from its top to `to` (a p99 over a
    /// p50), capped; a `to` that is not finite draws no whisker.
    pub fn whiskered(&mut self, group: usize, series: usize, value: f64, to: f64) {
        self.push(group, series, value, to.is_finite().then_some(to));
    }

    fn push(&mut self, group: usize, series: usize, value: f64, whisker: Option<f64>) {
        if value.is_finite() && value > 0.0 {
            self.bars.push(Bar {
                group,
                series,
                value,
                whisker,
            });
        }
    }

    /// The finished document.
    pub fn finish(mut self) -> String {
        let bottom = TOP + PLOT_H;
        let n = self.groups.len().max(1);
        let group_w = PLOT_W / n as f64;
        let per_group = |g: usize| self.bars.iter().filter(|b| b.group == g).count();
        let slots = (0..n).map(per_group).max().unwrap_or(1).max(1);
        let bar_w = group_w * 0.84 / slots as f64;
        let mut labels = String::new();
        for (g, label) in self.groups.iter().enumerate() {
            let cx = LEFT + (g as f64 + 0.5) * group_w;
            if g > 0 {
                let x = LEFT + g as f64 * group_w;
                let _ = writeln!(
                    labels,
                    r##"<line x1="{x:.1}" y1="{bottom:.1}" x2="{x:.1}" y2="{:.1}" stroke="#999"/>"##,
                    bottom + 6.0
                );
            }
            for (k, line) in label.split('\n').enumerate() {
                let _ = writeln!(
                    labels,
                    r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                    bottom + 18.0 + k as f64 * 14.0,
                    escape(line)
                );
            }
        }
        self.bars.sort_by_key(|b| (b.group, b.series));
        let mut marks = String::new();
        let y_px = |v: f64| TOP + (1.0 - self.frame.y.at(v)) * PLOT_H;
        for g in 0..n {
            let in_group: Vec<&Bar> = self.bars.iter().filter(|b| b.group == g).collect();
            let start = LEFT + (g as f64 + 0.5) * group_w - in_group.len() as f64 * bar_w / 2.0;
            for (k, b) in in_group.iter().enumerate() {
                let x = start + k as f64 * bar_w + bar_w * 0.08;
                let w = bar_w * 0.84;
                let cx = x + w / 2.0;
                let top = y_px(b.value);
                let _ = writeln!(
                    marks,
                    r#"<rect x="{x:.1}" y="{top:.1}" width="{w:.1}" height="{:.1}" fill="{}"/>"#,
                    bottom - top,
                    color(b.series)
                );
                let mut label_top = top;
                if let Some(to) = b.whisker {
                    let wy = y_px(to);
                    let cap = (w * 0.25).min(6.0);
                    let _ = writeln!(
                        marks,
                        r##"<line x1="{cx:.1}" y1="{top:.1}" x2="{cx:.1}" y2="{wy:.1}" stroke="#222"/><line x1="{:.1}" y1="{wy:.1}" x2="{:.1}" y2="{wy:.1}" stroke="#222"/>"##,
                        cx - cap,
                        cx + cap
                    );
                    label_top = label_top.min(wy);
                }
                let text = escape(&self.frame.y.value_label(b.value));
                let len = text.chars().count() as f64 * 5.6;
                let _ = if w >= len + 4.0 {
                    if label_top - 16.0 >= TOP {
                        writeln!(
                            marks,
                            r#"<text x="{cx:.1}" y="{:.1}" font-size="10" text-anchor="middle">{text}</text>"#,
                            label_top - 4.0
                        )
                    } else {
                        writeln!(
                            marks,
                            r#"<text x="{cx:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="white">{text}</text>"#,
                            top + 13.0
                        )
                    }
                } else if label_top - 6.0 - len >= TOP {
                    writeln!(
                        marks,
                        r#"<text transform="translate({:.1},{:.1}) rotate(-90)" font-size="10">{text}</text>"#,
                        cx + 3.5,
                        label_top - 4.0
                    )
                } else {
                    writeln!(
                        marks,
                        r#"<text transform="translate({:.1},{:.1}) rotate(-90)" font-size="10" text-anchor="end" fill="white">{text}</text>"#,
                        cx + 3.5,
                        top + 4.0
                    )
                };
            }
        }
        self.frame.document(&labels, &marks, Swatch::Square)
    }
}

fn color(series: usize) -> &'static str {
    COLORS[series % COLORS.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ats(axis: &Axis) -> Vec<(f64, String)> {
        axis.grid()
            .into_iter()
            .map(|g| ((g.at * 1e6).round() / 1e6, g.label))
            .collect()
    }

    #[test]
    fn a_log_axis_has_a_labelled_line_per_decade_covering_the_values() {
        let axis = Axis::log_ns("t", [35.0, 1_200.0, 0.0, -3.0, 48_000.0]);
        assert_eq!(
            ats(&axis),
            vec![
                (0.0, "10 ns".to_string()),
                (0.25, "100 ns".to_string()),
                (0.5, "1 µs".to_string()),
                (0.75, "10 µs".to_string()),
                (1.0, "100 µs".to_string()),
            ]
        );
        assert_eq!(axis.at(1_000.0), 0.5);
        assert_eq!(axis.at(1e9), 1.0);
        let empty = Axis::log_ns("t", []);
        assert_eq!(ats(&empty).len(), 2);
        assert_eq!(decade_label(9), "1 s");
        assert_eq!(decade_label(7), "10 ms");
    }

    #[test]
    fn a_linear_axis_to_a_value_ends_on_a_round_step_above_it() {
        let labels = |a: &Axis| ats(a).into_iter().map(|g| g.1).collect::<Vec<_>>();
        assert_eq!(labels(&Axis::linear_to("m", 13.6)), ["0", "5", "10", "15"]);
        assert_eq!(
            labels(&Axis::linear_to("ns", 18.9)),
            ["0", "5", "10", "15", "20"]
        );
        assert_eq!(
            labels(&Axis::linear_to("x", 1.1)),
            ["0.00", "0.25", "0.50", "0.75", "1.00", "1.25"]
        );
        assert_eq!(nice_step(0.23), 0.25);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(70.0), 100.0);
    }

    #[test]
    fn values_are_labelled_to_three_significant_digits() {
        let ns = Axis::log_ns("t", [1.0, 1e9]);
        assert_eq!(ns.value_label(5.409), "5.41 ns");
        assert_eq!(ns.value_label(38.24), "38.2 ns");
        assert_eq!(ns.value_label(1_600.0), "1.60 µs");
        assert_eq!(ns.value_label(23_100_000.0), "23.1 ms");
        assert_eq!(ns.value_label(8_856e6), "8.86 s");
        assert_eq!(Axis::linear_to("M", 14.0).value_label(13.6), "13.6");
        assert_eq!(Axis::linear_to("M", 14.0).value_label(0.512), "0.512");
    }

    #[test]
    fn captions_wrap_at_spaces_and_at_newlines() {
        assert_eq!(wrap("aa bb cc dd", 5), ["aa bb", "cc dd"]);
        assert_eq!(wrap("a\nb c", 10), ["a", "b c"]);
        assert_eq!(wrap("longword x", 4), ["longword", "x"]);
    }

    #[test]
    fn a_bar_chart_draws_each_bar_its_whisker_and_its_caption() {
        let mut c = BarChart::new("T", "", "", Axis::log_ns("ns", [10.0, 1e4]));
        let (a, b) = (c.group("ask"), c.group("tell"));
        let (s, t) = (c.series("one"), c.series("two"));
        c.whiskered(a, s, 100.0, 900.0);
        c.bar(a, t, 200.0);
        c.bar(b, t, 50.0);
        c.bar(b, s, f64::NAN);
        c.caption("made by cargo <here> & there");
        let svg = c.finish();
        // The background, the plot frame, three bars and two legend squares.
        assert_eq!(svg.matches("<rect").count(), 7);
        assert_eq!(svg.matches(r##"stroke="#222""##).count(), 2);
        assert!(svg.contains(">100 ns<") && svg.contains(">50.0 ns<"));
        assert!(svg.contains("made by cargo &lt;here&gt; &amp; there"));
        assert!(
            svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="860" height="523""#)
        );
        // Without a caption a chart keeps its height.
        let plain = Chart::new("T", "", Axis::fraction("x"), Axis::fraction("y")).finish();
        assert!(plain.contains(r#"height="500""#));
    }
}
