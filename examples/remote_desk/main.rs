//! A desk in three processes on one host, over iceoryx2 shared memory.
//!
//! ```text
//!                     ┌──────────── book process ────────────┐
//!  strategy-a ◀──TopOfBook── feed                           │
//!  strategy-b ◀──TopOfBook──┘                               │
//!  strategy-a ──Order──▶ bridge ─▶ journal ─▶ group Desk { Gateway }
//!  strategy-b ──Order──▶ ┘                                  │
//!                     └──────────────────────────────────────┘
//! ```
//!
//! This binary is all three: run without a role, it re-launches itself as
//! the book process and as two strategy processes, and directs them.
//!
//! 1. The book process exports its order gateway; each strategy process
//!    looks the gateway up and exports its strategy; the book looks both
//!    strategies up and watches them.
//! 2. The book streams top-of-book updates to both (`SendPolicy::DropOldest`:
//!    market data); each strategy answers some with orders
//!    (`SendPolicy::Wait`: orders are not dropped).
//! 3. Halfway through, strategy-b is killed with SIGKILL. The book's
//!    watcher hears `PeerLost`, and strategy-a keeps trading.
//! 4. The book prints each hop's latency, from timestamps carried in the
//!    messages (`CLOCK_MONOTONIC`, one clock for every process on the
//!    host; see `desk::mono_ns`).
//! 5. The gateway's input was journaled as it arrived; the book process
//!    replays the journal in `Simulation`, without a network, and the
//!    gateway's decisions must equal the live ones.
//!
//! Run: `cargo run --release --example remote_desk` (Linux; a few
//! seconds). It exits 0 only if every step did what it says.

mod book;
mod desk;
mod proc;
mod strategy;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use proc::{clean_shm, Proc, NS, ROLE};

/// The bound on waiting for a child to get ready or to finish.
const PATIENCE: Duration = Duration::from_secs(20);

fn main() -> ExitCode {
    // Every process reads iceoryx2's global config; without a config file
    // iceoryx2 warns about it once per process. Errors only, unless the
    // user asks for more with IOX2_LOG_LEVEL.
    iceoryx2::prelude::set_log_level_from_env_or(iceoryx2::prelude::LogLevel::Error);
    let outcome = match std::env::var(ROLE) {
        Ok(role) => {
            let ns = std::env::var(NS).unwrap_or_default();
            match role.as_str() {
                "book" => book::run(&ns),
                strategy => strategy::run(&ns, strategy),
            }
        }
        Err(_) => direct(),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("remote_desk: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The parent: starts the three processes, kills one mid-run, and checks
/// that the others finish. Its own namespace keeps the run apart from any
/// other on the host, and is cleaned up on every way out.
fn direct() -> Result<(), String> {
    let ns = format!("desk{}", std::process::id());
    let started = Instant::now();
    let outcome = run(&ns);
    let leaked = clean_shm(&ns);
    if !leaked.is_empty() {
        println!("removed what the run left in /dev/shm: {leaked:?}");
    }
    outcome?;
    println!("journal replay: identical");
    println!(
        "done in {:.1} s, every process exited",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn run(ns: &str) -> Result<(), String> {
    println!("1. start the book process and two strategy processes (namespace {ns})");
    let mut book = Proc::spawn("book", "book", ns)?;
    book.expect("READY", PATIENCE)?;
    let mut a = Proc::spawn("strategy-a", "strategy-a", ns)?;
    let mut b = Proc::spawn("strategy-b", "strategy-b", ns)?;
    a.expect("READY", PATIENCE)?;
    b.expect("READY", PATIENCE)?;

    println!("2. stream top of book to both strategies; orders flow back");
    book.say("GO")?;
    book.expect("HALF", PATIENCE)?;

    println!(
        "3. kill {} (pid {}) with SIGKILL, mid-run",
        b.name(),
        b.pid()
    );
    b.kill();

    book.expect("DONE", PATIENCE)?;
    println!("4. the book process finished; stop strategy-a");
    book.finish(PATIENCE)?;
    a.finish(PATIENCE)?;
    Ok(())
}
