//! `Pooled<T>` against `Box<T>` and a naive single-global-mutex free list,
//! allocating and freeing on one thread and across two.
//!
//! Shared by `benches/pool.rs` and `benches/paper.rs`.
//!
//! Each case runs twice:
//! * an untimed pass for the mean: wall time divided by messages, where a
//!   message is one allocation plus one free (on two threads at once in the
//!   cross-thread workload);
//! * a timed pass for the tail: every single allocation call and every
//!   single free call is timed on its own thread (the clock's own cost, shown
//!   in the header, is included), and p99 / p99.9 / max come from those.

use std::hint::black_box;
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread;
use std::time::Instant;

use hdrhistogram::Histogram;
use kaspar::pool::Pooled;

use super::{histogram, JsonLines, Machine};

/// The message: 128 bytes, a typical "too big to sit in a ring slot" body.
type Msg = [u64; 16];

/// Messages per cross-thread batch: the hand-off channel's cost is paid once
/// per batch, so the allocator's cost is what remains.
const BATCH: usize = 256;
/// Batches in flight between the threads.
const IN_FLIGHT: usize = 4;

/// One way to get memory for a message and give it back.
trait Variant: Sync {
    type Handle: Send;
    const NAME: &'static str;
    fn alloc(&self, msg: Msg) -> Self::Handle;
    fn free(&self, handle: Self::Handle);
}

struct Boxed;
impl Variant for Boxed {
    type Handle = Box<Msg>;
    const NAME: &'static str = "box";
    #[inline]
    fn alloc(&self, msg: Msg) -> Box<Msg> {
        Box::new(msg)
    }
    #[inline]
    fn free(&self, handle: Box<Msg>) {
        drop(handle);
    }
}

struct PooledVariant;
impl Variant for PooledVariant {
    type Handle = Pooled<Msg>;
    const NAME: &'static str = "pooled";
    #[inline]
    fn alloc(&self, msg: Msg) -> Pooled<Msg> {
        Pooled::new(msg)
    }
    #[inline]
    fn free(&self, handle: Pooled<Msg>) {
        drop(handle);
    }
}

/// The naive pool the paper's companion note warns about: one free list
/// behind one global mutex, taken on every allocation and every free.
struct GlobalMutex {
    /// Boxes, not values: the list recycles the very allocations it hands out.
    #[allow(clippy::vec_box)]
    free: Mutex<Vec<Box<Msg>>>,
}
impl Variant for GlobalMutex {
    type Handle = Box<Msg>;
    const NAME: &'static str = "global_mutex";
    #[inline]
    fn alloc(&self, msg: Msg) -> Box<Msg> {
        let recycled = self.free.lock().unwrap().pop();
        match recycled {
            Some(mut b) => {
                *b = msg;
                b
            }
            None => Box::new(msg),
        }
    }
    #[inline]
    fn free(&self, handle: Box<Msg>) {
        self.free.lock().unwrap().push(handle);
    }
}

#[inline]
fn timed<R>(hist: &mut Histogram<u64>, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    let ns = t.elapsed().as_nanos() as u64;
    hist.saturating_record(ns.max(1));
    r
}

fn msg(i: usize) -> Msg {
    let mut m = [0u64; 16];
    m[0] = i as u64;
    m
}

/// Alloc then free on this thread, `n` times; with `hist`, each call timed.
fn same_thread<V: Variant>(v: &V, n: usize, mut hist: Option<&mut Histogram<u64>>) {
    for i in 0..n {
        match hist.as_deref_mut() {
            None => {
                let h = v.alloc(msg(i));
                v.free(black_box(h));
            }
            Some(hist) => {
                let h = timed(hist, || v.alloc(msg(i)));
                let h = black_box(h);
                timed(hist, || v.free(h));
            }
        }
    }
}

/// Allocate here, free on a second thread, `n` messages (rounded up to whole
/// batches). Batches travel through a bounded channel and come back empty
/// through another, so the hand-off itself allocates nothing.
fn cross_thread<V: Variant>(v: &V, n: usize, timed_pass: bool) -> Option<Histogram<u64>> {
    let batches = n.div_ceil(BATCH);
    let (full_tx, full_rx) = mpsc::sync_channel::<Vec<V::Handle>>(IN_FLIGHT);
    let (empty_tx, empty_rx) = mpsc::sync_channel::<Vec<V::Handle>>(IN_FLIGHT + 1);
    for _ in 0..IN_FLIGHT {
        empty_tx.send(Vec::with_capacity(BATCH)).unwrap();
    }
    thread::scope(|s| {
        let consumer = s.spawn(move || {
            let mut hist = timed_pass.then(histogram);
            for mut batch in full_rx {
                match hist.as_mut() {
                    None => batch.drain(..).for_each(|h| v.free(h)),
                    Some(hist) => batch.drain(..).for_each(|h| timed(hist, || v.free(h))),
                }
                // the producer may already be done and gone
                let _ = empty_tx.send(batch);
            }
            hist
        });
        let mut hist = timed_pass.then(histogram);
        for b in 0..batches {
            let mut batch = empty_rx.recv().unwrap();
            for i in 0..BATCH {
                let m = msg(b * BATCH + i);
                let h = match hist.as_mut() {
                    None => v.alloc(m),
                    Some(hist) => timed(hist, || v.alloc(m)),
                };
                batch.push(h);
            }
            full_tx.send(batch).unwrap();
        }
        drop(full_tx);
        let theirs = consumer.join().unwrap();
        if let (Some(mine), Some(theirs)) = (hist.as_mut(), theirs) {
            mine.add(theirs).unwrap();
        }
        hist
    })
}

