//! Waiting strategies: an `ask` round trip from a plain thread to an actor
//! whose run loop parks, uses the default strategy, or spins, against a
//! request-reply over std's channels; and the CPU 100 idle actors use.
//!
//! `cargo bench --bench wait [-- --quick]`. Prints markdown and writes
//! `target/kaspar-bench/wait.jsonl`. The cases live in `src/bench/wait.rs`.

use kaspar_suite::bench;

fn main() {
    let quick = bench::quick();
    let machine = bench::Machine::detect();
    let w = bench::wait::measure(quick);
    println!(
        "## Waiting: ask latency and idle CPU{}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{}\n", machine.header());
    bench::wait::print(&w);
    let mut json = bench::JsonLines::new("wait");
    bench::wait::record(&w, &mut json);
    let path = json.write();
    println!("\nJSON lines: {}", path.display());
}
