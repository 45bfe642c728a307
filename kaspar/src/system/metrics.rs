//! Metrics (feature `metrics`): every live actor's counters, queue depth,
//! latency percentiles, dead letters and refusals, published through the
//! [`metrics`] facade, so that any of its exporters (Prometheus, StatsD,
//! OpenTelemetry, ...) takes them.
//!
//! Nothing here is on a delivery path. The numbers are the ones the
//! runtime keeps anyway ([`Addr::stats`](crate::Addr::stats),
//! [`Addr::latency`](crate::Addr::latency), the queues' lengths, the
//! dead-letter sink's counts); a publish reads them, without any actor's
//! lock, and hands them to the installed recorder: counters as absolute
//! values ([`Counter::absolute`](metrics::Counter::absolute)), the rest as
//! gauges. The one cost outside a publish is at spawn: the system keeps a
//! weak handle on every actor's cell (one push into a list under a mutex).
//!
//! What is published, and for which actors: [`System::publish_metrics`].
//! The registry of actors (weak handles on their cells, registered where
//! each cell is made) is `system::registry`, shared with the console; what
//! a cell shows of itself is `actor::observe`.

use std::fmt;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use metrics::{Key, KeyName, Label, Level, Metadata, Recorder, SharedString, Unit};

use crate::actor::observe::Observation;
use crate::base::sync::{Condvar, Mutex};
use crate::failure::dead_letters::DeadLetterCounts;
use crate::system::{System, SystemInner};

/// What every series is registered with.
static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

const HANDLED: &str = "kaspar_actor_handled_total";
const VOID_INLINE: &str = "kaspar_actor_void_inline_total";
const VOID_QUEUED: &str = "kaspar_actor_void_queued_total";
const BUSY: &str = "kaspar_actor_busy_total";
const CYCLES: &str = "kaspar_actor_cycles_total";
const DEADLOCKS: &str = "kaspar_actor_deadlocks_total";
const PANICS: &str = "kaspar_actor_panics_total";
const RESTARTS: &str = "kaspar_actor_restarts_total";
const ACTOR_DEAD_LETTERS: &str = "kaspar_actor_dead_letters_total";
const DEPTH: &str = "kaspar_actor_mailbox_depth";
const HIGH_WATER: &str = "kaspar_actor_mailbox_high_water";
const LATENCY: &str = "kaspar_actor_latency_seconds";
const LATENCY_MEAN: &str = "kaspar_actor_latency_mean_seconds";
const LATENCY_SAMPLES: &str = "kaspar_actor_latency_samples_total";
const DEAD_LETTERS: &str = "kaspar_dead_letters_total";
const UNOBSERVED: &str = "kaspar_dead_letters_unobserved_total";
const ACTORS: &str = "kaspar_actors";

/// Counters: name, unit, description.
const COUNTERS: [(&str, Unit, &str); 12] = [
    (
        HANDLED,
        Unit::Count,
        "Handlers entered, in every delivery mode.",
    ),
    (
        VOID_INLINE,
        Unit::Count,
        "fast_send_void calls that ran inline.",
    ),
    (
        VOID_QUEUED,
        Unit::Count,
        "fast_send_void calls that fell back to the mailbox.",
    ),
    (
        BUSY,
        Unit::Count,
        "fast_send_x calls refused because the lock was held.",
    ),
    (
        CYCLES,
        Unit::Count,
        "Synchronous deliveries refused as call-chain cycles.",
    ),
    (
        DEADLOCKS,
        Unit::Count,
        "Deliveries refused as cross-thread deadlocks.",
    ),
    (PANICS, Unit::Count, "Handler panics caught."),
    (RESTARTS, Unit::Count, "Supervised restarts of the state."),
    (
        ACTOR_DEAD_LETTERS,
        Unit::Count,
        "Messages for the actor that went to dead letters.",
    ),
    (
        LATENCY_SAMPLES,
        Unit::Count,
        "Handler runs timed, per class.",
    ),
    (
        DEAD_LETTERS,
        Unit::Count,
        "The system's dead letters, by reason.",
    ),
    (
        UNOBSERVED,
        Unit::Count,
        "Dead letters that no subscriber accepted.",
    ),
];

