//! Saturation and contention: one actor driven at full rate from 1, 2, 4
//! and 8 producer threads, through each mailbox kind (`send`) and through
//! `fast_send`; throughput and the p99 of one call, and a check that no
//! message is lost.
//!
//! `cargo bench --bench saturation [-- --quick]`. Prints a markdown table
//! and writes `target/kaspar-bench/saturation.jsonl` (`table` =
//! `saturation`, `case` = `<kind>/<producers>p`, `metric` = `msgs_per_s`
//! or `p99_ns`). The measuring code lives in `src/bench/saturation.rs`.

use kaspar_suite::bench;

fn main() {
    let machine = bench::Machine::detect();
    let s = bench::saturation::measure(bench::quick());
    bench::saturation::print(&s, &machine);
    let mut json = bench::JsonLines::new("saturation");
    bench::saturation::record(&s, &mut json);
    let path = json.write();
    println!("\nwrote {}", path.display());
}
