//! Round trip of a 64-byte frame between two processes, per transport:
//! the raw engine against kaspar-remote's layers over it, in the same run.
//!
//! `cargo bench -p kaspar-remote --features iceoryx2,aeron --bench remote [-- --quick] [CASE…]`
//! (either feature alone builds too; a `CASE` argument picks the cases
//! whose names contain it). This binary re-launches itself as the echo
//! peer of each case (the environment variable [`ECHO`] names the case).
//! Prints markdown and writes `target/kaspar-bench/remote.jsonl` (`table`
//! "remote", `case` as in [`CASES`], `metric` `p50_ns` / `p99_ns`, and
//! the run's `machine`, `date`, `load` and `command`): the rows of the
//! transports this run measured (the part of `case` before the `/`) are
//! replaced, other transports' rows are kept.
//!
//! Per transport, up to three cases, each a layer more than the one before:
//! `raw` (the engine's own API, as a hand-written client would use it),
//! `link` (kaspar-remote's `LinkTx` / `LinkRx` over it) and `kaspar` (an
//! `ask` to an actor exported with `fast_send` by the echo process, through
//! both nodes: `remote/kaspar_case.rs`, generic over the transport), whose
//! message is an order's eleven numeric fields; `kaspar_bytes` is the same
//! with a message of opaque bytes, as the raw case's frame is.
//! `kaspar_auth` is `kaspar` between nodes that authenticate each other
//! (`NodeConfig::auth`: the handshake at lookup, then a check per frame of
//! the session's state), `kaspar_auth_signed` adds a 16-byte HMAC tag to
//! every frame, made by the sender and checked by the receiver
//! (`Auth::sign_frames`).
//! Transports: `iceoryx2` (shared memory, `remote/iox.rs`), `aeron_ipc`
//! (Aeron IPC through one media driver) and `aeron_udp` (Aeron UDP on
//! 127.0.0.1, a media driver in each process; `remote/aeron.rs`).
//! Both sides busy-poll, except over Aeron UDP, where they yield while
//! waiting (the media driver's thread carries the data and needs a core).
//!
//! Adding a case: a `ping` (starts the echo peer with
//! [`Session::spawn_echo`], measures round trips against it, and makes it
//! stop with [`STOP`]) and an `echo` (the peer: send every frame back) and
//! one row in [`CASES`].
//!
//! Then the CPU an idle node costs, per [`IdleStrategy`](kaspar_remote::IdleStrategy):
//! `case` `iceoryx2/idle_node/<strategy>`, `metric` `cpu_pct` (percent of
//! one core, `unit` "%"); and what two idle, linked nodes cost per
//! liveness timeout, `<transport>/idle_liveness/<timeout>` (`-- idle_liveness`
//! runs these alone).

// Without a transport feature only the frame of the bench is left.
#![cfg_attr(not(any(feature = "iceoryx2", feature = "aeron")), allow(dead_code))]

#[cfg(feature = "aeron")]
#[path = "remote/aeron.rs"]
mod aeron;
#[cfg(feature = "iceoryx2")]
#[path = "remote/iox.rs"]
mod iox;
#[cfg(any(feature = "iceoryx2", feature = "aeron"))]
#[path = "remote/kaspar_case.rs"]
mod kaspar_case;

