//! What the benches share: the command line (`--quick`, `--callgrind`),
//! the machine header, JSON-lines output, percentiles, the charts,
//! and each reproduced table's measuring code, which its own bench and
//! `benches/paper.rs` both call.
//!
//! * [`Machine`] (`machine.rs`): what the numbers were measured on;
//! * [`JsonLines`] and [`bench_dir`] (`json_lines.rs`): the rows under
//!   `target/kaspar-bench/`, each with its [`Provenance`] (machine, date,
//!   load, command);
//! * [`percentile`], [`median`], [`histogram`] (`stats.rs`);
//! * [`svg`]: the one SVG chart writer (lines and bars); [`cdf`]: latency
//!   CDFs drawn with it, and their quantiles as rows;
//! * [`figures`]: the book's figures, drawn from the rows (`cargo run
//!   --release --bin figures`);
//! * [`table5`], [`dispatch`] (Table 6), [`mailboxes`] (Table 7 and the
//!   batching ping-pong), [`pool`]: the tables; [`hop`]: a pooled round
//!   trip, for instruction counts;
//! * [`wait`]: ask latency and idle CPU by waiting strategy;
//! * [`saturation`]: one actor under 1–8 producers at full rate, through
//!   each mailbox kind and through `fast_send` (the paper's future work);
//! * [`scale`]: spawn cost and memory per idle actor, pooled and on its
//!   own thread, and a million idle pooled actors from spawn to shutdown;
//! * `metrics` (feature `metrics`): what `System::publish_metrics` costs
//!   over 1,000 actors.

pub mod cdf;
pub mod dispatch;
pub mod figures;
pub mod hop;
mod json_lines;
mod machine;
pub mod mailboxes;
#[cfg(feature = "metrics")]
pub mod metrics;
pub mod pool;
pub mod saturation;
pub mod scale;
#[cfg(feature = "sim")]
pub mod sim;
mod stats;
pub mod svg;
pub mod table5;
pub mod wait;

pub use json_lines::{bench_dir, command_line, utc_date, JsonLines, Provenance};
pub use machine::Machine;
pub use stats::{histogram, median, percentile};

/// Whether the bench was started with `--quick` (smaller iteration counts).
pub fn quick() -> bool {
    std::env::args().any(|a| a == "--quick")
}

/// `--callgrind CASE N` on the command line: run one case N times and
/// nothing else (instruction counts; see benches/README.md). `None` when
/// the flag is absent; panics if it lacks its two values.
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
