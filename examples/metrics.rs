//! kaspar's metrics on a Prometheus `/metrics` page (feature `metrics`).
//!
//! A small desk runs while a collector thread (`System::metrics_every`)
//! publishes every actor's counters, queue depths and latency percentiles
//! through the `metrics` facade, and the Prometheus exporter serves them
//! over HTTP:
//!
//! ```text
//!  main ──send(Tick)──▶ ┌──── group `Desk`, one thread ────┐
//!                       │ Book ──fast_send──▶ Strategy ─────┼─send──▶ Gateway (panics on
//!                       └──────────────────────────────────┘         every 97th order)
//! ```
//!
//! The book and the strategy record their handlers' service times; the
//! gateway's panics become dead letters; the strategy calls the book back
//! once per 1,000 ticks, which the book's own call to it makes a cycle,
//! refused. All of it shows on the page (a 2-second run):
//!
//! ```text
//! kaspar_actor_handled_total{actor="Book",name="desk",id="2"} 18101
//! kaspar_actor_latency_seconds{actor="Book",name="desk",id="2",class="Tick",quantile="0.99"} 0.000001023
//! kaspar_actor_cycles_total{actor="Book",name="desk",id="2"} 18
//! kaspar_actor_dead_letters_total{actor="Gateway",name="gateway",id="1"} 18
//! kaspar_actor_mailbox_depth{actor="Gateway",name="gateway",id="1"} 0
//! ```
//!
//! Run: `cargo run --release --features metrics --example metrics -- <port> [seconds]`
//! and open `http://127.0.0.1:<port>/metrics` (or point a Prometheus
//! server at it). Without `seconds` it runs until killed; with them it
//! stops by itself, after fetching its own page once and checking that
//! the numbers it drove are on it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use metrics_exporter_prometheus::PrometheusBuilder;

/// Market data from outside the desk.
pub struct Tick(pub u64);
/// The book's top of book, as the strategy reads it.
pub struct Quote(pub u64);
/// What the strategy sends out.
pub struct Order(pub u64);
/// Asks the book for its depth (the strategy's call back into it).
pub struct Depth;

#[actor]
pub struct Book {
    strategy: Addr<Strategy>,
    last: u64,
}

#[actor]
impl Book {
    #[handler(Tick)]
    fn tick(&mut self, t: Tick, _ctx: &mut Ctx<Self>) {
        self.last = t.0;
        // Members of one group: a nested call, no second lock.
        let _ = self.strategy.fast_send(Quote(t.0));
    }

    #[handler(Depth)]
    fn depth(&mut self, _d: Depth, _ctx: &mut Ctx<Self>) -> u64 {
        self.last
    }
}

#[actor]
pub struct Strategy {
    book: Addr<Book>,
    gateway: Addr<Gateway>,
}

#[actor]
impl Strategy {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) {
        if q.0.is_multiple_of(1_000) {
            // The book is on this call chain (it called us): a cycle,
            // refused before any lock, and counted.
            let refused = self.book.fast_send(Depth);
            debug_assert!(refused.is_err_and(|e| e.is_cycle()));
        }
        if q.0.is_multiple_of(10) {
            let _ = self.gateway.send(Order(q.0));
        }
    }
}

#[group]
pub struct Desk {
    pub book: Addr<Book>,
    pub strategy: Addr<Strategy>,
}

#[actor]
pub struct Gateway {
    sent: u64,
}

#[actor]
impl Gateway {
    #[handler(Order)]
    fn order(&mut self, o: Order, _ctx: &mut Ctx<Self>) {
        self.sent += 1;
        if self.sent.is_multiple_of(97) {
            panic!(
                "gateway rejected order {} (the example's deliberate fault)",
                o.0
            );
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let port: u16 = args
        .next()
        .and_then(|p| p.parse().ok())
        .expect("usage: metrics <port> [seconds]");
    let seconds: Option<u64> = args.next().map(|s| s.parse().expect("seconds: a number"));

    // The exporter: the global recorder, and its HTTP listener on its own
    // thread (a small tokio runtime inside the exporter).
    let at = SocketAddr::from(([127, 0, 0, 1], port));
    PrometheusBuilder::new()
        .with_http_listener(at)
        .install()
        .expect("install the Prometheus exporter");
    // The gateway's panics are the example's own: they show on the page
    // as dead letters, not on stderr.
    std::panic::set_hook(Box::new(|_| {}));

    let system = System::new();
    let gateway = system.spawn(Gateway { sent: 0 }).name("gateway").start();
    let prepared = system.prepare_group::<Desk>().name("desk");
    let wired = prepared.group();
    let desk = prepared
        .spawn((
            Book {
                strategy: wired.strategy.clone(),
                last: 0,
            },
            Strategy {
                book: wired.book.clone(),
                gateway: gateway.clone(),
            },
        ))
        .record_latency(true)
        .start();
    let collector = system.metrics_every(Duration::from_secs(1));
    println!("serving http://{at}/metrics");

    let until = seconds.map(|s| Instant::now() + Duration::from_secs(s));
    let mut n = 0u64;
    while until.is_none_or(|t| Instant::now() < t) {
        // About 10,000 ticks a second.
        for _ in 0..100 {
            n += 1;
            desk.book.send(Tick(n)).expect("the desk runs");
        }
        std::thread::sleep(Duration::from_millis(10));
    }

    // Everything sent is handled before the ask's reply comes back.
    let last = desk.book.ask(Depth).unwrap().wait().unwrap();
    system.publish_metrics();
    let page = fetch(at);
    let kaspar: Vec<&str> = page.lines().filter(|l| l.starts_with("kaspar_")).collect();
    println!(
        "{n} ticks sent, the book's last {last}; /metrics has {} kaspar series",
        kaspar.len()
    );
    // The numbers this run drove, each on the page.
    for (family, actor, with, at_least) in [
        ("kaspar_actor_handled_total", "Book", "", n),
        (
            "kaspar_actor_latency_seconds",
            "Book",
            "quantile=\"0.99\"",
            0,
        ),
        ("kaspar_actor_cycles_total", "Book", "", n / 1_000),
        (
            "kaspar_actor_dead_letters_total",
            "Gateway",
            "",
            n / 10 / 97,
        ),
        ("kaspar_actor_mailbox_depth", "Gateway", "", 0),
    ] {
        let prefix = format!("{family}{{actor=\"{actor}\"");
        let line = kaspar
            .iter()
            .find(|l| l.starts_with(&prefix) && l.contains(with))
            .unwrap_or_else(|| panic!("no {prefix}..}} on the page"));
        let value: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(value >= at_least as f64, "{line}: below {at_least}");
        println!("  {line}");
    }
    collector.stop();
    system.shutdown();
}

/// The exporter's page, as a scraper gets it (HTTP/1.0: the body is the
/// rest of the response, never chunked).
fn fetch(at: SocketAddr) -> String {
    let mut stream = TcpStream::connect(at).expect("connect to the exporter");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\n\r\n")
        .expect("send the request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .expect("read the response");
    let (head, body) = response
        .split_once("\r\n\r\n")
        .expect("headers, then a body");
    assert!(head.starts_with("HTTP/1."), "{head}");
    assert!(head.lines().next().unwrap_or("").contains(" 200"), "{head}");
    body.to_string()
}
