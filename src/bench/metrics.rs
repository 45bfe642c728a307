//! What a metrics publish costs (feature `metrics`): `System::publish_metrics`
//! over 1,000 live actors, into no recorder (what kaspar itself does: read
//! every actor's counters and build each series' key) and into the
//! Prometheus exporter's recorder (what a real publish costs), with and
//! without latency recording (whose percentiles come from 3,840 buckets
//! per message class), and the exporter rendering the page a scrape gets.
//!
//! Each case publishes once to warm up (the first publish registers every
//! series), then `runs` times; the row is the median. The recorder is
//! installed thread-locally (`metrics::with_local_recorder` through the
//! exporter's `build_recorder`), so no HTTP listener and no global state.

use std::time::Instant;

use kaspar::prelude::*;
use metrics_exporter_prometheus::PrometheusBuilder;

use crate::bench::median;

/// A message of each of the probe's two classes.
pub struct Tick;
/// The second class.
pub struct Tock;

/// An actor with two message classes, to publish.
#[actor]
pub struct Probe {
    seen: u64,
}

#[actor]
impl Probe {
    #[handler(Tick)]
    fn tick(&mut self, _t: Tick, _ctx: &mut Ctx<Self>) {
        self.seen += 1;
    }

    #[handler(Tock)]
    fn tock(&mut self, _t: Tock, _ctx: &mut Ctx<Self>) {
        self.seen += 1;
    }
}

/// One measured case.
#[derive(Clone, Debug)]
pub struct Case {
    pub case: String,
    pub actors: usize,
    /// Series on the exporter's page after the case's publishes (0 for no
    /// recorder).
    pub series: usize,
    /// Median time of one publish (or one render), milliseconds.
    pub ms: f64,
}

impl Case {
    /// Microseconds per actor.
    pub fn us_per_actor(&self) -> f64 {
        self.ms * 1e3 / self.actors as f64
    }
}

/// Every case, over `actors` actors.
pub fn measure(quick: bool) -> Vec<Case> {
    let actors = 1_000;
    let runs = if quick { 5 } else { 30 };
    let mut cases = Vec::new();
    for latency in [false, true] {
        let system = System::new();
        let addrs: Vec<Addr<Probe>> = (0..actors)
            .map(|i| {
                system
                    .spawn(Probe { seen: 0 })
                    .name(format!("probe-{i}"))
                    .record_latency(latency)
                    .start()
            })
            .collect();
        for a in &addrs {
            a.fast_send(Tick).unwrap();
            a.fast_send(Tock).unwrap();
        }
        let timed = if latency { "latency on" } else { "latency off" };
        let (ms, _) = time(runs, || system.publish_metrics());
        cases.push(Case {
            case: format!("publish, no recorder, {timed}"),
            actors,
            series: 0,
            ms,
        });
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let (ms, _) = time(runs, || {
            metrics::with_local_recorder(&recorder, || system.publish_metrics())
        });
        let page = handle.render();
        let series = page
            .lines()
            .filter(|l| l.starts_with("kaspar_actor_"))
            .count();
        cases.push(Case {
            case: format!("publish, Prometheus recorder, {timed}"),
            actors,
            series,
            ms,
        });
        let (ms, len) = time(runs, || handle.render().len());
        cases.push(Case {
            case: format!("Prometheus render ({} KiB page), {timed}", len / 1024),
            actors,
            series,
            ms,
        });
        drop(addrs);
        system.shutdown();
    }
    cases
}

/// Runs `f` once to warm up and then `runs` times: the median in
/// milliseconds, and the last result.
fn time<R>(runs: usize, mut f: impl FnMut() -> R) -> (f64, R) {
    let mut out = f();
    let mut ms = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        out = f();
        ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    (median(&mut ms), out)
}

/// The markdown table.
pub fn print(cases: &[Case]) {
    println!("| case | actors | kaspar series | ms (median) | µs per actor |");
    println!("|---|---:|---:|---:|---:|");
    for c in cases {
        println!(
            "| {} | {} | {} | {:.2} | {:.2} |",
            c.case,
            c.actors,
            c.series,
            c.ms,
            c.us_per_actor()
        );
    }
}

/// The rows, under the table `metrics`.
pub fn record(cases: &[Case], json: &mut crate::bench::JsonLines) {
    for c in cases {
        json.record("metrics", &c.case, "ms", c.ms, "ms");
        json.record("metrics", &c.case, "us_per_actor", c.us_per_actor(), "us");
    }
}