/// Gauges: name, unit, description.
const GAUGES: [(&str, Unit, &str); 5] = [
    (
        DEPTH,
        Unit::Count,
        "Messages queued now (a group member: its group's queue).",
    ),
    (
        HIGH_WATER,
        Unit::Count,
        "The most messages ever queued at once.",
    ),
    (
        LATENCY,
        Unit::Seconds,
        "Handler service time at a quantile (1: the maximum), per class.",
    ),
    (
        LATENCY_MEAN,
        Unit::Seconds,
        "Mean handler service time, per class.",
    ),
    (ACTORS, Unit::Count, "Actors alive at the publish."),
];

/// The quantiles of `kaspar_actor_latency_seconds`, as labelled.
const QUANTILES: [&str; 5] = ["0.5", "0.9", "0.99", "0.999", "1"];

/// Publishes every live actor of `system`, and its dead letters, to the
/// current recorder.
pub(crate) fn publish(system: &SystemInner) {
    let actors = system.observed.live();
    let mut gone: Vec<*const ()> = Vec::new();
    metrics::with_recorder(|recorder| {
        describe(recorder);
        let mut alive = 0usize;
        for actor in &actors {
            let seen = actor.observe();
            publish_actor(recorder, &seen);
            if seen.stopped {
                gone.push(Arc::as_ptr(actor).cast::<()>());
            } else {
                alive += 1;
            }
        }
        publish_system(recorder, &system.dead.counts(), alive);
    });
    gone.sort_unstable();
    system.observed.forget(&gone);
}

fn describe(recorder: &dyn Recorder) {
    for (name, unit, text) in COUNTERS {
        recorder.describe_counter(KeyName::from_const_str(name), Some(unit), text.into());
    }
    for (name, unit, text) in GAUGES {
        recorder.describe_gauge(KeyName::from_const_str(name), Some(unit), text.into());
    }
}

fn counter(recorder: &dyn Recorder, name: &'static str, labels: &[Label], value: u64) {
    let key = Key::from_parts(name, labels.to_vec());
    recorder.register_counter(&key, &METADATA).absolute(value);
}

fn gauge(recorder: &dyn Recorder, name: &'static str, labels: &[Label], value: f64) {
    let key = Key::from_parts(name, labels.to_vec());
    recorder.register_gauge(&key, &METADATA).set(value);
}

fn publish_actor(recorder: &dyn Recorder, seen: &Observation) {
    let target = &seen.target;
    let mut labels = Vec::with_capacity(5);
    labels.push(Label::from_static_parts("actor", target.name));
    if let Some(name) = &target.instance {
        labels.push(Label::new("name", SharedString::from(Arc::clone(name))));
    }
    labels.push(Label::new("id", target.id.get().to_string()));
    let s = &seen.stats;
    for (name, value) in [
        (HANDLED, s.handled),
        (VOID_INLINE, s.void_inline),
        (VOID_QUEUED, s.void_queued),
        (BUSY, s.busy),
        (CYCLES, s.cycles),
        (DEADLOCKS, s.deadlocks),
        (PANICS, s.panics),
        (RESTARTS, s.restarts),
        (ACTOR_DEAD_LETTERS, s.dead_letters),
    ] {
        counter(recorder, name, &labels, value);
    }
    gauge(recorder, DEPTH, &labels, seen.queued as f64);
    gauge(recorder, HIGH_WATER, &labels, s.mailbox_high_water as f64);
    let Some(latency) = &seen.latency else {
        return;
    };
    for class in &latency.classes {
        labels.push(Label::from_static_parts("class", class.class));
        counter(recorder, LATENCY_SAMPLES, &labels, class.count);
        gauge(recorder, LATENCY_MEAN, &labels, class.mean.as_secs_f64());
        let at = [class.p50, class.p90, class.p99, class.p999, class.max];
        for (quantile, value) in QUANTILES.into_iter().zip(at) {
            labels.push(Label::from_static_parts("quantile", quantile));
            gauge(recorder, LATENCY, &labels, value.as_secs_f64());
            labels.pop();
        }
        labels.pop();
    }
}

fn publish_system(recorder: &dyn Recorder, dead: &DeadLetterCounts, alive: usize) {
    for (reason, value) in [
        ("stopped", dead.stopped),
        ("restart_limit", dead.restart_limit),
        ("shutdown_timeout", dead.shutdown_timeout),
        ("panicked", dead.panicked),
        ("undeliverable", dead.undeliverable),
    ] {
        counter(
            recorder,
            DEAD_LETTERS,
            &[Label::from_static_parts("reason", reason)],
            value,
        );
    }
    counter(recorder, UNOBSERVED, &[], dead.unobserved);
    gauge(recorder, ACTORS, &[], alive as f64);
}

