//! A trading desk: a feed fans quotes out to two strategy types through
//! `Recipient<Quote>`, the strategies send orders to a risk check, and risk
//! passes what it approves to an order gateway on its own thread.
//!
//! ```text
//!  main ──send(Tick)──▶ ┌─────────────── group `Desk`, one thread ───────────────┐
//!                       │ Feed ──fast_send──▶ MeanRevert ─┐                       │
//!                       │      └─fast_send──▶ Momentum  ──┴─fast_send──▶ Risk ────┼─send──▶ Gateway
//!                       └─────────────────────────────────────────────────────────┘
//! ```
//!
//! What it shows:
//!
//! * **Wiring before the first message.** Every member needs another's
//!   address in its state. `System::prepare_group` hands out the members'
//!   addresses first; the states are built with them; no wiring message
//!   exists, and the first tick finds everything in place.
//! * **Type-erased fan-out.** The feed holds `Vec<Recipient<Quote>>`: two
//!   different strategy types behind one handle type.
//! * **Thread-bound state.** `Risk` keeps its ledger in an `Rc<RefCell<..>>`
//!   (not `Send`). `#[actor(thread_bound)]` plus `spawn_group_with` builds
//!   the whole desk on the group's thread, where it stays.
//! * **Names and latency.** The gateway is named; the desk records each
//!   handler's service time, printed per message class at the end.
//!
//! Run: `cargo run --release --example trading_desk [ticks]`

use kaspar::prelude::*;
use kaspar_suite::rng::XorShift;
// The desk lives in the suite's library (src/trading_desk.rs), which
// tests/sim_trading_desk.rs runs under the simulator too.
use kaspar_suite::trading_desk::{build, Sent, Summary, Tick};

fn main() {
    let ticks: u64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000);
    let system = System::new();
    let (gateway, desk) = build(&system);

    // Ticks go in from this thread; the first one finds the desk wired.
    let mut rng = XorShift::new(7);
    let mut mids = [10_000i64, 25_000, 4_000];
    let started = std::time::Instant::now();
    for i in 0..ticks {
        let instrument = (i % 3) as u32;
        mids[instrument as usize] += rng.range(-3, 4);
        desk.feed
            .send(Tick {
                instrument,
                mid: mids[instrument as usize],
            })
            .expect("desk running");
    }
    // One queue, FIFO per sender: this ask is handled after every tick.
    let (approved, rejected) = desk.risk.ask(Summary).unwrap().wait().unwrap();
    let elapsed = started.elapsed();
    // Risk queued each approved order before it answered, so this ask
    // lands behind all of them.
    let (sent, notional) = gateway.ask(Sent).unwrap().wait().unwrap();
    assert_eq!(sent, approved, "every approved order reached the gateway");

    println!(
        "{ticks} ticks in {:.1} ms: {approved} orders approved, {rejected} rejected, notional {notional}",
        elapsed.as_secs_f64() * 1e3,
    );
    for (name, stats) in [
        ("feed", desk.feed.latency()),
        ("mean_revert", desk.mean_revert.latency()),
        ("momentum", desk.momentum.latency()),
        ("risk", desk.risk.latency()),
    ] {
        println!("\n{name}:\n{}", stats.expect("the desk records latency"));
    }
    system.shutdown();
}
