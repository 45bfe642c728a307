//! Issue #25, row 3: starting a prepared actor (or group) while another
//! thread is calling it synchronously.
//!
//! Before the state exists, a `fast_send` to a prepared address takes the
//! actor's lock for an instant to find it vacant, and is refused with
//! `NotStarted`. `start` hands the lock over to the actor's new thread
//! (when it has a `#[started]` hook, is thread-bound, or is a group), and
//! used to assert that nobody held it: a caller that was inside that
//! instant made `start` panic with "handed over a lock that is already
//! held" (about once in 20 to 100 tries).
//!
//! Guaranteed after the fix: `start` never panics, whatever synchronous
//! callers do meanwhile, and once started the actor (group member) answers
//! `fast_send` and `ask`; the racing caller goes from `NotStarted` to
//! being served, never to another error.
//!
//! Each test repeats the race [`ROUNDS`] times; a watchdog fails it if one
//! round hangs.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use kaspar::prelude::*;

const ROUNDS: usize = 300;
/// How long one round may take before it counts as hung.
const ROUND_WATCHDOG: Duration = Duration::from_secs(10);

pub struct Ping;

#[actor]
pub struct Pinger {
    started: bool,
    pings: u64,
}

#[actor]
impl Pinger {
    /// Makes `start` hand the lock over to the actor's thread.
    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {
        self.started = true;
    }

    /// Whether `started` ran first, and the pings so far.
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) -> (bool, u64) {
        self.pings += 1;
        (self.started, self.pings)
    }
}

fn pinger() -> Pinger {
    Pinger {
        started: false,
        pings: 0,
    }
}

#[actor]
pub struct Ponger {
    pongs: u64,
}

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) -> (bool, u64) {
        self.pongs += 1;
        (true, self.pongs)
    }
}

#[group]
pub struct Pair {
    pub pinger: Addr<Pinger>,
    pub ponger: Addr<Ponger>,
}

/// Calls `addr.fast_send(Ping)` in a tight loop while it is refused with
/// `NotStarted`: says on `hammering` once the first refusal is in, and
/// returns `Ok` with the first reply, or `Err` with what went wrong (any
/// other error, or `given_up` raised: `start` failed, so no reply will
/// ever come).
fn hammer<A: kaspar::Handler<Ping, Reply = (bool, u64)>>(
    addr: Addr<A>,
    hammering: mpsc::Sender<()>,
    given_up: Arc<AtomicBool>,
) -> thread::JoinHandle<Result<(bool, u64), String>> {
    thread::spawn(move || {
        let mut hammering = Some(hammering);
        loop {
            match addr.fast_send(Ping) {
                Ok(reply) => return Ok(reply),
                Err(e) if e.is_not_started() => {
                    if let Some(tx) = hammering.take() {
                        let _ = tx.send(());
                    }
                    if given_up.load(Ordering::Relaxed) {
                        return Err("never served".into());
                    }
                }
                Err(e) => return Err(format!("{:?}", e.without_message())),
            }
        }
    })
}

/// The panic message of a caught panic.
fn message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic".into())
}

/// What went wrong in one round, if anything.
type Round = Result<(), String>;