use std::cell::RefCell;
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
    /// Starts the echo peer of the session, measures `plan.samples` round
    /// trips against it and returns them in nanoseconds; finally sends
    /// [`STOP`].
    ping: fn(&Session, Plan) -> Vec<u64>,
    /// The echo peer of the session named by the argument: sends every
    /// frame back until [`STOP`] or [`PATIENCE`] of silence.
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
        ping: kaspar_case::ping::<iox::Iox, kaspar_case::Ping, { kaspar_case::NONE }>,
        echo: kaspar_case::echo::<iox::Iox, { kaspar_case::NONE }>,
    },
    #[cfg(feature = "iceoryx2")]
    Case {
        name: "iceoryx2/kaspar_bytes",
        ping: kaspar_case::ping::<iox::Iox, kaspar_case::Blob, { kaspar_case::NONE }>,
        echo: kaspar_case::echo::<iox::Iox, { kaspar_case::NONE }>,
    },
    #[cfg(feature = "iceoryx2")]
    Case {
        name: "iceoryx2/kaspar_auth",
        ping: kaspar_case::ping::<iox::Iox, kaspar_case::Ping, { kaspar_case::HANDSHAKE }>,
        echo: kaspar_case::echo::<iox::Iox, { kaspar_case::HANDSHAKE }>,
    },
    #[cfg(feature = "iceoryx2")]
    Case {
        name: "iceoryx2/kaspar_auth_signed",
        ping: kaspar_case::ping::<iox::Iox, kaspar_case::Ping, { kaspar_case::SIGNED }>,
        echo: kaspar_case::echo::<iox::Iox, { kaspar_case::SIGNED }>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_ipc/raw",
        ping: aeron::raw_ping::<aeron::Ipc>,
        echo: aeron::raw_echo::<aeron::Ipc>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_ipc/link",
        ping: aeron::link_ping::<aeron::Ipc>,
        echo: aeron::link_echo::<aeron::Ipc>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_ipc/kaspar",
        ping: kaspar_case::ping::<aeron::Ipc, kaspar_case::Ping, { kaspar_case::NONE }>,
        echo: kaspar_case::echo::<aeron::Ipc, { kaspar_case::NONE }>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_ipc/kaspar_bytes",
        ping: kaspar_case::ping::<aeron::Ipc, kaspar_case::Blob, { kaspar_case::NONE }>,
        echo: kaspar_case::echo::<aeron::Ipc, { kaspar_case::NONE }>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_ipc/kaspar_auth",
        ping: kaspar_case::ping::<aeron::Ipc, kaspar_case::Ping, { kaspar_case::HANDSHAKE }>,
        echo: kaspar_case::echo::<aeron::Ipc, { kaspar_case::HANDSHAKE }>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_ipc/kaspar_auth_signed",
        ping: kaspar_case::ping::<aeron::Ipc, kaspar_case::Ping, { kaspar_case::SIGNED }>,
        echo: kaspar_case::echo::<aeron::Ipc, { kaspar_case::SIGNED }>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_udp/raw",
        ping: aeron::raw_ping::<aeron::Udp>,
        echo: aeron::raw_echo::<aeron::Udp>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_udp/link",
        ping: aeron::link_ping::<aeron::Udp>,
        echo: aeron::link_echo::<aeron::Udp>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_udp/kaspar",
        ping: kaspar_case::ping::<aeron::Udp, kaspar_case::Ping, { kaspar_case::NONE }>,
        echo: kaspar_case::echo::<aeron::Udp, { kaspar_case::NONE }>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_udp/kaspar_bytes",
        ping: kaspar_case::ping::<aeron::Udp, kaspar_case::Blob, { kaspar_case::NONE }>,
        echo: kaspar_case::echo::<aeron::Udp, { kaspar_case::NONE }>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_udp/kaspar_auth",
        ping: kaspar_case::ping::<aeron::Udp, kaspar_case::Ping, { kaspar_case::HANDSHAKE }>,
        echo: kaspar_case::echo::<aeron::Udp, { kaspar_case::HANDSHAKE }>,
    },
    #[cfg(feature = "aeron")]
    Case {
        name: "aeron_udp/kaspar_auth_signed",
        ping: kaspar_case::ping::<aeron::Udp, kaspar_case::Ping, { kaspar_case::SIGNED }>,
        echo: kaspar_case::echo::<aeron::Udp, { kaspar_case::SIGNED }>,
    },
];

/// One measurement of one case: its name (which keeps concurrent runs
/// and cases apart) and its echo peer.
struct Session {
    name: String,
    case: &'static str,
    echo: RefCell<Option<Child>>,
}

impl Session {
    /// The session's name, to be worked into endpoint names.
    fn name(&self) -> &str {
        &self.name
    }

