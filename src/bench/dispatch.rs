//! Paper Table 6: what one uncontended `fast_send` costs against the
//! hand-written dispatch it replaces. Shared by `benches/dispatch.rs` (the
//! first four cases) and `benches/paper.rs` (all of them).
//!
//! Every case does the same work on a stack value and differs only in how
//! the work is reached: a non-inlined direct call, a call under an
//! uncontended `parking_lot` mutex, a `dyn` call whose target the branch
//! predictor knows, a `dyn` call whose target alternates unpredictably,
//! `fast_send` with and without a reply, and `fast_send` from four handlers
//! deep in a call chain.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use kaspar::prelude::*;

use super::{median, JsonLines, Machine};
use crate::rng::XorShift;

pub struct State {
    total: u64,
}

/// The work every case performs, never inlined so each case pays one call.
#[inline(never)]
fn work(state: &mut State, x: u64) -> u64 {
    state.total = state.total.wrapping_add(x);
    state.total
}

/// The same work behind a vtable.
trait Work {
    fn apply(&self, state: &mut State, x: u64) -> u64;
}

struct AddIt;
impl Work for AddIt {
    #[inline(never)]
    fn apply(&self, state: &mut State, x: u64) -> u64 {
        state.total = state.total.wrapping_add(x);
        state.total
    }
}

/// A second target of the same cost. Its body differs from `AddIt`'s so the
/// compiler cannot merge the two functions into one address (which would
/// make every call site predictable).
struct AddOne;
impl Work for AddOne {
    #[inline(never)]
    fn apply(&self, state: &mut State, x: u64) -> u64 {
        state.total = state.total.wrapping_add(x ^ 1);
        state.total
    }
}

/// Length of the target-choice table: small enough for L1, long enough
/// that the predictor cannot learn a random sequence of it.
const CHOICES: usize = 4096;

/// `CHOICES` seeded pseudo-random 0/1 picks, or all zeros.
fn choices(random: bool) -> Vec<usize> {
    let mut rng = XorShift::new(CHOICES as u64);
    (0..CHOICES)
        .map(|_| if random { rng.below(2) as usize } else { 0 })
        .collect()
}

pub struct Add(pub u64);
pub struct AddNoReply(pub u64);

#[actor]
pub struct Target {
    state: State,
}

#[actor]
impl Target {
    #[handler(Add)]
    fn add(&mut self, msg: Add, _ctx: &mut Ctx<Self>) -> u64 {
        work(&mut self.state, msg.0)
    }

    #[handler(AddNoReply)]
    fn add_no_reply(&mut self, msg: AddNoReply, _ctx: &mut Ctx<Self>) {
        work(&mut self.state, msg.0);
    }
}

/// Nests `remaining` more relays on the call chain, then times `iters`
/// fast_sends to `target` from the innermost handler.
pub struct Descend {
    relays: Arc<Vec<Addr<Relay>>>,
    depth: usize,
    target: Addr<Target>,
    iters: u64,
}

#[actor]
pub struct Relay;

#[actor]
impl Relay {
    #[handler(Descend)]
    fn descend(&mut self, msg: Descend, _ctx: &mut Ctx<Self>) -> f64 {
        if msg.depth + 1 < msg.relays.len() {
            let next = msg.relays[msg.depth + 1].clone();
            let deeper = Descend {
                depth: msg.depth + 1,
                ..msg
            };
            return next.fast_send(deeper).expect("relays form no cycle");
        }
        let t = Instant::now();
        for i in 0..msg.iters {
            black_box(msg.target.fast_send(Add(black_box(i))).expect("no cycle"));
        }
        t.elapsed().as_nanos() as f64 / msg.iters as f64
    }
}

fn time(iters: u64, mut f: impl FnMut(u64) -> u64) -> f64 {
    let t = Instant::now();
    for i in 0..iters {
        black_box(f(black_box(i)));
    }
    t.elapsed().as_nanos() as f64 / iters as f64
}

/// The cases `benches/dispatch.rs` reports.
pub const BASIC: [&str; 5] = [
    "direct_call",
    "lock_call_unlock",
    "fast_send",
    "fast_send_recipient",
    "fast_send_chain4",
];

/// The extra Table 6 arms `paper.rs` reports.
pub const EXTENDED: [&str; 3] = [
    "virtual_predicted",
    "virtual_unpredicted",
    "fast_send_no_reply",
];

/// The paper's Table 6 figure for a case, in ns, where the paper gives one.
/// The paper's fast_send is dispatch only, without a reply. Its text puts
/// fast_send at ~9 ns, "about one virtual call whose target the predictor
/// cannot guess" and ~5x a predicted virtual or a direct call (~1.5 ns).
pub fn paper_ns(case: &str) -> Option<f64> {
    match case {
        "direct_call" => Some(1.5),
        "virtual_predicted" => Some(1.8),
        "virtual_unpredicted" => Some(9.0),
        "fast_send" | "fast_send_no_reply" => Some(9.0),
        _ => None,
    }
}

