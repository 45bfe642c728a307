//! One plain thread streams tells into a fresh pooled actor, round by
//! round, beside crossbeam-channel's stream between two threads in the
//! same round: what each round's sends cost the producer, how deep the
//! actor's queue got (its high-water mark), on which CPUs the producer
//! sent and the worker handled the same messages, and how often the
//! producer was switched out against its will.
//!
//! Why: the peers table reports a median of five rounds, and the pooled
//! tell's ratio to crossbeam swings between runs. Seen round by round, the
//! rounds fall in modes (the book's chapter "A stream into one pooled
//! actor", its section "Serving the spill where it lies"):
//! the consumer *behind* (a deep queue; the producer's sends fast), the
//! consumer *caught up* (a shallow queue; the sends themselves slower),
//! and now and then rounds several times slower whose cause is not known.
//! This bench is the probe that showed it, kept so the finding can be
//! checked on another machine or after a change.
//!
//! A second table times the consumer alone: the stream is sent while the
//! actor's handler (and crossbeam's receiving thread) sleeps, and the
//! drain of the whole backlog is timed from its waking to the last
//! message. A round whose sends had not ended when the consumer woke is
//! not counted.
//!
//! `cargo bench --bench tell_modes [-- --quick]`. Prints a row per round
//! and a summary per mode, and writes `target/kaspar-bench/tell_modes.jsonl`
//! (`table` = `tell_modes`). CPU numbers come from `sched_getcpu` (Linux;
//! elsewhere the columns read `-`).

use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar_suite::bench;

/// Every this many messages, the producer and the handler each note the
/// CPU they run on.
const SAMPLE_EVERY: u64 = 1 << 16;

/// A round is "behind" when the actor's queue held at least this share of
/// the round's messages at some point (1/20: 50,000 of a million).
const BEHIND_SHARE: u64 = 20;

pub struct Tell(pub u64);
pub struct Finish;
/// Sleep this long, then note the time: the drain starts.
pub struct Nap(pub Duration);
/// How long since the nap ended, and when it ended.
pub struct Drained;

/// The sum of what it was told, the CPU of every sampled message, and when
/// its last nap ended.
#[actor]
pub struct Counter {
    total: u64,
    cpus: Vec<Option<usize>>,
    woke: Option<Instant>,
}

#[actor]
impl Counter {
    #[handler(Tell)]
    fn tell(&mut self, msg: Tell, _ctx: &mut Ctx<Self>) {
        self.total += msg.0;
        if msg.0.is_multiple_of(SAMPLE_EVERY) {
            self.cpus.push(cpu());
        }
    }

    #[handler(Finish)]
    fn finish(&mut self, _msg: Finish, _ctx: &mut Ctx<Self>) -> (u64, Vec<Option<usize>>) {
        (self.total, std::mem::take(&mut self.cpus))
    }

    #[handler(Nap)]
    fn nap(&mut self, msg: Nap, _ctx: &mut Ctx<Self>) {
        std::thread::sleep(msg.0);
        self.woke = Some(Instant::now());
    }

    #[handler(Drained)]
    fn drained(&mut self, _msg: Drained, _ctx: &mut Ctx<Self>) -> (u64, Duration, Instant) {
        let woke = self.woke.expect("a nap came first");
        (self.total, woke.elapsed(), woke)
    }
}

/// How long the consumer sleeps while `n` tells are sent: well past the
/// sends (about 20-40 ns each on the dev VM).
fn nap_for(n: u64) -> Duration {
    Duration::from_millis(100 + n / 5_000)
}

/// The CPU this thread runs on now.
#[cfg(target_os = "linux")]
fn cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only reads the caller's
    // CPU number; it returns -1 on failure.
    let c = unsafe { libc::sched_getcpu() };
    usize::try_from(c).ok()
}

#[cfg(not(target_os = "linux"))]
fn cpu() -> Option<usize> {
    None
}

