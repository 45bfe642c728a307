//! Many actors: what spawning and holding idle actors costs on the pool
//! and on threads of their own, and a million idle pooled actors from
//! spawn to shutdown (issue #26's scale figures). Shared by
//! `benches/scale.rs`.
//!
//! Three cases, each in a fresh child process of the bench (the binary
//! runs itself with `--scale-case CASE N`), so that one case's heap and
//! threads do not move the next one's resident set:
//!
//! * `thread/spawn` and `pool/spawn`: spawn `N` idle actors (own thread,
//!   or `Spawn::pooled` on the default pool of one worker per core) and
//!   time it (`ns_per_actor`); then ask each one once, so that every
//!   thread has started and every pooled actor has run and gone idle
//!   again; then the resident set's growth over the spawn, per actor
//!   (`bytes_per_actor`, from `VmRSS` in `/proc/self/status`: heap,
//!   touched stack pages, and the 8-byte address the bench keeps per
//!   actor; not the kernel's own memory per thread), and the actor's
//!   state's size (`state_bytes`), which the 512 bytes are
//!   beyond.
//! * `pool/million` (`pool/100k` with `--quick`): spawn 1,000,000 pooled
//!   actors (`spawn_s`), send each one message and wait until every one is
//!   handled (`send_s`), read the process's whole resident set
//!   (`rss_mib`), then shut the system down and drop the addresses
//!   (`shutdown_s`).
//!
//! Every case checks its accounting exactly and panics if it is off: each
//! actor handles exactly one message, every one handled is counted once,
//! and every actor runs its `stopped` hook once at shutdown.

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kaspar::prelude::*;

use super::{JsonLines, Machine};

/// The targets for a million idle pooled actors on the 2-core VM.
const TARGET_SPAWN_S: f64 = 2.0;
const TARGET_RSS_MIB: f64 = 1024.0;
const TARGET_SHUTDOWN_S: f64 = 2.0;
/// The target for one idle pooled actor, beyond its state.
const TARGET_BYTES: f64 = 512.0;

/// The flag a child process is started with.
const CASE_FLAG: &str = "--scale-case";
/// The line a child prints its numbers on.
const RESULT: &str = "scale-result";

/// What every actor of a case reports to, shared by the case's actors.
struct Tally {
    handled: AtomicU64,
    stopped: AtomicU64,
    /// Actors that stopped having handled other than exactly one message.
    wrong: AtomicU64,
}

/// An idle actor: a pointer to its case's tally and its own count.
#[actor]
pub struct Idle {
    tally: &'static Tally,
    got: u32,
}

#[actor]
impl Idle {
    #[handler(u32)]
    fn hit(&mut self, k: u32, _ctx: &mut Ctx<Self>) -> u32 {
        self.got += k;
        self.tally.handled.fetch_add(1, Ordering::Relaxed);
        self.got
    }

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {
        if self.got != 1 {
            self.tally.wrong.fetch_add(1, Ordering::Relaxed);
        }
        self.tally.stopped.fetch_add(1, Ordering::Relaxed);
    }
}

/// One case's numbers, by metric name, as its child printed them.
#[derive(Clone, Debug, Default)]
pub struct CaseResult {
    /// The case's name in the rows (`pool/spawn`, `pool/million`, ..).
    pub case: String,
    /// `(metric, value)` in the order the child printed them.
    pub metrics: Vec<(String, f64)>,
}

impl CaseResult {
    /// The value of `metric` (NaN if the case did not report it).
    pub fn get(&self, metric: &str) -> f64 {
        self.metrics
            .iter()
            .find(|(m, _)| m == metric)
            .map_or(f64::NAN, |(_, v)| *v)
    }
}

/// The three cases' numbers.
#[derive(Clone, Debug)]
pub struct Scale {
    /// `thread/spawn`.
    pub thread: CaseResult,
    /// `pool/spawn`.
    pub pool: CaseResult,
    /// `pool/million` (`pool/100k` with `--quick`).
    pub many: CaseResult,
}

/// The resident set of this process in bytes (`VmRSS`). Panics where
/// `/proc/self/status` cannot be read (this bench needs Linux).
pub fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status")
        .expect("scale bench: /proc/self/status is needed for the resident set (Linux only)");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .expect("scale bench: no VmRSS line in /proc/self/status")
}

fn tally() -> &'static Tally {
    // One per child process, which runs one case: never freed, never many.
    Box::leak(Box::new(Tally {
        handled: AtomicU64::new(0),
        stopped: AtomicU64::new(0),
        wrong: AtomicU64::new(0),
    }))
}

fn spawn(system: &System, tally: &'static Tally, pooled: bool) -> Addr<Idle> {
    let sp = system.spawn(Idle { tally, got: 0 });
    if pooled {
        sp.pooled().start()
    } else {
        sp.start()
    }
}

