//! Paper Table 5: the cost of a round trip is the thread crossing, not the
//! messaging. One ping/pong round trip with a reply, reached four ways
//! (cross-thread sleeping, cross-thread spinning, grouped, fast_send), and
//! fast_send between two members of one group against a direct call.
//! DESIGN §9 targets: grouped ≥ 37x faster than sleeping cross-thread,
//! fast_send ≥ 3x faster than grouped, intra-group fast_send ≤ 2x a direct
//! call.
//!
//! `cargo bench --bench table5 [-- --quick]`. Prints markdown and writes
//! `target/kaspar-bench/table5.jsonl`. The rows themselves live in
//! `src/bench/table5.rs`, shared with `paper.rs`.

use kaspar_suite::bench;

fn main() {
    if let Some((case, n)) = bench::callgrind_args() {
        bench::table5::callgrind(&case, n);
        return;
    }
    let quick = bench::quick();
    let machine = bench::Machine::detect();
    let t = bench::table5::measure(quick);
    println!(
        "## Table 5: one round trip, four delivery paths{}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{}\n", machine.header());
    bench::table5::print(&t);
    let mut json = bench::JsonLines::new("table5");
    bench::table5::record(&t, &mut json);
    let path = json.write();
    println!("\nJSON lines: {}", path.display());
}
