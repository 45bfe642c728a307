//! Soak: random traffic of every delivery kind to actors on every mailbox
//! kind, standalone and grouped, under every supervision policy, with
//! random handler panics and stops, and a shutdown mid-flight. At the end
//! every message id has exactly one outcome: handled once, or a dead
//! letter once (with a reason), or handed back to its sender in an `Err`.
//!
//! Length: `KASPAR_SOAK_SECS` (default 3). Seed: `KASPAR_SOAK_SEED`.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar::{Ask, DeadLetter, DeadLetterReason, Supervision};
use kaspar_suite::rng::XorShift;

// ---- the ledger: one outcome byte per id -----------------------------------

const HANDLED: u8 = 1;
const DEAD: u8 = 8;
const RETURNED: u8 = 64;

struct Ledger {
    outcome: Vec<AtomicU8>,
    next_id: AtomicU64,
}

impl Ledger {
    fn new(cap: usize) -> Self {
        Ledger {
            outcome: (0..cap).map(|_| AtomicU8::new(0)).collect(),
            next_id: AtomicU64::new(0),
        }
    }
    /// A fresh id below `limit`, or `None`.
    fn issue(&self, limit: usize) -> Option<u64> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if (id as usize) < limit.min(self.outcome.len()) {
            Some(id)
        } else {
            self.next_id.fetch_sub(1, Ordering::Relaxed);
            None
        }
    }
    fn mark(&self, id: u64, outcome: u8) {
        self.outcome[id as usize].fetch_add(outcome, Ordering::Relaxed);
    }
}

// ---- the actors ---------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
    Work,
    Panic,
    Quit,
    Stall,
}

pub struct Job {
    id: u64,
    action: Action,
}

/// What a handler panics with, so the dead letter names the id.
struct PanicId(u64);

/// Holds the two stalled actors in their handlers across the shutdown.
#[derive(Default)]
struct Gate {
    state: Mutex<(usize, bool)>, // (stalled, open)
    cv: Condvar,
}

#[actor]
pub struct Soaker {
    ledger: Arc<Ledger>,
    gate: Arc<Gate>,
}

#[actor]
impl Soaker {
    #[handler(Job)]
    fn work(&mut self, job: Job, ctx: &mut Ctx<Self>) -> u64 {
        match job.action {
            Action::Work => {}
            Action::Panic => std::panic::panic_any(PanicId(job.id)),
            Action::Quit => ctx.stop(),
            Action::Stall => {
                let mut st = self.gate.state.lock().unwrap();
                st.0 += 1;
                self.gate.cv.notify_all();
                while !st.1 {
                    st = self.gate.cv.wait(st).unwrap();
                }
            }
        }
        self.ledger.mark(job.id, HANDLED);
        job.id
    }
}

#[group]
pub struct Trio {
    pub a: Addr<Soaker>,
    pub b: Addr<Soaker>,
    pub c: Addr<Soaker>,
}

/// Receives the dead letters, in a system of its own that outlives the
/// observed one.
#[actor]
pub struct Collector {
    ledger: Arc<Ledger>,
    by_reason: HashMap<DeadLetterReason, u64>,
    /// Letters that did not look as they must, described. Kept here and
    /// checked by the test thread: a panic in this handler would only be
    /// caught and counted, and the test would fail (if at all) elsewhere.
    malformed: Vec<String>,
}

#[actor]
impl Collector {
    #[handler(DeadLetter)]
    fn letter(&mut self, l: DeadLetter, _ctx: &mut Ctx<Self>) {
        match Self::job_id(&l) {
            Ok(id) => self.ledger.mark(id, DEAD),
            Err(why) => self.malformed.push(format!("{why}: {l:?}")),
        }
        *self.by_reason.entry(l.reason).or_default() += 1;
    }

    #[handler(Report)]
    fn report(
        &mut self,
        _m: Report,
        _ctx: &mut Ctx<Self>,
    ) -> (HashMap<DeadLetterReason, u64>, Vec<String>) {
        (self.by_reason.clone(), std::mem::take(&mut self.malformed))
    }
}