/// Runs `round` [`ROUNDS`] times on a thread of its own, each under the
/// watchdog; fails the test with every round that went wrong.
fn repeat(what: &'static str, round: fn() -> Round) {
    let (tx, rx) = mpsc::channel();
    let runner = thread::spawn(move || {
        for i in 0..ROUNDS {
            if tx.send((i, round())).is_err() {
                return;
            }
        }
    });
    let mut failures = Vec::new();
    for _ in 0..ROUNDS {
        match rx.recv_timeout(ROUND_WATCHDOG) {
            Ok((_, Ok(()))) => {}
            Ok((i, Err(e))) => failures.push(format!("round {i}: {e}")),
            Err(RecvTimeoutError::Timeout) => {
                panic!("watchdog: a round of {what} hung; earlier failures: {failures:#?}")
            }
            Err(RecvTimeoutError::Disconnected) => match runner.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!(),
            },
        }
    }
    runner.join().unwrap();
    assert!(
        failures.is_empty(),
        "{what}: {} of {ROUNDS} rounds went wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// One race of `Prepared::spawn(..).start()` against a `fast_send` loop.
fn actor_round() -> Round {
    let system = System::new();
    let prepared = system.prepare::<Pinger>();
    let addr = prepared.addr();
    let (hammering_tx, hammering) = mpsc::channel();
    let given_up = Arc::new(AtomicBool::new(false));
    let caller = hammer(addr.clone(), hammering_tx, Arc::clone(&given_up));
    hammering.recv().expect("the caller was refused once");
    let started = catch_unwind(AssertUnwindSafe(|| prepared.spawn(pinger()).start()));
    // Once started, the caller keeps calling until it is served.
    given_up.store(started.is_err(), Ordering::Relaxed);
    let seen = caller.join().expect("the caller does not panic");
    let started = started.map_err(|p| format!("start panicked: {}", message(&*p)))?;
    let (ready, _) = seen.map_err(|e| format!("the racing caller: {e}"))?;
    if !ready {
        return Err("the racing caller got in before #[started]".into());
    }
    let (_, n) = started
        .fast_send(Ping)
        .map_err(|e| format!("fast_send after start: {:?}", e.without_message()))?;
    let asked = started
        .ask(Ping)
        .map_err(|e| format!("ask after start: {e:?}"))?
        .wait_timeout(ROUND_WATCHDOG / 2)
        .map_err(|e| format!("ask after start: {e:?}"))?;
    if (n, asked.1) != (2, 3) {
        return Err(format!("pings counted {n} then {}, not 2 then 3", asked.1));
    }
    let report = system.shutdown();
    if !report.failed.is_empty() {
        return Err(format!("{report:?}"));
    }
    Ok(())
}

/// A prepared actor with a `#[started]` hook, started while another thread
/// is being refused `NotStarted` in a tight loop: `start` never panics, and
/// the actor answers the racing caller (after `started`), `fast_send` and
/// `ask`.
#[test]
fn starting_a_prepared_actor_while_it_is_called_synchronously_never_panics() {
    repeat("Prepared::spawn(..).start()", actor_round);
}

/// One race of `PreparedGroup::spawn(..).start()` against a `fast_send`
/// loop into one of its members.
fn group_round() -> Round {
    let system = System::new();
    let prepared = system.prepare_group::<Pair>();
    let peers = prepared.group();
    let (hammering_tx, hammering) = mpsc::channel();
    let given_up = Arc::new(AtomicBool::new(false));
    let caller = hammer(peers.ponger.clone(), hammering_tx, Arc::clone(&given_up));
    hammering.recv().expect("the caller was refused once");
    let started = catch_unwind(AssertUnwindSafe(|| {
        prepared.spawn((pinger(), Ponger { pongs: 0 })).start()
    }));
    // Once started, the caller keeps calling until it is served.
    given_up.store(started.is_err(), Ordering::Relaxed);
    let seen = caller.join().expect("the caller does not panic");
    let pair = started.map_err(|p| format!("start panicked: {}", message(&*p)))?;
    seen.map_err(|e| format!("the racing caller: {e}"))?;
    let (ready, _) = pair
        .pinger
        .fast_send(Ping)
        .map_err(|e| format!("fast_send after start: {:?}", e.without_message()))?;
    if !ready {
        return Err("a member was called before its #[started] hook".into());
    }
    let (_, n) = pair
        .ponger
        .ask(Ping)
        .map_err(|e| format!("ask after start: {e:?}"))?
        .wait_timeout(ROUND_WATCHDOG / 2)
        .map_err(|e| format!("ask after start: {e:?}"))?;
    if n != 2 {
        return Err(format!("the ponger counted {n} pongs, not 2"));
    }
    let report = system.shutdown();
    if !report.failed.is_empty() {
        return Err(format!("{report:?}"));
    }
    Ok(())
}

/// The same race for a prepared `#[group]`, whose lock `start` always
/// hands over to the group's thread.
#[test]
fn starting_a_prepared_group_while_a_member_is_called_synchronously_never_panics() {
    repeat("PreparedGroup::spawn(..).start()", group_round);
}
