//! One console sample: every live actor of a system observed once, its
//! rates taken from the counters' growth since the previous sample, and
//! the whole written as the JSON document the page polls.
//!
//! The document (`GET /api/snapshot`):
//!
//! ```text
//! { "system": { "seq", "uptime_s", "period_s", "running", "actors",
//!               "handled_per_s", "dead_letters": { <reason>: n, ... },
//!               "unobserved", "history": [msgs/s, ...] },
//!   "actors": [ { "id", "type", "name", "group", "thread", "stopped",
//!                 "handled", "rate", "depth", "high_water", "void_inline",
//!                 "void_queued", "busy", "cycles", "deadlocks", "panics",
//!                 "restarts", "dead_letters", "spark": [msgs/s, ...],
//!                 "latency": [ { "class", "count", "mean_ns", "p50_ns",
//!                                "p90_ns", "p99_ns", "p999_ns", "max_ns" } ] } ],
//!   "edges": [ { "from", "to", "count", "rate" } ] }
//! ```
//!
//! An edge's `from` is an actor id, 0 for sends from outside any handler,
//! and `null` for the senders past a target's table ("others"). Rates are
//! per second over the last period; the first sample has none (0).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::json::Json;
use crate::actor::observe::Observation;
use crate::base::sync::Ordering;
use crate::system::registry::Thread;
use crate::system::SystemInner;

/// Samples kept for the system's rate chart.
const HISTORY: usize = 120;
/// Samples kept for each actor's sparkline.
const SPARK: usize = 60;

/// What one actor's counters were at the previous sample.
#[derive(Default)]
struct Previous {
    handled: u64,
    /// Messages per sender (`None`: the overflow, "others").
    edges: HashMap<Option<u64>, u64>,
}

/// The console's memory between samples: the previous counters, and the
/// rate histories the page draws.
pub(super) struct Sampler {
    started: Instant,
    period: Duration,
    seq: u64,
    at: Option<Instant>,
    previous: HashMap<u64, Previous>,
    history: VecDeque<f64>,
    sparks: HashMap<u64, VecDeque<f64>>,
}

impl Sampler {
    pub(super) fn new(period: Duration) -> Self {
        Sampler {
            started: Instant::now(),
            period,
            seq: 0,
            at: None,
            previous: HashMap::new(),
            history: VecDeque::with_capacity(HISTORY),
            sparks: HashMap::new(),
        }
    }

    /// Observes `system` and writes the document.
    pub(super) fn sample(&mut self, system: &SystemInner) -> String {
        let mut seen: Vec<Observation> = system
            .observed
            .live()
            .iter()
            .map(|actor| actor.observe())
            .collect();
        seen.sort_by_key(|o| o.target.id);
        let threads: HashMap<usize, Thread> = system.observed.threads().into_iter().collect();
        let now = Instant::now();
        let secs = self
            .at
            .map(|at| now.duration_since(at).as_secs_f64())
            .filter(|s| *s > 0.0);
        self.at = Some(now);
        self.seq += 1;

        let mut next: HashMap<u64, Previous> = HashMap::with_capacity(seen.len());
        let mut j = Json::default();
        j.begin_object();
        j.key("actors");
        j.begin_array();
        let mut total_rate = 0.0;
        let mut edges = Vec::new();
        for o in &seen {
            let id = o.target.id.get();
            let before = self.previous.get(&id);
            let rate = rate_of(o.stats.handled, before.map(|p| p.handled), secs);
            total_rate += rate;
            let spark = self.sparks.entry(id).or_default();
            if spark.len() == SPARK {
                spark.pop_front();
            }
            spark.push_back(rate);
            let mut now_edges = HashMap::new();
            let senders = o.edges.senders.iter().map(|&(s, n)| (Some(s), n));
            let others = (o.edges.others > 0).then_some((None, o.edges.others));
            for (from, count) in senders.chain(others) {
                let was = before.and_then(|p| p.edges.get(&from).copied());
                edges.push((from, id, count, rate_of(count, was, secs)));
                now_edges.insert(from, count);
            }
            next.insert(
                id,
                Previous {
                    handled: o.stats.handled,
                    edges: now_edges,
                },
            );
            write_actor(&mut j, o, rate, spark, threads.get(&o.lock));
        }
        j.end_array();
        self.previous = next;
        self.sparks.retain(|id, _| self.previous.contains_key(id));
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(total_rate);

        j.key("edges");
        j.begin_array();
        for (from, to, count, rate) in edges {
            j.begin_object();
            j.key("from");
            match from {
                Some(from) => j.u64(from),
                None => j.null(),
            }
            j.num("to", to);
            j.num("count", count);
            j.key("rate");
            j.f64(rate);
            j.end_object();
        }
        j.end_array();

        let alive = seen.iter().filter(|o| !o.stopped).count();
        self.write_system(&mut j, system, alive, total_rate);
        j.end_object();
        j.finish()
    }