impl Collector {
    /// The id of the job a letter is about, or what is wrong with it.
    fn job_id(l: &DeadLetter) -> Result<u64, &'static str> {
        if l.class != "Job" {
            return Err("not a Job");
        }
        if l.reason == DeadLetterReason::Panicked {
            return l
                .panic
                .as_ref()
                .and_then(|p| p.downcast_ref::<PanicId>())
                .map(|p| p.0)
                .ok_or("a panicked letter without its panic payload");
        }
        match l.message.as_ref().map(|m| m.downcast_ref::<SoakerMsg>()) {
            Some(Some(SoakerMsg::Work(job, _reply))) => Ok(job.id),
            Some(None) => Err("a queued letter that is not the target's message enum"),
            None => Err("a queued letter without its message"),
        }
    }
}

pub struct Report;

// ---- traffic --------------------------------------------------------------------

/// One target: its address and whether it may be told to stop itself.
#[derive(Clone)]
struct Target {
    addr: Addr<Soaker>,
    may_quit: bool,
}

#[derive(Default)]
struct Tally {
    returned: AtomicU64,
    inline_ok: AtomicU64,
    fast_panicked: AtomicU64,
    asks_checked: AtomicU64,
}

struct Traffic {
    ledger: Arc<Ledger>,
    targets: Vec<Target>,
    /// Set during the shutdown phase: no blocking operation (a stalled
    /// actor would hold the sender).
    nonblocking: AtomicBool,
    stop: AtomicBool,
    tally: Tally,
    /// Ids the senders may issue; a few more are kept for the stall.
    cap: usize,
}

fn sender(t: Arc<Traffic>, seed: u64) {
    let mut rng = XorShift::new(seed);
    let mut asks: VecDeque<(u64, Ask<u64>)> = VecDeque::new();
    while !t.stop.load(Ordering::Relaxed) {
        let Some(id) = t.ledger.issue(t.cap) else {
            break;
        };
        let target = &t.targets[rng.below(t.targets.len() as u64) as usize];
        let action = match rng.below(100_000) {
            0..=199 => Action::Panic,
            200 if target.may_quit => Action::Quit,
            _ => Action::Work,
        };
        let job = Job { id, action };
        let a = &target.addr;
        let blocking_ok = !t.nonblocking.load(Ordering::Relaxed);
        let returned = |m: Job| {
            t.ledger.mark(m.id, RETURNED);
            t.tally.returned.fetch_add(1, Ordering::Relaxed);
        };
        let fast = |r: Result<u64, FastSendError<Job>>| match r {
            Ok(v) => {
                assert_eq!(v, id);
                t.tally.inline_ok.fetch_add(1, Ordering::Relaxed);
            }
            Err(FastSendError::Panicked { .. }) => {
                t.tally.fast_panicked.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => returned(e.into_message().expect("not panicked")),
        };
        match rng.below(6) {
            0 | 1 => {
                if let Err(e) = a.send(job) {
                    returned(e.into_inner());
                }
            }
            2 => match a.ask(job) {
                Ok(h) => {
                    asks.push_back((id, h));
                    if asks.len() > 64 {
                        let (want, mut h) = asks.pop_front().unwrap();
                        if let Some(Ok(v)) = h.try_take() {
                            assert_eq!(v, want);
                            t.tally.asks_checked.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                Err(e) => returned(e.into_inner()),
            },
            3 if blocking_ok => fast(a.fast_send(job)),
            3 | 4 => fast(a.fast_send_x(job)),
            _ => match a.fast_send_void(job) {
                Ok(_) => {}
                Err(e) => returned(e.into_inner()),
            },
        }
    }
}

fn silence_soak_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<PanicId>().is_none() {
            default(info);
        }
    }));
}

