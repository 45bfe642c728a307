//! kaspar's live console in a real browser: the tick-to-book pipeline runs
//! (two socket readers fed over loopback UDP, the market-data group, the
//! order-out actor) with the console up; headless Chromium, driven through
//! chromedriver, loads the page and reads it back. Every actor of the
//! pipeline must appear in the table with its group and thread, the graph
//! must show the chain's edges, and the group's counters must have grown
//! between two samples the page displayed.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`bash
//! .ci/steps/console.sh` installs them) and the root package's `console`
//! feature. With `KASPAR_CONSOLE_SCREENSHOT=<path>` set, it also selects
//! the book builder and saves a PNG of the window there (the guide's
//! figure: `book/src/figures/console.png`).

#[path = "console_browser/webdriver.rs"]
mod webdriver;

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar::{Ask, Console};
use kaspar_suite::tick_to_book::generator::{
    run_sender, security_ids, FeedId, GenConfig, Generator, SendPlan, SendProgress,
};
use kaspar_suite::tick_to_book::pipeline::{
    MarketData, OrderOut, ReadUntilStopped, ReaderStats, Route, SocketReader,
};
use serde_json::Value;

use webdriver::Driver;

/// The pipeline of `examples/tick_to_book`, fed until dropped, with its
/// console sampling every 250 ms.
struct Pipeline {
    system: System,
    console: Option<Console>,
    stop_readers: Arc<AtomicBool>,
    stop_sender: Arc<AtomicBool>,
    sender: Option<JoinHandle<()>>,
    reading: Vec<Ask<ReaderStats>>,
}

impl Pipeline {
    fn start() -> Pipeline {
        let system = System::new();
        let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
        let order_out = system
            .spawn(OrderOut::new(sink.local_addr().unwrap()).unwrap())
            .name("order-out")
            .record_latency(true)
            .start();
        let group = system
            .spawn_group::<MarketData>(MarketData::members(&security_ids(), 1 << 20))
            .mailbox(MailboxKind::bqueue(4096))
            .name("market-data")
            .record_latency(true)
            .start();
        group.wire(Some(&order_out));
        let stop_readers = Arc::new(AtomicBool::new(false));
        let in_flight = Arc::new(AtomicU32::new(0));
        let mut targets = Vec::new();
        let mut reading = Vec::new();
        for (feed, name) in [(FeedId::A, "reader-a"), (FeedId::B, "reader-b")] {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            socket
                .set_read_timeout(Some(Duration::from_millis(10)))
                .unwrap();
            targets.push(socket.local_addr().unwrap());
            // One reader runs the group's chain itself, one queues: the
            // graph shows both hand-offs.
            let route = match feed {
                FeedId::A => Route::Inline(group.buffer.clone()),
                FeedId::B => Route::Queued {
                    buffer: group.buffer.clone(),
                    in_flight: Arc::clone(&in_flight),
                },
            };
            let reader = system
                .spawn(SocketReader::new(
                    socket,
                    feed,
                    route,
                    Arc::clone(&stop_readers),
                ))
                .name(name)
                .start();
            reading.push(reader.ask(ReadUntilStopped).unwrap());
        }
        let console = system
            .console_every("127.0.0.1:0", Duration::from_millis(250))
            .expect("a free localhost port");
        let stop_sender = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&stop_sender);
        let sender = std::thread::Builder::new()
            .name("exchange".into())
            .spawn(move || {
                let mut gen = Generator::new(&GenConfig {
                    rate: 5_000.0,
                    ..GenConfig::default()
                });
                let progress = SendProgress::default();
                let plan = SendPlan {
                    // Until told to stop; the bound only caps a test that
                    // forgot to.
                    duration: Duration::from_secs(600),
                    targets: [targets[0], targets[1]],
                    b_reorder: 0.02,
                    stop: &stop,
                    progress: &progress,
                    capture: None,
                };
                run_sender(&mut gen, &plan).expect("the exchange sends");
            })
            .unwrap();
        Pipeline {
            system,
            console: Some(console),
            stop_readers,
            stop_sender,
            sender: Some(sender),
            reading,
        }
    }

    fn url(&self) -> String {
        self.console.as_ref().expect("running").url()
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        self.stop_sender.store(true, Ordering::Release);
        if let Some(sender) = self.sender.take() {
            let _ = sender.join();
        }
        self.stop_readers.store(true, Ordering::Release);
        for ask in self.reading.drain(..) {
            let _ = ask.wait();
        }
        self.console.take();
        self.system.shutdown();
    }
}

/// What the page shows: the sample number, every row of the actors'
/// table, the graph's nodes and its edges' tooltips.
const READ_PAGE: &str = r#"
const rows = Array.from(document.querySelectorAll('#actors tbody tr'));
return {
  seq: Number(document.body.dataset.seq || 0),
  status: document.getElementById('status').textContent,
  rows: rows.map(tr => ({
    id: Number(tr.dataset.id),
    name: tr.dataset.name,
    type: tr.dataset.type,
    thread: tr.children[1].querySelector('.sub').textContent,
    group: tr.children[1].firstChild.textContent,
    handled: Number(tr.querySelector('[data-col=handled]').textContent.replace(/,/g, '')),
  })),
  nodes: document.querySelectorAll('#graph g.node').length,
  edges: Array.from(document.querySelectorAll('#graph path.edge > title')).map(t => t.textContent),
};
"#;

