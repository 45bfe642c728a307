//! Round trip of a 64-byte frame between two processes, per transport:
//! the raw engine against kaspar-remote's layers over it, in the same run.
//!
//! `cargo bench -p kaspar-remote --features iceoryx2 --bench remote [-- --quick] [CASE…]`
//! (a `CASE` argument picks the cases whose names contain it).
//! This binary re-launches itself as the echo peer of each case (the
//! environment variable [`ECHO`] names the case). Both sides busy-poll.
//! Prints markdown and writes `target/kaspar-bench/remote.jsonl` (`table`
//! "remote", `case` as in [`CASES`], `metric` `p50_ns` / `p99_ns`), keeping
//! the rows of cases this run did not measure.
//!
//! Adding a case: a `ping` (measure round trips against the peer) and an
//! `echo` (the peer: send every frame back, stop on [`STOP`]) function and
//! one row in [`CASES`]. `iceoryx2/kaspar` goes through the actor layer
//! (`remote/kaspar_case.rs`: an exported actor answers `ask`s); reserved
//! names: `aeron_ipc/*`, `aeron_udp/*` (raw Aeron cases live in
//! `remote_aeron.rs`).
//!
//! Then the CPU an idle node costs, per [`IdleStrategy`](kaspar_remote::IdleStrategy):
//! `case` `iceoryx2/idle_node/<strategy>`, `metric` `cpu_pct` (percent of
//! one core, `unit` "%").

// Without a transport feature only the frame of the bench is left.
#![cfg_attr(not(feature = "iceoryx2"), allow(dead_code))]

#[cfg(feature = "iceoryx2")]
#[path = "remote/kaspar_case.rs"]
mod kaspar_case;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Set in the re-launched echo peer: the case it serves.
const ECHO: &str = "KASPAR_BENCH_REMOTE_ECHO";
/// Set in the echo peer: the session (run and case) it serves, which
/// names the endpoints, so that concurrent runs never meet.
const SESSION: &str = "KASPAR_BENCH_REMOTE_SESSION";
/// The frame's length.
const FRAME: usize = 64;
/// A frame whose byte [`FLAG`] is this ends the echo peer (bytes 0..8
/// carry the round trip's number).
const STOP: u8 = 0xff;
const FLAG: usize = 8;
/// Neither side waits longer than this for anything.
const PATIENCE: Duration = Duration::from_secs(20);

/// How much one run of one case does.
#[derive(Clone, Copy)]
struct Plan {
    warmup: usize,
    samples: usize,
}

/// One row of the table: a transport path measured end to end.
struct Case {
    name: &'static str,
    /// Measures `plan.samples` round trips against the echo peer of the
    /// session (the first argument, to be worked into endpoint names) and
    /// returns them in nanoseconds; finally sends [`STOP`].
    ping: fn(&str, Plan) -> Vec<u64>,
    /// The echo peer: sends every frame back until [`STOP`] or
    /// [`PATIENCE`] of silence.
    echo: fn(&str),
}

const CASES: &[Case] = &[
    #[cfg(feature = "iceoryx2")]
    Case {
        name: "iceoryx2/raw",
        ping: iox::raw_ping::<iceoryx2::service::ipc::Service>,
        echo: iox::raw_echo::<iceoryx2::service::ipc::Service>,
    },
    #[cfg(feature = "iceoryx2")]
    Case {
        name: "iceoryx2/raw_threadsafe",
        ping: iox::raw_ping::<iceoryx2::service::ipc_threadsafe::Service>,
        echo: iox::raw_echo::<iceoryx2::service::ipc_threadsafe::Service>,
    },
    #[cfg(feature = "iceoryx2")]
    Case {
        name: "iceoryx2/link",
        ping: iox::link_ping,
        echo: iox::link_echo,
    },
    #[cfg(feature = "iceoryx2")]
    Case {
        name: "iceoryx2/kaspar",
        ping: kaspar_case::ping,
        echo: kaspar_case::echo,
    },
    // "aeron_ipc/link", "aeron_udp/link": through the Aeron back end.
];

