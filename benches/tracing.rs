//! What kaspar's spans cost per message (feature `tracing`): `fast_send`
//! (a span opened and closed inline) and a queued `send` (the cause
//! captured on the sender's thread, carried in the envelope, and a span on
//! the actor's thread), measured in one run under three subscribers:
//!
//! * `none`: no subscriber at all (the global default is `tracing`'s no-op
//!   one): the feature compiled in, nobody listening;
//! * `filtered`: `tracing-subscriber`'s registry with a global filter (a
//!   dynamic one, asked by every span) that turns every span away, as an
//!   `EnvFilter` without `kaspar=trace` would;
//! * `recording`: the same registry and filter letting every span through
//!   to a layer that counts what it is told.
//!
//! `cargo bench --features tracing --bench tracing [-- --quick]`. Prints
//! markdown, with each row's ratio to the first in the same run, and
//! writes `target/kaspar-bench/tracing.jsonl`. Without the feature
//! (`cargo bench --bench tracing`) the same loops give the one row `off`:
//! kaspar as it is built by default, to compare across the two runs.
//! `bash .ci/steps/callgrind.sh` checks that the feature compiled out
//! changes no instruction count.

use std::time::Instant;

use kaspar::prelude::*;
use kaspar_suite::bench;

pub struct Inc;
pub struct Get;

#[actor]
pub struct Count {
    n: u64,
}

#[actor]
impl Count {
    #[handler(Inc)]
    fn inc(&mut self, _m: Inc, _ctx: &mut Ctx<Self>) {
        self.n += 1;
    }

    #[handler(Get)]
    fn get(&mut self, _m: Get, _ctx: &mut Ctx<Self>) -> u64 {
        self.n
    }
}

/// Nanoseconds per `fast_send`, the median of `runs` runs of `n`.
fn fast_send_ns(count: &Addr<Count>, n: u64, runs: usize) -> f64 {
    let mut per = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        for _ in 0..n {
            count.fast_send(Inc).unwrap();
        }
        per.push(start.elapsed().as_nanos() as f64 / n as f64);
    }
    bench::median(&mut per)
}

/// Nanoseconds per queued `send`, handled: bursts of `burst` sends, each
/// followed by an `ask` that returns once the burst is handled (the ask
/// counted as one more message); the median of `runs` runs of `bursts`.
fn send_ns(count: &Addr<Count>, burst: u64, bursts: u64, runs: usize) -> f64 {
    let mut per = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        for _ in 0..bursts {
            for _ in 0..burst {
                count.send(Inc).unwrap();
            }
            count.ask(Get).unwrap().wait().unwrap();
        }
        per.push(start.elapsed().as_nanos() as f64 / ((burst + 1) * bursts) as f64);
    }
    bench::median(&mut per)
}

struct Row {
    subscriber: &'static str,
    fast_send: f64,
    send: f64,
}

fn main() {
    let quick = bench::quick();
    let machine = bench::Machine::detect();
    let (n, burst, bursts, runs) = if quick {
        (200_000, 1_000, 20, 3)
    } else {
        (2_000_000, 10_000, 50, 5)
    };
    let system = System::new();
    let count = system.spawn(Count { n: 0 }).start();
    // Warm up: threads, the mailbox's blocks, the ask slot cache.
    fast_send_ns(&count, n / 10, 1);
    send_ns(&count, burst, bursts / 5 + 1, 1);
    let measure = |subscriber| Row {
        subscriber,
        fast_send: fast_send_ns(&count, n, runs),
        send: send_ns(&count, burst, bursts, runs),
    };
    #[cfg(not(feature = "tracing"))]
    let rows = vec![measure("off")];
    #[cfg(feature = "tracing")]
    let rows = {
        let messages = runs as u64 * (n + bursts * (burst + 1));
        subscribers::rows(measure, messages)
    };

    println!(
        "## Tracing: ns per message by subscriber{}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{}\n", machine.header());
    println!("| subscriber | fast_send ns | ratio | send ns (queued, handled) | ratio |");
    println!("|---|---:|---:|---:|---:|");
    let (base_fast, base_send) = (rows[0].fast_send, rows[0].send);
    let mut json = bench::JsonLines::new("tracing");
    for r in &rows {
        println!(
            "| {} | {:.1} | {:.2} | {:.1} | {:.2} |",
            r.subscriber,
            r.fast_send,
            r.fast_send / base_fast,
            r.send,
            r.send / base_send
        );
        let case = |op: &str| format!("{op}/{}", r.subscriber);
        json.record(
            "tracing",
            &case("fast_send"),
            "ns_per_msg",
            r.fast_send,
            "ns",
        );
        json.record("tracing", &case("send"), "ns_per_msg", r.send, "ns");
    }
    let path = json.write();
    println!("\nJSON lines: {}", path.display());
    system.shutdown();
}

/// The three subscribers of the feature's run.
#[cfg(feature = "tracing")]
mod subscribers {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;

    use tracing::span::{Attributes, Id};
    use tracing::Subscriber;
    use tracing_subscriber::filter::dynamic_filter_fn;
    use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

    use super::Row;

    /// Counts the spans it is shown and the links recorded between them.
    #[derive(Default)]
    struct Counting {
        opened: Arc<AtomicU64>,
        linked: Arc<AtomicU64>,
    }

    impl<S: Subscriber> Layer<S> for Counting {
        fn on_new_span(&self, _attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
            self.opened.fetch_add(1, Ordering::Relaxed);
        }

        fn on_follows_from(&self, _span: &Id, _follows: &Id, _ctx: Context<'_, S>) {
            self.linked.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `measure` under no subscriber, then under one registry with a
    /// global filter that every span asks (its answer may change, so none
    /// is cached): turning spans away, then recording them. `messages` is
    /// what one `measure` handles.
    pub(super) fn rows(measure: impl Fn(&'static str) -> Row, messages: u64) -> Vec<Row> {
        let mut rows = vec![measure("none")];
        let counting = Counting::default();
        let (opened, linked) = (counting.opened.clone(), counting.linked.clone());
        let recording = Arc::new(AtomicBool::new(false));
        let on = Arc::clone(&recording);
        let filter = dynamic_filter_fn(move |_meta, _cx| on.load(Ordering::Relaxed));
        let subscriber = tracing_subscriber::registry().with(counting).with(filter);
        tracing::subscriber::set_global_default(subscriber).expect("the bench's subscriber");
        rows.push(measure("filtered"));
        assert_eq!(
            opened.load(Ordering::Relaxed),
            0,
            "a filtered span was recorded"
        );
        recording.store(true, Ordering::Relaxed);
        rows.push(measure("recording"));
        recording.store(false, Ordering::Relaxed);
        assert_eq!(
            opened.load(Ordering::Relaxed),
            messages,
            "one span per message"
        );
        // A queued message links to its sender's span; the bench's thread
        // sends from none, so there is nothing to link to.
        assert_eq!(linked.load(Ordering::Relaxed), 0);
        rows
    }
}