/// Told to stop: by its [`MetricsHandle`], or by the system as it goes.
#[derive(Default)]
pub(crate) struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl Stop {
    fn stop(&self) {
        *self.stopped.lock() = true;
        self.cv.notify_all();
    }

    /// Waits until `deadline`; whether it was told to stop.
    fn wait_until(&self, deadline: Instant) -> bool {
        let mut stopped = self.stopped.lock();
        while !*stopped {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            stopped = self.cv.wait_timeout(stopped, left).0;
        }
        *stopped
    }
}

/// The collectors of a system, which it stops as it goes (when its last
/// handle is dropped).
#[derive(Default)]
pub(crate) struct Collectors(Mutex<Vec<Weak<Stop>>>);

impl Collectors {
    fn add(&self, stop: &Arc<Stop>) {
        let mut list = self.0.lock();
        list.retain(|s| s.strong_count() > 0);
        list.push(Arc::downgrade(stop));
    }
}

impl Drop for Collectors {
    fn drop(&mut self) {
        for stop in self.0.lock().drain(..) {
            if let Some(stop) = stop.upgrade() {
                stop.stop();
            }
        }
    }
}

/// A collector thread started by [`System::metrics_every`]: it publishes
/// the system's metrics once at start and then once a period, until this
/// handle is dropped (or [`stop`](Self::stop)ped) or the system is gone.
#[must_use = "the collector stops when its handle is dropped"]
pub struct MetricsHandle {
    stop: Arc<Stop>,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for MetricsHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsHandle")
            .field("stopped", &*self.stop.stopped.lock())
            .finish()
    }
}

impl MetricsHandle {
    /// Stops the collector and waits for its thread to exit (at most the
    /// publish it may be in the middle of). Dropping the handle does the
    /// same.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            // The thread never panics but in a recorder; then there is
            // nothing left to stop.
            let _ = thread.join();
        }
    }
}

impl Drop for MetricsHandle {
    fn drop(&mut self) {
        self.halt();
    }
}

