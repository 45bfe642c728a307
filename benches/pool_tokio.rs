//! `ask(..).await` from a tokio task, on a current-thread runtime, to a
//! kaspar actor hosted on that same runtime (`PoolConfig::tokio`), against
//! the same request-reply over tokio's own mpsc + oneshot, and against
//! `ask(..).await` to a kaspar actor on a thread of its own and to one
//! pooled on kaspar's own worker threads: measured side by side in one run, the rounds interleaved so that a change in the
//! machine's load falls on every case alike.
//!
//! `cargo bench --features tokio --bench pool_tokio [-- --quick]`. Prints a
//! markdown table with the machine and its load average. Read the ratios:
//! on a shared machine only numbers taken in the same run compare.

use std::time::Instant;

use kaspar::prelude::*;
use kaspar::{PoolConfig, SystemConfig};
use kaspar_suite::bench;
use tokio::runtime::{Builder, Runtime};
use tokio::sync::{mpsc, oneshot};

pub struct Inc(pub u64);

#[actor]
pub struct Counter {
    n: u64,
}

#[actor]
impl Counter {
    #[handler(Inc)]
    fn inc(&mut self, m: Inc, _ctx: &mut Ctx<Self>) -> u64 {
        self.n += m.0;
        self.n
    }
}

/// Mean ns per `ask(..).await` of `asks` asks, awaited one at a time by
/// one task of `rt`.
fn kaspar_ask(rt: &Runtime, addr: &Addr<Counter>, asks: u64) -> f64 {
    let addr = addr.clone();
    rt.block_on(async move {
        tokio::spawn(async move {
            let start = Instant::now();
            let mut last = 0;
            for _ in 0..asks {
                last = addr.ask(Inc(1)).unwrap().await.unwrap();
            }
            assert!(last >= asks);
            start.elapsed().as_nanos() as f64 / asks as f64
        })
        .await
        .unwrap()
    })
}

/// The same request-reply between two tokio tasks: an mpsc channel to a
/// server task, a oneshot per request for its reply.
fn tokio_mpsc_oneshot(rt: &Runtime, asks: u64) -> f64 {
    rt.block_on(async move {
        let (tx, mut rx) = mpsc::channel::<(u64, oneshot::Sender<u64>)>(1024);
        let server = tokio::spawn(async move {
            let mut n = 0;
            while let Some((m, reply)) = rx.recv().await {
                n += m;
                let _ = reply.send(n);
            }
        });
        let client = tokio::spawn(async move {
            let start = Instant::now();
            let mut last = 0;
            for _ in 0..asks {
                let (reply, answer) = oneshot::channel();
                tx.send((1, reply)).await.unwrap();
                last = answer.await.unwrap();
            }
            assert_eq!(last, asks);
            start.elapsed().as_nanos() as f64 / asks as f64
        });
        let ns = client.await.unwrap();
        server.await.unwrap();
        ns
    })
}

fn main() {
    let quick = bench::quick();
    let machine = bench::Machine::detect();
    let (asks, own_asks, rounds) = if quick {
        (20_000, 2_000, 1)
    } else {
        (200_000, 20_000, 3)
    };
    println!(
        "## ask(..).await on a current-thread tokio runtime (benches/pool_tokio.rs){}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{}\n", machine.header());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_else(|_| "unknown".into());
    println!(
        "load average at start: {}\n",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );

    let rt = Builder::new_current_thread().build().unwrap();
    let hosted = System::with_config(SystemConfig {
        pool: PoolConfig::tokio(rt.handle().clone()),
        ..SystemConfig::default()
    });
    let on_tokio = hosted.spawn(Counter { n: 0 }).pooled().start();
    let threads = System::new();
    let own_thread = threads.spawn(Counter { n: 0 }).start();
    let on_workers = threads.spawn(Counter { n: 0 }).pooled().start();

    // Warm-up: the first activation, slot caches, the runtime's queues.
    kaspar_ask(&rt, &on_tokio, asks / 10);
    tokio_mpsc_oneshot(&rt, asks / 10);
    kaspar_ask(&rt, &own_thread, own_asks / 10);
    kaspar_ask(&rt, &on_workers, own_asks / 10);

    let mut cases: [(&str, Vec<f64>); 4] = [
        ("tokio mpsc + oneshot, two tasks", Vec::new()),
        ("kaspar actor hosted on the same runtime", Vec::new()),
        ("kaspar actor on a thread of its own", Vec::new()),
        ("kaspar actor pooled on kaspar's worker threads", Vec::new()),
    ];
    for _ in 0..rounds {
        cases[0].1.push(tokio_mpsc_oneshot(&rt, asks));
        cases[1].1.push(kaspar_ask(&rt, &on_tokio, asks));
        cases[2].1.push(kaspar_ask(&rt, &own_thread, own_asks));
        cases[3].1.push(kaspar_ask(&rt, &on_workers, own_asks));
    }
    let base = mean(&cases[0].1);
    println!(
        "{rounds} interleaved round(s); {asks} asks a round ({own_asks} to each actor on kaspar's threads)\n"
    );
    println!("| ask(..).await from a tokio task | mean ns | per round | vs mpsc + oneshot |");
    println!("|---|---:|---|---:|");
    for (what, ns) in &cases {
        let per_round: Vec<String> = ns.iter().map(|v| format!("{v:.0}")).collect();
        println!(
            "| {what} | {:.0} | {} | {:.2}x |",
            mean(ns),
            per_round.join(" / "),
            mean(ns) / base
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_else(|_| "unknown".into());
    println!(
        "\nload average at end: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    hosted.shutdown();
    threads.shutdown();
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}
