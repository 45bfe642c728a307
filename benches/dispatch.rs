//! Dispatch cost: what one uncontended `fast_send` costs against the
//! hand-written code it replaces (paper Table 6; DESIGN §9 target:
//! fast_send ≤ 1.25x lock + non-inlined call + unlock).
//!
//! `cargo bench --bench dispatch [-- --quick]`. Prints a markdown table and
//! writes `target/kaspar-bench/dispatch.jsonl`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use kaspar::prelude::*;

pub struct State {
    total: u64,
}

/// The work every case performs, never inlined so each case pays one call.
#[inline(never)]
fn work(state: &mut State, x: u64) -> u64 {
    state.total = state.total.wrapping_add(x);
    state.total
}

pub struct Add(pub u64);

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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let iters: u64 = if quick { 2_000_000 } else { 20_000_000 };
    let runs = if quick { 5 } else { 11 };

    let system = System::new();
    let target = system
        .spawn(Target {
            state: State { total: 0 },
        })
        .start();
    let relays: Arc<Vec<Addr<Relay>>> =
        Arc::new((0..4).map(|_| system.spawn(Relay).start()).collect());
    let mut plain = State { total: 0 };
    let locked = parking_lot::Mutex::new(State { total: 0 });

    let mut cases: Vec<(&str, Vec<f64>)> = vec![
        ("direct_call", vec![]),
        ("lock_call_unlock", vec![]),
        ("fast_send", vec![]),
        ("fast_send_chain4", vec![]),
    ];
    // Interleave the cases run by run so drift on a shared machine hits all
    // of them alike.
    for _ in 0..runs {
        cases[0].1.push(time(iters, |x| work(&mut plain, x)));
        cases[1]
            .1
            .push(time(iters, |x| work(&mut locked.lock(), x)));
        cases[2]
            .1
            .push(time(iters, |x| target.fast_send(Add(x)).unwrap()));
        let per_op = relays[0]
            .fast_send(Descend {
                relays: Arc::clone(&relays),
                depth: 0,
                target: target.clone(),
                iters,
            })
            .unwrap();
        cases[3].1.push(per_op);
    }
    let ns: Vec<(&str, f64)> = cases.into_iter().map(|(c, v)| (c, median(v))).collect();
    let get = |name: &str| ns.iter().find(|(c, _)| *c == name).unwrap().1;

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("## dispatch (paper Table 6)\n");
    println!(
        "{} · {cores} cores · threads not pinned · median of {runs} runs × {iters} calls\n",
        cpu_model()
    );
    println!("| case | ns/op | vs direct call | vs lock+call+unlock |");
    println!("|---|---:|---:|---:|");
    for (case, v) in &ns {
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

    let dir = std::path::Path::new(
        &std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into()),
    )
    .join("kaspar-bench");
    std::fs::create_dir_all(&dir).expect("create target/kaspar-bench");
    let lines: String = ns
        .iter()
        .map(|(case, v)| {
            format!(
                "{{\"table\":\"dispatch\",\"case\":\"{case}\",\"metric\":\"ns_per_op\",\"value\":{v:.3},\"unit\":\"ns\"}}\n"
            )
        })
        .collect();
    std::fs::write(dir.join("dispatch.jsonl"), lines).expect("write dispatch.jsonl");
    system.shutdown();
}