/// This thread's involuntary context switches so far.
#[cfg(target_os = "linux")]
fn involuntary_switches() -> Option<i64> {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage`; RUSAGE_THREAD asks
    // for the calling thread's counts only.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    (rc == 0).then_some(usage.ru_nivcsw)
}

#[cfg(not(target_os = "linux"))]
fn involuntary_switches() -> Option<i64> {
    None
}

/// One pooled round.
struct Round {
    ns: f64,
    sends_ns: f64,
    high_water: u64,
    /// Sampled messages sent and handled on the same CPU, of `samples`.
    same_cpu: Option<usize>,
    samples: usize,
    switches: Option<i64>,
}

impl Round {
    fn behind(&self, n: u64) -> bool {
        self.high_water >= n / BEHIND_SHARE
    }
}

/// A fresh pooled counter in `system`.
fn pooled_counter(system: &System) -> Addr<Counter> {
    system
        .spawn(Counter {
            total: 0,
            cpus: Vec::new(),
            woke: None,
        })
        .pooled()
        .start()
}

fn pooled_round(n: u64) -> Round {
    let system = System::new();
    let counter = pooled_counter(&system);
    let mut sent_on = Vec::with_capacity((n / SAMPLE_EVERY + 1) as usize);
    let switched = involuntary_switches();
    let start = Instant::now();
    for i in 0..n {
        counter.send(Tell(i)).unwrap();
        if i.is_multiple_of(SAMPLE_EVERY) {
            sent_on.push(cpu());
        }
    }
    let sends = start.elapsed();
    let (total, handled_on) = counter.ask(Finish).unwrap().wait().unwrap();
    let took = start.elapsed();
    let switches = involuntary_switches().zip(switched).map(|(b, a)| b - a);
    assert_eq!(total, n * n.saturating_sub(1) / 2, "a tell was lost");
    let high_water = counter.stats().mailbox_high_water;
    system.shutdown();
    let same_cpu = cfg!(target_os = "linux").then(|| {
        let pairs = sent_on.iter().zip(&handled_on);
        pairs.filter(|(s, h)| s.is_some() && s == h).count()
    });
    Round {
        ns: took.as_nanos() as f64 / n as f64,
        sends_ns: sends.as_nanos() as f64 / n as f64,
        high_water,
        same_cpu,
        samples: sent_on.len().min(handled_on.len()),
        switches,
    }
}

/// crossbeam-channel's round: the same stream into a consumer thread that
/// sums it, timed to the sum's arrival. Both of its threads sample their
/// CPU as the pooled round's do, so the two loops do the same work.
fn crossbeam_round(n: u64) -> f64 {
    enum Req {
        Tell(u64),
        Finish,
    }
    let (tx, rx) = crossbeam_channel::unbounded::<Req>();
    let (done_tx, done) = crossbeam_channel::bounded::<u64>(1);
    let consumer = std::thread::spawn(move || {
        let mut total = 0u64;
        let mut handled_on = Vec::new();
        while let Ok(req) = rx.recv() {
            match req {
                Req::Tell(x) => {
                    total += x;
                    if x.is_multiple_of(SAMPLE_EVERY) {
                        handled_on.push(cpu());
                    }
                }
                Req::Finish => done_tx.send(total).unwrap(),
            }
        }
        handled_on
    });
    let mut sent_on = Vec::with_capacity((n / SAMPLE_EVERY + 1) as usize);
    let start = Instant::now();
    for i in 0..n {
        tx.send(Req::Tell(i)).unwrap();
        if i.is_multiple_of(SAMPLE_EVERY) {
            sent_on.push(cpu());
        }
    }
    tx.send(Req::Finish).unwrap();
    let total = done.recv().unwrap();
    let took = start.elapsed();
    assert_eq!(total, n * n.saturating_sub(1) / 2, "a message was lost");
    drop(tx);
    let handled_on = consumer.join().unwrap();
    std::hint::black_box((sent_on, handled_on));
    took.as_nanos() as f64 / n as f64
}

/// The pooled consumer alone: `n` tells sent while its handler sleeps,
/// then the backlog's drain timed from its waking to the last message, ns
/// a message. `None` if the sends had not ended when it woke.
fn pooled_drain(n: u64) -> Option<f64> {
    let system = System::new();
    let counter = pooled_counter(&system);
    counter.send(Nap(nap_for(n))).unwrap();
    for i in 0..n {
        counter.send(Tell(i)).unwrap();
    }
    let sent = Instant::now();
    let (total, took, woke) = counter.ask(Drained).unwrap().wait().unwrap();
    assert_eq!(total, n * n.saturating_sub(1) / 2, "a tell was lost");
    system.shutdown();
    (sent <= woke).then(|| took.as_nanos() as f64 / n as f64)
}

/// crossbeam-channel's consumer alone, the same way: its receiving thread
/// sleeps while the stream is sent, then drains it.
fn crossbeam_drain(n: u64) -> Option<f64> {
    enum Req {
        Tell(u64),
        Drained,
    }
    let (tx, rx) = crossbeam_channel::unbounded::<Req>();
    let (done_tx, done) = crossbeam_channel::bounded::<(u64, Duration, Instant)>(1);
    let nap = nap_for(n);
    let consumer = std::thread::spawn(move || {
        std::thread::sleep(nap);
        let woke = Instant::now();
        let mut total = 0u64;
        while let Ok(req) = rx.recv() {
            match req {
                Req::Tell(x) => total += x,
                Req::Drained => done_tx.send((total, woke.elapsed(), woke)).unwrap(),
            }
        }
    });
    for i in 0..n {
        tx.send(Req::Tell(i)).unwrap();
    }
    let sent = Instant::now();
    tx.send(Req::Drained).unwrap();
    let (total, took, woke) = done.recv().unwrap();
    assert_eq!(total, n * n.saturating_sub(1) / 2, "a message was lost");
    drop(tx);
    consumer.join().unwrap();
    (sent <= woke).then(|| took.as_nanos() as f64 / n as f64)
}

/// The drain table: `rounds` rounds, crossbeam's then the pool's.
fn drains(rounds: usize, n: u64, json: &mut bench::JsonLines) {
    println!(
        "\n### The consumer alone\n\n{n} tells sent while the consumer sleeps ({} ms), then \
         the backlog drained: ns a message from its waking to the last one. `-`: the sends \
         had not ended when it woke (not counted).\n",
        nap_for(n).as_millis()
    );
    println!("| round | crossbeam drain ns/msg | pool drain ns/msg | pool / crossbeam |");
    println!("|---:|---:|---:|---:|");
    let (mut pool_ns, mut crossbeam_ns, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rounds {
        let cb = crossbeam_drain(n);
        let pool = pooled_drain(n);
        let ratio = pool.zip(cb).map(|(p, c)| p / c);
        pool_ns.extend(pool);
        crossbeam_ns.extend(cb);
        ratios.extend(ratio);
        let show = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
        let ratio = ratio.map_or_else(|| "-".to_string(), |v| format!("{v:.2}x"));
        println!("| {} | {} | {} | {ratio} |", r + 1, show(cb), show(pool));
    }
    if ratios.is_empty() {
        println!(
            "
No round counted."
        );
        return;
    }
    let pool = bench::median(&mut pool_ns);
    let crossbeam = bench::median(&mut crossbeam_ns);
    let ratio = bench::median(&mut ratios);
    println!(
        "\nMedian drain: pool {pool:.1} ns/msg, crossbeam {crossbeam:.1}; median of the \
         rounds' ratios {ratio:.2}x."
    );
    json.record("tell_modes", "pool/drain", "ns_per_msg_median", pool, "ns");
    json.record(
        "tell_modes",
        "crossbeam/drain",
        "ns_per_msg_median",
        crossbeam,
        "ns",
    );
    json.record(
        "tell_modes",
        "pool/drain",
        "time_vs_crossbeam_median",
        ratio,
        "x",
    );
}

fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn main() {
    let quick = bench::quick();
    let (rounds, n) = if quick { (6, 200_000) } else { (30, 1_000_000) };
    let machine = bench::Machine::detect();
    println!(
        "## A pooled tell stream, round by round{}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{}\n", machine.header());
    println!(
        "{n} tells a round from a plain thread into a fresh pooled actor (default mailbox), \
         each round after crossbeam-channel's in the same process. A round is *behind* when \
         the actor's queue held at least 1/{BEHIND_SHARE} of the round at some point. \
         Same CPU: sampled messages (every {SAMPLE_EVERY}th) sent and handled on one CPU.\n"
    );
    println!("| round | crossbeam ns/msg | pool ns/msg | pool / crossbeam | pool sends ns/msg | queue high water | mode | same CPU | producer switched out |");
    println!("|---:|---:|---:|---:|---:|---:|---|---:|---:|");
    let mut json = bench::JsonLines::new("tell_modes");
    let mut ratios = Vec::new();
    let mut modes: [(usize, f64, f64); 2] = [(0, 0.0, 0.0); 2];
    let mut pool_ns = Vec::new();
    let mut crossbeam_ns = Vec::new();
    for r in 0..rounds {
        let cb = crossbeam_round(n);
        let pool = pooled_round(n);
        let behind = pool.behind(n);
        let mode = &mut modes[usize::from(!behind)];
        mode.0 += 1;
        mode.1 += pool.ns;
        mode.2 += pool.sends_ns;
        ratios.push(pool.ns / cb);
        pool_ns.push(pool.ns);
        crossbeam_ns.push(cb);
        println!(
            "| {} | {cb:.1} | {:.1} | {:.2}x | {:.1} | {} | {} | {} of {} | {} |",
            r + 1,
            pool.ns,
            pool.ns / cb,
            pool.sends_ns,
            pool.high_water,
            if behind { "behind" } else { "caught up" },
            or_dash(pool.same_cpu),
            pool.samples,
            or_dash(pool.switches),
        );
    }
    println!("\n| mode | rounds | pool ns/msg, mean | pool sends ns/msg, mean |");
    println!("|---|---:|---:|---:|");
    for (name, (count, ns, sends)) in ["behind", "caught_up"].iter().zip(modes) {
        if count == 0 {
            println!("| {name} | 0 | - | - |");
            continue;
        }
        let (ns, sends) = (ns / count as f64, sends / count as f64);
        println!("| {name} | {count} | {ns:.1} | {sends:.1} |");
        let case = format!("pool/{name}");
        json.record("tell_modes", &case, "rounds", count as f64, "rounds");
        json.record("tell_modes", &case, "ns_per_msg", ns, "ns");
        json.record("tell_modes", &case, "sends_ns_per_msg", sends, "ns");
    }
    let behind_crossbeam = ratios.iter().filter(|&&r| r > 1.0).count();
    let median_ratio = bench::median(&mut ratios);
    let pool_median = bench::median(&mut pool_ns);
    let crossbeam_median = bench::median(&mut crossbeam_ns);
    println!(
        "\nMedian round: pool {pool_median:.1} ns/msg, crossbeam {crossbeam_median:.1}; \
         median of the rounds' ratios {median_ratio:.2}x; pool behind crossbeam in \
         {behind_crossbeam} of {rounds} rounds."
    );
    json.record(
        "tell_modes",
        "pool/tell",
        "ns_per_msg_median",
        pool_median,
        "ns",
    );
    json.record(
        "tell_modes",
        "crossbeam/tell",
        "ns_per_msg_median",
        crossbeam_median,
        "ns",
    );
    json.record(
        "tell_modes",
        "pool/tell",
        "time_vs_crossbeam_median",
        median_ratio,
        "x",
    );
    json.record(
        "tell_modes",
        "pool/tell",
        "rounds_behind_crossbeam",
        behind_crossbeam as f64,
        "rounds",
    );
    drains(if quick { 3 } else { 8 }, n, &mut json);
    let path = json.write();
    println!("\nJSON lines: {}", path.display());
}
