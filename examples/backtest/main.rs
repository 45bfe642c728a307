//! Live, then backtest: the same strategy group, unchanged, run twice.
//!
//! 1. Live: the group runs on its own thread under the system clock. A
//!    feeder thread paces synthetic ticks in real time for about 1.5 s and
//!    journals each one, with its arrival time, as it routes it in.
//! 2. Backtest: a `Simulation` builds the same group on virtual time and
//!    replays the journal as fast as the machine allows.
//!
//! It prints both order lists and whether they are identical, and exits
//! non-zero if they are not.
//!
//! Run: `cargo run --release --example backtest [seconds]`

use std::time::{Duration, Instant};

use kaspar::journal::{JournalReader, Journaled};
use kaspar::{Clock, Simulation, System};
// The strategy group lives in the suite's library (src/backtest.rs), which
// tests/simulation.rs uses too.
use kaspar_suite::backtest::{
    members, orders_actor, route, ticks, wire, Flush, Input, Order, Trading,
};

fn show(name: &str, orders: &[Order]) {
    println!("{name}: {} orders", orders.len());
    for o in orders.iter().take(8) {
        let side = if o.buy { "BUY " } else { "SELL" };
        println!("  #{:<5} {side} @ {}", o.seq, o.price);
    }
    if orders.len() > 8 {
        println!("  ... {} more", orders.len() - 8);
    }
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.5);
    let path = std::env::temp_dir().join(format!("kaspar-backtest-{}.journal", std::process::id()));

    // ---- live ---------------------------------------------------------------
    let system = System::new();
    let (orders, live_orders, _) = orders_actor();
    let orders = system.spawn(orders).start();
    let group = system.spawn_group::<Trading>(members(None)).start();
    wire(&group, &orders);
    let journal = Journaled::create(&path, &group, Clock::System, route).expect("create journal");
    let spacing = Duration::from_micros(500);
    let feed = ticks((secs / spacing.as_secs_f64()) as u64 + 1, 2026);
    let start = Instant::now();
    let mut fed = 0u64;
    std::thread::scope(|s| {
        s.spawn(|| {
            for (i, (_, tick)) in feed.into_iter().enumerate() {
                let due = spacing * i as u32;
                let elapsed = start.elapsed();
                if elapsed.as_secs_f64() >= secs {
                    break;
                }
                if due > elapsed {
                    std::thread::sleep(due - elapsed);
                }
                journal.feed(Input::Tick(tick)).expect("journal write");
                fed += 1;
            }
        });
    });
    let handled = group
        .md
        .ask(Flush)
        .expect("group open")
        .wait()
        .expect("reply");
    assert_eq!(handled, fed);
    journal.flush().expect("journal flush");
    drop(journal);
    system.shutdown();
    let live = live_orders.lock().expect("orders").clone();

    // ---- backtest -----------------------------------------------------------
    let t = Instant::now();
    let mut sim = Simulation::<Trading>::new(members(None));
    let (orders, sim_orders, _) = orders_actor();
    let orders = sim.spawn(orders);
    wire(sim.group(), &orders);
    let reader = JournalReader::<Input>::open(&path).expect("open journal");
    let replayed = sim.replay(reader, route).expect("replay journal");
    sim.finish();
    let replay_time = t.elapsed();
    let replay = sim_orders.lock().expect("orders").clone();
    let _ = std::fs::remove_file(&path);

    println!(
        "live: {fed} ticks over {:.1} s, journaled",
        start.elapsed().as_secs_f64()
    );
    println!(
        "replay: {replayed} ticks in {:.1} ms of wall time",
        replay_time.as_secs_f64() * 1e3
    );
    show("live orders", &live);
    show("replayed orders", &replay);
    if live == replay {
        println!("live vs replay: identical");
    } else {
        println!("live vs replay: DIFFERENT");
        std::process::exit(1);
    }
}
