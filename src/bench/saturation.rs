//! Saturation and contention (the paper's §13, item 2: the evaluation it
//! leaves to future work): one actor driven at full rate from 1, 2, 4 and
//! 8 producer threads. Shared by `benches/saturation.rs`.
//!
//! Two families of cases, each at every producer count:
//!
//! * **send**, per mailbox kind: every producer `send`s its share of the
//!   messages to one `Sink` actor as fast as it can; the sink's own thread
//!   handles them. `bqueue`, `bqueue_batched`, `sharded` and `segmented`
//!   are unbounded (a ring that spills, or a queue that grows by blocks),
//!   so a send never waits for room. `lockfree_wait`
//!   is a bounded ring whose full push blocks the sender
//!   ([`WhenFull::Wait`]); `lockfree_reject` is the same ring with
//!   [`WhenFull::Reject`], and the producer retries the handed-back
//!   message (spin hint, then `yield_now`) until it is taken;
//! * **fast_send**: every producer calls `fast_send` on the one sink, so
//!   the handlers run on the producers' threads and contend for the
//!   actor's lock.
//!
//! Per case: throughput, messages handled per second from the moment the
//! producers start to the moment the sink has handled the last message
//! (so a queue that only fills does not count as throughput), the median
//! over the runs; and the 99th percentile of one send (or fast_send)
//! call's latency, every call timed with `Instant`, the runs merged.
//!
//! Nothing may be lost: the sink counts what it handles and checks that
//! each producer's messages arrive in the order sent; a case whose count
//! or order is off panics.

use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use kaspar::mailbox::WhenFull;
use kaspar::prelude::*;

use super::{histogram, median, JsonLines, Machine};

/// The producer counts every case runs at.
pub const PRODUCERS: [usize; 4] = [1, 2, 4, 8];

/// Slots of the bounded rings (`lockfree_*`) and the initial rings of the
/// others.
const CAPACITY: usize = 1024;

/// How a case delivers its messages.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// `send` into a mailbox of this kind.
    Send(MailboxKind),
    /// `fast_send`, the handler on the caller's thread.
    FastSend,
}

/// The cases, in report order: (name, path).
const CASES: [(&str, Path); 7] = [
    (
        "bqueue",
        Path::Send(MailboxKind::BQueue { capacity: CAPACITY }),
    ),
    (
        "bqueue_batched",
        Path::Send(MailboxKind::BQueueBatched { capacity: CAPACITY }),
    ),
    (
        "sharded",
        Path::Send(MailboxKind::Sharded {
            lanes: 8,
            capacity: CAPACITY,
        }),
    ),
    (
        "lockfree_wait",
        Path::Send(MailboxKind::LockFree {
            capacity: CAPACITY,
            when_full: WhenFull::Wait,
        }),
    ),
    (
        "lockfree_reject",
        Path::Send(MailboxKind::LockFree {
            capacity: CAPACITY,
            when_full: WhenFull::Reject,
        }),
    ),
    (
        "segmented",
        Path::Send(MailboxKind::Segmented { capacity: CAPACITY }),
    ),
    ("fast_send", Path::FastSend),
];

/// One message: which producer sent it, and its number in that
/// producer's sequence.
struct Tick {
    producer: u32,
    seq: u32,
}

/// What the sink saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    handled: u64,
    out_of_order: u64,
}

struct Query;

/// The one actor every producer drives: counts the messages and checks
/// that each producer's arrive in order; reports on `done` when it has
/// handled `expected`.
#[actor]
struct Sink {
    next: Vec<u32>,
    seen: Seen,
    expected: u64,
    done: Option<mpsc::Sender<Seen>>,
}