/// Panics unless `n` actors each handled one message and stopped once.
fn check(tally: &Tally, n: u64, what: &str) {
    let handled = tally.handled.load(Ordering::Relaxed);
    let stopped = tally.stopped.load(Ordering::Relaxed);
    let wrong = tally.wrong.load(Ordering::Relaxed);
    assert_eq!(handled, n, "{what}: messages handled");
    assert_eq!(stopped, n, "{what}: actors stopped");
    assert_eq!(wrong, 0, "{what}: actors that did not handle exactly one");
}

/// `thread/spawn` or `pool/spawn` over `n` actors, in this process.
fn spawn_case(pooled: bool, n: usize) -> Vec<(String, f64)> {
    let system = System::new();
    let tally = tally();
    let mut warm = 0;
    if pooled {
        // The pool and its workers exist before the window.
        let first = spawn(&system, tally, true);
        assert_eq!(first.ask(1).unwrap().wait().unwrap(), 1);
        warm = 1;
    }
    let mut addrs = Vec::with_capacity(n);
    std::thread::sleep(Duration::from_millis(50));
    let before = rss_bytes();
    let start = Instant::now();
    for _ in 0..n {
        addrs.push(spawn(&system, tally, pooled));
    }
    let spawned = start.elapsed();
    for a in &addrs {
        assert_eq!(a.ask(1).unwrap().wait().unwrap(), 1, "one message each");
    }
    std::thread::sleep(Duration::from_millis(50));
    let after = rss_bytes();
    system.shutdown();
    drop(addrs);
    check(
        tally,
        (n + warm) as u64,
        if pooled { "pool/spawn" } else { "thread/spawn" },
    );
    vec![
        ("actors".into(), n as f64),
        ("ns_per_actor".into(), spawned.as_nanos() as f64 / n as f64),
        (
            "bytes_per_actor".into(),
            after.saturating_sub(before) as f64 / n as f64,
        ),
        ("state_bytes".into(), std::mem::size_of::<Idle>() as f64),
    ]
}

/// `n` idle pooled actors from spawn to shutdown, in this process.
fn many_case(n: usize) -> Vec<(String, f64)> {
    let system = System::new();
    let tally = tally();
    let start = Instant::now();
    let addrs: Vec<Addr<Idle>> = (0..n).map(|_| spawn(&system, tally, true)).collect();
    let spawn_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    for a in &addrs {
        a.send(1u32).unwrap();
    }
    // A lost message would leave this loop waiting: give up, loudly,
    // long after any healthy run (about a second for a million here).
    let deadline = start + Duration::from_secs(120);
    while tally.handled.load(Ordering::Relaxed) < n as u64 {
        assert!(
            Instant::now() < deadline,
            "pool/many: {} of {n} messages handled after 120 s",
            tally.handled.load(Ordering::Relaxed)
        );
        std::thread::sleep(Duration::from_micros(200));
    }
    let send_s = start.elapsed().as_secs_f64();
    let rss = rss_bytes();
    let live = system.pooled_actors();
    let start = Instant::now();
    system.shutdown();
    drop(addrs);
    let shutdown_s = start.elapsed().as_secs_f64();
    assert_eq!(live, n, "pooled actors live before the shutdown");
    assert_eq!(system.pooled_actors(), 0, "pooled actors left after it");
    check(tally, n as u64, "pool/million");
    vec![
        ("actors".into(), n as f64),
        ("spawn_s".into(), spawn_s),
        ("send_s".into(), send_s),
        ("rss_mib".into(), rss as f64 / (1024.0 * 1024.0)),
        ("shutdown_s".into(), shutdown_s),
    ]
}

/// In a child process: runs the case its arguments name, prints its
/// numbers on one line and returns `true`. In the bench itself: `false`.
pub fn run_child_case() -> bool {
    let args: Vec<String> = std::env::args().collect();
    let Some(i) = args.iter().position(|a| a == CASE_FLAG) else {
        return false;
    };
    let case = args.get(i + 1).expect("--scale-case CASE N");
    let n: usize = args
        .get(i + 2)
        .and_then(|n| n.parse().ok())
        .expect("--scale-case CASE N: N a count");
    let metrics = match case.as_str() {
        "thread/spawn" => spawn_case(false, n),
        "pool/spawn" => spawn_case(true, n),
        "pool/many" => many_case(n),
        other => panic!("scale bench: unknown case {other}"),
    };
    let line: Vec<String> = metrics.iter().map(|(m, v)| format!("{m}={v}")).collect();
    println!("{RESULT} {}", line.join(" "));
    true
}

