//! The machine-readable output: `target/kaspar-bench/<name>.jsonl`, one
//! JSON object per measured value, each saying where it was measured.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::Machine;

/// Rows for `target/kaspar-bench/<name>.jsonl`, one JSON object per line
/// with keys `table`, `case`, `metric`, `value`, `unit`, then the run's
/// [`Provenance`]: `machine`, `date`, `load`, `command`.
#[derive(Debug)]
pub struct JsonLines {
    name: &'static str,
    lines: String,
    provenance: String,
}

impl JsonLines {
    /// No rows yet; [`write`](JsonLines::write) names the file `<name>.jsonl`.
    /// Every row will carry this process's [`Provenance::detect`].
    pub fn new(name: &'static str) -> Self {
        JsonLines {
            name,
            lines: String::new(),
            provenance: Provenance::detect().json_members(),
        }
    }

    /// Adds one row. A value that is not finite (a case that did not run,
    /// a ratio of nothing) is written as -1, which JSON can carry.
    pub fn record(&mut self, table: &str, case: &str, metric: &str, value: f64, unit: &str) {
        let value = if value.is_finite() { value } else { -1.0 };
        let _ = writeln!(
            self.lines,
            "{{\"table\":{},\"case\":{},\"metric\":{},\"value\":{},\"unit\":{}{}}}",
            json_str(table),
            json_str(case),
            json_str(metric),
            value,
            json_str(unit),
            self.provenance
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

/// Where a run's rows come from, written into each of them: the machine
/// (cores and CPU model, as [`Machine`] reads them), the UTC date, the
/// load average when the rows were written (a shared machine's numbers
/// depend on it), and the command that made them.
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// `2 cores, Intel(R) Xeon(R) ...`.
    pub machine: String,
    /// `YYYY-MM-DD`, UTC.
    pub date: String,
    /// The 1-minute load average from `/proc/loadavg`, or `unknown`.
    pub load: String,
    /// The command line, e.g. `cargo bench --bench paper -- --quick`.
    pub command: String,
}

impl Provenance {
    /// This process: its machine, today, and the cargo command that runs
    /// its binary, rebuilt from its arguments and this package's enabled
    /// features by [`command_line`].
    pub fn detect() -> Provenance {
        let args: Vec<String> = std::env::args().collect();
        Provenance::with_command(command_line(&args, &enabled_features()))
    }

    /// This process's machine, today, and `command`: for a binary whose
    /// cargo command [`command_line`] cannot rebuild (another package's
    /// bench, features).
    pub fn with_command(command: String) -> Provenance {
        let m = Machine::detect();
        let load = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|s| s.split_whitespace().next().map(str::to_string))
            .unwrap_or_else(|| "unknown".into());
        Provenance {
            machine: format!("{} cores, {}", m.cores, m.cpu),
            date: utc_date(SystemTime::now()),
            load,
            command,
        }
    }

    /// The four fields as JSON object members, each after a comma, to end
    /// a row with.
    pub fn json_members(&self) -> String {
        format!(
            ",\"machine\":{},\"date\":{},\"load\":{},\"command\":{}",
            json_str(&self.machine),
            json_str(&self.date),
            json_str(&self.load),
            json_str(&self.command)
        )
    }
}

/// This package's features that the running binary was built with (a
/// bench that requires `metrics` runs only with it, and its command must
/// say so).
fn enabled_features() -> Vec<&'static str> {
    [
        ("console", cfg!(feature = "console")),
        ("metrics", cfg!(feature = "metrics")),
        ("sim", cfg!(feature = "sim")),
        ("tokio", cfg!(feature = "tokio")),
        ("tracing", cfg!(feature = "tracing")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect()
}

/// The cargo command that runs the binary `args[0]` with the rest of
/// `args`, built with `features` of this package: `cargo bench --bench
/// NAME` for a bench (`deps/NAME-<hash>`), `cargo run --release --example
/// NAME` for an example, `cargo run --release --bin NAME` otherwise, each
/// with `--features a,b` when there are any; then ` -- ` and the
/// arguments, less the `--bench` cargo adds.
pub fn command_line(args: &[String], features: &[&str]) -> String {
    let exe = Path::new(args.first().map_or("", String::as_str));
    let stem = exe.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
    let (name, hashed) = match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            (name, true)
        }
        _ => (stem, false),
    };
    let parent = exe
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|p| p.to_str());
    let features = if features.is_empty() {
        String::new()
    } else {
        format!(" --features {}", features.join(","))
    };
    let mut command = match parent {
        Some("examples") => format!("cargo run --release{features} --example {name}"),
        Some("deps") if hashed => format!("cargo bench{features} --bench {name}"),
        _ => format!("cargo run --release{features} --bin {name}"),
    };
    let rest: Vec<String> = args
        .iter()
        .skip(1)
        .filter(|a| *a != "--bench")
        .map(|a| {
            if a.is_empty() || a.contains(char::is_whitespace) {
                format!("'{a}'")
            } else {
                a.clone()
            }
        })
        .collect();
    if !rest.is_empty() {
        command.push_str(" -- ");
        command.push_str(&rest.join(" "));
    }
    command
}

