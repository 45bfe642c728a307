//! A latency CDF as a plain, hand-written SVG: latency on a log10 x axis,
//! cumulative fraction of samples on the y axis, one line per series.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 500.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 6] = [
    "#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b",
];

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

/// The SVG document for `series` (name, histogram of ns).
pub fn svg(title: &str, subtitle: &str, series: &[(&str, &Histogram<u64>)]) -> String {
    let nonempty = series.iter().filter(|(_, h)| !h.is_empty());
    let lo = nonempty
        .clone()
        .map(|(_, h)| h.min().max(1))
        .min()
        .unwrap_or(1);
    let hi = nonempty.map(|(_, h)| h.max().max(1)).max().unwrap_or(10);
    let lo_exp = (lo as f64).log10().floor() as i32;
    let hi_exp = ((hi as f64).log10().ceil() as i32).max(lo_exp + 1);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x_of =
        |ns: f64| LEFT + (ns.max(1.0).log10() - lo_exp as f64) / (hi_exp - lo_exp) as f64 * plot_w;
    let y_of = |q: f64| TOP + (1.0 - q) * plot_h;

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="22" font-size="15" font-weight="bold">{}</text>"#,
        escape(title)
    );
    let _ = writeln!(
        out,
        r##"<text x="{LEFT}" y="38" fill="#555">{}</text>"##,
        escape(subtitle)
    );
    // Decade grid and labels on x.
    for e in lo_exp..=hi_exp {
        let x = x_of(10f64.powi(e));
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 18.0,
            decade_label(e)
        );
    }
    // Quartiles and p99 on y.
    for q in [0.0, 0.25, 0.5, 0.75, 0.99, 1.0] {
        let y = y_of(q);
        let dash = if q == 0.99 {
            r#" stroke-dasharray="4 3""#
        } else {
            ""
        };
        // p99 sits too close to 1 for an axis label: name it inside the
        // plot, just under its line.
        let (label, lx, ly, anchor) = if q == 0.99 {
            ("p99".to_string(), LEFT + 4.0, y + 12.0, "start")
        } else {
            (q.to_string(), LEFT - 6.0, y + 4.0, "end")
        };
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"{dash}/><text x="{lx:.1}" y="{ly:.1}" text-anchor="{anchor}">{label}</text>"##,
            LEFT + plot_w,
        );
    }
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>"##
    );
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">round-trip latency (log scale)</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 14.0
    );
    let _ = writeln!(
        out,
        r#"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">fraction of round trips ≤ x</text>"#,
        TOP + plot_h / 2.0
    );
    for (i, (name, hist)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let total = hist.len().max(1) as f64;
        let mut points = String::new();
        let mut seen = 0u64;
        let mut last_x = f64::NEG_INFINITY;
        let recorded: Vec<_> = hist.iter_recorded().collect();
        for (k, v) in recorded.iter().enumerate() {
            seen += v.count_since_last_iteration();
            let x = x_of(v.value_iterated_to() as f64);
            // One point per half pixel is all the eye can see.
            if x - last_x < 0.5 && k + 1 < recorded.len() {
                continue;
            }
            last_x = x;
            let _ = write!(points, "{x:.1},{:.1} ", y_of(seen as f64 / total));
        }
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            points.trim_end()
        );
        let ly = TOP + 10.0 + i as f64 * 20.0;
        let lx = LEFT + plot_w + 14.0;
        let _ = writeln!(
            out,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="3"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 22.0,
            lx + 28.0,
            ly + 4.0,
            escape(name)
        );
    }
    out.push_str("</svg>\n");
    out
}
