//! The book process: a synthetic feed streams top-of-book updates to both
//! strategies, and the order gateway takes their orders back. The gateway
//! lives in a group whose remote input is journaled on the way in; after
//! the live run the journal is replayed in `Simulation`, without a
//! network, and the gateway's decisions must come out the same.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use kaspar::journal::{JournalReader, Journaled};
use kaspar::prelude::*;
use kaspar::{Clock, ExitReason, Simulation};
use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport};
use kaspar_remote::{deliver_input, Export, Node, RemoteAddr, RemoteInput, SendPolicy};
use kaspar_suite::rng::XorShift;

use crate::desk::{
    histogram, mono_ns, Decision, Decisions, Desk, EndOfFeed, Gateway, Lookout, Percentiles,
    Strategy, TopOfBook,
};
use crate::proc::{heard, tell};

/// Updates the feed sends, one every [`PACE`] (a sleep, not a spin: the
/// example shares its cores with the strategies' bridge threads).
const UPDATES: u64 = 10_000;
const PACE: Duration = Duration::from_micros(100);
/// The bound on each wait for another process.
const PATIENCE: Duration = Duration::from_secs(5);

/// The journal's route: every remote input goes to the gateway.
fn route(desk: &Desk, input: RemoteInput) -> bool {
    deliver_input(&desk.gateway, input)
}

/// What the live run measured and decided.
struct Live {
    decisions: Vec<Decision>,
    inbound: Histogram<u64>,
}

