//! What `kaspar::sim` costs (feature `sim`; `benches/sim.rs`): simulated
//! handled messages per second for a small system, with the trace on and
//! off, and seeds per second of a test fixture (#28 asks for at least a
//! million handled messages per second on one core, so that a CI step runs
//! a thousand seeds of a fixture in well under a minute).
//!
//! The system is a ring of [`RING`] actors passing [`TOKENS`] tokens, each
//! actor forwarding a token to the next until the token's hops run out:
//! every step is one handled message and one send, the simulator's
//! scheduling (the ready list, the pick, the trace) is what is measured.

use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar::sim::{self, Check, Sim, SimConfig};

use super::{median, JsonLines, Machine};

/// Actors in the ring.
pub const RING: usize = 8;
/// Tokens passed round it at once.
pub const TOKENS: u64 = 4;
/// Repetitions per case; the median is reported.
const REPS: usize = 3;

/// A token with this many hops left.
pub struct Token(pub u64);

/// One actor of the ring.
#[actor]
pub struct Hop {
    next: Addr<Hop>,
}

#[actor]
impl Hop {
    #[handler(Token)]
    fn token(&mut self, t: Token, _ctx: &mut Ctx<Self>) {
        if t.0 > 1 {
            self.next.send(Token(t.0 - 1)).expect("the ring runs");
        }
    }
}

/// Builds the ring in `sim` and a client that starts `TOKENS` tokens
/// which, together, are handled `messages` times.
pub fn ring(sim: &mut Sim, messages: u64) {
    let system = sim.system();
    let prepared: Vec<_> = (0..RING).map(|_| system.prepare::<Hop>()).collect();
    let addrs: Vec<Addr<Hop>> = prepared.iter().map(|p| p.addr()).collect();
    for (i, p) in prepared.into_iter().enumerate() {
        p.spawn(Hop {
            next: addrs[(i + 1) % RING].clone(),
        })
        .start();
    }
    let hops = messages / TOKENS;
    sim.client("starter", async move {
        for t in 0..TOKENS {
            addrs[(t as usize * RING / TOKENS as usize) % RING]
                .send(Token(hops))
                .expect("the ring runs");
        }
    });
}

/// One case's result.
#[derive(Clone, Debug)]
pub struct Case {
    /// The case's name in the rows.
    pub case: &'static str,
    /// What was counted: handled messages, or seeds.
    pub count: u64,
    /// Simulated steps run.
    pub steps: u64,
    /// The median run's wall time.
    pub elapsed: Duration,
    /// `count` per second of the median run.
    pub per_s: f64,
}

fn ring_case(case: &'static str, messages: u64, trace_limit: usize) -> Case {
    let mut runs: Vec<(f64, Duration, u64, u64)> = (0..REPS)
        .map(|rep| {
            let mut config = SimConfig::seed(rep as u64);
            config.trace_limit = trace_limit;
            config.max_steps = u64::MAX;
            let mut sim = Sim::new(config);
            ring(&mut sim, messages);
            let start = Instant::now();
            let settled = sim.run();
            let elapsed = start.elapsed();
            assert!(settled.stuck.is_empty());
            let handled = sim.handled();
            assert_eq!(handled, TOKENS * (messages / TOKENS), "every hop handled");
            (
                handled as f64 / elapsed.as_secs_f64(),
                elapsed,
                handled,
                settled.steps,
            )
        })
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (per_s, elapsed, count, steps) = runs[REPS / 2];
    Case {
        case,
        count,
        steps,
        elapsed,
        per_s,
    }
}

/// Seeds per second of `body` (a test fixture that passes) over `seeds`
/// seeds, under `sim::explore` as a test runs it.
pub fn seeds_case(case: &'static str, seeds: u64, body: impl Fn(&mut Sim)) -> Case {
    let mut rates = Vec::with_capacity(REPS);
    let mut last = None;
    for _ in 0..REPS {
        let start = Instant::now();
        let passed = sim::explore(&Check::seeds(0..seeds), &body)
            .unwrap_or_else(|failure| panic!("the fixture failed:\n{failure}"));
        let elapsed = start.elapsed();
        rates.push(seeds as f64 / elapsed.as_secs_f64());
        last = Some((passed.steps, elapsed));
    }
    let per_s = median(&mut rates);
    let (steps, elapsed) = last.expect("REPS > 0");
    Case {
        case,
        count: seeds,
        steps,
        elapsed,
        per_s,
    }
}

/// The ring cases: `steps` (the trace at its default limit) and
/// `steps/no-trace` (`trace_limit` 0), each `messages` handled messages.
pub fn measure_ring(quick: bool) -> Vec<Case> {
    let messages = if quick { 200_000 } else { 1_000_000 };
    let default_limit = SimConfig::default().trace_limit;
    vec![
        ring_case("steps", messages, default_limit),
        ring_case("steps/no-trace", messages, 0),
    ]
}

/// Prints the cases as a markdown table.
pub fn print(cases: &[Case], machine: &Machine) {
    println!("## kaspar::sim: simulated steps and seeds per second (benches/sim.rs)\n");
    println!("{}\n", machine.header());
    println!(
        "`steps`: a ring of {RING} actors passing {TOKENS} tokens on one thread under \
         Strategy::Random, the trace at its default limit; `steps/no-trace`: the same with \
         `trace_limit` 0; `seeds`: whole seeds of a test fixture under `sim::explore`. \
         Median of {REPS}.\n"
    );
    println!("| case | counted | steps | wall ms | per second |");
    println!("|---|---:|---:|---:|---:|");
    for c in cases {
        println!(
            "| {} | {} | {} | {:.1} | {:.0} |",
            c.case,
            c.count,
            c.steps,
            c.elapsed.as_secs_f64() * 1e3,
            c.per_s
        );
    }
}

/// The rows: `table` = `sim`; `per_s` per case (handled messages per
/// second for `steps*`, seeds per second for `seeds`).
pub fn record(cases: &[Case], json: &mut JsonLines) {
    for c in cases {
        let unit = if c.case.starts_with("steps") {
            "messages/s"
        } else {
            "seeds/s"
        };
        json.record("sim", c.case, "per_s", c.per_s, unit);
    }
}
