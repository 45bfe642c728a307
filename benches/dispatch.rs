//! Dispatch cost: what one uncontended `fast_send` costs against the
//! hand-written code it replaces (paper Table 6; DESIGN §9 target:
//! fast_send ≤ 1.25x lock + non-inlined call + unlock).
//!
//! `cargo bench --bench dispatch [-- --quick]`. Prints a markdown table and
//! writes `target/kaspar-bench/dispatch.jsonl`. The cases live in
//! `src/bench/dispatch.rs`, shared with `paper.rs` (which adds the virtual-call
//! and no-reply arms).

use kaspar_suite::bench;

fn main() {
    if let Some((case, n)) = bench::callgrind_args() {
        bench::dispatch::callgrind(&case, n);
        return;
    }
    let machine = bench::Machine::detect();
    let d = bench::dispatch::measure(bench::quick(), false);
    bench::dispatch::print(&d, &machine);
    let mut json = bench::JsonLines::new("dispatch");
    bench::dispatch::record(&d, &mut json);
    json.write();
}
