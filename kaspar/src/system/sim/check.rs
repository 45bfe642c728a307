//! The harness for `#[test]`: a body run over a range of seeds, stopped at
//! the first failure, which is printed with its seed, its trace and how to
//! replay it.

use std::cell::Cell;
use std::fmt;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use super::{Sim, SimConfig, Strategy, Trace};
use crate::base::sim_watch::INJECTED;
use crate::guard::chain;

/// The environment variable that replays one seed: `check` then runs only
/// that seed, and prints its trace whether it fails or not.
pub const SEED_VAR: &str = "KASPAR_SEED";

/// Which seeds a [`check`] runs, and how each run is set up.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Check {
    /// The seeds, in order.
    pub seeds: Range<u64>,
    /// Every run's set-up; its `seed` is replaced by each seed in turn.
    pub config: SimConfig,
    /// Trace lines a failure prints (the last ones).
    pub tail: usize,
}

impl Check {
    /// Seeds `seeds`, the default set-up.
    pub fn seeds(seeds: Range<u64>) -> Self {
        Check {
            seeds,
            config: SimConfig::default(),
            tail: 60,
        }
    }

    /// With `strategy`.
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.config.strategy = strategy;
        self
    }

    /// With `faults`.
    pub fn faults(mut self, faults: super::Faults) -> Self {
        self.config.faults = faults;
        self
    }

    /// With `config` for every run (its seed is replaced).
    pub fn config(mut self, config: SimConfig) -> Self {
        self.config = config;
        self
    }
}

/// A run that failed: its seed, what failed, and what led there.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The seed that replays it.
    pub seed: u64,
    /// The strategy it ran under.
    pub strategy: Strategy,
    /// The panic's message.
    pub message: String,
    /// The run's trace up to the failure.
    pub trace: Trace,
    /// Seeds run before it, plus one: how many it took to find.
    pub tries: u64,
    tail: usize,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "kaspar::sim: seed {} failed ({:?}, found on try {}): {}",
            self.seed, self.strategy, self.tries, self.message
        )?;
        writeln!(f, "replay it: {SEED_VAR}={} cargo test ...", self.seed)?;
        let faults = self.trace.faults();
        if !faults.is_empty() {
            writeln!(f, "faults injected in this run:")?;
            f.write_str(&faults)?;
        }
        writeln!(f, "the steps that led there:")?;
        f.write_str(&self.trace.tail(self.tail))
    }
}

/// What a [`check`] that found nothing ran.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Passed {
    /// Seeds run.
    pub seeds: u64,
    /// Steps, over every seed.
    pub steps: u64,
    /// Messages handled, over every seed.
    pub handled: u64,
    /// Faults injected, over every seed.
    pub injected: u64,
    /// Steps of the runs that measured a fitted PCT horizon (not counted
    /// in `steps`, `handled` or `injected`).
    pub measuring_steps: u64,
}

/// Runs `body` once per seed of `check`, each on a fresh [`Sim`], and
/// returns the first failure (a panic in the body or in one of its
/// clients) instead of panicking. The body builds the system, adds
/// clients, runs it and asserts.
///
/// Under PCT with a horizon of 0 ([`Strategy::PCT`]), each seed runs
/// twice: first without change points, to measure how many steps the run
/// takes, then with its change points drawn among that many steps (the
/// horizon fitted to the run, as Coyote fits it). Both runs follow from
/// the seed alone, so a seed replays the same way; the body must not
/// count on running once per seed. A failure names the fitted horizon.
pub fn explore(check: &Check, body: impl Fn(&mut Sim)) -> Result<Passed, Box<Failure>> {
    let mut passed = Passed::default();
    let _quiet = Exploring::enter();
    for seed in check.seeds.clone() {
        let tries = passed.seeds + 1;
        let mut strategy = check.config.strategy;
        if let Strategy::Pct { depth, horizon: 0 } = strategy {
            // The measuring run: one priority order, no change point.
            let measure = Strategy::Pct {
                depth: 1,
                horizon: 1,
            };
            let measured = run_one(check, seed, measure, &body, tries)?;
            passed.measuring_steps += measured.steps;
            strategy = Strategy::Pct {
                depth,
                horizon: measured.steps.max(1),
            };
        }
        let ran = run_one(check, seed, strategy, &body, tries)?;
        passed.seeds += 1;
        passed.steps += ran.steps;
        passed.handled += ran.handled;
        passed.injected += ran.injected;
    }
    Ok(passed)
}

