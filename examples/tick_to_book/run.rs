//! One configuration's live run: the order-out, the group and the two
//! socket readers on a fresh `System` ([`Live`], [`Readers`]), the exchange
//! sending for the given time ([`send_feed`]), the pipeline drained
//! ([`Live::finish`]), then the checks (`checks.rs`, and unless
//! `--replay off`, `replay_check.rs`).

use std::io::{self, Write as _};
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar::Ask;
use kaspar_suite::tick_to_book::generator::{
    run_sender, security_ids, FeedId, Generator, SendPlan, SendProgress, SendReport,
};
use kaspar_suite::tick_to_book::pipeline::{
    self, ArrivalLog, Counters, GroupResults, MarketData, Order, OrderLog, OrderOut,
    ReadUntilStopped, ReaderStats, Route, SocketReader,
};

use crate::checks::{check_balances, check_book, lost_packets};
use crate::cli::{Config, Options};
use crate::replay_check::{simulate, Files};

/// Everything one configuration's run produced.
pub struct Run {
    /// Which configuration.
    pub config: Config,
    /// Its name in the report, `one-thread` or `two-stage (<mailbox>)`.
    pub label: String,
    /// One latency record per published message.
    pub records: Vec<pipeline::Record>,
    /// Whether every check passed.
    pub ok: bool,
    /// The report's lines about the feed and the checks.
    pub lines: Vec<String>,
    /// How many packets carried `n` messages, by `n`.
    pub size_histogram: Vec<u64>,
}

/// Runs `config` live for `secs`, then checks it.
pub fn run_config(o: &Options, config: Config, secs: f64) -> io::Result<Run> {
    let label = match config {
        Config::OneThread => "one-thread".to_string(),
        Config::TwoStage => format!("two-stage ({})", o.mailbox.1),
    };
    let files = Files::of(o, config);
    let live = Live::start(o, config, secs)?;
    let readers = Readers::start(&live, config)?;
    let (gen, sent) = send_feed(o, secs, &label, readers.targets, files.capture.as_deref())?;
    let end = live.finish(readers);

    let mut lines = Vec::new();
    let lost = lost_packets(&end.group, sent.packets);
    let balance_ok = check_balances(&gen, &sent, &end, &lost, &mut lines);
    let book_ok = check_book(&gen, &end.group, &lost, &mut lines);
    let replay_ok = if o.replay {
        simulate(&files, &end.arrivals, &end.orders, &end.group, &mut lines)
    } else {
        true
    };
    Ok(Run {
        config,
        label,
        records: end.group.records,
        ok: balance_ok && book_ok && replay_ok,
        lines,
        size_histogram: gen.log().size_histogram(),
    })
}

/// The actors of one live run, on a fresh `System`: order out, and the
/// group wired to it.
struct Live {
    system: System,
    order_out: Addr<OrderOut>,
    group: MarketData,
    /// Every order order-out received.
    orders: OrderLog,
    /// The live console, up until the run is drained (`--console`).
    #[cfg(feature = "console")]
    console: Option<kaspar::Console>,
}

/// What a live run left once drained.
pub struct Ended {
    /// The two readers' counts, summed.
    pub readers: ReaderStats,
    /// The group's books, records and counters.
    pub group: GroupResults,
    /// The group's arrival journal (empty unless the replay is on).
    pub arrivals: ArrivalLog,
    /// Orders order-out wrote to its socket.
    pub orders_written: u64,
    /// Every order order-out received, in order.
    pub orders: Vec<Order>,
}

impl Live {
    /// Starts order out and the group, on `config`'s mailbox, with room
    /// for `secs` of records, journaling if the replay is on.
    fn start(o: &Options, config: Config, secs: f64) -> io::Result<Live> {
        let system = System::new();
        let sink = UdpSocket::bind("127.0.0.1:0")?;
        let orders = OrderLog::default();
        // Watched on the console, the actors show their handlers' service
        // times; otherwise nothing is timed that the report does not use.
        let watched = o.console.is_some();
        let order_out = system
            .spawn(OrderOut::new(sink.local_addr()?)?.with_log(Arc::clone(&orders)))
            .name("order-out")
            .record_latency(watched)
            .start();
        let expect_records = (o.gen_for(secs).expected_events(secs) * 1.6) as usize + 1024;
        let mailbox = match config {
            Config::OneThread => MailboxKind::bqueue(4096),
            Config::TwoStage => o.mailbox.0,
        };
        let group = if watched {
            let g = system
                .spawn_group::<MarketData>(MarketData::members(&security_ids(), expect_records))
                .mailbox(mailbox)
                .name("market-data")
                .record_latency(true)
                .start();
            g.wire(Some(&order_out));
            g
        } else {
            MarketData::launch(
                &system,
                mailbox,
                &security_ids(),
                expect_records,
                Some(&order_out),
            )
        };
        if o.replay {
            // Room for every datagram (two per packet, at least one message
            // each), so that journaling never reallocates on the timed path.
            group.journal(2 * expect_records);
        }
        #[cfg(feature = "console")]
        let console = match &o.console {
            Some(addr) => {
                let console = system
                    .console(addr.as_str())
                    .map_err(|e| io::Error::new(e.kind(), format!("the console on {addr}: {e}")))?;
                eprintln!(
                    "[{}] console: {} (up while this configuration runs)",
                    config.case(),
                    console.url()
                );
                Some(console)
            }
            None => None,
        };
        Ok(Live {
            system,
            order_out,
            group,
            orders,
            #[cfg(feature = "console")]
            console,
        })
    }

