//! The machine-readable output: `target/kaspar-bench/<name>.jsonl`, one
//! JSON object per measured value.

use std::fmt::Write as _;
use std::path::PathBuf;

/// Rows for `target/kaspar-bench/<name>.jsonl`, one JSON object per line
/// with keys `table`, `case`, `metric`, `value`, `unit`.
#[derive(Debug)]
pub struct JsonLines {
    name: &'static str,
    lines: String,
}

impl JsonLines {
    /// No rows yet; [`write`](JsonLines::write) names the file `<name>.jsonl`.
    pub fn new(name: &'static str) -> Self {
        JsonLines {
            name,
            lines: String::new(),
        }
    }

    /// Adds one row. A value that is not finite (a case that did not run,
    /// a ratio of nothing) is written as -1, which JSON can carry.
    pub fn record(&mut self, table: &str, case: &str, metric: &str, value: f64, unit: &str) {
        let value = if value.is_finite() { value } else { -1.0 };
        let _ = writeln!(
            self.lines,
            "{{\"table\":{},\"case\":{},\"metric\":{},\"value\":{},\"unit\":{}}}",
            json_str(table),
            json_str(case),
            json_str(metric),
            value,
            json_str(unit)
        );
    }

    /// Writes the file into [`bench_dir`] (replacing the last run's) and
    /// returns its path. Panics if it cannot.
    pub fn write(&self) -> PathBuf {
        let dir = bench_dir();
        std::fs::create_dir_all(&dir).expect("create the bench output folder");
        let path = dir.join(format!("{}.jsonl", self.name));
        std::fs::write(&path, &self.lines).expect("write the bench JSON lines");
        path
    }
}

/// `$CARGO_TARGET_DIR/kaspar-bench`, or `target/kaspar-bench` in the
/// workspace.
pub fn bench_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("kaspar-bench")
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
