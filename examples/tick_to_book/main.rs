//! Tick to book: the paper's case study (§8, §10) on a synthetic feed.
//!
//! A synthetic exchange sends a clustered (Hawkes) MDP-3.0-style feed as
//! two redundant UDP feeds on loopback; the pipeline of Figure 1 reads
//! both, arbitrates, decodes, builds the book and runs a toy signal, and
//! every message's socket-to-book latency is measured. Two configurations:
//!
//! * `one-thread`: each reader `fast_send`s into the decode-and-book group
//!   and runs the whole chain on its own thread;
//! * `two-stage`: each reader `send`s through the group's mailbox, and the
//!   group's thread runs the chain.
//!
//! Run: `cargo run --release --example tick_to_book -- [--secs 10]
//! [--config one-thread|two-stage|both] [--mailbox bqueue|batched|sharded|lockfree|segmented]
//! [--rate 20000] [--burst 0.85] [--decay 8000] [--seed N] [--capture PATH]
//! [--replay on|off] [--console [ADDR]]` (`--console`: kaspar's live
//! console in the browser while the pipeline runs; it needs the `console`
//! feature, and a build without it started by `cargo run` runs the same
//! command again with `--features console`)
//!
//! After each configuration's live run, the decode-and-book group is
//! replayed in a `kaspar::Simulation` from the recorded arrivals, and its
//! orders, books, records and counters must equal the live run's.
//!
//! Here: the report around the runs. The command line is in `cli.rs`, one
//! configuration's run in `run.rs`, and its checks in `checks.rs` and
//! `replay_check.rs`.
//! What they run (the feed, the exchange, the pipeline's actors and the
//! replay) is in the suite's library, `kaspar_suite::tick_to_book`
//! (`src/tick_to_book/`), which `tests/tick_to_book.rs` checks.
//!
//! See `examples/tick_to_book/README.md`.

mod checks;
mod cli;
mod replay_check;
mod report;
mod run;

use std::process::ExitCode;

use kaspar_suite::bench::{bench_dir, JsonLines, Machine};
use kaspar_suite::tick_to_book::analysis::ConfigReport;

use crate::cli::{parse_args, NEEDS_CONSOLE};
use crate::run::run_config;

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) if e == NEEDS_CONSOLE => return with_console_feature(),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let machine = Machine::detect();
    let per_config = o.secs / o.configs.len() as f64;
    println!("## tick_to_book: socket-to-book latency over loopback UDP\n");
    println!("{}  ", machine.header_pinned());
    let release = match o.release_for(per_config) {
        Some(r) => format!(
            "a release raises the baseline {}x from {:.1} s for {:.1} s",
            r.factor, r.at_s, r.secs
        ),
        None => "no release".into(),
    };
    println!(
        "feed: Hawkes rate {} events/s, branching {} , decay {}/s, seed {}; {release}; \
         {:.1} s per configuration; absolute times on a shared machine are noise, read the ratios\n",
        o.gen.rate, o.gen.branching, o.gen.decay, o.gen.seed, per_config
    );
    let mut runs = Vec::new();
    for &c in &o.configs {
        match run_config(&o, c, per_config) {
            Ok(r) => runs.push(r),
            Err(e) => {
                eprintln!("{}: {e}", c.case());
                return ExitCode::FAILURE;
            }
        }
    }
    let reports: Vec<ConfigReport> = runs
        .iter()
        .map(|r| ConfigReport::new(r.config.case(), r.label.clone(), &r.records))
        .collect();
    for r in &runs {
        println!("**{}**  ", r.label);
        for l in &r.lines {
            println!("{l}  ");
        }
        let h = &r.size_histogram;
        let packets: u64 = h.iter().sum();
        let msgs: u64 = h.iter().enumerate().map(|(k, &c)| k as u64 * c).sum();
        let max = h.iter().rposition(|&c| c > 0).unwrap_or(0);
        let single = h.get(1).copied().unwrap_or(0);
        println!(
            "packets: {:.2} messages per packet on average, max {max}, {:.1}% single-message\n",
            msgs as f64 / packets.max(1) as f64,
            100.0 * single as f64 / packets.max(1) as f64
        );
    }
    print!("{}", report::markdown(&reports));
    let one = reports.iter().find(|r| r.case == "one_thread");
    let two = reports.iter().find(|r| r.case == "two_stage");
    if let (Some(one), Some(two)) = (one, two) {
        println!();
        for (a, b) in one.streams.iter().zip(&two.streams) {
            let name = a.id.map_or_else(String::new, |id| id.name());
            let (a, b) = (a.p50 as f64, b.p50 as f64);
            println!(
                "p50 one-thread / two-stage, {name}: {:.2} µs / {:.2} µs = {:.2} (two-stage is {:.1}x the one-thread median)  ",
                a / 1000.0,
                b / 1000.0,
                a / b,
                b / a
            );
        }
    }
    let mut rows = JsonLines::new("tick_to_book");
    report::json(&reports, &mut rows);
    let path = rows.write();
    println!("\nJSON lines: {}", path.display());
    match report::charts(&bench_dir(), &reports) {
        Ok(paths) => {
            for p in paths {
                println!("chart: {}", p.display());
            }
        }
        Err(e) => eprintln!("charts: {e}"),
    }
    if runs.iter().all(|r| r.ok) {
        ExitCode::SUCCESS
    } else {
        eprintln!("tick_to_book: a balance, book or simulation replay check failed");
        ExitCode::FAILURE
    }
}

/// `--console` in a build without the `console` feature: kaspar compiles
/// the console in only when asked (the feature adds a sender count to
/// every delivery), so the example is rebuilt with it and run again with
/// the same arguments, when `cargo run` started it (cargo sets `CARGO`);
/// otherwise it says which command to run.
fn with_console_feature() -> ExitCode {
    let Some(cargo) = std::env::var_os("CARGO") else {
        eprintln!("{NEEDS_CONSOLE}");
        return ExitCode::from(2);
    };
    let profile = if cfg!(debug_assertions) {
        None
    } else {
        Some("--release")
    };
    eprintln!(
        "tick_to_book: --console needs the console feature; running it with `--features console`"
    );
    let status = std::process::Command::new(cargo)
        .args(["run", "--quiet"])
        .args(profile)
        .args(["--features", "console", "--example", "tick_to_book", "--"])
        .args(std::env::args_os().skip(1))
        .status();
    match status {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => ExitCode::from(u8::try_from(s.code().unwrap_or(1)).unwrap_or(1)),
        Err(e) => {
            eprintln!("tick_to_book: could not run cargo ({e}); {NEEDS_CONSOLE}");
            ExitCode::from(2)
        }
    }
}