/// `t` as a UTC date, `YYYY-MM-DD` (`1970-01-01` for a time before it).
pub fn utc_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian (year, month, day) of a count of days since
/// 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_bench_an_example_and_a_bin_get_their_cargo_commands() {
        let paper = args(&[
            "/w/target/release/deps/paper-0123456789abcdef",
            "--quick",
            "--bench",
        ]);
        assert_eq!(
            command_line(&paper, &[]),
            "cargo bench --bench paper -- --quick"
        );
        let example = args(&["target/release/examples/tick_to_book", "--secs", "2"]);
        assert_eq!(
            command_line(&example, &[]),
            "cargo run --release --example tick_to_book -- --secs 2"
        );
        assert_eq!(
            command_line(&args(&["target/release/figures", "a b"]), &[]),
            "cargo run --release --bin figures -- 'a b'"
        );
        let saturation = args(&[
            "/w/target/release/deps/saturation-0123456789abcdef",
            "--bench",
        ]);
        assert_eq!(
            command_line(&saturation, &[]),
            "cargo bench --bench saturation"
        );
    }

    #[test]
    fn the_features_a_binary_was_built_with_are_in_its_command() {
        assert_eq!(
            command_line(
                &args(&[
                    "/w/target/release/deps/metrics-0123456789abcdef",
                    "--quick",
                    "--bench"
                ]),
                &["metrics", "tracing"]
            ),
            "cargo bench --features metrics,tracing --bench metrics -- --quick"
        );
        assert_eq!(
            command_line(
                &args(&["target/release/examples/tick_to_book", "--console"]),
                &["console"]
            ),
            "cargo run --release --features console --example tick_to_book -- --console"
        );
    }

    #[test]
    fn dates_are_utc_calendar_days() {
        let at = |s: u64| utc_date(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01");
        assert_eq!(at(86_399), "1970-01-01");
        assert_eq!(at(951_782_400), "2000-02-29");
        assert_eq!(at(1_709_164_800), "2024-02-29");
        assert_eq!(at(1_735_689_599), "2024-12-31");
        assert_eq!(at(1_735_689_600), "2025-01-01");
    }

    #[test]
    fn a_row_ends_with_its_provenance() {
        let mut j = JsonLines::new("t");
        j.provenance = Provenance {
            machine: "2 cores, \"X\"".into(),
            date: "2025-01-01".into(),
            load: "0.5".into(),
            command: "cargo bench --bench t".into(),
        }
        .json_members();
        j.record("tab", "c", "m", 1.5, "ns");
        assert_eq!(
            j.lines,
            "{\"table\":\"tab\",\"case\":\"c\",\"metric\":\"m\",\"value\":1.5,\"unit\":\"ns\",\
             \"machine\":\"2 cores, \\\"X\\\"\",\"date\":\"2025-01-01\",\"load\":\"0.5\",\
             \"command\":\"cargo bench --bench t\"}\n"
        );
    }
}