/// Metrics (feature `metrics`); the guide's chapter "Observing a running
/// system" shows them scraped by Prometheus.
impl System {
    /// Publishes every live actor's counters, mailbox depth and latency
    /// percentiles, and the system's dead letters, once, now, through the
    /// [`metrics`] facade's current recorder (the thread's local one, or
    /// the global one an exporter installed; with none, this does
    /// nothing much). Counters are published as absolute values, so
    /// publishing twice publishes the same numbers, not twice them.
    ///
    /// Reads without any actor's lock, while handlers run: what a handler
    /// does during the publish may be in it or not. A stopped actor is
    /// published one last time and then forgotten. The cost: per actor,
    /// eleven series (seven more per message class of an actor that
    /// records latency), each looked up by the recorder by name and
    /// labels, and a snapshot of each latency histogram; a few
    /// milliseconds over 1,000 actors (the guide's chapter has the
    /// numbers).
    ///
    /// ```
    /// use kaspar::prelude::*;
    ///
    /// #[actor]
    /// pub struct Counter { n: u64 }
    /// #[actor]
    /// impl Counter {
    ///     #[handler(u64)]
    ///     fn add(&mut self, by: u64, _c: &mut Ctx<Self>) -> u64 { self.n += by; self.n }
    /// }
    ///
    /// let system = System::new();
    /// let counter = system.spawn(Counter { n: 0 }).name("tally").record_latency(true).start();
    /// counter.fast_send(2u64).unwrap();
    /// // With an exporter installed (metrics_exporter_prometheus, say), it now
    /// // shows kaspar_actor_handled_total{actor="Counter",name="tally",id="..."} 1
    /// // and kaspar_actor_latency_seconds{...,class="u64",quantile="0.99"}.
    /// system.publish_metrics();
    /// system.shutdown();
    /// ```
    ///
    /// # What is published
    ///
    /// Every series of an actor carries the labels `actor` (its type name),
    /// `name` (its instance name, [`Spawn::name`](crate::Spawn::name), only if
    /// it has one) and `id` ([`ActorId::get`](crate::ActorId::get)); the
    /// per-class ones also `class` (the message type, as written in
    /// `#[handler(..)]`).
    ///
    /// | metric | type | labels | what |
    /// |---|---|---|---|
    /// | `kaspar_actor_handled_total` | counter | actor | handlers entered, every mode |
    /// | `kaspar_actor_void_inline_total` | counter | actor | `fast_send_void` calls run inline |
    /// | `kaspar_actor_void_queued_total` | counter | actor | `fast_send_void` calls that fell back to the mailbox |
    /// | `kaspar_actor_busy_total` | counter | actor | `fast_send_x` calls refused: the lock was held |
    /// | `kaspar_actor_cycles_total` | counter | actor | synchronous deliveries refused as call-chain cycles |
    /// | `kaspar_actor_deadlocks_total` | counter | actor | deliveries refused as cross-thread deadlocks |
    /// | `kaspar_actor_panics_total` | counter | actor | handler panics caught |
    /// | `kaspar_actor_restarts_total` | counter | actor | supervised restarts |
    /// | `kaspar_actor_dead_letters_total` | counter | actor | its messages that went to dead letters |
    /// | `kaspar_actor_mailbox_depth` | gauge | actor | messages queued now (a group member: its group's queue) |
    /// | `kaspar_actor_mailbox_high_water` | gauge | actor | the most ever queued at once |
    /// | `kaspar_actor_latency_seconds` | gauge | actor, class, `quantile` | service time at quantile `0.5`, `0.9`, `0.99`, `0.999`, and `1` (the maximum) |
    /// | `kaspar_actor_latency_mean_seconds` | gauge | actor, class | mean service time |
    /// | `kaspar_actor_latency_samples_total` | counter | actor, class | handler runs timed |
    /// | `kaspar_dead_letters_total` | counter | `reason` | the system's dead letters by reason |
    /// | `kaspar_dead_letters_unobserved_total` | counter | | dead letters no subscriber took |
    /// | `kaspar_actors` | gauge | | actors alive at the publish |
    ///
    /// The latency series exist only for actors spawned with
    /// [`record_latency(true)`](crate::Spawn::record_latency). The facade has
    /// no summary type (its histograms take raw samples, which would put the
    /// exporter on every handler run), so the percentiles the runtime already
    /// computes go out as gauges with a `quantile` label, as a Prometheus
    /// summary names its quantiles.
    ///
    /// The name label is `name`, not `instance`: Prometheus attaches an
    /// `instance` label of its own (the scraped target) and would rename ours.
    ///
    /// # Which actors
    ///
    /// Every actor of the system, from the moment its address exists: spawned
    /// ones, group members, and prepared ones not started yet (their queued
    /// messages show as depth). An actor is published one last time after it
    /// stops, and then no more; the system forgets it then, or as soon as its
    /// cell is gone. (An exporter may keep showing a stopped actor's last
    /// values; the Prometheus one forgets series idle for
    /// `PrometheusBuilder::idle_timeout`, if set.) Every series is per system
    /// but not labelled with one: with several systems in one process, their
    /// actors' series stay apart (each has its own `id`), the system-wide ones
    /// (`kaspar_dead_letters_total`, `kaspar_actors`) do not.
    pub fn publish_metrics(&self) {
        publish(&self.inner);
    }

    /// Starts a thread (`kaspar:metrics`) that publishes as
    /// [`publish_metrics`](Self::publish_metrics) does, at once and then
    /// every `period`, to the global recorder (a thread-local one is not
    /// seen there). It stops when the returned handle is dropped, or when
    /// the system is (its last publish is then the one before). Between
    /// publishes it holds nothing of the system.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kaspar::prelude::*;
    ///
    /// #[actor]
    /// pub struct Idle;
    /// #[actor]
    /// impl Idle {
    ///     #[handler(u8)]
    ///     fn poke(&mut self, _p: u8, _c: &mut Ctx<Self>) {}
    /// }
    ///
    /// let system = System::new();
    /// let _idle = system.spawn(Idle).start();
    /// let collector = system.metrics_every(Duration::from_secs(10));
    /// // ... the exporter scrapes what the collector published ...
    /// collector.stop();
    /// system.shutdown();
    /// ```
    ///
    /// # Panics
    ///
    /// If `period` is zero, and if the OS refuses to start the thread.
    #[track_caller]
    pub fn metrics_every(&self, period: Duration) -> MetricsHandle {
        assert!(
            !period.is_zero(),
            "kaspar: metrics_every needs a period above zero"
        );
        let stop = Arc::new(Stop::default());
        self.inner.collectors.add(&stop);
        let system = Arc::downgrade(&self.inner);
        let told = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("kaspar:metrics".into())
            .spawn(move || collect(system, period, &told))
            .expect("kaspar: the OS refused to spawn the metrics collector");
        MetricsHandle {
            stop,
            thread: Some(thread),
        }
    }
}