fn main() {
    if let Ok(case) = std::env::var(ECHO) {
        let session = std::env::var(SESSION).expect("the echo peer is given a session");
        let case = CASES.iter().find(|c| c.name == case).expect("a known case");
        return (case.echo)(&session);
    }
    let quick = std::env::args().any(|a| a == "--quick");
    // Other arguments (not `--…`: cargo passes `--bench`) pick the cases
    // whose names contain one of them; none picks every case.
    let picks: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let picked = |name: &str| picks.is_empty() || picks.iter().any(|p| name.contains(p.as_str()));
    let (plan, runs) = if quick {
        (
            Plan {
                warmup: 2_000,
                samples: 20_000,
            },
            1,
        )
    } else {
        (
            Plan {
                warmup: 20_000,
                samples: 200_000,
            },
            3,
        )
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "## Remote round trip, {FRAME}-byte frame, two processes, busy-polling{}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{cores} cores; {runs} run(s) of {} round trips per case (after {} warm-up), cases interleaved; median of the runs' percentiles.\n", plan.samples, plan.warmup);
    if CASES.is_empty() {
        println!("No transport enabled: build with `--features iceoryx2` (or `aeron`).");
        return;
    }
    let mut results: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); CASES.len()];
    for run in 0..runs {
        for (i, case) in CASES.iter().enumerate() {
            if !picked(case.name) {
                continue;
            }
            let session = format!("{}_{run}_{i}", std::process::id());
            let mut echo = spawn_echo(case.name, &session);
            let mut rt = (case.ping)(&session, plan);
            finish(&mut echo, case.name);
            rt.sort_unstable();
            results[i].0.push(percentile(&rt, 0.50));
            results[i].1.push(percentile(&rt, 0.99));
        }
    }
    println!("| case | p50 | p99 |\n|---|---:|---:|");
    let mut rows = Vec::new();
    for (case, (p50s, p99s)) in CASES.iter().zip(&mut results) {
        if p50s.is_empty() {
            continue;
        }
        let (p50, p99) = (median(p50s), median(p99s));
        println!(
            "| {} | {:.2} µs | {:.2} µs |",
            case.name,
            p50 / 1e3,
            p99 / 1e3
        );
        rows.push((case.name.to_owned(), "p50_ns", p50, "ns"));
        rows.push((case.name.to_owned(), "p99_ns", p99, "ns"));
    }
    if picked("iceoryx2/idle_node") {
        idle_rows(quick, &mut rows);
    }
    let path = write_json(&rows);
    println!("\nJSON lines: {}", path.display());
}

fn spawn_echo(case: &str, session: &str) -> Child {
    Command::new(std::env::current_exe().expect("the bench binary's path"))
        .env(ECHO, case)
        .env(SESSION, session)
        .spawn()
        .expect("re-launch the bench as the echo peer")
}

