//! Tick to book: the paper's case study (§8, §10) on a synthetic feed.
//!
//! A synthetic exchange sends a clustered (Hawkes) MDP-3.0-style feed as
//! two redundant UDP feeds on loopback; the pipeline of Figure 1 reads
//! both, arbitrates, decodes, builds the book and runs a toy signal, and
//! every message's socket-to-book latency is measured. Two configurations:
//!
//! * `one-thread`: each reader `fast_send`s into the decode-and-book group
//!   and runs the whole chain on its own thread;
//! * `two-stage`: each reader `send`s through the group's mailbox, and the
//!   group's thread runs the chain.
//!
//! Run: `cargo run --release --example tick_to_book -- [--secs 10]
//! [--config one-thread|two-stage|both] [--mailbox bqueue|batched|sharded|lockfree]
//! [--rate 20000] [--burst 0.85] [--decay 8000] [--seed N] [--capture PATH]
//! [--replay on|off]`
//!
//! After each configuration's live run, the decode-and-book group is
//! replayed in a `kaspar::Simulation` from the recorded arrivals, and its
//! orders, books, records and counters must equal the live run's
//! (`replay.rs`).
//!
//! See `examples/tick_to_book/README.md`.

#[path = "../../benches/common/mod.rs"]
mod common;
// The feed, generator, pipeline and replay are shared with
// tests/tick_to_book.rs (and the feed with the fuzz target); some of their
// items are used only there.
#[allow(dead_code)]
mod feed;
#[allow(dead_code)]
mod generator;
#[allow(dead_code)]
mod pipeline;
#[allow(dead_code)]
mod replay;
mod report;

use std::io::Write as _;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaspar::prelude::*;

use crate::common::{JsonLines, Machine};
use crate::feed::Stream;
use crate::generator::{
    read_capture, run_sender, security_ids, FeedId, GenConfig, Generator, SendPlan, SendProgress,
};
use crate::pipeline::{
    ArrivalLog, Counters, GroupResults, MarketData, Order, OrderLog, OrderOut, ReadUntilStopped,
    ReaderStats, Route, SocketReader,
};
use crate::replay::Arrivals;
use crate::report::ConfigReport;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Config {
    OneThread,
    TwoStage,
}

impl Config {
    fn case(self) -> &'static str {
        match self {
            Config::OneThread => "one_thread",
            Config::TwoStage => "two_stage",
        }
    }
}

#[derive(Debug)]
struct Options {
    secs: f64,
    configs: Vec<Config>,
    mailbox: (MailboxKind, &'static str),
    gen: GenConfig,
    capture: Option<PathBuf>,
    replay: bool,
}

const USAGE: &str = "usage: tick_to_book [--secs N] [--config one-thread|two-stage|both] \
[--mailbox bqueue|batched|sharded|lockfree] [--rate EVENTS_PER_S] [--burst BRANCHING_RATIO] \
[--decay PER_S] [--seed N] [--capture PATH] [--replay on|off]";

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        secs: 10.0,
        configs: vec![Config::OneThread, Config::TwoStage],
        mailbox: (MailboxKind::bqueue(4096), "BQueue"),
        gen: GenConfig::default(),
        capture: None,
        replay: true,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            return Err(USAGE.into());
        }
        // `cargo bench`-style harness flags are ignored.
        if flag == "--bench" {
            continue;
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let num = |v: &str| {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("{flag}: not a number: {v}"))
        };
        match flag.as_str() {
            "--secs" => o.secs = num(&value)?.max(0.2),
            "--rate" => o.gen.rate = num(&value)?.max(1.0),
            "--burst" => o.gen.branching = num(&value)?.min(0.99),
            "--decay" => o.gen.decay = num(&value)?.max(1.0),
            "--seed" => o.gen.seed = value.parse().map_err(|_| format!("--seed: {value}"))?,
            "--capture" => o.capture = Some(PathBuf::from(value)),
            "--replay" => {
                o.replay = match value.as_str() {
                    "on" => true,
                    "off" => false,
                    v => return Err(format!("--replay: {v}?\n{USAGE}")),
                }
            }
            "--config" => {
                o.configs = match value.as_str() {
                    "one-thread" => vec![Config::OneThread],
                    "two-stage" => vec![Config::TwoStage],
                    "both" => vec![Config::OneThread, Config::TwoStage],
                    v => return Err(format!("--config: {v}?\n{USAGE}")),
                }
            }
            "--mailbox" => {
                o.mailbox = match value.as_str() {
                    "bqueue" => (MailboxKind::bqueue(4096), "BQueue"),
                    "batched" => (MailboxKind::batched(4096), "BQueueBatched"),
                    "sharded" => (MailboxKind::sharded(2, 4096), "Sharded"),
                    "lockfree" => (MailboxKind::lock_free(8192), "LockFree"),
                    v => return Err(format!("--mailbox: {v}?\n{USAGE}")),
                }
            }
            f => return Err(format!("unknown option {f}\n{USAGE}")),
        }
    }
    Ok(o)
}

