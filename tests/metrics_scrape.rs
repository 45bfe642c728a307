//! Metrics as a Prometheus server sees them (feature `metrics`): a system
//! of a few actors publishes through the `metrics` facade, the Prometheus
//! exporter serves `/metrics` on a localhost port, and the test scrapes it
//! over plain HTTP, parses the text format, and checks the numbers it
//! drove: exact counts of handler runs, dead letters and cycle refusals,
//! the queued messages of a prepared actor, and latency quantiles under
//! the right labels.
//!
//! Run: `cargo test --features metrics --test metrics_scrape` (or
//! `bash .ci/steps/metrics.sh`).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use metrics_exporter_prometheus::{BuildError, PrometheusBuilder};

pub struct Quote(pub u64);
pub struct Total;
pub struct Boom;
pub struct Ping;
pub struct Spin;

/// Records its handlers' service times.
#[actor]
pub struct Quoter {
    sum: u64,
}

#[actor]
impl Quoter {
    #[handler(Quote)]
    fn quote(&mut self, msg: Quote, _ctx: &mut Ctx<Self>) -> u64 {
        self.sum += msg.0;
        self.sum
    }

    #[handler(Total)]
    fn total(&mut self, _msg: Total, _ctx: &mut Ctx<Self>) -> u64 {
        self.sum
    }
}

/// Panics on `Boom`: the message goes to dead letters.
#[actor]
pub struct Faulty;

#[actor]
impl Faulty {
    #[handler(Boom)]
    fn boom(&mut self, _msg: Boom, _ctx: &mut Ctx<Self>) {
        panic!("boom (expected by the metrics test)");
    }

    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

/// Calls itself synchronously from its own handler: refused as a cycle.
#[actor]
pub struct Looper;

#[actor]
impl Looper {
    #[handler(Spin)]
    fn spin(&mut self, _msg: Spin, ctx: &mut Ctx<Self>) -> bool {
        ctx.myself().fast_send(Spin).is_err_and(|e| e.is_cycle())
    }
}

/// Never started: what is sent to it stays queued.
#[actor]
pub struct Parked;

#[actor]
impl Parked {
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

/// The exporter's port. It is installed once per process (it becomes the
/// global recorder), on a port the OS just gave out: bound with port 0,
/// released, and handed to the exporter, which binds it again (a few tries,
/// in case another process took it in between).
fn exporter() -> u16 {
    static PORT: OnceLock<u16> = OnceLock::new();
    *PORT.get_or_init(|| {
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("an ephemeral localhost port")
                .port();
            let at = SocketAddr::from(([127, 0, 0, 1], port));
            match PrometheusBuilder::new().with_http_listener(at).install() {
                Ok(()) => return port,
                Err(BuildError::FailedToCreateHTTPListener(why)) => {
                    eprintln!("port {port} taken ({why}); another");
                }
                Err(e) => panic!("installing the Prometheus exporter: {e}"),
            }
        }
        panic!("no localhost port for the exporter in five tries");
    })
}

/// The tests publish to one global recorder, and the system-wide series
/// are not per system: one test at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// `GET /metrics` over HTTP/1.1, as a Prometheus server sends it: the body
/// of a 200 response.
fn scrape(port: u16) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the exporter");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/plain\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the response");
    let raw = String::from_utf8(raw).expect("a text response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("headers, then a body");
    let mut lines = head.lines();
    let status = lines.next().unwrap_or_default();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let chunked = lines.any(|h| {
        let h = h.to_ascii_lowercase();
        h.starts_with("transfer-encoding:") && h.contains("chunked")
    });
    if chunked {
        dechunk(body)
    } else {
        body.to_string()
    }
}

/// A chunked HTTP/1.1 body, joined.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").expect("a chunk size line");
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16)
            .expect("a hex chunk size");
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        body = rest[size..]
            .strip_prefix("\r\n")
            .expect("CRLF after a chunk");
    }
}

