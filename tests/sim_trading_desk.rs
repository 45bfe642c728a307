//! The `trading_desk` example under `kaspar::sim` (#28): the same
//! `build` as `main`, the gateway on its own thread and the desk a
//! thread-bound group, all run on the test's thread under the seed. Three
//! clients send ticks, one per instrument; an auditor reads the counts as
//! the desk runs.
//!
//! Without faults, every seed must reach the decisions a live run of the
//! same ticks reaches (each instrument has one sender, so no interleaving
//! may change them). With `Faults::some()`, every count must add up: a
//! panic consumes exactly the message it hit, and what the desk's own
//! `expect`s turn an injected panic into is accounted for as well.
//!
//! The 10,000-seed sweep is `#[ignore]`d; CI runs it in release:
//! `cargo test --release --features sim --test sim_trading_desk --
//! --ignored`.
//!
//! Two tests below began as findings of this sweep: the simulator did not
//! inject a full mailbox into a group's queue (fixed in the simulator), and
//! the example's `Risk` approved an order before a bounded gateway refused
//! it (fixed in the example).

use kaspar_suite::trading_desk as desk;

use std::cell::Cell;
use std::ops::Range;
use std::rc::Rc;
use std::time::Duration;

use desk::{Summary, Tick};
use kaspar::sim::{self, Check, Faults, Sim, SimConfig, Trace, What};
use kaspar::{AskError, System};
use kaspar_suite::rng::XorShift;

const CLIENTS: u32 = 3;
const TICKS: u64 = 100;
const AUDITS: u32 = 5;

/// Client `c`'s ticks: instrument `c`, a random walk of its mid. The same
/// for every seed; the seed chooses only how they interleave.
fn ticks(c: u32) -> Vec<(u32, i64)> {
    let mut rng = XorShift::new(100 + u64::from(c));
    let mut mid = [10_000i64, 25_000, 4_000][c as usize];
    (0..TICKS)
        .map(|_| {
            mid += rng.range(-3, 4);
            (c, mid)
        })
        .collect()
}

/// What the desk decided: risk's (approved, rejected) and the gateway's
/// (sent, notional).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Outcome {
    approved: u64,
    rejected: u64,
    sent: u64,
    notional: i64,
    /// Quotes momentum never saw because mean_revert's call panicked first.
    missed: u64,
    /// Feed panics that were not injected into the feed: its `expect`s.
    cascaded: u64,
}

/// The same ticks through a live system, one thread per client.
fn live() -> Outcome {
    let system = System::new();
    let (gateway, desk) = desk::build(&system);
    std::thread::scope(|s| {
        for c in 0..CLIENTS {
            let feed = desk.feed.clone();
            s.spawn(move || {
                for (instrument, mid) in ticks(c) {
                    feed.send(Tick { instrument, mid }).unwrap();
                }
            });
        }
    });
    // Every tick was queued before this ask, in the desk's one queue.
    let (approved, rejected) = desk.risk.ask(Summary).unwrap().wait().unwrap();
    let (sent, notional) = gateway.ask(desk::Sent).unwrap().wait().unwrap();
    system.shutdown();
    Outcome {
        approved,
        rejected,
        sent,
        notional,
        missed: 0,
        cascaded: 0,
    }
}

/// Injected panics in `trace`, on actors of type `ty`, for messages of
/// `class` (any class if `None`).
fn injected(trace: &Trace, ty: &str, class: Option<&str>) -> u64 {
    let actors = trace.actors();
    trace
        .events()
        .iter()
        .filter(|e| match &e.what {
            What::InjectedPanic {
                actor, class: c, ..
            } => actors[*actor as usize].0 == ty && class.is_none_or(|class| class == *c),
            _ => false,
        })
        .count() as u64
}