/// The pipeline's actors as the table must show them: (name, type,
/// group, thread).
const EXPECTED: [(&str, &str, &str, &str); 8] = [
    ("order-out", "OrderOut", "standalone", "kaspar:order-out"),
    ("market-data", "Buffer", "MarketData", "kaspar:market-data"),
    ("market-data", "Arbiter", "MarketData", "kaspar:market-data"),
    ("market-data", "Decoder", "MarketData", "kaspar:market-data"),
    (
        "market-data",
        "BookBuilder",
        "MarketData",
        "kaspar:market-data",
    ),
    ("market-data", "Signal", "MarketData", "kaspar:market-data"),
    ("reader-a", "SocketReader", "standalone", "kaspar:reader-a"),
    ("reader-b", "SocketReader", "standalone", "kaspar:reader-b"),
];

fn row<'a>(page: &'a Value, ty: &str, name: &str) -> &'a Value {
    page["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["type"] == ty && r["name"] == name)
        .unwrap_or_else(|| panic!("no row for {name} ({ty}) in {page:#}"))
}

/// Reads the page until `done` holds of what it shows (at most 60 s).
fn read_until(
    session: &webdriver::Session<'_>,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let page = session.run(READ_PAGE).expect("the page reads");
        if done(&page) {
            return page;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within 60 s: {page:#}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_console_shows_the_running_pipeline_and_its_numbers_move() {
    let pipeline = Pipeline::start();
    let driver = Driver::start().expect("chromedriver");
    let session = driver.session(1600, 1000).expect("a headless Chromium");
    session.goto(&pipeline.url()).expect("the console's page");

    let handled = |page: &Value, ty: &str| row(page, ty, "market-data")["handled"].as_u64();
    let first = read_until(&session, "the pipeline's actors, handling", |page| {
        page["rows"]
            .as_array()
            .is_some_and(|r| r.len() == EXPECTED.len())
            && page["rows"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["thread"] != "not started")
            && handled(page, "Signal").is_some_and(|n| n > 0)
    });
    for (name, ty, group, thread) in EXPECTED {
        let r = row(&first, ty, name);
        assert_eq!(r["group"], group, "{r}");
        assert_eq!(r["thread"], thread, "{r}");
    }
    assert_eq!(first["status"], "running");
    // One node per actor, and the threads that run no handler (the test's
    // own, which asked the readers to start, and wired the group).
    assert_eq!(first["nodes"], EXPECTED.len() + 1);
    let edges: Vec<&str> = first["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    for (from, to) in [
        ("reader-a (SocketReader#", "market-data (Buffer#"),
        ("reader-b (SocketReader#", "market-data (Buffer#"),
        ("market-data (Buffer#", "market-data (Arbiter#"),
        ("market-data (Arbiter#", "market-data (Decoder#"),
        ("market-data (Decoder#", "market-data (BookBuilder#"),
        ("market-data (BookBuilder#", "market-data (Signal#"),
    ] {
        assert!(
            edges
                .iter()
                .any(|e| e.starts_with(from) && e.contains(&format!("→ {to}"))),
            "no edge {from} → {to} in {edges:#?}"
        );
    }

    // Two samples later, the group has handled more, and the page shows it.
    let seq = first["seq"].as_u64().unwrap();
    let second = read_until(&session, "two more samples", |page| {
        page["seq"].as_u64().is_some_and(|s| s >= seq + 2)
    });
    for ty in ["Buffer", "Arbiter", "Decoder", "BookBuilder", "Signal"] {
        let (before, after) = (handled(&first, ty).unwrap(), handled(&second, ty).unwrap());
        assert!(after > before, "{ty}: handled {before} then {after}");
    }

    if let Ok(path) = std::env::var("KASPAR_CONSOLE_SCREENSHOT") {
        // The book builder selected: its latency per class, its senders
        // and receivers in the side panel.
        let book = row(&second, "BookBuilder", "market-data")["id"].clone();
        session
            .run(&format!(
                "document.querySelector('#graph g.node[data-id=\"{book}\"]')\
                 .dispatchEvent(new MouseEvent('click'));"
            ))
            .unwrap();
        let seq = second["seq"].as_u64().unwrap();
        read_until(&session, "a sample with the selection", |page| {
            page["seq"].as_u64().is_some_and(|s| s >= seq + 3)
        });
        let png = session.screenshot().expect("a screenshot");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        std::fs::write(&path, png).expect("write the screenshot");
        eprintln!("screenshot: {path}");
    }
    drop(session);
    drop(driver);
    drop(pipeline);
}
