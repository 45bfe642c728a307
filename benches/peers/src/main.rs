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
//! every count by ten. `--only kaspar,tokio` keeps the peers table to those
//! frameworks (crossbeam, the floor every ratio is taken against, always
//! runs); with `savina`, `--only actix,kaspar/pool` keeps those columns,
//! and `--iterations N` sets how many times each Savina cell runs (5 by
//! default; the table shows the median and the range).

mod peers;
mod report;
mod savina;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let only: Option<Vec<String>> =
        args.iter()
            .position(|a| a == "--only")
            .map(|i| match args.get(i + 1) {
                Some(list) => list.split(',').map(str::to_owned).collect(),
                None => usage("--only needs a comma-separated list of frameworks"),
            });
    let iterations =
        args.iter()
            .position(|a| a == "--iterations")
            .map_or(savina::ITERATIONS, |i| {
                match args.get(i + 1).and_then(|n| n.parse::<usize>().ok()) {
                    Some(n) if n > 0 => n,
                    _ => usage("--iterations needs a count of at least 1"),
                }
            });
    let unknown: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            let value = *i > 0 && matches!(args[i - 1].as_str(), "--only" | "--iterations");
            !value && !matches!(a.as_str(), "--quick" | "savina" | "--only" | "--iterations")
        })
        .map(|(_, a)| a)
        .collect();
    if !unknown.is_empty() {
        usage(&format!("unknown arguments {unknown:?}"));
    }
    if args.iter().any(|a| a == "savina") {
        savina::run(quick, only.as_deref(), iterations);
    } else if args.iter().any(|a| a == "--iterations") {
        usage("--iterations applies to savina only");
    } else {
        peers::run(quick, only.as_deref());
    }
}

fn usage(why: &str) -> ! {
    eprintln!("{why}; usage: [savina [--iterations N]] [--quick] [--only framework,..]");
    std::process::exit(2);
}
