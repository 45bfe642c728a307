//! Dispatch cost: what one uncontended `fast_send` costs against the
//! hand-written code it replaces (paper Table 6; DESIGN §9 target:
//! fast_send ≤ 1.25x lock + non-inlined call + unlock).
//!
//! `cargo bench --bench dispatch [-- --quick]`. Prints a markdown table and
//! writes `target/kaspar-bench/dispatch.jsonl`. The cases live in
//! `common/dispatch.rs`, shared with `paper.rs` (which adds the virtual-call
//! and no-reply arms).

#[path = "common/mod.rs"]
mod common;

fn main() {
    if let Some((case, n)) = common::callgrind_args() {
        common::dispatch::callgrind(&case, n);
        return;
    }
    let machine = common::Machine::detect();
    let d = common::dispatch::measure(common::quick(), false);
    common::dispatch::print(&d, &machine);
    let mut json = common::JsonLines::new("dispatch");
    common::dispatch::record(&d, &mut json);
    json.write();
}