pub fn run(ns: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("kaspar-remote-desk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join("gateway.journal");
    let live = live(ns, &path);
    let outcome = live.and_then(|live| check_replay(&path, live));
    let _ = std::fs::remove_dir_all(&dir);
    if outcome.is_ok() {
        tell("DONE");
    }
    outcome
}

fn live(ns: &str, path: &std::path::Path) -> Result<Live, String> {
    let system = System::new();
    let decisions = Decisions::default();
    let inbound = Arc::new(Mutex::new(histogram()));
    let gateway = Gateway::new(decisions.clone(), Some(inbound.clone()));
    // The journal borrows the group for as long as the export feeds it.
    // Journaled input is delivered without waiting (a full queue refuses
    // it), so the queue holds every order the run can send.
    let desk = system
        .spawn_group::<Desk>((gateway,))
        .mailbox(MailboxKind::batched(16_384))
        .start();
    let desk: &'static Desk = Box::leak(Box::new(desk));
    let journal = Journaled::create(path, desk, Clock::System, route).map_err(|e| e.to_string())?;

    let config = Iceoryx2Config::default().namespace(ns).inbox_depth(1024);
    let transport = Iceoryx2Transport::new(config).map_err(|e| e.to_string())?;
    let node = Node::new(transport, "desk/book").map_err(|e| e.to_string())?;
    // Every order is journaled (with its arrival time) and routed into the
    // group on the bridge thread, in the order the bridge takes them.
    node.export_with(
        "gateway",
        &desk.gateway,
        Export::new().fed_by(move |input| journal.feed(input).unwrap_or(false)),
    )
    .map_err(|e| e.to_string())?;
    println!(
        "exported \"gateway\" (pid {}), journaling its input",
        std::process::id()
    );
    tell("READY");
    if heard().as_deref() != Some("GO") {
        return Err("the parent never said GO".into());
    }

    let lost = Arc::new(Mutex::new(Vec::new()));
    let lookout = system.spawn(Lookout { lost: lost.clone() }).start();
    let mut strategies = Vec::new();
    for name in ["strategy-a", "strategy-b"] {
        let s: RemoteAddr<Strategy> = node
            .lookup(name)
            .map_err(|e| format!("look up {name}: {e}"))?
            .with_policy(SendPolicy::DropOldest)
            .map_err(|e| e.to_string())?;
        s.watch(&lookout);
        strategies.push(s);
    }
    println!("looked up strategy-a and strategy-b, watching both");

    let sent = feed(&strategies, &lost);
    println!(
        "feed done: {} updates; strategy-a took {} ({} after strategy-b was lost), strategy-b took {} before it died",
        UPDATES, sent.to_a, sent.to_a_after_loss, sent.to_b
    );
    if !eventually(|| !lost.lock().unwrap().is_empty()) {
        return Err("strategy-b's loss was never reported".into());
    }
    let heard: Vec<_> = lost
        .lock()
        .unwrap()
        .iter()
        .map(|t| (t.target.instance.as_deref().map(str::to_owned), t.reason))
        .collect();
    if heard != [(Some("strategy-b".to_owned()), ExitReason::PeerLost)] {
        return Err(format!(
            "the watcher heard {heard:?}, not strategy-b's PeerLost alone"
        ));
    }
    if sent.to_a_after_loss == 0 {
        return Err("strategy-a got nothing after strategy-b was lost".into());
    }

    let a = &strategies[0];
    let tally = a
        .ask(EndOfFeed)
        .map_err(|e| format!("ask strategy-a: {e:?}"))?
        .wait_timeout(PATIENCE)
        .map_err(|e| format!("strategy-a's tally: {e:?}"))?;
    println!(
        "strategy-a: {} updates received, {} orders sent, {} unsent",
        tally.received, tally.orders, tally.unsent
    );
    let from_a = || {
        let d = decisions.lock().unwrap();
        d.iter().filter(|d| d.strategy == 0).count() as u64
    };
    if !eventually(|| from_a() >= tally.orders) || from_a() != tally.orders {
        return Err(format!(
            "the gateway saw {} of strategy-a's {} orders",
            from_a(),
            tally.orders
        ));
    }

    let from_b = decisions.lock().unwrap().len() as u64 - tally.orders;
    println!(
        "gateway: {} orders from strategy-a, {from_b} from strategy-b before it died",
        tally.orders
    );
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!();
    println!("per-hop latency, CLOCK_MONOTONIC stamps carried in the messages ({cores} cores):");
    println!(
        "{:<26} {:>7} {:>8} {:>8} {:>8} {:>8} {:>9}",
        "hop (µs)", "n", "p50", "p90", "p99", "p99.9", "max"
    );
    println!("{}", tally.hop.row("book → strategy-a"));
    let inbound = inbound.lock().unwrap().clone();
    println!("{}", Percentiles::of(&inbound).row("strategies → gateway"));
    println!();

    // The watcher stops first: closing this node's links is no news.
    system.shutdown();
    drop(strategies);
    drop(node); // drops the export, and with it the journal: flushed
    let decisions = decisions.lock().unwrap().clone();
    Ok(Live { decisions, inbound })
}

/// How many updates each strategy's buffer accepted.
struct Sent {
    to_a: u64,
    to_b: u64,
    to_a_after_loss: u64,
}

/// Streams [`UPDATES`] top-of-book updates, one every [`PACE`], to every
/// strategy not known lost; tells the parent when half are out.
fn feed(strategies: &[RemoteAddr<Strategy>], lost: &Mutex<Vec<kaspar::Terminated>>) -> Sent {
    let mut rng = XorShift::new(0x5eed_f00d);
    let mut sent = Sent {
        to_a: 0,
        to_b: 0,
        to_a_after_loss: 0,
    };
    let (mut bid, mut next) = (10_000_i64, Instant::now());
    for seq in 0..UPDATES {
        bid += rng.range(-2, 3);
        let top = TopOfBook {
            seq,
            bid,
            ask: bid + 1 + rng.range(0, 2),
            bid_qty: 1 + rng.below(100) as u32,
            ask_qty: 1 + rng.below(100) as u32,
            sent_ns: mono_ns(),
        };
        let b_lost = !lost.lock().unwrap().is_empty();
        for (i, s) in strategies.iter().enumerate() {
            if s.is_lost() || s.send(top.clone()).is_err() {
                continue;
            }
            if i == 0 {
                sent.to_a += 1;
                sent.to_a_after_loss += u64::from(b_lost);
            } else {
                sent.to_b += 1;
            }
        }
        if seq == UPDATES / 2 {
            tell("HALF");
        }
        next += PACE;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    sent
}

/// Replays the journal in a `Simulation`, without a network, and compares
/// the gateway's decisions with the live run's.
fn check_replay(path: &std::path::Path, live: Live) -> Result<(), String> {
    let decisions = Decisions::default();
    let mut sim = Simulation::<Desk>::new((Gateway::new(decisions.clone(), None),));
    let reader = JournalReader::<RemoteInput>::open(path).map_err(|e| e.to_string())?;
    let replayed = sim.replay(reader, route).map_err(|e| e.to_string())?;
    sim.finish();
    let replay = decisions.lock().unwrap().clone();
    let accepted = replay.iter().filter(|d| d.accepted).count();
    println!(
        "replayed {replayed} journaled orders in Simulation: {} decisions ({accepted} accepted), live: {} decisions, {} orders timed",
        replay.len(),
        live.decisions.len(),
        live.inbound.len()
    );
    if replay.is_empty() || replay != live.decisions {
        return Err("the replay's decisions differ from the live run's".into());
    }
    Ok(())
}

/// Polls `check` until it holds, at most [`PATIENCE`].
fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while !check() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}