/// The collector thread's loop.
fn collect(system: Weak<SystemInner>, period: Duration, stop: &Stop) {
    let mut next = Instant::now();
    loop {
        match system.upgrade() {
            // Dropped before the wait: if this was the system's last
            // handle, the system goes here, and tells `stop`.
            Some(system) => publish(&system),
            None => return,
        }
        // A publish that took longer than a period is followed by the
        // next one a period after it ended, not at once.
        next = (next + period).max(Instant::now());
        if stop.wait_until(next) {
            return;
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::collections::BTreeMap;

    use metrics::{Counter, CounterFn, Gauge, GaugeFn, Histogram};

    use super::*;
    use crate::actor::addr::Addr;

    /// What a recorder was given: `name{k=v,...}` (labels sorted) to value.
    #[derive(Default)]
    struct Seen(Mutex<BTreeMap<String, f64>>);

    struct Series {
        key: String,
        seen: Arc<Seen>,
    }

    impl CounterFn for Series {
        fn increment(&self, _: u64) {
            panic!("kaspar publishes counters as absolute values");
        }
        fn absolute(&self, value: u64) {
            self.seen.0.lock().insert(self.key.clone(), value as f64);
        }
    }

    impl GaugeFn for Series {
        fn increment(&self, _: f64) {
            panic!("kaspar sets gauges");
        }
        fn decrement(&self, _: f64) {
            panic!("kaspar sets gauges");
        }
        fn set(&self, value: f64) {
            self.seen.0.lock().insert(self.key.clone(), value);
        }
    }

    /// A recorder that keeps the last value of every series.
    #[derive(Default)]
    struct Recording(Arc<Seen>);

    impl Recording {
        fn series(&self, key: &Key) -> Arc<Series> {
            let mut labels: Vec<String> = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            labels.sort();
            Arc::new(Series {
                key: format!("{}{{{}}}", key.name(), labels.join(",")),
                seen: Arc::clone(&self.0),
            })
        }

        /// The value of `name` for the series whose labels hold all of
        /// `with` (`k=v` each); `None` if there is none, a panic if more.
        fn get(&self, name: &str, with: &[&str]) -> Option<f64> {
            let seen = self.0 .0.lock();
            let hits: Vec<f64> = seen
                .iter()
                .filter(|(k, _)| {
                    k.strip_prefix(name).is_some_and(|rest| {
                        rest.starts_with('{')
                            && with
                                .iter()
                                .all(|w| rest[1..rest.len() - 1].split(',').any(|l| l == *w))
                    })
                })
                .map(|(_, v)| *v)
                .collect();
            assert!(hits.len() <= 1, "{name} {with:?}: {hits:?}");
            hits.first().copied()
        }
    }

    impl Recorder for Recording {
        fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
            Counter::from_arc(self.series(key))
        }
        fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
            Gauge::from_arc(self.series(key))
        }
        fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
            panic!("kaspar publishes no histogram");
        }
    }

    fn publish_into(system: &System) -> Recording {
        let recording = Recording::default();
        metrics::with_local_recorder(&recording, || system.publish_metrics());
        recording
    }

    fn registered(system: &System) -> usize {
        system.inner.observed.len()
    }

    pub struct Ping;

    #[crate::actor]
    pub struct Worker;

    #[crate::actor]
    impl Worker {
        #[crate::handler(Ping)]
        fn ping(&mut self, _p: Ping, _c: &mut crate::Ctx<Self>) {}
    }

    #[crate::actor]
    pub struct Other;

    #[crate::actor]
    impl Other {
        #[crate::handler(Ping)]
        fn ping(&mut self, _p: Ping, _c: &mut crate::Ctx<Self>) {}
    }

    #[crate::group]
    pub struct Pair {
        pub worker: Addr<Worker>,
        pub other: Addr<Other>,
    }

    fn id(addr: &Addr<impl crate::actor::traits::Actor>) -> String {
        format!("id={}", addr.id().get())
    }

    #[test]
    fn spawned_prepared_and_group_actors_are_published_with_their_labels() {
        let system = System::new();
        let worker = system.spawn(Worker).name("w").record_latency(true).start();
        worker.fast_send(Ping).unwrap();
        worker.fast_send(Ping).unwrap();
        let prepared = system.prepare::<Worker>();
        prepared.addr().send(Ping).unwrap();
        // A prepared group: its members' messages wait in its one queue.
        let pair = system.prepare_group::<Pair>().name("pair");
        let members = pair.group();
        members.worker.send(Ping).unwrap();
        members.worker.send(Ping).unwrap();
        members.other.send(Ping).unwrap();

        let got = publish_into(&system);
        let w = ["actor=Worker", "name=w", &id(&worker)];
        assert_eq!(got.get(HANDLED, &w), Some(2.0));
        assert_eq!(got.get(DEPTH, &w), Some(0.0));
        let class = [w.as_slice(), &["class=Ping"]].concat();
        assert_eq!(got.get(LATENCY_SAMPLES, &class), Some(2.0));
        for q in QUANTILES {
            let at = format!("quantile={q}");
            let with = [class.as_slice(), &[at.as_str()]].concat();
            assert!(got.get(LATENCY, &with).is_some_and(|v| v > 0.0), "{q}");
        }
        // Unnamed: no name label at all.
        let p = ["actor=Worker", &id(&prepared.addr())];
        assert_eq!(got.get(DEPTH, &p), Some(1.0));
        assert!(got.0 .0.lock().keys().any(|k| k.starts_with(DEPTH)
            && k.contains(&id(&prepared.addr()))
            && !k.contains("name=")));
        assert_eq!(got.get(LATENCY_SAMPLES, &p), None, "records no latency");
        // Each member shows its group's queue: three messages.
        for (actor, member) in [
            ("actor=Worker", id(&members.worker)),
            ("actor=Other", id(&members.other)),
        ] {
            assert_eq!(got.get(DEPTH, &[actor, "name=pair", &member]), Some(3.0));
        }
        assert_eq!(got.get(ACTORS, &[]), Some(4.0));
        assert_eq!(got.get(DEAD_LETTERS, &["reason=panicked"]), Some(0.0));
        drop(pair);
        drop(prepared);
        system.shutdown();
    }

    #[test]
    fn a_stopped_actor_is_published_once_more_then_forgotten() {
        let system = System::new();
        let worker = system.spawn(Worker).start();
        let w = id(&worker);
        worker.fast_send(Ping).unwrap();
        assert_eq!(registered(&system), 1);
        system.shutdown();
        assert!(worker.is_stopped());
        // Its last numbers, though it is stopped (the address still holds
        // the cell)...
        let got = publish_into(&system);
        assert_eq!(got.get(HANDLED, &[&w]), Some(1.0));
        assert_eq!(got.get(ACTORS, &[]), Some(0.0));
        // ... and then no more.
        assert_eq!(registered(&system), 0);
        let got = publish_into(&system);
        assert_eq!(got.get(HANDLED, &[&w]), None);
    }

    #[test]
    fn an_actor_whose_cell_is_gone_is_forgotten() {
        let system = System::new();
        drop(system.spawn(Worker).start());
        system.shutdown(); // joins its thread, which held the cell
        assert_eq!(registered(&system), 1);
        let got = publish_into(&system);
        assert_eq!(got.get(ACTORS, &[]), Some(0.0));
        assert_eq!(registered(&system), 0);
    }

    #[test]
    fn the_collector_stops_when_the_system_goes() {
        let system = System::new();
        let mut collector = system.metrics_every(Duration::from_secs(3_600));
        drop(system);
        // The thread exits without its handle: the system told it to. (A
        // watchdog turns a hang into a failure.)
        let thread = collector.thread.take().expect("running");
        let (done, exited) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            thread.join().unwrap();
            done.send(()).unwrap();
        });
        exited
            .recv_timeout(Duration::from_secs(60))
            .expect("the collector did not stop with its system");
        collector.stop();
    }

    #[test]
    #[should_panic(expected = "period above zero")]
    fn a_zero_period_is_refused() {
        let _ = System::new().metrics_every(Duration::ZERO);
    }
}
