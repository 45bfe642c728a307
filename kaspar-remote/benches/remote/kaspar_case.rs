//! `iceoryx2/kaspar`: the round trip through the actor layer. The echo
//! process exports an actor with `fast_send` (its handler runs on the
//! node's bridge thread and encodes the reply straight back); the ping
//! process `ask`s it and waits with `Node::wait_polling`. Both processes busy-poll
//! ([`IdleStrategy::Spin`]), as the raw cases do.
//!
//! Also `idle_cpu`: what a node costs while nothing arrives, per idle
//! strategy.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport};
use kaspar_remote::{Export, IdleStrategy, Node, NodeConfig};
use serde::{Deserialize, Serialize};

use super::{Plan, PATIENCE};

/// A 64-byte message (as the raw cases' frame), shaped like an order:
/// numeric fields with the magnitudes real ones have (a nanosecond
/// timestamp, a fixed-point price, ids), which postcard writes as
/// varints (about 45 bytes here). A byte array would be the slow way to
/// fill 64 bytes: serde hands postcard an array element by element, about
/// nine instructions a byte each way (callgrind: 530 to decode 56 bytes).
#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
pub struct Ping {
    n: u64,
    ts_ns: u64,
    px: i64,
    qty: u64,
    order_id: u64,
    client_tag: u64,
    instrument: u32,
    account: u32,
    venue: u16,
    side: u8,
    stop: bool,
}

const _: () = assert!(std::mem::size_of::<Ping>() == 64);

impl Ping {
    fn order(n: u64, stop: bool) -> Ping {
        Ping {
            n,
            ts_ns: 1_764_560_000_000_000_000 + n * 1_000,
            px: 5_012_345_000 + (n % 100) as i64,
            qty: 100,
            order_id: 1_000_000_000_000 + n,
            client_tag: 0x5eed_0000_0000_0000 ^ n,
            instrument: 4_127,
            account: 77,
            venue: 3,
            side: (n % 2) as u8,
            stop,
        }
    }
}

/// Answers every ping with its number; a stop ping ends the echo process.
#[actor]
pub struct Echo {
    stop: Arc<AtomicBool>,
}

#[actor(remote)]
impl Echo {
    #[handler(Ping)]
    fn on_ping(&mut self, p: Ping, _ctx: &mut Ctx<Self>) -> u64 {
        if p.stop {
            self.stop.store(true, Ordering::Release);
        }
        p.n
    }
}

fn node(session: &str, side: &str, idle: IdleStrategy) -> Node<Iceoryx2Transport> {
    let t = Iceoryx2Transport::new(Iceoryx2Config::default().namespace("bench"))
        .expect("an iceoryx2 transport");
    let config = NodeConfig {
        idle,
        ..NodeConfig::default()
    };
    Node::with_config(t, &format!("{session}/kaspar_{side}"), config).expect("a node")
}

pub(super) fn ping(session: &str, plan: Plan) -> Vec<u64> {
    // The ping thread waits by polling the inbox itself (`wait_polling`),
    // as the raw case's ping thread polls its subscriber; the bridge keeps
    // the default idle strategy. One spinning thread per process, as raw.
    let node = node(session, "ping", IdleStrategy::DEFAULT);
    let name = format!("{session}/echo_actor");
    let deadline = Instant::now() + PATIENCE;
    let echo = loop {
        match node.lookup::<Echo>(&name) {
            Ok(r) => break r,
            Err(e) => {
                assert!(Instant::now() < deadline, "no echo actor: {e}");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    };
    let mut rt = Vec::with_capacity(plan.samples);
    for i in 0..(plan.warmup + plan.samples) as u64 {
        let p = Ping::order(i, false);
        let start = Instant::now();
        let mut ask = echo.ask(p).unwrap_or_else(|e| panic!("ask: {e}"));
        let back = node
            .wait_polling(&mut ask, PATIENCE)
            .unwrap_or_else(|e| panic!("ask {i}: {e:?}, stats {:?}", node.stats()));
        let took = start.elapsed().as_nanos() as u64;
        assert_eq!(back, i, "the echo answered another ping");
        if i as usize >= plan.warmup {
            rt.push(took);
        }
    }
    let stop = Ping::order(0, true);
    echo.send(stop).unwrap_or_else(|e| panic!("stop: {e}"));
    // Let the stop frame leave before the node says goodbye.
    std::thread::sleep(Duration::from_millis(20));
    rt
}

pub(super) fn echo(session: &str) {
    let system = System::new();
    let stop = Arc::new(AtomicBool::new(false));
    let actor = system.spawn(Echo { stop: stop.clone() }).start();
    let node = node(session, "echo", IdleStrategy::Spin);
    node.export_with(
        &format!("{session}/echo_actor"),
        &actor,
        Export::new().fast_send(),
    )
    .expect("export the echo actor");
    let deadline = Instant::now() + PATIENCE * 6;
    while !stop.load(Ordering::Acquire) {
        assert!(
            Instant::now() < deadline,
            "the ping process never stopped us"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(node);
    system.shutdown();
}

/// The process's CPU time (user and system) so far, from `/proc`.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on every Linux this runs on.
    Some(Duration::from_millis(ticks * 10))
}

/// The share of one core (in percent) an idle node with `idle` costs over
/// `span`, the transport's liveness thread included; `None` off Linux.
pub(super) fn idle_cpu(idle: IdleStrategy, span: Duration) -> Option<f64> {
    let session = format!("{}_idle", std::process::id());
    let n = node(&session, "idle", idle);
    // Let the node settle into its idle wait.
    std::thread::sleep(Duration::from_millis(20));
    let before = cpu_time()?;
    let t = Instant::now();
    std::thread::sleep(span);
    let used = cpu_time()? - before;
    let pct = used.as_secs_f64() / t.elapsed().as_secs_f64() * 100.0;
    drop(n);
    Some(pct)
}