    /// Lets the sockets go quiet, stops the readers, drains the group and
    /// shuts the system down; collects what the run left.
    fn finish(self, readers: Readers) -> Ended {
        std::thread::sleep(Duration::from_millis(50));
        readers.stop.store(true, Ordering::Release);
        let mut stats = ReaderStats::default();
        for ask in readers.reading {
            let r = ask.wait().expect("reader returns its stats");
            stats.datagrams += r.datagrams;
            stats.refused += r.refused;
            stats.socket_errors += r.socket_errors;
        }
        // Sharded lanes give no order between senders: wait for the readers'
        // datagrams to be picked up before the end-of-feed marker.
        while readers.in_flight.load(Ordering::Acquire) != 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.group.end_of_feed();
        let group = self.group.results();
        let arrivals = self.group.take_arrivals();
        let orders_written = self
            .order_out
            .ask(Counters)
            .ok()
            .and_then(|a| a.wait().ok())
            .unwrap_or(0);
        // Shutdown drains order-out: every order the signal sent is logged.
        self.system.shutdown();
        let orders = std::mem::take(&mut *self.orders.lock().unwrap_or_else(|e| e.into_inner()));
        // The console goes last: it watched the pipeline until it was
        // drained and shut down.
        #[cfg(feature = "console")]
        drop(self.console);
        Ended {
            readers: stats,
            group,
            arrivals,
            orders_written,
            orders,
        }
    }
}

/// The two socket readers, one per feed, reading until told to stop.
struct Readers {
    stop: Arc<AtomicBool>,
    /// Datagrams sent to the group's mailbox and not yet picked up.
    in_flight: Arc<AtomicU32>,
    /// Feed A's and feed B's sockets.
    targets: [SocketAddr; 2],
    reading: Vec<Ask<ReaderStats>>,
}

impl Readers {
    /// Binds a socket per feed and starts its reader, handing datagrams to
    /// the group as `config` says (`fast_send` or `send`).
    fn start(live: &Live, config: Config) -> io::Result<Readers> {
        let stop = Arc::new(AtomicBool::new(false));
        let in_flight = Arc::new(AtomicU32::new(0));
        let mut targets = Vec::new();
        let mut reading = Vec::new();
        for feed in [FeedId::A, FeedId::B] {
            let socket = UdpSocket::bind("127.0.0.1:0")?;
            socket.set_read_timeout(Some(Duration::from_millis(10)))?;
            targets.push(socket.local_addr()?);
            let buffer = live.group.buffer.clone();
            let route = match config {
                Config::OneThread => Route::Inline(buffer),
                Config::TwoStage => Route::Queued {
                    buffer,
                    in_flight: Arc::clone(&in_flight),
                },
            };
            let reader = live
                .system
                .spawn(SocketReader::new(socket, feed, route, Arc::clone(&stop)))
                .name(match feed {
                    FeedId::A => "reader-a",
                    FeedId::B => "reader-b",
                })
                .start();
            reading.push(reader.ask(ReadUntilStopped).expect("a new reader accepts"));
        }
        Ok(Readers {
            stop,
            in_flight,
            targets: [targets[0], targets[1]],
            reading,
        })
    }
}

/// Runs the exchange on its own thread for `secs`, sending feeds A and B
/// to `targets` (and the packet stream to `capture`, if given), with a
/// progress line on stderr. Returns the generator, which holds what it
/// sent, and the sender's report.
fn send_feed(
    o: &Options,
    secs: f64,
    label: &str,
    targets: [SocketAddr; 2],
    capture: Option<&Path>,
) -> io::Result<(Generator, SendReport)> {
    let progress = SendProgress::default();
    let sender_stop = AtomicBool::new(false);
    let plan = SendPlan {
        duration: Duration::from_secs_f64(secs),
        targets,
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
                let mut gen = Generator::new(&o.gen_for(secs));
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
    Ok((gen, sent?))
}
