//! Helpers shared by the benches: the machine header, JSON-lines output and
//! percentiles, and the measuring code of each table, shared by its own
//! bench and by `paper.rs`. Include with `#[path = "common/mod.rs"] mod common;`.
#![allow(dead_code)]

pub mod cdf;
pub mod dispatch;
pub mod mailboxes;
pub mod pool;
pub mod table5;

use std::fmt::Write as _;
use std::path::PathBuf;

/// Whether the bench was started with `--quick` (smaller iteration counts).
pub fn quick() -> bool {
    std::env::args().any(|a| a == "--quick")
}

/// `--callgrind CASE N` on the command line: run one case N times and
/// nothing else (instruction counts; see benches/README.md).
#[allow(dead_code)] // not every bench that includes this module counts
pub fn callgrind_args() -> Option<(String, u64)> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == "--callgrind")?;
    let case = args.get(i + 1).expect("--callgrind CASE N").clone();
    let n = args
        .get(i + 2)
        .and_then(|n| n.parse().ok())
        .expect("--callgrind CASE N");
    Some((case, n))
}

/// What the numbers were measured on.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Cores this process may run on.
    pub cores: usize,
    /// The CPU model from `/proc/cpuinfo`, or `unknown`.
    pub cpu: String,
    /// CPUs this process may run on (`Cpus_allowed_list`), or `unknown`.
    pub allowed: String,
    /// CPUs online in the machine, or `unknown`.
    pub online: String,
}

impl Machine {
    pub fn detect() -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        let allowed = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("Cpus_allowed_list"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".to_string());
        Machine {
            cores,
            cpu,
            allowed,
            online,
        }
    }

    /// Whether the process was confined (`taskset`, cgroup cpuset) to fewer
    /// CPUs than are online. The benches never pin their own threads.
    pub fn pinned(&self) -> bool {
        self.allowed != self.online && self.allowed != "unknown"
    }

    /// The header line with the pinning stated: model, cores, pinned or not.
    pub fn header_pinned(&self) -> String {
        let pinning = if self.pinned() {
            format!(
                "process pinned to CPUs {} (of {})",
                self.allowed, self.online
            )
        } else {
            format!("not pinned (threads float over CPUs {})", self.online)
        };
        format!("_{} cores, {}, {pinning}_", self.cores, self.cpu)
    }

    /// One markdown line naming the machine.
    pub fn header(&self) -> String {
        format!("_{} cores, {}_", self.cores, self.cpu)
    }
}

/// Rows for `target/kaspar-bench/<name>.jsonl`, one JSON object per line
/// with keys `table`, `case`, `metric`, `value`, `unit`.
#[derive(Debug)]
pub struct JsonLines {
    name: &'static str,
    lines: String,
}

impl JsonLines {
    pub fn new(name: &'static str) -> Self {
        JsonLines {
            name,
            lines: String::new(),
        }
    }

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

    /// Writes the file (replacing the last run's) and returns its path.
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

/// The `q` quantile (0..=1) of `values`, by nearest rank; sorts in place.
pub fn percentile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let rank = (q.clamp(0.0, 1.0) * (values.len() - 1) as f64).round() as usize;
    values[rank]
}

/// The median of `values`; sorts in place.
pub fn median(values: &mut [f64]) -> f64 {
    percentile(values, 0.5)
}