/// Everything one configuration's run produced.
struct Run {
    config: Config,
    label: String,
    records: Vec<pipeline::Record>,
    ok: bool,
    lines: Vec<String>,
    size_histogram: Vec<u64>,
}

fn run_config(o: &Options, config: Config, secs: f64) -> std::io::Result<Run> {
    let system = System::new();
    let sink = UdpSocket::bind("127.0.0.1:0")?;
    let live_orders = OrderLog::default();
    let order_out = system
        .spawn(OrderOut::new(sink.local_addr()?)?.with_log(Arc::clone(&live_orders)))
        .start();
    let expect_records = (o.gen.rate * secs * 1.6) as usize + 1024;
    let mailbox = match config {
        Config::OneThread => MailboxKind::bqueue(4096),
        Config::TwoStage => o.mailbox.0,
    };
    let group = MarketData::launch(
        &system,
        mailbox,
        &security_ids(),
        expect_records,
        Some(&order_out),
    );
    if o.replay {
        // Room for every datagram (two per packet, at least one message
        // each), so that journaling never reallocates on the timed path.
        group.journal(2 * expect_records);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let in_flight = Arc::new(AtomicU32::new(0));
    let mut targets = Vec::new();
    let mut reading = Vec::new();
    for feed in [FeedId::A, FeedId::B] {
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.set_read_timeout(Some(Duration::from_millis(10)))?;
        targets.push(socket.local_addr()?);
        let route = match config {
            Config::OneThread => Route::Inline(group.buffer.clone()),
            Config::TwoStage => Route::Queued {
                buffer: group.buffer.clone(),
                in_flight: Arc::clone(&in_flight),
            },
        };
        let reader = system
            .spawn(SocketReader::new(socket, feed, route, Arc::clone(&stop)))
            .start();
        reading.push(reader.ask(ReadUntilStopped).expect("a new reader accepts"));
    }

    let label = match config {
        Config::OneThread => "one-thread".to_string(),
        Config::TwoStage => format!("two-stage ({})", o.mailbox.1),
    };
    let progress = SendProgress::default();
    let sender_stop = AtomicBool::new(false);
    let files = Files::of(o, config);
    let capture = files.capture.as_deref();
    let plan = SendPlan {
        duration: Duration::from_secs_f64(secs),
        targets: [targets[0], targets[1]],
        b_reorder: 0.02,
        stop: &sender_stop,
        progress: &progress,
        capture,
    };
    let started = Instant::now();
    let (gen, sent) = std::thread::scope(|s| {
        let sender = std::thread::Builder::new()
            .name("exchange".into())
            .spawn_scoped(s, || {
                let mut gen = Generator::new(&o.gen);
                let report = run_sender(&mut gen, &plan);
                (gen, report)
            })
            .expect("spawn the exchange thread");
        while !sender.is_finished() {
            std::thread::sleep(Duration::from_millis(200));
            eprint!(
                "\r[{label}] {:4.1}/{secs:.1} s  packets {:>9}  messages {:>9}  ",
                started.elapsed().as_secs_f64().min(secs),
                progress.packets.load(Ordering::Relaxed),
                progress.messages.load(Ordering::Relaxed),
            );
            let _ = std::io::stderr().flush();
        }
        sender.join().expect("the exchange thread does not panic")
    });
    eprintln!();
    let sent = sent?;

    // Let the sockets go quiet, stop the readers, drain the group.
    std::thread::sleep(Duration::from_millis(50));
    stop.store(true, Ordering::Release);
    let mut readers = ReaderStats::default();
    for ask in reading {
        let r = ask.wait().expect("reader returns its stats");
        readers.datagrams += r.datagrams;
        readers.refused += r.refused;
        readers.socket_errors += r.socket_errors;
    }
    // Sharded lanes give no order between senders: wait for the readers'
    // datagrams to be picked up before the end-of-feed marker.
    while in_flight.load(Ordering::Acquire) != 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    group.end_of_feed();
    let g = group.results();
    let arrivals = group.take_arrivals();
    let orders_written = order_out
        .ask(Counters)
        .ok()
        .and_then(|a| a.wait().ok())
        .unwrap_or(0);
    // Shutdown drains order-out: every order the signal sent is logged.
    system.shutdown();
    let live_orders = std::mem::take(&mut *live_orders.lock().unwrap_or_else(|e| e.into_inner()));

    // Balances: every datagram, packet and message is accounted for.
    let log = gen.log();
    let n = sent.packets;
    let datagrams_sent = 2 * n;
    let lost_datagrams = datagrams_sent - readers.datagrams.min(datagrams_sent);
    let trailing = (n + 1).saturating_sub(g.next_expected as u64);
    let lost = |seq: u32| {
        seq as u64 >= g.next_expected as u64
            || g.gap_ranges.iter().any(|&(a, b)| (a..b).contains(&seq))
    };
    let lost_packets: Vec<u32> = (1..=n as u32).filter(|&s| lost(s)).collect();
    let lost_messages: u64 = lost_packets
        .iter()
        .map(|&s| log.messages_in(s) as u64)
        .sum();
    let messages_sent = log.total_messages();
    let mut lines = Vec::new();
    let checks = [
        (
            "datagrams: read = received by the group + refused at hand-off",
            readers.datagrams == g.received + readers.refused,
        ),
        (
            "datagrams: received = accepted + duplicates dropped + runts",
            g.received == g.arbiter.accepted + g.arbiter.duplicates + g.runts,
        ),
        (
            "packets: sent = accepted + counted gaps + unseen tail",
            n == g.arbiter.accepted + g.arbiter.gap_packets + trailing,
        ),
        (
            "packets: accepted = decoded + malformed",
            g.arbiter.accepted == g.packets + g.decode_errors,
        ),
        (
            "messages: sent = published + in lost packets",
            messages_sent == g.messages + lost_messages,
        ),
        (
            "records: one per published message",
            g.records.len() as u64 == g.messages,
        ),
        ("chain: no refused fast_send", g.chain_errors == 0),
        (
            "book: every entry applies (when nothing was lost)",
            g.book_refused == 0 || g.arbiter.gap_packets > 0,
        ),
    ];
    let balance_ok = checks.iter().all(|c| c.1);
    lines.push(format!(
        "feed: {n} packets ({messages_sent} messages, {} events) in {:.2} s, sent on A and B = {datagrams_sent} datagrams; \
         read {} ({lost_datagrams} lost in the kernel), duplicates dropped {}, held for reordering {}, \
         gaps {} ({} packets, {} unseen at the end), malformed {}; orders {} sent, {} written",
        gen.events(),
        sent.elapsed.as_secs_f64(),
        readers.datagrams,
        g.arbiter.duplicates,
        g.arbiter.held,
        g.arbiter.gaps,
        g.arbiter.gap_packets,
        trailing,
        g.decode_errors,
        g.orders,
        orders_written,
    ));
    for (what, ok) in &checks {
        if !ok {
            lines.push(format!("balance FAILED: {what}"));
        }
    }
    lines.push(format!(
        "balance: {}",
        if balance_ok { "exact" } else { "FAILED" }
    ));
    // The book the pipeline built must equal the generator's reference
    // book, rebuilt from its own entries minus any packet lost on both
    // feeds (none, normally).
    let reference = log.replay(lost);
    let book_ok = reference == g.book && (!lost_packets.is_empty() || gen.reference() == g.book);
    lines.push(format!(
        "book check: {}{}",
        if book_ok { "identical" } else { "DIFFERENT" },
        if lost_packets.is_empty() {
            String::new()
        } else {
            format!(
                " (reference without the {} lost packets)",
                lost_packets.len()
            )
        }
    ));
    let replay_ok = if o.replay {
        simulate(&files, &arrivals, &live_orders, &g, &mut lines)
    } else {
        true
    };
    Ok(Run {
        config,
        label,
        records: g.records,
        ok: balance_ok && book_ok && replay_ok,
        lines,
        size_histogram: log.size_histogram(),
    })
}

/// Where a configuration's packet stream and arrivals go.
struct Files {
    /// The generator's capture of the packet stream, if any.
    capture: Option<PathBuf>,
    /// The arrivals file.
    arrivals: PathBuf,
    /// Whether the files stay after the run (`--capture` was given).
    keep: bool,
}

impl Files {
    /// With `--capture PATH`: the first configuration's packet stream goes
    /// to PATH, any other's to `PATH.<case>`, and each one's arrivals to
    /// `PATH.<case>.arrivals`; all stay. Without it, a replay needs both
    /// files anyway: they go to the temporary directory and are removed.
    fn of(o: &Options, config: Config) -> Files {
        let suffixed = |p: &Path, suffix: String| {
            let mut name = p.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        };
        match &o.capture {
            Some(p) => Files {
                capture: if config == o.configs[0] {
                    Some(p.clone())
                } else {
                    o.replay.then(|| suffixed(p, format!(".{}", config.case())))
                },
                arrivals: suffixed(p, format!(".{}.arrivals", config.case())),
                keep: true,
            },
            None => {
                let tmp = std::env::temp_dir().join(format!(
                    "kaspar-tick_to_book-{}-{}",
                    std::process::id(),
                    config.case()
                ));
                Files {
                    capture: o.replay.then(|| suffixed(&tmp, ".cap".into())),
                    arrivals: suffixed(&tmp, ".arrivals".into()),
                    keep: false,
                }
            }
        }
    }
}

/// Simulation replay (paper §11): joins the buffer's journal with the
/// capture into the group's input sequence, writes it to the arrivals file,
/// reads it back, replays it into a simulated group and compares the
/// orders, books, records and counters with the live run's. Pushes the
/// report lines; returns whether they were identical.
fn simulate(
    files: &Files,
    log: &ArrivalLog,
    live_orders: &[Order],
    live: &GroupResults,
    lines: &mut Vec<String>,
) -> bool {
    let result = (|| -> Result<(Arrivals, replay::Replayed, Duration), String> {
        let cap = files.capture.as_deref().ok_or("no capture")?;
        let packets = read_capture(cap).map_err(|e| format!("{}: {e}", cap.display()))?;
        let arrivals = replay::join(log, &packets)?;
        let path = &files.arrivals;
        replay::write_arrivals(path, &arrivals).map_err(|e| format!("{}: {e}", path.display()))?;
        let from_file =
            replay::read_arrivals(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if from_file != arrivals {
            return Err(format!("{} does not read back as written", path.display()));
        }
        let started = Instant::now();
        let sim = replay::replay(&from_file, &security_ids());
        let wall = started.elapsed();
        replay::compare(live_orders, live, &sim)?;
        Ok((from_file, sim, wall))
    })();
    if !files.keep {
        for p in files.capture.iter().chain([&files.arrivals]) {
            let _ = std::fs::remove_file(p);
        }
    }
    match result {
        Ok((arrivals, sim, wall)) => {
            lines.push(format!(
                "simulation replay: identical ({} signals); {} datagrams ({} KiB) replayed from {} on virtual time in {:.1} ms; \
                 the books, {} records and every counter are equal too",
                sim.orders.len(),
                arrivals.len(),
                arrivals.payload_bytes() / 1024,
                if files.keep {
                    files.arrivals.display().to_string()
                } else {
                    "the arrivals file".into()
                },
                wall.as_secs_f64() * 1e3,
                sim.results.records.len(),
            ));
            true
        }
        Err(why) => {
            lines.push(format!("simulation replay: DIFFERENT: {why}"));
            false
        }
    }
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let machine = Machine::detect();
    let per_config = o.secs / o.configs.len() as f64;
    println!("## tick_to_book: socket-to-book latency over loopback UDP\n");
    println!("{}  ", machine.header());
    println!(
        "feed: Hawkes rate {} events/s, branching {} , decay {}/s, seed {}; {:.1} s per configuration; \
         absolute times on a shared machine are noise, read the ratios\n",
        o.gen.rate, o.gen.branching, o.gen.decay, o.gen.seed, per_config
    );
    let mut runs = Vec::new();
    for &c in &o.configs {
        match run_config(&o, c, per_config) {
            Ok(r) => runs.push(r),
            Err(e) => {
                eprintln!("{}: {e}", c.case());
                return ExitCode::FAILURE;
            }
        }
    }
    let reports: Vec<ConfigReport> = runs
        .iter()
        .map(|r| ConfigReport {
            case: r.config.case(),
            label: r.label.clone(),
            streams: Stream::ALL
                .iter()
                .map(|&s| report::analyse(&r.records, s))
                .collect(),
        })
        .collect();
    for r in &runs {
        println!("**{}**  ", r.label);
        for l in &r.lines {
            println!("{l}  ");
        }
        let h = &r.size_histogram;
        let packets: u64 = h.iter().sum();
        let msgs: u64 = h.iter().enumerate().map(|(k, &c)| k as u64 * c).sum();
        let max = h.iter().rposition(|&c| c > 0).unwrap_or(0);
        let single = h.get(1).copied().unwrap_or(0);
        println!(
            "packets: {:.2} messages per packet on average, max {max}, {:.1}% single-message\n",
            msgs as f64 / packets.max(1) as f64,
            100.0 * single as f64 / packets.max(1) as f64
        );
    }
    print!("{}", report::markdown(&reports));
    let one = reports.iter().find(|r| r.case == "one_thread");
    let two = reports.iter().find(|r| r.case == "two_stage");
    if let (Some(one), Some(two)) = (one, two) {
        println!();
        for (k, s) in Stream::ALL.iter().enumerate() {
            let (a, b) = (one.streams[k].p50 as f64, two.streams[k].p50 as f64);
            println!(
                "p50 one-thread / two-stage, {}: {:.2} µs / {:.2} µs = {:.2} (two-stage is {:.1}x the one-thread median)  ",
                s.name(),
                a / 1000.0,
                b / 1000.0,
                a / b,
                b / a
            );
        }
    }
    let mut rows = JsonLines::new("tick_to_book");
    report::json(&reports, &mut rows);
    let path = rows.write();
    println!("\nJSON lines: {}", path.display());
    match report::charts(&common::bench_dir(), &reports) {
        Ok(paths) => {
            for p in paths {
                println!("chart: {}", p.display());
            }
        }
        Err(e) => eprintln!("charts: {e}"),
    }
    if runs.iter().all(|r| r.ok) {
        ExitCode::SUCCESS
    } else {
        eprintln!("tick_to_book: a balance, book or simulation replay check failed");
        ExitCode::FAILURE
    }
}