    fn write_system(&self, j: &mut Json, system: &SystemInner, alive: usize, rate: f64) {
        let dead = system.dead.counts();
        j.key("system");
        j.begin_object();
        j.num("seq", self.seq);
        j.key("uptime_s");
        j.f64(self.started.elapsed().as_secs_f64());
        j.key("period_s");
        j.f64(self.period.as_secs_f64());
        j.key("running");
        j.bool(!system.closed.load(Ordering::Relaxed));
        j.num("actors", alive as u64);
        j.key("handled_per_s");
        j.f64(rate);
        j.key("dead_letters");
        j.begin_object();
        for (reason, n) in [
            ("stopped", dead.stopped),
            ("restart_limit", dead.restart_limit),
            ("shutdown_timeout", dead.shutdown_timeout),
            ("panicked", dead.panicked),
            ("undeliverable", dead.undeliverable),
        ] {
            j.num(reason, n);
        }
        j.end_object();
        j.num("unobserved", dead.unobserved);
        j.key("history");
        j.begin_array();
        for r in &self.history {
            j.f64(*r);
        }
        j.end_array();
        j.end_object();
    }
}

/// Per second, from `was` to `now` over `secs`; 0 without a previous
/// sample (a counter never shrinks, but a new actor has no past).
fn rate_of(now: u64, was: Option<u64>, secs: Option<f64>) -> f64 {
    match (was, secs) {
        (Some(was), Some(secs)) => now.saturating_sub(was) as f64 / secs,
        (None, Some(secs)) => now as f64 / secs,
        _ => 0.0,
    }
}

fn write_actor(
    j: &mut Json,
    o: &Observation,
    rate: f64,
    spark: &VecDeque<f64>,
    thread: Option<&Thread>,
) {
    let s = &o.stats;
    j.begin_object();
    j.num("id", o.target.id.get());
    j.key("type");
    j.str(o.target.name);
    j.key("name");
    j.opt_str(o.target.instance.as_ref().map(Arc::as_ref));
    j.key("group");
    j.opt_str(thread.and_then(|t| t.group));
    j.key("thread");
    j.opt_str(thread.map(|t| t.name.as_ref()));
    j.key("stopped");
    j.bool(o.stopped);
    j.num("handled", s.handled);
    j.key("rate");
    j.f64(rate);
    j.num("depth", o.queued as u64);
    for (key, n) in [
        ("high_water", s.mailbox_high_water),
        ("void_inline", s.void_inline),
        ("void_queued", s.void_queued),
        ("busy", s.busy),
        ("cycles", s.cycles),
        ("deadlocks", s.deadlocks),
        ("panics", s.panics),
        ("restarts", s.restarts),
        ("dead_letters", s.dead_letters),
    ] {
        j.num(key, n);
    }
    j.key("spark");
    j.begin_array();
    for r in spark {
        j.f64(*r);
    }
    j.end_array();
    j.key("latency");
    j.begin_array();
    for c in o.latency.iter().flat_map(|l| &l.classes) {
        j.begin_object();
        j.key("class");
        j.str(c.class);
        j.num("count", c.count);
        for (key, d) in [
            ("mean_ns", c.mean),
            ("p50_ns", c.p50),
            ("p90_ns", c.p90),
            ("p99_ns", c.p99),
            ("p999_ns", c.p999),
            ("max_ns", c.max),
        ] {
            j.num(key, nanos(d));
        }
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