    /// Re-launches this bench as the session's echo peer, with `env` on top
    /// of the session's own variables.
    fn spawn_echo(&self, env: &[(&'static str, String)]) {
        let child = Command::new(std::env::current_exe().expect("the bench binary's path"))
            .env(ECHO, self.case)
            .env(SESSION, &self.name)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .spawn()
            .expect("re-launch the bench as the echo peer");
        assert!(
            self.echo.borrow_mut().replace(child).is_none(),
            "{}: one echo peer per session",
            self.case
        );
    }

    /// Waits for the echo peer to exit after [`STOP`] (if it still runs);
    /// kills it past [`PATIENCE`].
    fn finish_echo(&self) {
        let Some(mut echo) = self.echo.borrow_mut().take() else {
            return;
        };
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if let Some(status) = echo.try_wait().expect("poll the echo peer") {
                assert!(
                    status.success(),
                    "{}: the echo peer failed: {status}",
                    self.case
                );
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = echo.kill();
        let _ = echo.wait();
        panic!("{}: the echo peer did not stop", self.case);
    }
}

impl Drop for Session {
    /// A ping that panicked leaves no echo peer behind.
    fn drop(&mut self) {
        if let Some(mut echo) = self.echo.get_mut().take() {
            let _ = echo.kill();
            let _ = echo.wait();
        }
    }
}

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
    // Quick mode still takes three runs (each case's p50 is the median of
    // three): a busy machine slows one process of one run now and then,
    // and a ratio of two single runs would move with it.
    let (plan, runs) = if quick {
        (
            Plan {
                warmup: 1_000,
                samples: 10_000,
            },
            3,
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
        "## Remote round trip, {FRAME}-byte frame, two processes{}\n",
        if quick { " (--quick)" } else { "" }
    );
    println!("{cores} cores; {runs} run(s) of {} round trips per case (after {} warm-up), cases interleaved; median of the runs' percentiles.\n", plan.samples, plan.warmup);
    if CASES.is_empty() {
        println!("No transport enabled: build with `--features iceoryx2` and/or `aeron`.");
        return;
    }
    let mut results: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); CASES.len()];
    for run in 0..runs {
        for (i, case) in CASES.iter().enumerate() {
            if !picked(case.name) {
                continue;
            }
            let session = Session {
                name: format!("{}_{run}_{i}", std::process::id()),
                case: case.name,
                echo: RefCell::new(None),
            };
            let mut rt = (case.ping)(&session, plan);
            session.finish_echo();
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
    if picked("idle_liveness") {
        liveness_rows(quick, &mut rows);
    }
    let path = write_json(&rows);
    println!("\nJSON lines: {}", path.display());
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
            let Some(pct) = kaspar_case::idle_cpu::<iox::Iox>(idle, span) else {
                println!("| {name} | (no /proc) |");
                continue;
            };
            println!("| {name} | {pct:.1}% of a core |");
            rows.push((format!("iceoryx2/idle_node/{name}"), "cpu_pct", pct, "%"));
        }
    }
    let _ = (quick, rows);
}

/// The CPU two idle, linked nodes cost per liveness timeout, as rows of
/// the table (`<transport>/idle_liveness/<timeout>`, `cpu_pct`): what a
/// shorter timeout, which reports a lost peer sooner, costs while nothing
/// happens. Aeron: two nodes on one embedded media driver (IPC), the
/// driver's timeouts and timer and the clients' keepalives set from the
/// liveness.
fn liveness_rows(quick: bool, rows: &mut Vec<Row>) {
    let span = Duration::from_millis(if quick { 1_000 } else { 3_000 });
    println!(
        "\n| two idle linked nodes ({} ms) | liveness | CPU |\n|---|---|---:|",
        span.as_millis()
    );
    #[cfg(feature = "iceoryx2")]
    {
        use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport};
        for ms in [25u64, 100, 1_000] {
            let make = || {
                let config = Iceoryx2Config::default()
                    .namespace(format!("bench_live_{}", std::process::id()))
                    .liveness_timeout(Duration::from_millis(ms));
                Iceoryx2Transport::new(config).expect("an iceoryx2 transport")
            };
            if let Some(pct) = kaspar_case::idle_pair_cpu(make(), make(), span) {
                println!("| iceoryx2 | {ms} ms | {pct:.2}% of a core |");
                rows.push((
                    format!("iceoryx2/idle_liveness/{ms}ms"),
                    "cpu_pct",
                    pct,
                    "%",
                ));
            }
        }
    }
    #[cfg(feature = "aeron")]
    {
        use kaspar_remote::transport::aeron::{AeronConfig, AeronTransport};
        for ms in [500u64, 1_000, 2_000, 10_000] {
            let liveness = Duration::from_millis(ms);
            let driver = AeronTransport::launch(AeronConfig::embedded().liveness(liveness))
                .expect("an embedded driver");
            let dir = driver.aeron_dir().to_owned();
            let client = AeronTransport::launch(AeronConfig::external(&dir).liveness(liveness))
                .expect("a client of that driver");
            if let Some(pct) = kaspar_case::idle_pair_cpu(driver, client, span) {
                println!("| aeron_ipc | {ms} ms | {pct:.2}% of a core |");
                rows.push((
                    format!("aeron_ipc/idle_liveness/{ms}ms"),
                    "cpu_pct",
                    pct,
                    "%",
                ));
            }
        }
    }
    let _ = (quick, rows);
}

/// One JSON line: case, metric, value, unit.
type Row = (String, &'static str, f64, &'static str);

/// Writes this run's rows into `remote.jsonl`, replacing the rows of the
/// transports it measured and keeping the others'.
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
            let ours = rows.iter().any(|(case, ..)| {
                let transport = case.split('/').next().unwrap_or(case);
                line.contains(&format!("\"case\":\"{transport}/"))
            });
            if !ours && !line.trim().is_empty() {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    // Where this run's rows come from (machine, date, load, command): the
    // file keeps other runs' rows, so each row says which run it is.
    let features = [
        ("aeron", cfg!(feature = "aeron")),
        ("iceoryx2", cfg!(feature = "iceoryx2")),
    ]
    .iter()
    .filter(|f| f.1)
    .map(|f| f.0)
    .collect::<Vec<_>>()
    .join(",");
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut command = format!("cargo bench -p kaspar-remote --features {features} --bench remote");
    if !args.is_empty() {
        command = format!("{command} -- {}", args.join(" "));
    }
    let provenance = kaspar_suite::bench::Provenance::with_command(command).json_members();
    for (case, metric, value, unit) in rows {
        let _ = writeln!(
            out,
            "{{\"table\":\"remote\",\"case\":\"{case}\",\"metric\":\"{metric}\",\"value\":{value},\"unit\":\"{unit}\"{provenance}}}"
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
