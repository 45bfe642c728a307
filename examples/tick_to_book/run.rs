//! One configuration's live run: the order-out, the group and the two
//! socket readers on a fresh `System`, the exchange sending for the given
//! time, then the checks: every datagram, packet and message balances
//! exactly, the pipeline's book equals the generator's reference, and
//! (unless `--replay off`) the simulation replay equals the live run.

use std::io::Write as _;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar_suite::tick_to_book::generator::{
    run_sender, security_ids, FeedId, Generator, SendPlan, SendProgress,
};
use kaspar_suite::tick_to_book::pipeline::{
    self, Counters, MarketData, OrderLog, OrderOut, ReadUntilStopped, ReaderStats, Route,
    SocketReader,
};

use crate::cli::{Config, Options};
use crate::replay_check::{simulate, Files};

/// Everything one configuration's run produced.
pub struct Run {
    pub config: Config,
    pub label: String,
    pub records: Vec<pipeline::Record>,
    pub ok: bool,
    pub lines: Vec<String>,
    pub size_histogram: Vec<u64>,
}

pub fn run_config(o: &Options, config: Config, secs: f64) -> std::io::Result<Run> {
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