/// One sample of the text format: its labels and its value.
#[derive(Debug)]
struct Sample {
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The scraped page, parsed: every family's type, and its samples.
#[derive(Debug, Default)]
struct Page {
    types: BTreeMap<String, String>,
    samples: BTreeMap<String, Vec<Sample>>,
}

impl Page {
    /// Parses the Prometheus text exposition format (version 0.0.4).
    fn parse(text: &str) -> Page {
        let mut page = Page::default();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
                page.types.insert(name.into(), kind.into());
                continue;
            }
            if line.starts_with('#') {
                continue; // HELP and comments
            }
            let (name, labels, rest) = match line.find('{') {
                Some(open) => {
                    let (labels, rest) = parse_labels(&line[open + 1..]);
                    (&line[..open], labels, rest)
                }
                None => {
                    let (name, rest) = line.split_once(' ').expect("name value");
                    (name, BTreeMap::new(), rest)
                }
            };
            // A timestamp may follow the value.
            let value = rest.split_whitespace().next().expect("a value");
            let value = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                v => v.parse().unwrap_or_else(|_| panic!("a number: {line}")),
            };
            page.samples
                .entry(name.into())
                .or_default()
                .push(Sample { labels, value });
        }
        page
    }

    /// The samples of `name` whose labels include every pair of `with`.
    fn find(&self, name: &str, with: &[(&str, &str)]) -> Vec<&Sample> {
        self.samples
            .get(name)
            .map(|all| {
                all.iter()
                    .filter(|s| {
                        with.iter()
                            .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The one sample of `name` with the labels `with`.
    fn value(&self, name: &str, with: &[(&str, &str)]) -> f64 {
        match self.find(name, with).as_slice() {
            [one] => one.value,
            other => panic!("{} samples of {name} with {with:?}: {other:?}", other.len()),
        }
    }
}

/// `a="x",b="y\"z"} rest`: the labels, unescaped, and what follows `}`.
fn parse_labels(mut s: &str) -> (BTreeMap<String, String>, &str) {
    let mut labels = BTreeMap::new();
    loop {
        s = s.trim_start_matches([',', ' ']);
        if let Some(rest) = s.strip_prefix('}') {
            return (labels, rest.trim_start());
        }
        let (key, rest) = s.split_once("=\"").expect("key=\"value\"");
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next().expect("a closing quote") {
                (i, '"') => break i,
                (_, '\\') => match chars.next().expect("an escape").1 {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                (_, c) => value.push(c),
            }
        };
        labels.insert(key.trim().to_string(), value);
        s = &rest[end + 1..];
    }
}

#[test]
fn a_scrape_shows_the_counts_the_actors_made() {
    let _one = serial();
    let port = exporter();
    let system = System::new();

    let quoter = system
        .spawn(Quoter { sum: 0 })
        .name("quotes")
        .record_latency(true)
        .start();
    for n in 1..=10 {
        quoter.fast_send(Quote(n)).unwrap();
    }
    assert_eq!(quoter.ask(Total).unwrap().wait().unwrap(), 55);

    let faulty = system.spawn(Faulty).start();
    faulty.send(Boom).unwrap();
    // Handled in order: once the ping is answered, the panic and its dead
    // letter are behind it.
    faulty.ask(Ping).unwrap().wait().unwrap();

    let looper = system.spawn(Looper).start();
    assert!(looper.fast_send(Spin).unwrap(), "the inner call is a cycle");

    let parked = system.prepare::<Parked>().name("parked");
    for _ in 0..3 {
        parked.addr().send(Ping).unwrap();
    }

    system.publish_metrics();
    let text = scrape(port);
    let page = Page::parse(&text);
    let of = |addr_id: u64| addr_id.to_string();

    // The latency-recording actor: 11 handler runs, 10 of class Quote
    // (fast_send) and 1 of Total (ask), each timed.
    let quoter_id = of(quoter.id().get());
    let q = [
        ("actor", "Quoter"),
        ("name", "quotes"),
        ("id", quoter_id.as_str()),
    ];
    assert_eq!(page.value("kaspar_actor_handled_total", &q), 11.0);
    assert_eq!(page.value("kaspar_actor_cycles_total", &q), 0.0);
    for (class, runs) in [("Quote", 10.0), ("Total", 1.0)] {
        let with = [q.as_slice(), &[("class", class)]].concat();
        assert_eq!(
            page.value("kaspar_actor_latency_samples_total", &with),
            runs,
            "{class}"
        );
        let mut last = 0.0;
        for quantile in ["0.5", "0.9", "0.99", "0.999", "1"] {
            let with = [with.as_slice(), &[("quantile", quantile)]].concat();
            let v = page.value("kaspar_actor_latency_seconds", &with);
            assert!(
                v > 0.0 && v >= last,
                "{class} at {quantile}: {v} (below {last})"
            );
            last = v;
        }
        let mean = page.value("kaspar_actor_latency_mean_seconds", &with);
        assert!(
            mean > 0.0 && mean <= last,
            "{class}: mean {mean}, max {last}"
        );
    }
    assert_eq!(page.value("kaspar_actor_mailbox_depth", &q), 0.0);
    assert_eq!(page.types["kaspar_actor_latency_seconds"], "gauge");
    assert_eq!(page.types["kaspar_actor_handled_total"], "counter");

    // The panicking actor: two runs, one panic, one dead letter; no
    // latency series (it does not record).
    let faulty_id = of(faulty.id().get());
    let f = [("actor", "Faulty"), ("id", faulty_id.as_str())];
    assert_eq!(page.value("kaspar_actor_handled_total", &f), 2.0);
    assert_eq!(page.value("kaspar_actor_panics_total", &f), 1.0);
    assert_eq!(page.value("kaspar_actor_dead_letters_total", &f), 1.0);
    assert!(
        !page.find("kaspar_actor_handled_total", &f)[0]
            .labels
            .contains_key("name"),
        "an unnamed actor has no name label"
    );
    assert!(page.find("kaspar_actor_latency_seconds", &f).is_empty());
    assert_eq!(
        page.value("kaspar_dead_letters_total", &[("reason", "panicked")]),
        1.0
    );

    // The self-caller: one run, one cycle refused.
    let looper_id = of(looper.id().get());
    let l = [("actor", "Looper"), ("id", looper_id.as_str())];
    assert_eq!(page.value("kaspar_actor_handled_total", &l), 1.0);
    assert_eq!(page.value("kaspar_actor_cycles_total", &l), 1.0);

    // The prepared actor: three messages waiting, none handled.
    let parked_id = of(parked.addr().id().get());
    let p = [("actor", "Parked"), ("name", "parked"), ("id", &parked_id)];
    assert_eq!(page.value("kaspar_actor_mailbox_depth", &p), 3.0);
    assert_eq!(page.value("kaspar_actor_mailbox_high_water", &p), 3.0);
    assert_eq!(page.value("kaspar_actor_handled_total", &p), 0.0);

    assert_eq!(page.value("kaspar_actors", &[]), 4.0);

    // Publishing again publishes the same numbers, not twice them.
    system.publish_metrics();
    let again = Page::parse(&scrape(port));
    assert_eq!(again.value("kaspar_actor_handled_total", &q), 11.0);
    assert_eq!(again.value("kaspar_actor_cycles_total", &l), 1.0);

    drop(parked);
    system.shutdown();
}

#[test]
fn a_collector_thread_publishes_until_stopped() {
    let _one = serial();
    let port = exporter();
    let system = System::new();
    let quoter = system.spawn(Quoter { sum: 0 }).name("periodic").start();
    let id = quoter.id().get().to_string();
    let q = [("actor", "Quoter"), ("id", id.as_str())];
    let collector = system.metrics_every(Duration::from_millis(10));
    for n in 1..=25 {
        quoter.fast_send(Quote(n)).unwrap();
    }
    // The collector publishes every 10 ms; wait (bounded) for a scrape that
    // shows all 25.
    let give_up = Instant::now() + Duration::from_secs(60);
    loop {
        let page = Page::parse(&scrape(port));
        if page
            .find("kaspar_actor_handled_total", &q)
            .first()
            .map(|s| s.value)
            == Some(25.0)
        {
            break;
        }
        assert!(
            Instant::now() < give_up,
            "the collector never published 25 runs"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Stopping joins the thread.
    collector.stop();
    system.shutdown();
}
