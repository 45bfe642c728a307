//! The actor pool against own-thread actors and crossbeam-channel between
//! two threads, measured side by side in one run: ping-pong round trips,
//! tell throughput (and what the envelope's size costs it), spawn cost,
//! the memory of an idle pooled actor, and the activation budget's effect
//! on a fan-in (how its default was chosen).
//!
//! `cargo bench --bench sched [-- --quick]`. Prints markdown tables and
//! writes `target/kaspar-bench/sched.jsonl` (`table` = `sched`). Read
//! the ratios, not the absolute numbers: on a shared machine only numbers
//! taken in the same run compare.

use std::alloc::{GlobalAlloc, Layout, System as Sys};
use std::mem::size_of;
use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use kaspar::prelude::*;
use kaspar::{Actor, Handler, PoolConfig, SystemConfig};
use kaspar_suite::bench;

/// Counts live heap bytes, for the idle pooled actor's size (one atomic
/// add per allocation; the measured paths allocate nothing in steady
/// state).
struct Live;
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Live {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { Sys.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { Sys.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: same contract as ours.
        unsafe { Sys.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Live = Live;

pub struct Ball {
    pub left: u64,
    pub done: Option<mpsc::Sender<()>>,
}

#[actor]
pub struct Player {
    other: Option<Addr<Player>>,
}

#[actor]
impl Player {
    #[handler(Addr<Player>)]
    fn meet(&mut self, other: Addr<Player>, _ctx: &mut Ctx<Self>) {
        self.other = Some(other);
    }

    #[handler(Ball)]
    fn hit(&mut self, ball: Ball, _ctx: &mut Ctx<Self>) {
        if ball.left == 0 {
            if let Some(done) = ball.done {
                done.send(()).unwrap();
            }
            return;
        }
        let other = self.other.as_ref().expect("met");
        other
            .send(Ball {
                left: ball.left - 1,
                done: ball.done,
            })
            .unwrap();
    }
}

#[actor]
pub struct Count {
    n: u64,
}

#[actor]
impl Count {
    #[handler(u64)]
    fn add(&mut self, _k: u64, _ctx: &mut Ctx<Self>) {
        self.n += 1;
    }

    #[handler(u8)]
    fn get(&mut self, _q: u8, _ctx: &mut Ctx<Self>) -> u64 {
        self.n
    }
}

/// A pooled counter whose tell carries `$words` words: the same stream as
/// [`tell`] with a larger envelope, to see what the envelope's size costs
/// a stream (the pooled tell against crossbeam: would a smaller one
/// close the gap?).
macro_rules! wide_counter {
    ($actor:ident, $msg:ident, $words:expr) => {
        pub struct $msg(pub [u64; $words]);

        #[actor]
        pub struct $actor {
            n: u64,
        }

        #[actor]
        impl $actor {
            #[handler($msg)]
            fn add(&mut self, _k: $msg, _ctx: &mut Ctx<Self>) {
                self.n += 1;
            }

            #[handler(u8)]
            fn get(&mut self, _q: u8, _ctx: &mut Ctx<Self>) -> u64 {
                self.n
            }
        }

        impl Wide for $actor {
            fn new() -> Self {
                $actor { n: 0 }
            }
            fn tell(addr: &Addr<Self>, i: u64) {
                addr.send($msg([i; $words])).unwrap();
            }
        }
    };
}

/// What [`tell_wide`] needs of a counter from `wide_counter!`.
trait Wide: Handler<u8, Reply = u64> + Send + Sized {
    fn new() -> Self;
    fn tell(addr: &Addr<Self>, i: u64);
}

wide_counter!(Wide2, Words2, 2);
wide_counter!(Wide4, Words4, 4);
wide_counter!(Wide8, Words8, 8);

/// [`tell`] into a pooled `A`: messages per second.
fn tell_wide<A: Wide>(n: u64) -> f64 {
    let system = system(0, PoolConfig::DEFAULT_BUDGET);
    let c = system.spawn(A::new()).pooled().start();
    let rate = stream(&c, n, A::tell);
    system.shutdown();
    rate
}

/// Messages per second from this thread to the counter `c`, `tell`ing it
/// `n` messages after a warm-up of a tenth as many; done once the counter
/// (asked with a `u8`) has counted them all.
fn stream<A: Handler<u8, Reply = u64>>(c: &Addr<A>, n: u64, tell: impl Fn(&Addr<A>, u64)) -> f64 {
    let run = |n: u64| {
        let before = c.ask(0u8).unwrap().wait().unwrap();
        let start = Instant::now();
        for i in 0..n {
            tell(c, i);
        }
        while c.ask(0u8).unwrap().wait().unwrap() < before + n {}
        start.elapsed()
    };
    run(n / 10);
    n as f64 / run(n).as_secs_f64()
}

fn system(workers: usize, budget: usize) -> System {
    System::with_config(SystemConfig {
        pool: PoolConfig::new().workers(workers).budget(budget),
        ..SystemConfig::default()
    })
}

/// Nanoseconds per round trip (two hops) between two actors.
fn ping_pong(pooled: bool, workers: usize, rounds: u64) -> f64 {
    ping_pong_with(pooled, workers, PoolConfig::DEFAULT_LIFO_LIMIT, rounds)
}

/// [`ping_pong`] with the pool's next-to-run limit set to `lifo`.
fn ping_pong_with(pooled: bool, workers: usize, lifo: u32, rounds: u64) -> f64 {
    let system = System::with_config(SystemConfig {
        pool: PoolConfig::new().workers(workers).lifo_limit(lifo),
        ..SystemConfig::default()
    });
    let spawn = |s: &System| {
        let sp = s.spawn(Player { other: None });
        if pooled {
            sp.pooled().start()
        } else {
            sp.start()
        }
    };
    let (a, b) = (spawn(&system), spawn(&system));
    a.send(b.clone()).unwrap();
    b.send(a.clone()).unwrap();
    let run = |hops: u64| {
        let (done, finished) = mpsc::channel();
        let start = Instant::now();
        a.send(Ball {
            left: hops,
            done: Some(done),
        })
        .unwrap();
        finished.recv().unwrap();
        start.elapsed()
    };
    run(rounds / 10);
    let took = run(2 * rounds);
    system.shutdown();
    took.as_nanos() as f64 / rounds as f64
}

/// Nanoseconds per round trip over two crossbeam channels between two
/// threads.
fn ping_pong_crossbeam(rounds: u64) -> f64 {
    let (to_b, from_a) = crossbeam_channel::bounded::<u64>(1);
    let (to_a, from_b) = crossbeam_channel::bounded::<u64>(1);
    let b = std::thread::spawn(move || {
        while let Ok(v) = from_a.recv() {
            if to_a.send(v).is_err() {
                break;
            }
        }
    });
    let run = |n: u64| {
        let start = Instant::now();
        for i in 0..n {
            to_b.send(i).unwrap();
            from_b.recv().unwrap();
        }
        start.elapsed()
    };
    run(rounds / 10);
    let took = run(rounds);
    drop(to_b);
    b.join().unwrap();
    took.as_nanos() as f64 / rounds as f64
}

/// Messages per second from this thread to one actor (pooled: with the
/// pooled default mailbox, or `kind`).
fn tell(pooled: bool, kind: Option<MailboxKind>, n: u64) -> f64 {
    let system = system(0, PoolConfig::DEFAULT_BUDGET);
    let mut sp = system.spawn(Count { n: 0 });
    if let Some(kind) = kind {
        sp = sp.mailbox(kind);
    }
    let c = if pooled {
        sp.pooled().start()
    } else {
        sp.start()
    };
    let rate = stream(&c, n, |c, i| {
        c.send(i).unwrap();
    });
    system.shutdown();
    rate
}

fn tell_crossbeam(n: u64) -> f64 {
    let (tx, rx) = crossbeam_channel::unbounded::<u64>();
    let seen = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&seen);
    let consumer = std::thread::spawn(move || {
        while rx.recv().is_ok() {
            counter.fetch_add(1, Ordering::Release);
        }
    });
    let run = |n: u64| {
        let before = seen.load(Ordering::Acquire);
        let start = Instant::now();
        for i in 0..n {
            tx.send(i).unwrap();
        }
        while seen.load(Ordering::Acquire) < before + n {
            std::hint::spin_loop();
        }
        start.elapsed()
    };
    run(n / 10);
    let took = run(n);
    drop(tx);
    consumer.join().unwrap();
    n as f64 / took.as_secs_f64()
}

/// Nanoseconds per actor to spawn `n` (and to shut them down).
fn spawn_cost(pooled: bool, n: usize) -> (f64, f64) {
    let system = system(0, PoolConfig::DEFAULT_BUDGET);
    if pooled {
        // The pool exists before the window.
        system.spawn(Count { n: 0 }).pooled().start();
    }
    let start = Instant::now();
    let addrs: Vec<Addr<Count>> = (0..n)
        .map(|_| {
            let sp = system.spawn(Count { n: 0 });
            if pooled {
                sp.pooled().start()
            } else {
                sp.start()
            }
        })
        .collect();
    let spawned = start.elapsed();
    let start = Instant::now();
    system.shutdown();
    let stopped = start.elapsed();
    drop(addrs);
    (
        spawned.as_nanos() as f64 / n as f64,
        stopped.as_nanos() as f64 / n as f64,
    )
}

/// Heap bytes per idle pooled actor (the whole cost: no thread, no stack).
fn idle_bytes(n: usize) -> f64 {
    let system = system(1, PoolConfig::DEFAULT_BUDGET);
    system.spawn(Count { n: 0 }).pooled().start();
    let mut addrs = Vec::with_capacity(n);
    let before = LIVE.load(Ordering::Relaxed);
    for _ in 0..n {
        addrs.push(system.spawn(Count { n: 0 }).pooled().start());
    }
    let bytes = (LIVE.load(Ordering::Relaxed) - before) as f64 / n as f64;
    system.shutdown();
    bytes
}

/// Messages per second into `actors` pooled actors, round-robin from two
/// threads, with the given budget: the budget's cost and benefit.
fn fan_in(budget: usize, actors: usize, n: u64) -> f64 {
    let system = system(0, budget);
    let sinks: Vec<Addr<Count>> = (0..actors)
        .map(|_| system.spawn(Count { n: 0 }).pooled().start())
        .collect();
    let start = Instant::now();
    let threads: Vec<_> = (0..2u64)
        .map(|t| {
            let sinks = sinks.clone();
            std::thread::spawn(move || {
                for i in 0..n / 2 {
                    sinks[((i + t) as usize) % sinks.len()].send(i).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let total: u64 = loop {
        let total = sinks
            .iter()
            .map(|s| s.ask(0u8).unwrap().wait().unwrap())
            .sum();
        if total >= n / 2 * 2 {
            break total;
        }
    };
    let took = start.elapsed();
    system.shutdown();
    total as f64 / took.as_secs_f64()
}

fn best(runs: usize, f: impl Fn() -> f64, lower_is_better: bool) -> f64 {
    let mut all: Vec<f64> = (0..runs).map(|_| f()).collect();
    all.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if lower_is_better {
        all[0]
    } else {
        all[runs - 1]
    }
}

fn main() {
    let quick = bench::quick();
    let machine = bench::Machine::detect();
    let (rounds, tells, runs) = if quick {
        (20_000, 200_000, 1)
    } else {
        (200_000, 2_000_000, 3)
    };
    println!(
        "## The actor pool (benches/sched.rs){}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{}\n", machine.header());
    println!("best of {runs} runs each\n");
    let mut json = bench::JsonLines::new("sched");

    let cb_pp = best(runs, || ping_pong_crossbeam(rounds), true);
    let pool1_pp = best(runs, || ping_pong(true, 1, rounds), true);
    let pool_pp = best(runs, || ping_pong(true, 0, rounds), true);
    let thr_pp = best(runs, || ping_pong(false, 0, rounds), true);
    println!("| ping-pong round trip | ns | vs crossbeam |");
    println!("|---|---:|---:|");
    for (what, case, v) in [
        ("crossbeam-channel, two threads", "crossbeam", cb_pp),
        ("two pooled actors, pool of 1", "pool_of_1", pool1_pp),
        ("two pooled actors, pool of one per core", "pool", pool_pp),
        ("two own-thread actors", "thread", thr_pp),
    ] {
        println!("| {what} | {v:.0} | {:.2}x |", v / cb_pp);
        let case = format!("ping_pong/{case}");
        json.record("sched", &case, "ns_per_round_trip", v, "ns");
    }

    let cb_tell = best(runs, || tell_crossbeam(tells), false);
    let pool_tell = best(runs, || tell(true, None, tells), false);
    let seg = MailboxKind::DEFAULT;
    let pool_seg_tell = best(runs, || tell(true, Some(seg), tells), false);
    let thr_tell = best(runs, || tell(false, None, tells), false);
    println!("\n| tell from a thread | M msgs/s | vs crossbeam |");
    println!("|---|---:|---:|");
    for (what, case, v) in [
        ("crossbeam-channel (unbounded)", "crossbeam", cb_tell),
        ("pooled actor (`MailboxKind::POOLED`)", "pool", pool_tell),
        (
            "pooled actor (`Segmented`, the thread default)",
            "pool_segmented",
            pool_seg_tell,
        ),
        ("own-thread actor (`Segmented`)", "thread", thr_tell),
    ] {
        println!("| {what} | {:.1} | {:.2}x |", v / 1e6, v / cb_tell);
        json.record("sched", &format!("tell/{case}"), "msgs_per_s", v, "msgs/s");
    }

    // Interleaved, so that a change of the machine's mood during the
    // table falls on every size alike.
    let sizes = [
        (size_of::<<Count as Actor>::Msg>(), 8),
        (size_of::<<Wide2 as Actor>::Msg>(), 16),
        (size_of::<<Wide4 as Actor>::Msg>(), 32),
        (size_of::<<Wide8 as Actor>::Msg>(), 64),
    ];
    let mut by_size = [const { Vec::new() }; 4];
    for _ in 0..runs.max(3) {
        by_size[0].push(tell(true, None, tells));
        by_size[1].push(tell_wide::<Wide2>(tells));
        by_size[2].push(tell_wide::<Wide4>(tells));
        by_size[3].push(tell_wide::<Wide8>(tells));
    }
    println!("\n| tell into a pooled actor, by envelope | envelope bytes | M msgs/s (best) | vs the 8-byte message |");
    println!("|---|---:|---:|---:|");
    let fastest: Vec<f64> = by_size
        .iter()
        .map(|v| v.iter().copied().fold(0.0, f64::max))
        .collect();
    for ((envelope, payload), v) in sizes.iter().zip(&fastest) {
        println!(
            "| {payload}-byte message | {envelope} | {:.1} | {:.2}x |",
            v / 1e6,
            v / fastest[0]
        );
        let case = format!("tell_by_envelope/{payload}B");
        json.record("sched", &case, "msgs_per_s", *v, "msgs/s");
        json.record("sched", &case, "envelope_bytes", *envelope as f64, "bytes");
    }

    let spawn_n = if quick { 2_000 } else { 20_000 };
    let (pool_spawn, pool_stop) = spawn_cost(true, spawn_n);
    let thread_n = if quick { 200 } else { 1_000 };
    let (thr_spawn, thr_stop) = spawn_cost(false, thread_n);
    println!("\n| spawn | ns per actor | shutdown ns per actor |");
    println!("|---|---:|---:|");
    println!("| pooled ({spawn_n}) | {pool_spawn:.0} | {pool_stop:.0} |");
    println!("| own thread ({thread_n}) | {thr_spawn:.0} | {thr_stop:.0} |");
    for (case, spawn, stop) in [
        ("pool", pool_spawn, pool_stop),
        ("thread", thr_spawn, thr_stop),
    ] {
        let case = format!("spawn/{case}");
        json.record("sched", &case, "ns_per_actor", spawn, "ns");
        json.record("sched", &case, "shutdown_ns_per_actor", stop, "ns");
    }
    let idle = idle_bytes(if quick { 2_048 } else { 16_384 });
    println!(
        "\nidle pooled actor: {idle:.0} heap bytes (state: {} bytes), no thread, no stack",
        size_of::<Count>()
    );
    json.record("sched", "idle/pool", "heap_bytes_per_actor", idle, "bytes");

    println!("\n| next-to-run limit (ping-pong, pool of 1) | ns per round trip |");
    println!("|---:|---:|");
    for lifo in [0, 1, 3, 8, 32] {
        let v = best(runs, || ping_pong_with(true, 1, lifo, rounds), true);
        println!("| {lifo} | {v:.0} |");
        let case = format!("next_to_run_limit/{lifo}");
        json.record("sched", &case, "ns_per_round_trip", v, "ns");
    }
    println!("\n| budget (fan-in: 2 threads into 64 pooled actors) | M msgs/s |");
    println!("|---:|---:|");
    for budget in [4, 16, 64, 256, 1024] {
        let v = best(runs, || fan_in(budget, 64, tells), false);
        println!("| {budget} | {:.1} |", v / 1e6);
        let case = format!("fan_in_budget/{budget}");
        json.record("sched", &case, "msgs_per_s", v, "msgs/s");
    }
    let path = json.write();
    println!("\nJSON lines: {}", path.display());
}
