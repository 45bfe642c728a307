//! What publishing metrics costs: `System::publish_metrics` over 1,000
//! actors, into no recorder and into the Prometheus exporter's, with and
//! without latency recording, and the exporter's render of the page.
//!
//! `cargo bench --features metrics --bench metrics [-- --quick]`. Prints
//! markdown and writes `target/kaspar-bench/metrics.jsonl`. The cases live
//! in `src/bench/metrics.rs`.

use kaspar_suite::bench;

fn main() {
    let quick = bench::quick();
    let machine = bench::Machine::detect();
    let cases = bench::metrics::measure(quick);
    println!(
        "## Metrics: one publish over 1,000 actors{}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{}\n", machine.header());
    bench::metrics::print(&cases);
    let mut json = bench::JsonLines::new("metrics");
    bench::metrics::record(&cases, &mut json);
    let path = json.write();
    println!("\nJSON lines: {}", path.display());
}