/// One run of `body` on `seed` under `strategy` (the `tries`-th seed):
/// what it ran, or its failure.
fn run_one(
    check: &Check,
    seed: u64,
    strategy: Strategy,
    body: &impl Fn(&mut Sim),
    tries: u64,
) -> Result<Passed, Box<Failure>> {
    let mut config = check.config.clone();
    config.seed = seed;
    config.strategy = strategy;
    let mut sim = Sim::new(config);
    let ran = catch_unwind(AssertUnwindSafe(|| body(&mut sim)));
    match ran {
        Ok(()) => Ok(Passed {
            seeds: 1,
            steps: sim.steps(),
            handled: sim.handled(),
            injected: sim.injected(),
            measuring_steps: 0,
        }),
        Err(payload) => {
            let message = message_of(&*payload);
            let trace = sim.trace();
            drop(catch_unwind(AssertUnwindSafe(move || drop(sim))));
            Err(Box::new(Failure {
                seed,
                strategy,
                message,
                trace,
                tries,
                tail: check.tail,
            }))
        }
    }
}

/// [`explore`], for a `#[test]`: panics at the first failure with its
/// seed, its trace and how to replay it. With `KASPAR_SEED` set, runs that
/// seed only and prints its trace.
///
/// ```
/// use kaspar::prelude::*;
/// use kaspar::sim::{self, Check, Strategy};
///
/// pub struct Add(pub u64);
/// pub struct Total;
///
/// #[actor]
/// pub struct Sum { total: u64 }
///
/// #[actor]
/// impl Sum {
///     #[handler(Add)]
///     fn add(&mut self, a: Add, _ctx: &mut Ctx<Self>) { self.total += a.0; }
///     #[handler(Total)]
///     fn total(&mut self, _t: Total, _ctx: &mut Ctx<Self>) -> u64 { self.total }
/// }
///
/// sim::check(Check::seeds(0..50).strategy(Strategy::PCT), |sim| {
///     let sum = sim.system().spawn(Sum { total: 0 }).start();
///     for c in 0..2u64 {
///         let sum = sum.clone();
///         sim.client(&format!("adder{c}"), async move {
///             for i in 0..5 { sum.send(Add(i)).unwrap(); }
///         });
///     }
///     let read = sum.clone();
///     sim.client("reader", async move {
///         let seen = read.ask(Total).unwrap().await.unwrap();
///         assert!(seen <= 20);
///     });
///     assert!(sim.run().stuck.is_empty());
///     assert_eq!(sum.fast_send(Total).unwrap(), 20);
/// });
/// ```
pub fn check(check: Check, body: impl Fn(&mut Sim)) -> Passed {
    let replay = std::env::var(SEED_VAR)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    let check = match replay {
        Some(seed) => Check {
            seeds: seed..seed.saturating_add(1),
            ..check
        },
        None => check,
    };
    match explore(&check, |sim| {
        body(sim);
        if replay.is_some() {
            eprintln!(
                "kaspar::sim: seed {} passed; its steps:\n{}",
                sim.seed(),
                sim.trace().tail(check.tail)
            );
        }
    }) {
        Ok(passed) => passed,
        Err(failure) => panic!("{failure}"),
    }
}

fn message_of(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_owned()
    }
}

std::thread_local! {
    /// Inside [`explore`] on this thread: a failing run's panic is the
    /// failure's message, printed with its trace, not by the hook.
    static EXPLORING: Cell<bool> = const { Cell::new(false) };
}

/// While alive, the calling thread explores (see [`EXPLORING`]).
struct Exploring(bool);

impl Exploring {
    fn enter() -> Self {
        Exploring(EXPLORING.with(|e| e.replace(true)))
    }
}

impl Drop for Exploring {
    fn drop(&mut self) {
        EXPLORING.with(|e| e.set(self.0));
    }
}

/// Keeps the panic hook from printing the panics the simulator injects
/// (thousands in a sweep with faults on), and, while [`explore`] runs,
/// the panics of test code (the body's and its clients' assertions: a
/// failure prints them with its trace); a handler's own panic prints as
/// always. Installed once per process, by the first [`Sim`].
pub(super) fn quiet_injected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let injected = info
                .payload()
                .downcast_ref::<&str>()
                .is_some_and(|s| *s == INJECTED);
            let test_code = EXPLORING.with(Cell::get) && !chain::runs_actor_code();
            if !injected && !test_code {
                previous(info);
            }
        }));
    });
}