#[actor]
impl Sink {
    #[handler(Tick)]
    fn tick(&mut self, msg: Tick, _ctx: &mut Ctx<Self>) {
        let next = &mut self.next[msg.producer as usize];
        if msg.seq != *next {
            self.seen.out_of_order += 1;
        }
        *next = msg.seq.wrapping_add(1);
        self.seen.handled += 1;
        if self.seen.handled == self.expected {
            if let Some(done) = self.done.take() {
                let _ = done.send(self.seen);
            }
        }
    }

    #[handler(Query)]
    fn query(&mut self, _msg: Query, _ctx: &mut Ctx<Self>) -> Seen {
        self.seen
    }
}

/// Messages per case and runs per case.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Messages in one run, split evenly over the producers.
    pub messages: u32,
    /// Runs of each case.
    pub runs: usize,
}

impl Sizes {
    /// `--quick`: one short run per case; otherwise three longer ones.
    pub fn new(quick: bool) -> Self {
        if quick {
            Sizes {
                messages: 200_000,
                runs: 1,
            }
        } else {
            Sizes {
                messages: 2_000_000,
                runs: 3,
            }
        }
    }
}

/// One case at one producer count.
#[derive(Clone, Debug)]
pub struct Row {
    /// The case's name (`bqueue`, ..., `fast_send`).
    pub kind: &'static str,
    /// Producer threads.
    pub producers: usize,
    /// Messages handled per second, median over the runs.
    pub msgs_per_s: f64,
    /// 99th percentile of one call's latency, ns, over every run's calls.
    pub p99_ns: u64,
    /// Messages sent (and handled) per run.
    pub messages: u64,
}

impl Row {
    /// The JSON case name, `<kind>/<producers>p`.
    pub fn case(&self) -> String {
        format!("{}/{}p", self.kind, self.producers)
    }
}

/// Everything one run of the bench measured.
#[derive(Debug)]
pub struct Saturation {
    /// Whether it was a `--quick` run.
    pub quick: bool,
    /// The sizes it ran with.
    pub sizes: Sizes,
    /// Every case at every producer count: the cases in report order,
    /// each at the counts of [`PRODUCERS`].
    pub rows: Vec<Row>,
}

/// Runs every case at every producer count. Panics if any run loses a
/// message or reorders one producer's messages.
pub fn measure(quick: bool) -> Saturation {
    let sizes = Sizes::new(quick);
    let mut rows = Vec::new();
    for &(kind, path) in &CASES {
        for &producers in &PRODUCERS {
            let per_producer = sizes.messages / producers as u32;
            let mut rates = Vec::with_capacity(sizes.runs);
            let mut all = histogram();
            for _ in 0..sizes.runs {
                let (rate, hist) = run(kind, path, producers, per_producer);
                rates.push(rate);
                all.add(hist).expect("same histogram bounds");
            }
            rows.push(Row {
                kind,
                producers,
                msgs_per_s: median(&mut rates),
                p99_ns: all.value_at_quantile(0.99),
                messages: per_producer as u64 * producers as u64,
            });
        }
    }
    Saturation { quick, sizes, rows }
}

/// One run: a fresh system and sink, `producers` threads sending
/// `per_producer` messages each. Returns (messages handled per second,
/// the calls' latencies).
fn run(
    kind: &'static str,
    path: Path,
    producers: usize,
    per_producer: u32,
) -> (f64, Histogram<u64>) {
    let expected = per_producer as u64 * producers as u64;
    let system = System::new();
    let (done_tx, done_rx) = mpsc::channel();
    let sink = Sink {
        next: vec![0; producers],
        seen: Seen {
            handled: 0,
            out_of_order: 0,
        },
        expected,
        done: Some(done_tx),
    };
    let mailbox = match path {
        Path::Send(k) => k,
        Path::FastSend => MailboxKind::DEFAULT,
    };
    let sink = system.spawn(sink).mailbox(mailbox).start();
    let start = Arc::new(Barrier::new(producers + 1));
    let threads: Vec<_> = (0..producers)
        .map(|p| {
            let (sink, start) = (sink.clone(), Arc::clone(&start));
            std::thread::spawn(move || produce(&sink, path, p as u32, per_producer, &start))
        })
        .collect();
    start.wait();
    let t0 = Instant::now();
    let mut all = histogram();
    for t in threads {
        all.add(t.join().expect("producer")).expect("same bounds");
    }
    let seen = match done_rx.recv_timeout(Duration::from_secs(120)) {
        Ok(seen) => seen,
        Err(_) => {
            let seen = sink.ask(Query).ok().and_then(|a| a.wait().ok());
            panic!("{kind}/{producers}p: the sink never saw all {expected} messages: {seen:?}");
        }
    };
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(
        seen,
        Seen {
            handled: expected,
            out_of_order: 0
        },
        "{kind}/{producers}p: every message handled once, each producer's in order"
    );
    system.shutdown();
    (expected as f64 / secs, all)
}