/// What one dispatch run measured: median ns per op, per case.
pub struct Dispatch {
    pub iters: u64,
    pub runs: usize,
    pub rows: Vec<(&'static str, f64)>,
}

impl Dispatch {
    pub fn get(&self, case: &str) -> f64 {
        self.rows
            .iter()
            .find(|(c, _)| *c == case)
            .map_or(f64::NAN, |r| r.1)
    }
}

/// The actors and values every case runs against.
struct Fixture {
    system: System,
    target: Addr<Target>,
    /// The same actor through a type-erased `Recipient<Add, u64>`.
    recipient: Recipient<Add, u64>,
    relays: Arc<Vec<Addr<Relay>>>,
    plain: State,
    locked: parking_lot::Mutex<State>,
    targets: [&'static dyn Work; 2],
    same: Vec<usize>,
    random: Vec<usize>,
}

impl Fixture {
    fn new() -> Self {
        let system = System::new();
        let target = system
            .spawn(Target {
                state: State { total: 0 },
            })
            .start();
        let relays = Arc::new((0..4).map(|_| system.spawn(Relay).start()).collect());
        Fixture {
            system,
            recipient: target.recipient(),
            target,
            relays,
            plain: State { total: 0 },
            locked: parking_lot::Mutex::new(State { total: 0 }),
            targets: black_box([&AddIt, &AddOne]),
            same: choices(false),
            random: choices(true),
        }
    }