/// Waits for the echo peer to exit after [`STOP`]; kills it past
/// [`PATIENCE`].
fn finish(echo: &mut Child, case: &str) {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if let Some(status) = echo.try_wait().expect("poll the echo peer") {
            assert!(status.success(), "{case}: the echo peer failed: {status}");
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = echo.kill();
    let _ = echo.wait();
    panic!("{case}: the echo peer did not stop");
}

/// The `q` quantile of sorted `values` (nearest rank).
fn percentile(sorted: &[u64], q: f64) -> f64 {
    sorted[(q * (sorted.len() - 1) as f64).round() as usize] as f64
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The CPU an idle node costs, per idle strategy, as rows of the table.
fn idle_rows(quick: bool, rows: &mut Vec<Row>) {
    #[cfg(feature = "iceoryx2")]
    {
        use kaspar_remote::IdleStrategy;
        let span = Duration::from_millis(if quick { 500 } else { 2_000 });
        let strategies = [
            ("default", IdleStrategy::DEFAULT),
            ("sleep_1ms", IdleStrategy::sleep(Duration::from_millis(1))),
            ("spin", IdleStrategy::Spin),
        ];
        println!(
            "\n| idle node ({} ms) | CPU |\n|---|---:|",
            span.as_millis()
        );
        for (name, idle) in strategies {
            let Some(pct) = kaspar_case::idle_cpu(idle, span) else {
                println!("| {name} | (no /proc) |");
                continue;
            };
            println!("| {name} | {pct:.1}% of a core |");
            rows.push((format!("iceoryx2/idle_node/{name}"), "cpu_pct", pct, "%"));
        }
    }
    let _ = (quick, rows);
}

/// One JSON line: case, metric, value, unit.
type Row = (String, &'static str, f64, &'static str);

/// Writes this run's rows into `remote.jsonl`, keeping the rows of other
/// cases (those measured by other runs or benches).
fn write_json(rows: &[Row]) -> PathBuf {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
        .join("kaspar-bench");
    std::fs::create_dir_all(&dir).expect("create the bench output folder");
    let path = dir.join("remote.jsonl");
    let mut out = String::new();
    if let Ok(old) = std::fs::read_to_string(&path) {
        for line in old.lines() {
            let ours = rows
                .iter()
                .any(|(case, ..)| line.contains(&format!("\"case\":\"{case}\"")));
            if !ours && !line.trim().is_empty() {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    for (case, metric, value, unit) in rows {
        let _ = writeln!(
            out,
            "{{\"table\":\"remote\",\"case\":\"{case}\",\"metric\":\"{metric}\",\"value\":{value},\"unit\":\"{unit}\"}}"
        );
    }
    std::fs::write(&path, out).expect("write the bench JSON lines");
    path
}

/// Round trips against an echo peer: frame `i` carries `i`; the ping waits
/// for it to come back before sending `i + 1`.
fn measure(
    plan: Plan,
    mut send: impl FnMut(&[u8; FRAME]),
    mut poll: impl FnMut(&mut [u8; FRAME]) -> bool,
) -> Vec<u64> {
    let mut frame = [0u8; FRAME];
    let mut back = [0u8; FRAME];
    let mut rt = Vec::with_capacity(plan.samples);
    for i in 0..(plan.warmup + plan.samples) as u64 {
        frame[..8].copy_from_slice(&i.to_le_bytes());
        let start = Instant::now();
        send(&frame);
        let deadline = start + PATIENCE;
        loop {
            if poll(&mut back) {
                assert_eq!(back[..8], frame[..8], "the echo returned another frame");
                break;
            }
            assert!(Instant::now() < deadline, "the echo peer stopped answering");
        }
        if i as usize >= plan.warmup {
            rt.push(start.elapsed().as_nanos() as u64);
        }
    }
    frame[FLAG] = STOP;
    send(&frame);
    rt
}

#[cfg(feature = "iceoryx2")]
mod iox {
    //! iceoryx2: the raw API (`ipc` services, what a hand-written client
    //! does; and `ipc_threadsafe`, the flavour the link needs to be
    //! `Send`) and kaspar-remote's `LinkTx` / `LinkRx`.

    use super::{measure, Plan, FLAG, FRAME, PATIENCE, STOP};
    use iceoryx2::config::Config;
    use iceoryx2::port::publisher::Publisher;
    use iceoryx2::port::subscriber::Subscriber;
    use iceoryx2::prelude::*;
    use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport};
    use kaspar_remote::{LinkError, LinkRx, LinkTx, Transport};
    use std::time::Instant;

    /// The iceoryx2 namespace of every run (sessions keep runs apart).
    const NAMESPACE: &str = "bench";

    type RawPorts<S> = (Node<S>, Publisher<S, [u8], ()>, Subscriber<S, [u8], ()>);

    /// A node and a publisher on `out`, a subscriber on `inn`, in the
    /// bench's namespace; waits until the peer's subscriber is there.
    fn raw_ports<S: Service>(out: &str, inn: &str) -> RawPorts<S> {
        let mut config = Config::global_config().clone();
        config.global.prefix = FileName::new(format!("kaspar_{NAMESPACE}_").as_bytes()).unwrap();
        let node = NodeBuilder::new()
            .config(&config)
            .signal_handling_mode(SignalHandlingMode::Disabled)
            .create::<S>()
            .unwrap();
        let open = |name: &str| {
            node.service_builder(&ServiceName::new(name).unwrap())
                .publish_subscribe::<[u8]>()
                .open_or_create()
                .unwrap()
        };
        let (tx_service, rx_service) = (open(out), open(inn));
        let publisher = tx_service
            .publisher_builder()
            .initial_max_slice_len(FRAME)
            .create()
            .unwrap();
        let subscriber = rx_service.subscriber_builder().create().unwrap();
        let deadline = Instant::now() + PATIENCE;
        while tx_service.dynamic_config().number_of_subscribers() == 0 {
            assert!(Instant::now() < deadline, "the peer never subscribed");
            std::thread::yield_now();
        }
        (node, publisher, subscriber)
    }

    fn raw_send<S: Service>(publisher: &Publisher<S, [u8], ()>, frame: &[u8]) {
        let sample = publisher.loan_slice_uninit(frame.len()).unwrap();
        sample.write_from_slice(frame).send().unwrap();
    }

    pub(super) fn raw_ping<S: Service>(session: &str, plan: Plan) -> Vec<u64> {
        let (_node, publisher, subscriber) = raw_ports::<S>(
            &format!("bench/{session}/echo"),
            &format!("bench/{session}/ping"),
        );
        measure(
            plan,
            |frame| raw_send(&publisher, frame),
            |back| match subscriber.receive().unwrap() {
                Some(sample) => {
                    back.copy_from_slice(sample.payload());
                    true
                }
                None => false,
            },
        )
    }

    pub(super) fn raw_echo<S: Service>(session: &str) {
        let (_node, publisher, subscriber) = raw_ports::<S>(
            &format!("bench/{session}/ping"),
            &format!("bench/{session}/echo"),
        );
        let mut quiet_since = Instant::now();
        while quiet_since.elapsed() < PATIENCE {
            if let Some(sample) = subscriber.receive().unwrap() {
                if sample.payload()[FLAG] == STOP {
                    return;
                }
                raw_send(&publisher, sample.payload());
                quiet_since = Instant::now();
            }
        }
    }

    fn link_ends(out: &str, inn: &str) -> (Iceoryx2Transport, impl LinkTx, impl LinkRx) {
        let t = Iceoryx2Transport::new(
            Iceoryx2Config::default()
                .namespace(NAMESPACE)
                .max_frame_len(FRAME),
        )
        .unwrap();
        let rx = t.listen(inn).unwrap();
        let tx = t.connect(out, PATIENCE).unwrap();
        (t, tx, rx)
    }

    fn link_send(tx: &mut impl LinkTx, frame: &[u8]) {
        loop {
            match tx.send_frame(frame.len(), &mut |b| b.copy_from_slice(frame)) {
                Ok(()) => return,
                Err(LinkError::Full) => std::hint::spin_loop(),
                Err(e) => panic!("send: {e}"),
            }
        }
    }

    pub(super) fn link_ping(session: &str, plan: Plan) -> Vec<u64> {
        let (_t, mut tx, mut rx) =
            link_ends(&format!("{session}/echo"), &format!("{session}/ping"));
        // `measure` needs both closures at once: the link halves are
        // separate values, so each closure owns one.
        measure(
            plan,
            |frame| link_send(&mut tx, frame),
            |back| rx.poll(1, &mut |f| back.copy_from_slice(f)).unwrap() == 1,
        )
    }

    pub(super) fn link_echo(session: &str) {
        let (_t, mut tx, mut rx) =
            link_ends(&format!("{session}/ping"), &format!("{session}/echo"));
        let mut quiet_since = Instant::now();
        let mut stop = false;
        while !stop && quiet_since.elapsed() < PATIENCE {
            let mut frame = [0u8; FRAME];
            if rx.poll(1, &mut |f| frame.copy_from_slice(f)).unwrap() == 1 {
                stop = frame[FLAG] == STOP;
                if !stop {
                    link_send(&mut tx, &frame);
                }
                quiet_since = Instant::now();
            }
        }
    }
}