/// One producer: waits for the start, then sends `n` messages, timing
/// each call. A `Full` send is retried until the ring takes it; any other
/// failure panics (it would mean a lost message).
fn produce(
    sink: &Addr<Sink>,
    path: Path,
    producer: u32,
    n: u32,
    start: &Barrier,
) -> Histogram<u64> {
    let mut hist = histogram();
    start.wait();
    for seq in 0..n {
        let msg = Tick { producer, seq };
        let t0 = Instant::now();
        match path {
            Path::Send(_) => send_until_taken(sink, msg),
            Path::FastSend => {
                if let Err(e) = sink.fast_send(msg) {
                    panic!("fast_send refused: {e}");
                }
            }
        }
        hist.saturating_record(t0.elapsed().as_nanos() as u64);
    }
    hist
}

/// Sends `msg`, retrying while the mailbox hands it back as full: a spin
/// hint for the first few tries, then a yield so that an oversubscribed
/// consumer can run.
fn send_until_taken(sink: &Addr<Sink>, mut msg: Tick) {
    let mut tries = 0u32;
    loop {
        match sink.send(msg) {
            Ok(()) => return,
            Err(SendError::Full { msg: back, .. }) => {
                msg = back;
                tries += 1;
                if tries < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            Err(e) => panic!("send failed: {e}"),
        }
    }
}

/// The markdown table.
pub fn print(s: &Saturation, machine: &Machine) {
    println!(
        "## Saturation and contention: one actor, 1–8 producers at full rate{}\n",
        if s.quick { ", --quick" } else { "" }
    );
    println!("{}\n", machine.header_pinned());
    println!(
        "{} messages per run, {} run(s) per case; throughput is the median run, \
         p99 is over every call of every run.\n",
        s.sizes.messages, s.sizes.runs
    );
    print!("| case |");
    for p in PRODUCERS {
        print!(" {p}p M msgs/s | {p}p p99 ns |");
    }
    println!();
    print!("|---|");
    for _ in PRODUCERS {
        print!("---:|---:|");
    }
    println!();
    for &(kind, _) in &CASES {
        print!("| {kind} |");
        for r in s.rows.iter().filter(|r| r.kind == kind) {
            print!(" {:.2} | {} |", r.msgs_per_s / 1e6, r.p99_ns);
        }
        println!();
    }
    println!(
        "\nlockfree_wait: a full ring blocks the sender (WhenFull::Wait); lockfree_reject: \
         it hands the message back and the producer retries (WhenFull::Reject + retry). \
         Ring capacity {CAPACITY}; bqueue, bqueue_batched and sharded spill past theirs."
    );
}

/// The JSON lines: `table` = `saturation`, `case` = `<kind>/<producers>p`.
pub fn record(s: &Saturation, json: &mut JsonLines) {
    for r in &s.rows {
        let case = r.case();
        json.record("saturation", &case, "msgs_per_s", r.msgs_per_s, "msgs/s");
        json.record("saturation", &case, "p99_ns", r.p99_ns as f64, "ns");
    }
}