/// Builds the desk in `sim`, runs the clients and the auditor, checks
/// every count, shuts the system down, and returns what it decided.
fn run_desk(sim: &mut Sim) -> Outcome {
    let (gateway, desk) = desk::build(sim.system());
    for c in 0..CLIENTS {
        let feed = desk.feed.clone();
        sim.client(&format!("ticks{c}"), async move {
            for (instrument, mid) in ticks(c) {
                // Unbounded, never stopped: a send cannot fail.
                feed.send(Tick { instrument, mid }).unwrap();
                if sim::random().is_multiple_of(4) {
                    sim::yield_now().await;
                }
            }
        });
    }

    // Reads the gateway, then risk: every order sent was approved before,
    // so sent <= approved at any moment. An injected panic may consume an
    // audit's ask; nothing else may fail it.
    let lost_audits = Rc::new(Cell::new(0u64));
    let (gw, risk, lost) = (gateway.clone(), desk.risk.clone(), Rc::clone(&lost_audits));
    sim.client("auditor", async move {
        let consumed = |e: AskError| match e {
            AskError::Panicked(_) => lost.set(lost.get() + 1),
            other => panic!("an audit failed: {other:?}"),
        };
        for _ in 0..AUDITS {
            sim::sleep(Duration::from_micros(150)).await;
            let sent = match gw.ask(desk::Sent).unwrap().await {
                Ok((sent, _)) => sent,
                Err(e) => {
                    consumed(e);
                    continue;
                }
            };
            match risk.ask(Summary).unwrap().await {
                Ok((approved, _)) => assert!(sent <= approved, "{sent} sent, {approved} approved"),
                Err(e) => consumed(e),
            }
        }
    });

    let settled = sim.run();
    assert!(settled.stuck.is_empty(), "stuck: {settled:?}");
    let (approved, rejected) = desk.risk.fast_send(Summary).unwrap();
    let (sent, notional) = gateway.fast_send(desk::Sent).unwrap();

    let trace = sim.trace();
    assert_eq!(trace.dropped(), 0, "the accounting reads the whole trace");
    let inj = |ty, class| injected(&trace, ty, class);
    let (feed, mean_revert, momentum, risk, gw) = (
        desk.feed.stats(),
        desk.mean_revert.stats(),
        desk.momentum.stats(),
        desk.risk.stats(),
        gateway.stats(),
    );
    // Mailboxes are unbounded: the only faults are panics, each recorded.
    let all = ["Feed", "MeanRevert", "Momentum", "Risk", "Gateway"];
    assert_eq!(
        sim.injected(),
        all.iter().map(|ty| inj(ty, None)).sum::<u64>()
    );
    // The desk `expect`s its synchronous sends to succeed: a strategy's
    // panic becomes its caller's (the feed's), and risk's the strategy's
    // and then the feed's. Nothing else panics.
    let strategies = inj("MeanRevert", None) + inj("Momentum", None);
    let risk_orders = inj("Risk", Some("Order"));
    assert_eq!(risk.panics, inj("Risk", None));
    assert_eq!(
        mean_revert.panics + momentum.panics,
        strategies + risk_orders
    );
    assert_eq!(feed.panics, inj("Feed", None) + strategies + risk_orders);
    assert_eq!(gw.panics, inj("Gateway", None));
    // Every approved order reached the gateway, unless a panic there
    // consumed it; the audits' asks account for the rest.
    let orders_lost = inj("Gateway", Some("Order"));
    assert_eq!(sent + orders_lost, approved);
    assert_eq!(
        lost_audits.get(),
        inj("Gateway", Some("Sent")) + inj("Risk", Some("Summary"))
    );
    // The feed saw every tick (each handled, or consumed by a panic), and
    // nothing was counted twice.
    assert_eq!(feed.handled, u64::from(CLIENTS) * TICKS);
    assert!(approved + rejected <= feed.handled * 2);
    // The fan-out: mean_revert gets every quote of a tick the feed ran;
    // momentum, second in line, misses each quote whose mean_revert call
    // panicked, as the feed's `expect` ends the tick there.
    assert_eq!(mean_revert.handled, feed.handled - inj("Feed", None));
    assert_eq!(momentum.handled, mean_revert.handled - mean_revert.panics);
    assert_eq!(gw.dead_letters, gw.panics);

    // A live shutdown: every actor stops. (A panic here fails the seed;
    // the drop that would do it otherwise stays quiet.)
    sim.shutdown();
    assert!(gateway.is_stopped() && desk.feed.is_stopped() && desk.risk.is_stopped());
    Outcome {
        approved,
        rejected,
        sent,
        notional,
        missed: mean_revert.handled - momentum.handled,
        cascaded: feed.panics - inj("Feed", None),
    }
}

/// Keeps the panic hook from printing the desk's own `expect`s failing on
/// a `Panicked` from a synchronous send: under faults there are thousands,
/// and `run_desk` accounts for each. Every other panic prints as before.
fn quiet_cascades() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let cascade = info.payload().downcast_ref::<String>().is_some_and(|m| {
                m.starts_with("strategies run on the desk's thread: Panicked")
                    || m.starts_with("risk runs on the desk's thread: Panicked")
            });
            if !cascade {
                previous(info);
            }
        }));
    });
}

/// Runs `seeds` with faults on, then `quiet` seeds without, whose
/// decisions must all equal a live run's; prints what the sweep saw.
fn sweep(faulted: Range<u64>, quiet: Range<u64>) {
    let reference = live();
    quiet_cascades();
    assert!(reference.approved > 0 && reference.sent == reference.approved);
    let passed = sim::check(Check::seeds(quiet), |sim| {
        assert_eq!(run_desk(sim), reference, "seed {}", sim.seed());
    });
    assert_eq!(passed.injected, 0);
    eprintln!("no faults: {passed:?}; every seed decided {reference:?}");

    let (lost, missed, cascaded) = (Cell::new(0), Cell::new(0), Cell::new(0));
    let passed = sim::check(Check::seeds(faulted).faults(Faults::some()), |sim| {
        let out = run_desk(sim);
        lost.set(lost.get() + out.approved - out.sent);
        missed.set(missed.get() + out.missed);
        cascaded.set(cascaded.get() + out.cascaded);
    });
    eprintln!(
        "Faults::some(): {passed:?}; approved orders a gateway panic consumed: {}; \
         quotes momentum missed: {}; feed panics from its expects: {}",
        lost.get(),
        missed.get(),
        cascaded.get()
    );
    assert!(passed.injected > 0);
}