/// Runs `case` over `n` actors in a child process of this binary and
/// reads its numbers back (named `name` in the rows). Panics if the child
/// fails (a failed check) or prints no result.
fn in_child(name: &str, case: &str, n: usize) -> CaseResult {
    let exe = std::env::current_exe().expect("scale bench: its own path");
    let out = Command::new(exe)
        .args([CASE_FLAG, case, &n.to_string()])
        .output()
        .expect("scale bench: start a child process");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scale bench: case {case} ({n}) failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(RESULT))
        .unwrap_or_else(|| panic!("scale bench: case {case} printed no result:\n{stdout}"));
    let metrics = line
        .split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("metric=value");
            (k.to_string(), v.parse().expect("a number"))
        })
        .collect();
    CaseResult {
        case: name.into(),
        metrics,
    }
}

/// The counts: own threads, pooled spawns, and the many-actors case (and
/// its name).
pub fn counts(quick: bool) -> (usize, usize, usize, &'static str) {
    if quick {
        (1_000, 10_000, 100_000, "pool/100k")
    } else {
        (10_000, 100_000, 1_000_000, "pool/million")
    }
}

/// Runs the three cases, each in its own child process.
pub fn measure(quick: bool) -> Scale {
    let (threads, pooled, many, many_name) = counts(quick);
    Scale {
        thread: in_child("thread/spawn", "thread/spawn", threads),
        pool: in_child("pool/spawn", "pool/spawn", pooled),
        many: in_child(many_name, "pool/many", many),
    }
}

fn verdict(value: f64, target: f64) -> &'static str {
    if value <= target {
        "yes"
    } else {
        "no"
    }
}

/// Prints the markdown tables: the spawn cases side by side (with the
/// pool's ratio to a thread, same run), and the many-actors case against
/// the targets.
pub fn print(s: &Scale, machine: &Machine) {
    println!("## Many actors: spawn, memory, shutdown (benches/scale.rs)\n");
    println!("{}\n", machine.header());
    println!(
        "Each case in a fresh process. Memory is the resident set's growth (`VmRSS`) \
         over the spawn, per actor, after each actor handled one ask and went idle.\n"
    );
    println!("| case | actors | ns per actor | bytes per actor (RSS) |");
    println!("|---|---:|---:|---:|");
    for c in [&s.thread, &s.pool] {
        println!(
            "| {} | {} | {:.0} | {:.0} |",
            c.case,
            c.get("actors"),
            c.get("ns_per_actor"),
            c.get("bytes_per_actor")
        );
    }
    println!(
        "| pool / thread | | {:.3}x | {:.3}x |",
        s.pool.get("ns_per_actor") / s.thread.get("ns_per_actor"),
        s.pool.get("bytes_per_actor") / s.thread.get("bytes_per_actor")
    );
    let m = &s.many;
    println!(
        "\n{} idle pooled actors, each sent one message ({:.2} s until all were handled):\n",
        m.get("actors"),
        m.get("send_s")
    );
    // A smaller run (`--quick`) is held to the targets scaled linearly
    // to its count (the resident set's baseline included, so its figure
    // errs high).
    let per_million = 1e6 / m.get("actors");
    println!(
        "| {} | measured | at 1 M (linear) | target at 1 M (2-core VM) | within |",
        m.case
    );
    println!("|---|---:|---:|---:|:---:|");
    for (what, metric, target) in [
        ("spawn, s", "spawn_s", TARGET_SPAWN_S),
        ("resident set, MiB", "rss_mib", TARGET_RSS_MIB),
        ("shutdown, s", "shutdown_s", TARGET_SHUTDOWN_S),
    ] {
        let v = m.get(metric);
        let at_million = v * per_million;
        println!(
            "| {what} | {v:.2} | {at_million:.2} | {target} | {} |",
            verdict(at_million, target)
        );
    }
    // The 512 bytes are beyond the actor's own state; the bench's
    // 8-byte address per actor stays in.
    let state = s.pool.get("state_bytes");
    let b = s.pool.get("bytes_per_actor") - state;
    println!(
        "| idle pooled actor beyond its {state:.0}-byte state, bytes (RSS, `pool/spawn`) \
         | {b:.0} | {b:.0} | {TARGET_BYTES} | {} |",
        verdict(b, TARGET_BYTES)
    );
}

/// The rows: `table` = `scale`, one per case and metric.
pub fn record(s: &Scale, json: &mut JsonLines) {
    for c in [&s.thread, &s.pool, &s.many] {
        for (metric, value) in &c.metrics {
            let unit = match metric.as_str() {
                "ns_per_actor" => "ns",
                "bytes_per_actor" | "state_bytes" => "B",
                "rss_mib" => "MiB",
                "actors" => "actors",
                _ => "s",
            };
            json.record("scale", &c.case, metric, *value, unit);
        }
    }
}