    /// Runs `case` `iters` times; ns per op.
    fn run(&mut self, case: &str, iters: u64) -> f64 {
        let Fixture {
            target,
            recipient,
            relays,
            plain,
            locked,
            targets,
            same,
            random,
            ..
        } = self;
        match case {
            "direct_call" => time(iters, |x| work(plain, x)),
            "lock_call_unlock" => time(iters, |x| work(&mut locked.lock(), x)),
            "fast_send" => time(iters, |x| target.fast_send(Add(x)).unwrap()),
            "fast_send_recipient" => time(iters, |x| recipient.fast_send(Add(x)).unwrap()),
            "fast_send_chain4" => relays[0]
                .fast_send(Descend {
                    relays: Arc::clone(relays),
                    depth: 0,
                    target: target.clone(),
                    iters,
                })
                .unwrap(),
            // Both virtual cases index a choice table, so they differ only
            // in whether the target is predictable.
            "virtual_predicted" => time(iters, |x| {
                targets[same[x as usize % CHOICES]].apply(plain, x)
            }),
            "virtual_unpredicted" => time(iters, |x| {
                targets[random[x as usize % CHOICES]].apply(plain, x)
            }),
            "fast_send_no_reply" => time(iters, |x| {
                target.fast_send(AddNoReply(x)).unwrap();
                x
            }),
            // Counted by callgrind only (not a Table 6 arm): the inline
            // path of fast_send_void, which falls back to the queue when
            // the lock is held (it never is here).
            "fast_send_void" => time(iters, |x| {
                target.fast_send_void(AddNoReply(x)).unwrap();
                x
            }),
            other => panic!("unknown dispatch case {other}"),
        }
    }
}

/// Runs [`BASIC`], and [`EXTENDED`] too when `extended`.
pub fn measure(quick: bool, extended: bool) -> Dispatch {
    let iters: u64 = if quick { 2_000_000 } else { 20_000_000 };
    let runs = if quick { 5 } else { 11 };
    let mut fixture = Fixture::new();
    let mut cases: Vec<(&'static str, Vec<f64>)> = BASIC.iter().map(|c| (*c, vec![])).collect();
    if extended {
        cases.extend(EXTENDED.iter().map(|c| (*c, vec![])));
    }
    // Interleave the cases run by run so drift on a shared machine hits all
    // of them alike.
    for _ in 0..runs {
        for (case, samples) in cases.iter_mut() {
            samples.push(fixture.run(case, iters));
        }
    }
    fixture.system.shutdown();
    Dispatch {
        iters,
        runs,
        rows: cases
            .into_iter()
            .map(|(c, mut v)| (c, median(&mut v)))
            .collect(),
    }
}

/// For instruction counting under `valgrind --tool=callgrind`: runs `case`
/// exactly `n` times and nothing else (see `benches/README.md`).
///
/// `tell` is not a dispatch case: `n` fire-and-forget `send`s from this
/// thread to the target on its own thread, then one `ask` that waits until
/// all of them were handled. Callgrind counts every thread, so the count
/// per tell is the producer's push plus the consumer's pop and handler run.
///
/// `fast_send_pooled` is `fast_send_no_reply` to the same actor pooled
/// (warmed by one `ask`, then idle between the calls): `fast_send` takes
/// the actor's lock wherever the actor runs, and issue #26 holds the two
/// to one budget. `pool_ping_pong` is [`hop::ping_pong`](super::hop::ping_pong).
///
/// `pool_tell` is `tell` to a pooled actor (the default `Compact` queue;
/// under callgrind, which runs one thread at a time, its consumer stays
/// behind and the queue never inflates), `pool_segmented_tell` the same
/// with `MailboxKind::DEFAULT`; see `pool_tell_rounds` for their timed
/// form.
pub fn callgrind(case: &str, n: u64) {
    let mut fixture = Fixture::new();
    match case {
        "tell" => tell(&fixture.target, n),
        "fast_send_pooled" => {
            let pooled = fixture
                .system
                .spawn(Target {
                    state: State { total: 0 },
                })
                .pooled()
                .start();
            pooled.ask(Add(0)).unwrap().wait().unwrap();
            time(n, |x| {
                pooled.fast_send(AddNoReply(x)).unwrap();
                x
            });
        }
        "pool_ping_pong" => super::hop::ping_pong(&fixture.system, n),
        "pool_tell" | "pool_segmented_tell" => {
            let spawn = fixture
                .system
                .spawn(Target {
                    state: State { total: 0 },
                })
                .pooled();
            let pooled = if case == "pool_tell" {
                spawn.start()
            } else {
                spawn.mailbox(kaspar::MailboxKind::DEFAULT).start()
            };
            pool_tell_rounds(&pooled, n);
        }
        _ => {
            fixture.run(case, n);
        }
    }
    fixture.system.shutdown();
}

/// `pool_tell`'s rounds: one by default (`n` tells, as `tell`), or
/// `KASPAR_PROBE_ROUNDS` of them into the same actor, each printed as ns a
/// message: a timing probe for a pooled stream. A first round of 200,000
/// that the consumer keeps up with inflates a `pool_tell` actor's queue
/// into its lane (`STREAM_AFTER`), so the rounds after it time the lane's
/// push against `pool_segmented_tell`'s queue.
fn pool_tell_rounds(target: &Addr<Target>, n: u64) {
    let rounds: u32 = std::env::var("KASPAR_PROBE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        tell(target, n);
        if rounds > 1 {
            println!("{:.2}", t.elapsed().as_nanos() as f64 / n.max(1) as f64);
        }
    }
}

/// `n` sends to `target`, then an ask that returns once every one of them
/// was handled (FIFO from one sender); checks the total they added up to.
fn tell(target: &Addr<Target>, n: u64) {
    let before = target.ask(Add(0)).unwrap().wait().unwrap();
    for i in 0..n {
        target.send(AddNoReply(black_box(i))).unwrap();
    }
    let after = target.ask(Add(0)).unwrap().wait().unwrap();
    let sum = n * n.saturating_sub(1) / 2;
    assert_eq!(after.wrapping_sub(before), sum, "a tell was lost");
}

/// The markdown `benches/dispatch.rs` prints.
pub fn print(d: &Dispatch, machine: &Machine) {
    let get = |name: &str| d.get(name);
    println!("## dispatch (paper Table 6)\n");
    println!(
        "{} · {} cores · threads not pinned · median of {} runs × {} calls\n",
        machine.cpu, machine.cores, d.runs, d.iters
    );
    println!("| case | ns/op | vs direct call | vs lock+call+unlock |");
    println!("|---|---:|---:|---:|");
    for (case, v) in &d.rows {
        println!(
            "| {case} | {v:.2} | {:.2}x | {:.2}x |",
            v / get("direct_call"),
            v / get("lock_call_unlock")
        );
    }
    let ratio = get("fast_send") / get("lock_call_unlock");
    println!(
        "\nfast_send / (lock + call + unlock) = {ratio:.2}x (target ≤ 1.25x: {}); paper: fast_send ~9 ns vs direct call ~1.5 ns (6x), ours {:.1}x",
        if ratio <= 1.25 { "met" } else { "missed" },
        get("fast_send") / get("direct_call")
    );
    println!(
        "a 4-deep call chain adds {:.2} ns per fast_send",
        get("fast_send_chain4") - get("fast_send")
    );
}

/// One `ns_per_op` line per case, rounded to 0.001 ns.
pub fn record(d: &Dispatch, json: &mut JsonLines) {
    for (case, v) in &d.rows {
        json.record("dispatch", case, "ns_per_op", (v * 1e3).round() / 1e3, "ns");
    }
}
