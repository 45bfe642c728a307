//! `Pooled<T>` against `Box<T>` and a naive single-global-mutex free list,
//! allocating and freeing on one thread and across two.
//!
//! Run: `cargo bench --bench pool` (add `-- --quick` for a short run).
//!
//! Each case runs twice:
//! * an untimed pass for the mean: wall time divided by messages, where a
//!   message is one allocation plus one free (on two threads at once in the
//!   cross-thread workload);
//! * a timed pass for the tail: every single allocation call and every
//!   single free call is timed on its own thread (the clock's own cost, shown
//!   in the header, is included), and p99 / p99.9 / max come from those.
//!
//! Writes `target/kaspar-bench/pool.jsonl`. The measuring code lives in
//! `src/bench/pool.rs`, shared with `paper.rs`.

use kaspar_suite::bench;

fn main() {
    let machine = bench::Machine::detect();
    let p = bench::pool::measure(bench::quick());
    bench::pool::print(&p, &machine);
    let mut json = bench::JsonLines::new("pool");
    bench::pool::record(&p, &mut json);
    let path = json.write();
    println!();
    println!("JSON lines: {}", path.display());
}
