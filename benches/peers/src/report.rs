//! What both suites share: the latency histogram, rates, the median and
//! spread of repeated runs, number formatting, the machine line, and the
//! JSON lines written to `target/kaspar-bench/` at the repository root.

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// An empty latency histogram: 1 ns to 60 s, three significant digits.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds")
}

/// Records the time since `since` as one sample.
pub fn record(hist: &mut Histogram<u64>, since: Instant) {
    hist.saturating_record(since.elapsed().as_nanos() as u64);
}

/// Messages (or round trips) per second over `elapsed`.
pub fn per_s(n: u64, elapsed: Duration) -> f64 {
    n as f64 / elapsed.as_secs_f64()
}

/// The median and range of a few runs.
#[derive(Clone, Copy, Debug)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// Of at least one value; the median of an even count is the upper one.
    pub fn of(mut v: Vec<f64>) -> Spread {
        v.sort_by(|a, b| a.total_cmp(b));
        Spread {
            median: v[v.len() / 2],
            min: v[0],
            max: v[v.len() - 1],
        }
    }
}

/// Runs each of `cases` `times` times, round-robin: every case's round
/// `i` runs before any case's round `i + 1`, so a change in the machine's
/// mood during a table (the dev VM changes within seconds) falls on every
/// case's rounds alike, and round `i` of two cases can be compared as a
/// pair. A case that panics has failed (the panic is the reason) and is
/// not run again; the others go on.
pub fn interleaved<T, F: Fn() -> T>(times: usize, cases: &[F]) -> Vec<Result<Vec<T>, String>> {
    let mut out: Vec<Result<Vec<T>, String>> = cases
        .iter()
        .map(|_| Ok(Vec::with_capacity(times)))
        .collect();
    for _ in 0..times {
        for (case, result) in cases.iter().zip(out.iter_mut()) {
            if let Ok(rounds) = result {
                match once(case) {
                    Ok(v) => rounds.push(v),
                    Err(why) => *result = Err(why),
                }
            }
        }
    }
    out
}

/// Runs `f` once, its panic turned into the reason.
fn once<T>(f: impl Fn() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panicked".into())
    })
}

/// The median of the rounds' ratios `num[i] / den[i]`: each round against
/// the baseline's round of the same index, run beside it
/// ([`interleaved`]).
pub fn paired_ratio(num: &[f64], den: &[f64]) -> Option<f64> {
    let ratios: Vec<f64> = num.iter().zip(den).map(|(n, d)| n / d).collect();
    (!ratios.is_empty()).then(|| Spread::of(ratios).median)
}

pub fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

pub fn fmt_rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2} M", r / 1e6)
    } else {
        format!("{:.0} k", r / 1e3)
    }
}

/// One markdown line naming the machine: cores, CPU model, not pinned.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    format!("_{cores} cores, {cpu}, threads not pinned_")
}

/// The round trip of a cache line between two threads spinning on one
/// atomic, in ns (mean of 20,000 after a warm-up), or NaN on one core or
/// if a side was descheduled long enough to take 100 ms. It names the
/// machine's mood: on the 2-core dev VM it reads 45-170 ns most of the
/// time and 400-600 ns for stretches of seconds to minutes, and in those
/// stretches everything that passes messages between two busy cores is
/// slower (chameneos on a pool of two workers about 3x), while one thread
/// is not.
pub fn core_to_core_ns() -> f64 {
    use std::sync::atomic::{
        AtomicBool, AtomicU64,
        Ordering::{Acquire, Relaxed, Release},
    };
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return f64::NAN;
    }
    const WARM: u64 = 2_000;
    const N: u64 = 20_000;
    let line = Arc::new(AtomicU64::new(0));
    let quit = Arc::new(AtomicBool::new(false));
    let (theirs, their_quit) = (Arc::clone(&line), Arc::clone(&quit));
    let echo = std::thread::spawn(move || {
        for i in 0..WARM + N {
            while theirs.load(Acquire) != 2 * i + 1 {
                if their_quit.load(Relaxed) {
                    return;
                }
                std::hint::spin_loop();
            }
            theirs.store(2 * i + 2, Release);
        }
    });
    let limit = Instant::now() + Duration::from_millis(100);
    let mut start = Instant::now();
    let mut ok = true;
    'trips: for i in 0..WARM + N {
        if i == WARM {
            start = Instant::now();
        }
        line.store(2 * i + 1, Release);
        let mut spins = 0u32;
        while line.load(Acquire) != 2 * i + 2 {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1024) && Instant::now() > limit {
                ok = false;
                break 'trips;
            }
            std::hint::spin_loop();
        }
    }
    let elapsed = start.elapsed();
    quit.store(true, Relaxed);
    let _ = echo.join();
    if ok {
        elapsed.as_nanos() as f64 / N as f64
    } else {
        f64::NAN
    }
}

/// Rows for `target/kaspar-bench/<table>.jsonl`, one JSON object per line
/// with keys `table`, `case`, `metric`, `value`, `unit`, then where they
/// were measured (`machine`, `date`, `load`, `command`), as the
/// workspace's benches write them.
pub struct JsonLines {
    table: &'static str,
    lines: String,
    provenance: String,
}

impl JsonLines {
    pub fn new(table: &'static str) -> Self {
        JsonLines {
            table,
            lines: String::new(),
            provenance: provenance(),
        }
    }

    /// Adds one row. Case names are ours (ASCII, no quotes), so they need
    /// no escaping. A value that is not finite is written as -1.
    pub fn record(&mut self, case: &str, metric: &str, value: f64, unit: &str) {
        let value = if value.is_finite() { value } else { -1.0 };
        let table = self.table;
        let _ = writeln!(
            self.lines,
            "{{\"table\":\"{table}\",\"case\":\"{case}\",\"metric\":\"{metric}\",\"value\":{value},\"unit\":\"{unit}\"{}}}",
            self.provenance
        );
    }

    /// Writes `<repo>/target/kaspar-bench/<table>.jsonl`, beside the other
    /// benches' files, replacing the last run's; returns its path.
    pub fn write(&self) -> PathBuf {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/kaspar-bench");
        std::fs::create_dir_all(&dir).expect("create target/kaspar-bench");
        let dir = dir.canonicalize().unwrap_or(dir);
        let path = dir.join(format!("{}.jsonl", self.table));
        std::fs::write(&path, &self.lines).expect("write the JSON lines");
        path
    }
}

/// The members every row ends with: the machine (cores, CPU model), the
/// UTC date, the 1-minute load average and this run's command, as the
/// suite's `Provenance` writes them.
fn provenance() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into());
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut command = String::from("cargo run --release --manifest-path benches/peers/Cargo.toml");
    if !args.is_empty() {
        command.push_str(" -- ");
        command.push_str(&args.join(" "));
    }
    let json = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        ",\"machine\":\"{cores} cores, {}\",\"date\":\"{year:04}-{month:02}-{day:02}\",\"load\":\"{}\",\"command\":\"{}\"",
        json(&cpu),
        json(&load),
        json(&command)
    )
}