#[test]
fn the_desk_holds_its_counts_under_faults() {
    sweep(0..300, 0..50);
}

#[test]
#[ignore = "10,000 seeds: run in release (CI's sim step)"]
fn the_desk_holds_its_counts_for_ten_thousand_seeds() {
    sweep(0..10_000, 10_000..11_000);
}

#[test]
fn a_desk_seed_replays_to_the_same_trace() {
    let trace = |seed| {
        let mut sim = Sim::new(SimConfig::seed(seed).faults(Faults::some()));
        run_desk(&mut sim);
        sim.trace().to_string()
    };
    for seed in [3, 4] {
        assert_eq!(trace(seed), trace(seed));
    }
}

// ---------------------------------------------------------------------
// Full group mailboxes. The desk shares one mailbox among its members;
// with the system's mailbox bounded and rejecting, that mailbox rejects
// when it is really full (the first test), and `Faults::full_ppm` finds
// it full too (the second: a finding of the sweep, which the simulator
// missed while it asked only actors' own mailboxes).
// ---------------------------------------------------------------------

/// A simulated run of the desk whose every mailbox is `lock_free(8)`:
/// bounded, and rejecting when full.
fn bounded_desk(full_ppm: u32) -> (Sim, desk::Desk) {
    let mut config = SimConfig::seed(1).faults(Faults::none().full(full_ppm));
    config.system.mailbox = kaspar::MailboxKind::lock_free(8);
    let sim = Sim::new(config);
    let (_gateway, desk) = desk::build(sim.system());
    (sim, desk)
}

/// How many of `n` ticks, sent in one step (nothing handled between
/// them), the desk's mailbox refused as full.
fn refused(sim: &mut Sim, desk: &desk::Desk, n: u64) -> Rc<Cell<u64>> {
    let full = Rc::new(Cell::new(0));
    let (feed, count) = (desk.feed.clone(), Rc::clone(&full));
    sim.client("burst", async move {
        for mid in 0..n as i64 {
            match feed.send(Tick { instrument: 0, mid }) {
                Ok(()) => {}
                Err(kaspar::SendError::Full { .. }) => count.set(count.get() + 1),
                Err(e) => panic!("{e:?}"),
            }
        }
    });
    assert!(sim.run().stuck.is_empty());
    full
}

#[test]
fn the_desks_bounded_group_mailbox_rejects_when_really_full() {
    let (mut sim, desk) = bounded_desk(0);
    let full = refused(&mut sim, &desk, 64);
    assert!(full.get() > 0, "64 ticks fit a mailbox of 8");
    assert_eq!(sim.injected(), 0);
}

#[test]
fn an_injected_full_mailbox_reaches_a_group_member() {
    // Every send into a bounded rejecting mailbox is found full: the first
    // tick, with the mailbox empty, must come back.
    let (mut sim, desk) = bounded_desk(1_000_000);
    let full = refused(&mut sim, &desk, 1);
    assert_eq!(sim.injected(), 1);
    assert_eq!(full.get(), 1);
}

// A finding in the example itself: `Risk` moved its ledger and counted an
// order approved before it sent the order to the gateway, and `expect`ed
// that send to succeed. With the gateway's mailbox bounded and rejecting,
// a full gateway made risk panic after the ledger moved: the order was
// approved, counted in the position, and never sent (seed 2: 72 approved,
// 70 sent). The example now sends first and counts a refusal as rejected.
#[test]
fn every_approved_order_reaches_a_bounded_gateway() {
    let mut config = SimConfig::default().faults(Faults::none().full(10_000));
    config.system.mailbox = kaspar::MailboxKind::lock_free(1024);
    sim::check(Check::seeds(0..100).config(config), |sim| {
        let (gateway, desk) = desk::build(sim.system());
        for c in 0..CLIENTS {
            let feed = desk.feed.clone();
            sim.client(&format!("ticks{c}"), async move {
                for (instrument, mid) in ticks(c) {
                    // The desk's queue is bounded too: a full one hands
                    // the tick back, to be sent again after a yield.
                    let mut tick = Tick { instrument, mid };
                    while let Err(e) = feed.send(tick) {
                        match e {
                            kaspar::SendError::Full { msg, .. } => tick = msg,
                            e => panic!("{e:?}"),
                        }
                        sim::yield_now().await;
                    }
                }
            });
        }
        assert!(sim.run().stuck.is_empty());
        let (approved, _) = desk.risk.fast_send(Summary).unwrap();
        let (sent, _) = gateway.fast_send(desk::Sent).unwrap();
        assert_eq!(
            approved,
            sent,
            "{} sends found the gateway full",
            sim.injected()
        );
    });
}
