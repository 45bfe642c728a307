//! Many actors: spawn cost and resident memory per idle actor, on the pool
//! and on threads of their own, and a million idle pooled actors from
//! spawn through one message each to shutdown, every message accounted
//! for.
//!
//! `cargo bench --bench scale [-- --quick]`. Prints markdown tables and
//! writes `target/kaspar-bench/scale.jsonl` (`table` = `scale`; cases
//! `thread/spawn` and `pool/spawn` with `ns_per_actor` and
//! `bytes_per_actor`; `pool/million`, or `pool/100k` with `--quick`, with
//! `spawn_s`, `send_s`, `rss_mib` and `shutdown_s`; every case also
//! records its `actors`). Each case runs in a child process of this
//! binary; the measuring code lives in `src/bench/scale.rs`.

use kaspar_suite::bench;

fn main() {
    if bench::scale::run_child_case() {
        return;
    }
    let machine = bench::Machine::detect();
    let s = bench::scale::measure(bench::quick());
    bench::scale::print(&s, &machine);
    let mut json = bench::JsonLines::new("scale");
    bench::scale::record(&s, &mut json);
    let path = json.write();
    println!("\nwrote {}", path.display());
}
