//! Round trip of a 64-byte frame between two processes over Aeron: raw
//! rusteron against kaspar-remote's links, over IPC (one media driver) and
//! UDP on 127.0.0.1 (a driver in each process), in the same run.
//!
//! `cargo bench -p kaspar-remote --features aeron --bench remote_aeron [-- --quick]`.
//! The bench re-launches its own binary as the echo peer. Both sides
//! busy-poll. Prints a table and replaces the `aeron_*` rows of
//! `target/kaspar-bench/remote.jsonl` (`table` = `remote`, `case` =
//! `aeron_ipc/raw`, `aeron_ipc/link`, `aeron_udp/raw`, `aeron_udp/link`,
//! `metric` = `p50_ns` or `p99_ns`), keeping other transports' rows.

use std::fmt::Write as _;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kaspar_remote::transport::aeron::{AeronConfig, AeronTransport, Endpoint};
use kaspar_remote::{LinkError, LinkRx, LinkTx, Transport};
use rusteron_client::{Aeron, AeronExclusivePublication, AeronSubscription, Handlers};

const ROLE: &str = "KASPAR_AERON_BENCH_ROLE";
const DIR: &str = "KASPAR_AERON_BENCH_DIR";
const PORTS: &str = "KASPAR_AERON_BENCH_PORTS";
const FRAME: usize = 64;
const PING: i32 = 31;
const PONG: i32 = 32;
/// The frame that tells the echo peer to stop.
const STOP: u64 = u64::MAX;
const SETUP: Duration = Duration::from_secs(10);
/// No single round trip (or the whole run of one case) may take longer.
const STUCK: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Path {
    Raw,
    Link,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Medium {
    Ipc,
    Udp,
}

impl Medium {
    /// What a busy poller does when it found nothing. IPC: spin (the data
    /// path is client to client). UDP: yield, because the media driver's
    /// threads carry the data and must run; a spinning poller on a machine
    /// with no spare core starves them until the next scheduler tick (4 ms
    /// per hop measured on the 2-core dev VM).
    fn idle(self) {
        match self {
            Medium::Ipc => std::hint::spin_loop(),
            Medium::Udp => std::thread::yield_now(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Medium::Ipc => "aeron_ipc",
            Medium::Udp => "aeron_udp",
        }
    }
}

/// The two channels: IPC, or UDP with the parent's pong port and the
/// child's ping port.
fn channels(medium: Medium, ports: (u16, u16)) -> (Endpoint, Endpoint) {
    match medium {
        Medium::Ipc => (Endpoint::ipc(PING), Endpoint::ipc(PONG)),
        Medium::Udp => {
            let at = |port| SocketAddr::from(([127, 0, 0, 1], port));
            (
                Endpoint::udp(at(ports.1), PING),
                Endpoint::udp(at(ports.0), PONG),
            )
        }
    }
}

fn config(base: AeronConfig, medium: Medium, ports: (u16, u16)) -> AeronConfig {
    let (ping, pong) = channels(medium, ports);
    base.endpoint("ping", ping).endpoint("pong", pong)
}

/// Raw rusteron: a publication and a subscription of our own.
struct Raw {
    publication: AeronExclusivePublication,
    subscription: AeronSubscription,
    // Dropped last: the publication and subscription belong to it.
    _client: Aeron,
}

impl Raw {
    fn open(aeron: Aeron, send: &Endpoint, receive: &Endpoint) -> Raw {
        let cstr = |e: &Endpoint| std::ffi::CString::new(e.channel.clone()).unwrap();
        let subscription = aeron
            .add_subscription(
                &cstr(receive),
                receive.stream_id,
                Handlers::NONE,
                Handlers::NONE,
                SETUP,
            )
            .expect("raw subscription");
        let publication = aeron
            .add_exclusive_publication(&cstr(send), send.stream_id, SETUP)
            .expect("raw publication");
        Raw {
            publication,
            subscription,
            _client: aeron,
        }
    }

    fn connected(&self) -> bool {
        self.publication.is_connected()
    }

    fn send(&self, bytes: &[u8]) -> bool {
        match self.publication.try_claim_owned(bytes.len()) {
            Ok(mut claim) => {
                claim.data().copy_from_slice(bytes);
                claim.commit().is_ok()
            }
            Err(e) if e.is_retryable() => false,
            Err(e) => panic!("raw send: {e:?}"),
        }
    }

    fn poll(&self, on_frame: &mut dyn FnMut(&[u8])) -> usize {
        let read = self.subscription.poll_fn(|bytes, _| on_frame(bytes), 16);
        read.expect("raw poll") as usize
    }
}

/// Either path, behind one shape for the loops below.
enum Ends {
    Raw(Raw),
    Link(Box<dyn LinkTx>, Box<dyn LinkRx>),
}

impl Ends {
    fn send(&mut self, bytes: &[u8]) -> bool {
        match self {
            Ends::Raw(raw) => raw.send(bytes),
            Ends::Link(tx, _) => {
                match tx.send_frame(bytes.len(), &mut |buf| buf.copy_from_slice(bytes)) {
                    Ok(()) => true,
                    Err(LinkError::Full) => false,
                    Err(other) => panic!("link send: {other}"),
                }
            }
        }
    }

    fn poll(&mut self, on_frame: &mut dyn FnMut(&[u8])) -> usize {
        match self {
            Ends::Raw(raw) => raw.poll(on_frame),
            Ends::Link(_, rx) => rx.poll(16, on_frame).expect("link poll"),
        }
    }
}

/// Opens this process's ends: `send_to` and `receive_on` are "ping" and
/// "pong" (parent) or the other way round (echo peer).
fn open(transport: &AeronTransport, path: Path, send_to: &str, receive_on: &str) -> Ends {
    match path {
        Path::Raw => {
            let aeron =
                Aeron::connect_dir(&transport.aeron_dir().to_string_lossy()).expect("raw client");
            let send = transport.resolve(send_to).unwrap();
            let receive = transport.resolve(receive_on).unwrap();
            let raw = Raw::open(aeron, &send, &receive);
            let start = Instant::now();
            while !raw.connected() {
                assert!(start.elapsed() < SETUP, "raw publication never connected");
                std::thread::sleep(Duration::from_millis(1));
            }
            Ends::Raw(raw)
        }
        Path::Link => {
            let rx = transport.listen(receive_on).expect("listen");
            let tx = transport.connect(send_to, SETUP).expect("connect");
            Ends::Link(Box::new(tx), Box::new(rx))
        }
    }
}

/// The echo peer: sends every frame back until the STOP frame.
fn echo(medium: Medium, path: Path) {
    let ports = ports_from_env();
    let base = match medium {
        Medium::Ipc => AeronConfig::external(std::env::var(DIR).expect("driver dir")),
        Medium::Udp => AeronConfig::embedded(),
    };
    let transport = AeronTransport::launch(config(base, medium, ports)).expect("peer transport");
    let mut ends = open(&transport, path, "pong", "ping");
    println!("ready");
    let started = Instant::now();
    let mut stop = false;
    let mut frame = [0u8; FRAME];
    while !stop && started.elapsed() < STUCK * 2 {
        let mut got = None;
        let read = ends.poll(&mut |bytes| {
            frame.copy_from_slice(bytes);
            got = Some(u64::from_le_bytes(bytes[..8].try_into().unwrap()));
        });
        if read == 0 {
            medium.idle();
        }
        if let Some(seq) = got {
            stop = seq == STOP;
            // Bounded: if the parent died, its inbox never frees up.
            while !stop && !ends.send(&frame) {
                assert!(started.elapsed() < STUCK * 2, "the parent stopped reading");
                medium.idle();
            }
        }
    }
}

/// Runs one case; returns (p50, p99) of the round trip in ns.
fn measure(medium: Medium, path: Path, warmup: usize, samples: usize) -> (u64, u64) {
    let ports = (free_port(), free_port());
    let base = AeronConfig::embedded();
    let transport = AeronTransport::launch(config(base, medium, ports)).expect("transport");
    // The parent listens first (raw: subscribes) so the peer can connect.
    let mut child = spawn_echo(medium, path, &transport, ports);
    let mut ends = open_parent(&transport, path, &mut child);
    let mut rtts = Vec::with_capacity(samples);
    let mut frame = [0u8; FRAME];
    let case_start = Instant::now();
    for i in 0..warmup + samples {
        frame[..8].copy_from_slice(&(i as u64).to_le_bytes());
        let start = Instant::now();
        while !ends.send(&frame) {
            medium.idle();
        }
        let mut back = false;
        while !back {
            if ends.poll(&mut |bytes| back = bytes[..8] == frame[..8]) == 0 {
                medium.idle();
            }
            assert!(start.elapsed() < STUCK, "no echo for round trip {i}");
        }
        if i >= warmup {
            rtts.push(start.elapsed().as_nanos() as u64);
        }
    }
    assert!(case_start.elapsed() < STUCK * 2);
    frame[..8].copy_from_slice(&STOP.to_le_bytes());
    while !ends.send(&frame) {
        medium.idle();
    }
    let status = wait(&mut child);
    assert!(status, "the echo peer failed");
    rtts.sort_unstable();
    let at = |q: f64| rtts[((rtts.len() as f64 * q) as usize).min(rtts.len() - 1)];
    (at(0.50), at(0.99))
}

fn open_parent(transport: &AeronTransport, path: Path, child: &mut Echo) -> Ends {
    // Subscribe to pong before the peer connects to it; then wait for the
    // peer's ping inbox.
    match path {
        Path::Link => {
            let rx = transport.listen("pong").expect("listen");
            child.ready();
            let tx = transport.connect("ping", SETUP).expect("connect");
            Ends::Link(Box::new(tx), Box::new(rx))
        }
        Path::Raw => {
            let aeron =
                Aeron::connect_dir(&transport.aeron_dir().to_string_lossy()).expect("raw client");
            let ping = transport.resolve("ping").unwrap();
            let pong = transport.resolve("pong").unwrap();
            let raw = Raw::open(aeron, &ping, &pong);
            child.ready();
            let start = Instant::now();
            while !raw.connected() {
                assert!(start.elapsed() < SETUP, "raw publication never connected");
                std::thread::sleep(Duration::from_millis(1));
            }
            Ends::Raw(raw)
        }
    }
}

/// The echo peer's process.
struct Echo {
    child: Child,
    stdout: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Echo {
    /// Waits for the peer's "ready" (its blocking read ends when the peer
    /// exits, so a dead peer cannot hang this).
    fn ready(&mut self) {
        for line in self.stdout.by_ref() {
            if line.expect("read the peer").contains("ready") {
                return;
            }
        }
        panic!("the echo peer exited before it was ready");
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn spawn_echo(medium: Medium, path: Path, transport: &AeronTransport, ports: (u16, u16)) -> Echo {
    use std::io::BufRead;
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(ROLE, format!("{medium:?}/{path:?}"))
        .env(DIR, transport.aeron_dir())
        .env(PORTS, format!("{}/{}", ports.0, ports.1))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the echo peer");
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    Echo { child, stdout }
}

fn wait(echo: &mut Echo) -> bool {
    let start = Instant::now();
    while start.elapsed() < SETUP {
        if let Ok(Some(status)) = echo.child.try_wait() {
            return status.success();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

fn ports_from_env() -> (u16, u16) {
    let ports = std::env::var(PORTS).expect("ports");
    let (a, b) = ports.split_once('/').expect("two ports");
    (a.parse().unwrap(), b.parse().unwrap())
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("probe a UDP port on 127.0.0.1")
        .port()
}

/// Replaces this bench's rows in `remote.jsonl`, keeping other transports'.
fn write_rows(rows: &[(String, &str, u64)]) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("kaspar-bench");
    std::fs::create_dir_all(&dir).expect("create the bench output folder");
    let path = dir.join("remote.jsonl");
    let mut out = String::new();
    if let Ok(old) = std::fs::read_to_string(&path) {
        for line in old.lines().filter(|l| !l.contains("\"case\":\"aeron_")) {
            out.push_str(line);
            out.push('\n');
        }
    }
    for (case, metric, value) in rows {
        let _ = writeln!(
            out,
            "{{\"table\":\"remote\",\"case\":\"{case}\",\"metric\":\"{metric}\",\"value\":{value},\"unit\":\"ns\"}}"
        );
    }
    std::fs::write(&path, out).expect("write remote.jsonl");
    path
}

fn main() {
    if let Ok(role) = std::env::var(ROLE) {
        let (medium, path) = role.split_once('/').expect("medium/path");
        let medium = if medium == "Ipc" {
            Medium::Ipc
        } else {
            Medium::Udp
        };
        let path = if path == "Raw" { Path::Raw } else { Path::Link };
        return echo(medium, path);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    // Any other argument not starting with `-` keeps only the media it names
    // (`ipc`, `udp`).
    let only: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let (warmup, samples) = if quick {
        (2_000, 20_000)
    } else {
        (20_000, 200_000)
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("Aeron round trip, 64-byte frame, two processes, busy-polling; {cores} cores; {samples} samples per case");
    println!("| case | p50 µs | p99 µs | p50 link / raw |");
    println!("|---|---|---|---|");
    let mut rows = Vec::new();
    for medium in [Medium::Ipc, Medium::Udp] {
        if !only.is_empty() && !only.iter().any(|o| medium.name().contains(o.as_str())) {
            continue;
        }
        let raw = measure(medium, Path::Raw, warmup, samples);
        let link = measure(medium, Path::Link, warmup, samples);
        for (path, (p50, p99)) in [("raw", raw), ("link", link)] {
            let case = format!("{}/{path}", medium.name());
            let ratio = if path == "link" {
                format!("{:.2}", p50 as f64 / raw.0 as f64)
            } else {
                String::new()
            };
            println!(
                "| {case} | {:.2} | {:.2} | {ratio} |",
                p50 as f64 / 1e3,
                p99 as f64 / 1e3
            );
            rows.push((case.clone(), "p50_ns", p50));
            rows.push((case, "p99_ns", p99));
        }
    }
    let path = write_rows(&rows);
    println!("\nwrote {}", path.display());
}