fn policy(i: usize, ledger: &Arc<Ledger>, gate: &Arc<Gate>) -> Supervision<Soaker> {
    let (l, g) = (Arc::clone(ledger), Arc::clone(gate));
    let fresh = move || Soaker {
        ledger: Arc::clone(&l),
        gate: Arc::clone(&g),
    };
    match i % 4 {
        0 => Supervision::resume(),
        1 => Supervision::restart(fresh).limit(1000, Duration::from_secs(1)),
        2 => Supervision::stop(),
        _ => Supervision::restart(fresh).limit(5, Duration::from_secs(3600)),
    }
}

#[test]
fn soak_every_message_has_exactly_one_outcome() {
    let secs: f64 = std::env::var("KASPAR_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let seed: u64 = std::env::var("KASPAR_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED);
    let cap = ((secs * 2_000_000.0) as usize).clamp(1 << 20, 256 << 20);
    eprintln!("soak: {secs} s, seed {seed}, up to {cap} ids");

    // The watchdog: a hang anywhere fails the test instead of the CI job.
    let (finished, watchdog_rx) = mpsc::channel::<()>();
    let limit = Duration::from_secs_f64(secs * 3.0 + 120.0);
    thread::spawn(move || {
        if watchdog_rx.recv_timeout(limit) == Err(mpsc::RecvTimeoutError::Timeout) {
            eprintln!("soak: watchdog: no finish within {limit:?}; hung");
            std::process::exit(101);
        }
    });

    silence_soak_panics();
    let ledger = Arc::new(Ledger::new(cap + 16));
    let gate = Arc::new(Gate::default());
    let soaker = || Soaker {
        ledger: Arc::clone(&ledger),
        gate: Arc::clone(&gate),
    };

    let observer = System::new();
    let collector = observer
        .spawn(Collector {
            ledger: Arc::clone(&ledger),
            by_reason: HashMap::new(),
            malformed: Vec::new(),
        })
        .start();

    let system = System::new();
    system.dead_letters().subscribe(&collector);
    let kinds = [
        MailboxKind::bqueue(64),
        MailboxKind::batched(64),
        MailboxKind::sharded(4, 64),
        MailboxKind::lock_free(256),
    ];
    let mut targets = Vec::new();
    let mut i = 0;
    for kind in kinds {
        for _ in 0..4 {
            let addr = system
                .spawn(soaker())
                .mailbox(kind)
                .supervise(policy(i, &ledger, &gate))
                .start();
            targets.push(Target {
                addr,
                may_quit: i % 4 != 0,
            });
            i += 1;
        }
    }
    let mut groups = Vec::new();
    for kind in kinds {
        let trio: Trio = system
            .spawn_group::<Trio>((soaker(), soaker(), soaker()))
            .mailbox(kind)
            .start();
        for m in [&trio.a, &trio.b, &trio.c] {
            m.supervise(policy(i, &ledger, &gate));
            targets.push(Target {
                addr: m.clone(),
                may_quit: i % 4 != 0,
            });
            i += 1;
        }
        groups.push(trio);
    }
    // Resume actors (i % 4 == 0) never stop before shutdown: stall these.
    let stall = [targets[0].addr.clone(), groups[0].a.clone()];
    assert!(targets[16].addr == groups[0].a && 16 % 4 == 0);

    let traffic = Arc::new(Traffic {
        ledger: Arc::clone(&ledger),
        targets,
        nonblocking: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        tally: Tally::default(),
        cap,
    });
    let senders: Vec<_> = (0..3)
        .map(|k| {
            let t = Arc::clone(&traffic);
            let s = seed.wrapping_add(k);
            thread::Builder::new()
                .name(format!("soak-sender-{k}"))
                .spawn(move || sender(t, s))
                .unwrap()
        })
        .collect();

    // Run, then shut down mid-flight with two actors stuck in a handler.
    // The run ends early if the ledger fills up (a fast machine, a long
    // run), but with an eighth of it left, so the senders are still sending
    // while the system shuts down.
    let started = Instant::now();
    let run_until = cap - cap / 8;
    while started.elapsed() < Duration::from_secs_f64(secs)
        && (ledger.next_id.load(Ordering::Relaxed) as usize) < run_until
    {
        thread::sleep(Duration::from_millis(20));
    }
    traffic.nonblocking.store(true, Ordering::SeqCst);
    let stall_ids: Vec<u64> = stall
        .iter()
        .map(|a| {
            let id = ledger.issue(usize::MAX).expect("ids kept for the stall");
            a.send(Job {
                id,
                action: Action::Stall,
            })
            .map_err(|_| "a resume actor on a BQueue accepts")
            .unwrap();
            id
        })
        .collect();
    {
        let mut st = gate.state.lock().unwrap();
        while st.0 < stall.len() {
            st = gate.cv.wait(st).unwrap();
        }
    }
    let stalled_at = ledger.next_id.load(Ordering::Relaxed);
    let report = system.shutdown_timeout(Duration::from_millis(50));
    let unfinished: Vec<&str> = report.unfinished.iter().map(|t| t.name).collect();
    assert!(
        unfinished.contains(&"Soaker") && unfinished.contains(&"Trio"),
        "{report:?}"
    );
    let after_close = ledger.next_id.load(Ordering::Relaxed);
    traffic.stop.store(true, Ordering::SeqCst);
    {
        let mut st = gate.state.lock().unwrap();
        st.1 = true;
        gate.cv.notify_all();
    }
    for s in senders {
        s.join().expect("a sender failed");
    }
    let final_report = system.shutdown();
    assert!(final_report.unfinished.is_empty() && final_report.failed.is_empty());
    let sink = system.dead_letters().counts();
    drop(system);
    let (by_reason, malformed) = collector.ask(Report).unwrap().wait().unwrap();
    assert!(
        malformed.is_empty(),
        "malformed dead letters: {malformed:#?}"
    );
    observer.shutdown();

    // Every id issued has exactly one outcome.
    let issued = ledger.next_id.load(Ordering::Relaxed) as usize;
    let mut counts = [0u64; 3];
    let mut bad = Vec::new();
    for (id, o) in ledger.outcome[..issued].iter().enumerate() {
        match o.load(Ordering::Relaxed) {
            HANDLED => counts[0] += 1,
            DEAD => counts[1] += 1,
            RETURNED => counts[2] += 1,
            other => {
                if bad.len() < 20 {
                    bad.push((id, other));
                }
            }
        }
    }
    let t = &traffic.tally;
    eprintln!(
        "soak: {issued} ids ({} during the shutdown): handled {}, dead letters {}, handed back {}",
        after_close - stalled_at,
        counts[0],
        counts[1],
        counts[2]
    );
    eprintln!(
        "soak: inline ok {}, fast_send panicked {}, asks checked {}, dead letters by reason {by_reason:?}",
        t.inline_ok.load(Ordering::Relaxed),
        t.fast_panicked.load(Ordering::Relaxed),
        t.asks_checked.load(Ordering::Relaxed),
    );
    assert!(
        bad.is_empty(),
        "ids with no or several outcomes (0 lost, 2/16/.. duplicated): {bad:?}"
    );
    for id in stall_ids {
        assert_eq!(ledger.outcome[id as usize].load(Ordering::Relaxed), HANDLED);
    }
    // The sink saw what the collector saw, and every reason occurred.
    assert_eq!(sink.unobserved, 0, "{sink:?}");
    assert_eq!(sink.total(), counts[1], "{sink:?}");
    assert_eq!(by_reason.values().sum::<u64>(), counts[1]);
    assert!(
        sink.panicked > 0 && sink.stopped > 0 && sink.shutdown_timeout > 0,
        "{sink:?}"
    );
    assert_eq!(
        traffic.tally.returned.load(Ordering::Relaxed),
        counts[2],
        "every Err handed back was counted once"
    );
    let _ = finished.send(());
}
