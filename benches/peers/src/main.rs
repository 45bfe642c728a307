//! kaspar against the floor (two threads and a channel: crossbeam, std
//! `mpsc`; a hand-written tokio task) and against the Rust actor frameworks
//! people use (kameo, ractor, actix, xtra), each through its own documented,
//! idiomatic API.
//!
//! ```text
//! cargo run --release --manifest-path benches/peers/Cargo.toml [-- --quick]
//! cargo run --release --manifest-path benches/peers/Cargo.toml -- savina [--quick]
//! ```
//!
//! The first form runs the peers table (ask, tell, ping-pong, idle CPU;
//! see `peers/mod.rs`), the second the Savina benchmarks (`savina/mod.rs`).
//! Both print markdown and write JSON lines to `target/kaspar-bench/` at
//! the repository root (`peers.jsonl`, `savina.jsonl`). `--quick` divides
//! every count by ten.

mod peers;
mod report;
mod savina;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let unknown: Vec<&String> = args
        .iter()
        .filter(|a| !matches!(a.as_str(), "--quick" | "savina"))
        .collect();
    if !unknown.is_empty() {
        eprintln!("unknown arguments {unknown:?}; usage: [savina] [--quick]");
        std::process::exit(2);
    }
    if args.iter().any(|a| a == "savina") {
        savina::run(quick);
    } else {
        peers::run(quick);
    }
}