/// One case: mean from the untimed pass, tails from the timed pass.
pub struct Row {
    pub case: String,
    pub mean_ns: f64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

fn run<V: Variant>(v: &V, same_n: usize, cross_n: usize, rows: &mut Vec<Row>) {
    // warm-up: let every tier (thread caches, depot, system allocator) grow
    same_thread(v, same_n / 10, None);
    cross_thread(v, cross_n / 10, false);

    let t = Instant::now();
    same_thread(v, same_n, None);
    let mean_ns = t.elapsed().as_nanos() as f64 / same_n as f64;
    let mut hist = histogram();
    same_thread(v, same_n, Some(&mut hist));
    rows.push(row(format!("{}_same_thread", V::NAME), mean_ns, &hist));

    let msgs = cross_n.div_ceil(BATCH) * BATCH;
    let t = Instant::now();
    cross_thread(v, cross_n, false);
    let mean_ns = t.elapsed().as_nanos() as f64 / msgs as f64;
    let hist = cross_thread(v, cross_n, true).expect("timed pass records");
    rows.push(row(format!("{}_cross_thread", V::NAME), mean_ns, &hist));
}

fn row(case: String, mean_ns: f64, hist: &Histogram<u64>) -> Row {
    Row {
        case,
        mean_ns,
        p99: hist.value_at_quantile(0.99),
        p999: hist.value_at_quantile(0.999),
        max: hist.max(),
    }
}

fn clock_cost_ns() -> f64 {
    let n = 100_000;
    let t = Instant::now();
    for _ in 0..n {
        black_box(Instant::now());
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

pub fn fmt_ns(ns: u64) -> String {
    if ns >= 1_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else if ns >= 10_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{ns} ns")
    }
}

/// Everything one pool run measured.
pub struct Pool {
    pub quick: bool,
    pub cross_n: usize,
    pub clock_ns: f64,
    pub rows: Vec<Row>,
}

impl Pool {
    pub fn row(&self, case: &str) -> &Row {
        self.rows.iter().find(|r| r.case == case).expect("case ran")
    }
}

/// Runs `Box`, `Pooled` and the global-mutex free list, on one thread and
/// across two.
pub fn measure(quick: bool) -> Pool {
    let (same_n, cross_n) = if quick {
        (1_000_000, 1_000_000)
    } else {
        (10_000_000, 10_000_000)
    };

    let mut rows = Vec::new();
    run(&Boxed, same_n, cross_n, &mut rows);
    run(&PooledVariant, same_n, cross_n, &mut rows);
    let naive = GlobalMutex {
        free: Mutex::new(Vec::new()),
    };
    run(&naive, same_n, cross_n, &mut rows);
    Pool {
        quick,
        cross_n,
        clock_ns: clock_cost_ns(),
        rows,
    }
}

/// The markdown `benches/pool.rs` prints.
pub fn print(p: &Pool, machine: &Machine) {
    println!("## pool: Pooled<T> vs Box<T> vs one global mutex free list");
    println!();
    println!("{}", machine.header());
    println!();
    println!(
        "{} messages of {} bytes per case{}; clock read ≈ {:.0} ns (inside p99/p99.9/max).",
        p.cross_n,
        std::mem::size_of::<Msg>(),
        if p.quick { " (--quick)" } else { "" },
        p.clock_ns
    );
    println!(
        "mean = untimed wall ns per message (alloc + free); tails = per single alloc or free call."
    );
    println!();
    println!("| case | mean ns/msg | p99 | p99.9 | max |");
    println!("|---|---:|---:|---:|---:|");
    for r in &p.rows {
        println!(
            "| {} | {:.1} | {} | {} | {} |",
            r.case,
            r.mean_ns,
            fmt_ns(r.p99),
            fmt_ns(r.p999),
            fmt_ns(r.max)
        );
    }

    println!();
    println!("Ratios in this run (paper's pool, cross-thread: mean 128 -> 92 ns = 1.39x, max 5.5 ms -> 33 µs = 167x):");
    println!();
    for workload in ["same_thread", "cross_thread"] {
        let b = p.row(&format!("box_{workload}"));
        let q = p.row(&format!("pooled_{workload}"));
        let g = p.row(&format!("global_mutex_{workload}"));
        println!(
            "* {workload}: box/pooled mean {:.2}x, max {:.2}x; box/global_mutex mean {:.2}x",
            b.mean_ns / q.mean_ns,
            b.max as f64 / q.max as f64,
            b.mean_ns / g.mean_ns,
        );
    }
}

/// Four lines per case: mean, p99, p99.9, max.
pub fn record(p: &Pool, json: &mut JsonLines) {
    for r in &p.rows {
        json.record("pool", &r.case, "mean_ns", r.mean_ns, "ns");
        json.record("pool", &r.case, "p99_ns", r.p99 as f64, "ns");
        json.record("pool", &r.case, "p999_ns", r.p999 as f64, "ns");
        json.record("pool", &r.case, "max_ns", r.max as f64, "ns");
    }
}
