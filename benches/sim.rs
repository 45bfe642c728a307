//! What `kaspar::sim` costs: simulated handled messages per second for a
//! ring of 8 actors passing 4 tokens (1,000,000 messages; 200,000 with
//! `--quick`), with the trace at its default limit (`steps`) and off
//! (`steps/no-trace`), and seeds per second of the planted-race fixture of
//! `tests/sim_bugs.rs`, corrected (`seeds`, 1,000 seeds).
//!
//! `cargo bench --features sim --bench sim [-- --quick]`. Prints a
//! markdown table and writes `target/kaspar-bench/sim.jsonl` (`table` =
//! `sim`, metric `per_s`). The measuring code lives in `src/bench/sim.rs`.

// The fixture, as the test runs it; its #[test] functions are not
// compiled here.
#[allow(dead_code, unused_imports)]
#[path = "../tests/sim_bugs.rs"]
mod bugs;

use kaspar_suite::bench;

fn main() {
    let quick = bench::quick();
    let machine = bench::Machine::detect();
    let mut cases = bench::sim::measure_ring(quick);
    let seeds = if quick { 200 } else { 1_000 };
    cases.push(bench::sim::seeds_case("seeds", seeds, |sim| {
        bugs::listing(sim, true)
    }));
    bench::sim::print(&cases, &machine);
    let mut json = bench::JsonLines::new("sim");
    bench::sim::record(&cases, &mut json);
    let path = json.write();
    println!("\nwrote {}", path.display());
}
