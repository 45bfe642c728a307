//! The four mailbox kinds, head to head (paper Table 7), and the batching
//! measurements (companion note): async burst ping-pong between two actors.
//! Shared by `benches/mailboxes.rs` and `benches/paper.rs`.
//!
//! Table 7, per kind, through the public `Mailbox` API:
//! * `single_thread_rt_p50_ns`: one thread pushes one message and drains it;
//!   the median over samples of 100 such round trips, per round trip;
//! * `burst_ns_per_msg`: one producer thread pushes bursts of 1,000 and
//!   waits for the consumer thread to take each burst (so the consumer goes
//!   idle between bursts); wall time per message;
//! * `fanin32_push_p99_ns`: 32 producer threads push at once into one
//!   consumer; the 99th percentile of a single `push`'s latency.
//!
//! Batching, through actors: `Ping` fires a burst of 10,000 balls at `Pong`,
//! which sends each back; when the whole burst is back, `Ping` fires the
//! next. Both mailboxes are deep for most of each burst. M round trips/s:
//! * `pop_one`: `BQueue` mailboxes (one message per lock);
//! * `batch_drain`: `BQueueBatched` (everything queued per lock);
//! * `lockfree`: `LockFree` rings;
//! * `sender_batching`: `BQueueBatched`, but each side builds its whole burst
//!   first and pushes it as one message (one mailbox lock per burst); the
//!   receiver handles the balls one by one. The receiver cannot start before
//!   the sender has built the whole burst.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use kaspar::mailbox::{Drained, Mailbox, WhenFull};
use kaspar::prelude::*;

use super::{histogram, median, JsonLines, Machine};

const CASES: [(&str, MailboxKind); 4] = [
    ("bqueue", MailboxKind::BQueue { capacity: 1024 }),
    (
        "bqueue_batched",
        MailboxKind::BQueueBatched { capacity: 1024 },
    ),
    (
        "sharded",
        MailboxKind::Sharded {
            lanes: 16,
            capacity: 1024,
        },
    ),
    (
        "lockfree",
        MailboxKind::LockFree {
            capacity: 1 << 16,
            when_full: WhenFull::Wait,
        },
    ),
];

pub struct Sizes {
    pub rt_samples: usize,
    pub burst_msgs: usize,
    pub fanin_per_producer: usize,
    pub pingpong_rounds: u64,
}

const BURST: usize = 1_000;
const FANIN_PRODUCERS: usize = 32;
const PINGPONG_BURST: u64 = 10_000;

impl Sizes {
    pub fn new(quick: bool) -> Self {
        if quick {
            Sizes {
                rt_samples: 2_000,
                burst_msgs: 200_000,
                fanin_per_producer: 4_000,
                pingpong_rounds: 1_000_000,
            }
        } else {
            Sizes {
                rt_samples: 20_000,
                burst_msgs: 2_000_000,
                fanin_per_producer: 40_000,
                pingpong_rounds: 10_000_000,
            }
        }
    }
}

/// One Table 7 row.
pub struct KindRow {
    pub kind: &'static str,
    pub single_thread_rt_p50_ns: f64,
    pub burst_ns_per_msg: f64,
    pub fanin32_push_p99_ns: f64,
}

/// Everything one mailboxes run measured.
pub struct Mailboxes {
    pub quick: bool,
    pub sizes: Sizes,
    pub table7: Vec<KindRow>,
    /// `(case, M round trips/s)` for pop_one, batch_drain, lockfree.
    pub batching: Vec<(&'static str, f64)>,
    pub sender_batching: f64,
    pub sender_batching_control: f64,
}

impl Mailboxes {
    pub fn kind(&self, kind: &str) -> &KindRow {
        self.table7
            .iter()
            .find(|r| r.kind == kind)
            .expect("every kind is measured")
    }

    pub fn mrt(&self, case: &str) -> f64 {
        match case {
            "sender_batching" => self.sender_batching,
            "sender_batching_control" => self.sender_batching_control,
            _ => self
                .batching
                .iter()
                .find(|(c, _)| *c == case)
                .map_or(f64::NAN, |r| r.1),
        }
    }
}

/// The ping-pong rows, in order.
const PINGPONG_ROWS: [(&str, MailboxKind); 3] = [
    ("pop_one", MailboxKind::BQueue { capacity: 1024 }),
    ("batch_drain", MailboxKind::BQueueBatched { capacity: 1024 }),
    (
        "lockfree",
        MailboxKind::LockFree {
            capacity: 1 << 14,
            when_full: WhenFull::Reject,
        },
    ),
];

/// Runs Table 7 and the batching ping-pong.
pub fn measure(quick: bool) -> Mailboxes {
    let sizes = Sizes::new(quick);
    let table7 = CASES
        .iter()
        .map(|&(kind_name, kind)| KindRow {
            kind: kind_name,
            single_thread_rt_p50_ns: single_thread_rt_p50(kind, sizes.rt_samples),
            burst_ns_per_msg: burst_ns_per_msg(kind, sizes.burst_msgs),
            fanin32_push_p99_ns: fanin_push_p99(kind, sizes.fanin_per_producer),
        })
        .collect();
    let batching = PINGPONG_ROWS
        .iter()
        .map(|&(name, kind)| (name, pingpong(kind, sizes.pingpong_rounds)))
        .collect();
    // Sender batching needs a push of a whole burst under one mailbox lock,
    // which no kaspar mailbox offers (by design). It runs on a bench-local
    // queue in a two-thread harness that does what the run loop does (drain,
    // take the state lock once per batch, handle each message); the same
    // harness over `BQueueBatched` is its control.
    let sender_batching_control = pingpong_threads(false, sizes.pingpong_rounds);
    let sender_batching = pingpong_threads(true, sizes.pingpong_rounds);
    Mailboxes {
        quick,
        sizes,
        table7,
        batching,
        sender_batching,
        sender_batching_control,
    }
}

/// The markdown `benches/mailboxes.rs` prints.
pub fn print(m: &Mailboxes, machine: &Machine) {
    println!(
        "## Mailboxes (paper Table 7){}\n",
        if m.quick { ", --quick" } else { "" }
    );
    println!("{}\n", machine.header());
    println!("| kind | single-thread rt p50 (ns) | burst (ns/msg) | fan-in 32 push p99 (ns) |");
    println!("|---|---:|---:|---:|");
    for r in &m.table7 {
        println!(
            "| {} | {:.1} | {:.1} | {:.0} |",
            r.kind, r.single_thread_rt_p50_ns, r.burst_ns_per_msg, r.fanin32_push_p99_ns
        );
    }
    println!(
        "\nfan-in p99, bqueue / sharded: {:.1}x\n",
        m.kind("bqueue").fanin32_push_p99_ns / m.kind("sharded").fanin32_push_p99_ns
    );

    println!(
        "## Burst ping-pong, {} round trips in bursts of {PINGPONG_BURST}\n",
        m.sizes.pingpong_rounds
    );
    println!("{}\n", machine.header());
    println!("| case | M round trips/s | vs pop_one |");
    println!("|---|---:|---:|");
    let base = m.mrt("pop_one");
    for (name, mrt) in &m.batching {
        println!("| {name} | {mrt:.2} | {:.2}x |", mrt / base);
    }
    println!(
        "| sender_batching | {:.2} | {:.2}x |",
        m.sender_batching,
        m.sender_batching / base
    );
    println!(
        "\nsender_batching vs its control (the same two-thread harness over \
         BQueueBatched, {:.2} M rt/s): {:.2}x",
        m.sender_batching_control,
        m.sender_batching / m.sender_batching_control
    );
}

/// The JSON lines: `table7` per kind, `batching` per case.
pub fn record(m: &Mailboxes, json: &mut JsonLines) {
    for r in &m.table7 {
        json.record(
            "table7",
            r.kind,
            "single_thread_rt_p50_ns",
            r.single_thread_rt_p50_ns,
            "ns",
        );
        json.record(
            "table7",
            r.kind,
            "burst_ns_per_msg",
            r.burst_ns_per_msg,
            "ns",
        );
        json.record(
            "table7",
            r.kind,
            "fanin32_push_p99_ns",
            r.fanin32_push_p99_ns,
            "ns",
        );
    }
    for (name, mrt) in &m.batching {
        json.record("batching", name, "mrt_per_s", *mrt, "M round trips/s");
    }
    json.record(
        "batching",
        "sender_batching",
        "mrt_per_s",
        m.sender_batching,
        "M round trips/s",
    );
    json.record(
        "batching",
        "sender_batching_control",
        "mrt_per_s",
        m.sender_batching_control,
        "M round trips/s",
    );
}

fn single_thread_rt_p50(kind: MailboxKind, samples: usize) -> f64 {
    const PER_SAMPLE: usize = 100;
    let q = Mailbox::<u64>::new(kind);
    let mut out = Vec::with_capacity(16);
    let mut per_rt = Vec::with_capacity(samples);
    for s in 0..samples + samples / 10 {
        let t0 = Instant::now();
        for i in 0..PER_SAMPLE {
            let _ = q.push(i as u64);
            q.pop_batch(&mut out, 16, IdleWait::Park);
            out.clear();
        }
        let ns = t0.elapsed().as_nanos() as f64 / PER_SAMPLE as f64;
        if s >= samples / 10 {
            // The first tenth warms up caches and the branch predictor.
            per_rt.push(ns);
        }
    }
    median(&mut per_rt)
}

fn burst_ns_per_msg(kind: MailboxKind, total: usize) -> f64 {
    let q = Arc::new(Mailbox::<u64>::new(kind));
    let taken = Arc::new(AtomicUsize::new(0));
    let consumer = {
        let (q, taken) = (Arc::clone(&q), Arc::clone(&taken));
        std::thread::spawn(move || {
            let mut out = Vec::with_capacity(256);
            while let Drained::Got(n) = q.pop_batch(&mut out, 256, IdleWait::Park) {
                out.clear();
                taken.fetch_add(n, Ordering::Release);
            }
        })
    };
    let bursts = total / BURST;
    let t0 = Instant::now();
    for b in 0..bursts {
        for i in 0..BURST {
            let _ = q.push((b * BURST + i) as u64);
        }
        while taken.load(Ordering::Acquire) < (b + 1) * BURST {
            std::thread::yield_now();
        }
    }
    let ns = t0.elapsed().as_nanos() as f64 / (bursts * BURST) as f64;
    q.close();
    consumer.join().unwrap();
    ns
}

fn fanin_push_p99(kind: MailboxKind, per_producer: usize) -> f64 {
    let q = Arc::new(Mailbox::<u64>::new(kind));
    let start = Arc::new(Barrier::new(FANIN_PRODUCERS));
    let consumer = {
        let q = Arc::clone(&q);
        std::thread::spawn(move || {
            let mut out = Vec::with_capacity(256);
            while let Drained::Got(_) = q.pop_batch(&mut out, 256, IdleWait::Park) {
                out.clear();
            }
        })
    };
    let producers: Vec<_> = (0..FANIN_PRODUCERS)
        .map(|p| {
            let (q, start) = (Arc::clone(&q), Arc::clone(&start));
            std::thread::spawn(move || {
                let mut hist = histogram();
                start.wait();
                for i in 0..per_producer {
                    let t0 = Instant::now();
                    let _ = q.push((p * per_producer + i) as u64);
                    hist.saturating_record(t0.elapsed().as_nanos() as u64);
                }
                hist
            })
        })
        .collect();
    let mut all = histogram();
    for p in producers {
        all.add(p.join().unwrap()).unwrap();
    }
    q.close();
    consumer.join().unwrap();
    all.value_at_quantile(0.99) as f64
}

// ---- burst ping-pong through actors ----

struct Ball(u64);

struct Start {
    pong: Addr<Pong>,
    rounds: u64,
    done: mpsc::Sender<()>,
}

struct Meet(Addr<Ping>);

#[actor]
pub struct Ping {
    pong: Option<Addr<Pong>>,
    done: Option<mpsc::Sender<()>>,
    rounds: u64,
    fired: u64,
    back_in_burst: u64,
}

#[actor]
impl Ping {
    #[handler(Start)]
    fn on_start(&mut self, msg: Start, _ctx: &mut Ctx<Self>) {
        self.pong = Some(msg.pong);
        self.done = Some(msg.done);
        self.rounds = msg.rounds;
        self.fire();
    }

    #[handler(Ball)]
    fn on_ball(&mut self, msg: Ball, _ctx: &mut Ctx<Self>) {
        std::hint::black_box(msg.0);
        self.back_in_burst += 1;
        if self.back_in_burst == PINGPONG_BURST {
            self.back_in_burst = 0;
            if self.fired >= self.rounds {
                if let Some(done) = &self.done {
                    let _ = done.send(());
                }
            } else {
                self.fire();
            }
        }
    }
}

impl Ping {
    fn fire(&mut self) {
        let pong = self.pong.as_ref().expect("started");
        for n in self.fired..self.fired + PINGPONG_BURST {
            pong.send(Ball(n)).expect("pong accepts");
        }
        self.fired += PINGPONG_BURST;
    }
}

#[actor]
pub struct Pong {
    ping: Option<Addr<Ping>>,
}

#[actor]
impl Pong {
    #[handler(Meet)]
    fn on_meet(&mut self, msg: Meet, _ctx: &mut Ctx<Self>) {
        self.ping = Some(msg.0);
    }

    #[handler(Ball)]
    fn on_ball(&mut self, msg: Ball, _ctx: &mut Ctx<Self>) {
        let ping = self.ping.as_ref().expect("met");
        ping.send(msg).expect("ping accepts");
    }
}

/// Runs the actor ping-pong; returns millions of round trips per second.
fn pingpong(kind: MailboxKind, rounds: u64) -> f64 {
    let rounds = rounds.max(PINGPONG_BURST) / PINGPONG_BURST * PINGPONG_BURST;
    let system = System::new();
    let ping = system
        .spawn(Ping {
            pong: None,
            done: None,
            rounds,
            fired: 0,
            back_in_burst: 0,
        })
        .mailbox(kind)
        .max_batch(PINGPONG_BURST as usize)
        .start();
    let pong = system
        .spawn(Pong { ping: None })
        .mailbox(kind)
        .max_batch(PINGPONG_BURST as usize)
        .start();
    pong.send(Meet(ping.clone())).expect("pong accepts");
    let (done_tx, done_rx) = mpsc::channel();
    let t0 = Instant::now();
    ping.send(Start {
        pong: pong.clone(),
        rounds,
        done: done_tx,
    })
    .expect("ping accepts");
    done_rx.recv().expect("ping reports");
    let secs = t0.elapsed().as_secs_f64();
    system.shutdown();
    rounds as f64 / secs / 1e6
}

// ---- sender batching: a bench-local queue and a two-thread harness ----

/// The batched queue, plus `push_burst`: the sender builds and pushes a
/// whole burst while holding the queue's lock.
#[derive(Default)]
struct LockedBurstQueue {
    state: parking_lot::Mutex<BurstState>,
    nonempty: parking_lot::Condvar,
}

#[derive(Default)]
struct BurstState {
    queue: std::collections::VecDeque<u64>,
    closed: bool,
    sleeping: bool,
}

impl LockedBurstQueue {
    fn push_burst(&self, balls: impl Iterator<Item = u64>) {
        let mut st = self.state.lock();
        let was_empty = st.queue.is_empty();
        for b in balls {
            st.queue.push_back(std::hint::black_box(b));
        }
        let wake = was_empty && st.sleeping;
        drop(st);
        if wake {
            self.nonempty.notify_one();
        }
    }

    fn pop_all(&self, out: &mut Vec<u64>) -> bool {
        let mut st = self.state.lock();
        loop {
            if !st.queue.is_empty() {
                out.extend(st.queue.drain(..));
                return true;
            }
            if st.closed {
                return false;
            }
            st.sleeping = true;
            self.nonempty.wait(&mut st);
            st.sleeping = false;
        }
    }

    fn close(&self) {
        self.state.lock().closed = true;
        self.nonempty.notify_all();
    }
}

/// One side's mailbox in the two-thread harness.
enum Side {
    Kaspar(Box<Mailbox<u64>>),
    SenderBatched(LockedBurstQueue),
}

impl Side {
    fn new(sender_batching: bool) -> Self {
        if sender_batching {
            Side::SenderBatched(LockedBurstQueue::default())
        } else {
            Side::Kaspar(Box::new(Mailbox::new(MailboxKind::BQueueBatched {
                capacity: 1024,
            })))
        }
    }

    fn send_all(&self, balls: impl Iterator<Item = u64>) {
        match self {
            Side::Kaspar(q) => {
                for b in balls {
                    q.push(b).expect("open");
                }
            }
            Side::SenderBatched(q) => q.push_burst(balls),
        }
    }

    fn drain(&self, out: &mut Vec<u64>) -> bool {
        match self {
            Side::Kaspar(q) => {
                q.pop_batch(out, PINGPONG_BURST as usize, IdleWait::Park) != Drained::Closed
            }
            Side::SenderBatched(q) => q.pop_all(out),
        }
    }

    fn close(&self) {
        match self {
            Side::Kaspar(q) => q.close(),
            Side::SenderBatched(q) => q.close(),
        }
    }
}

/// The ping-pong on two plain threads, each draining its queue and handling
/// a batch under one state lock, as the run loop does. Pong answers each
/// drained batch with one `send_all`.
fn pingpong_threads(sender_batching: bool, rounds: u64) -> f64 {
    let rounds = rounds.max(PINGPONG_BURST) / PINGPONG_BURST * PINGPONG_BURST;
    let to_ping = Arc::new(Side::new(sender_batching));
    let to_pong = Arc::new(Side::new(sender_batching));
    let pong = {
        let (to_ping, to_pong) = (Arc::clone(&to_ping), Arc::clone(&to_pong));
        std::thread::spawn(move || {
            let state = parking_lot::Mutex::new(0u64);
            let mut batch = Vec::with_capacity(PINGPONG_BURST as usize);
            while to_pong.drain(&mut batch) {
                let mut handled = state.lock();
                *handled += batch.len() as u64;
                to_ping.send_all(batch.drain(..));
            }
        })
    };
    let t0 = Instant::now();
    let state = parking_lot::Mutex::new((0u64, 0u64)); // (fired, back in burst)
    to_pong.send_all(0..PINGPONG_BURST);
    state.lock().0 = PINGPONG_BURST;
    let mut batch = Vec::with_capacity(PINGPONG_BURST as usize);
    'run: while to_ping.drain(&mut batch) {
        let mut st = state.lock();
        for ball in batch.drain(..) {
            std::hint::black_box(ball);
            st.1 += 1;
            if st.1 == PINGPONG_BURST {
                st.1 = 0;
                if st.0 >= rounds {
                    break 'run;
                }
                let first = st.0;
                to_pong.send_all(first..first + PINGPONG_BURST);
                st.0 += PINGPONG_BURST;
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    to_pong.close();
    to_ping.close();
    pong.join().unwrap();
    rounds as f64 / secs / 1e6
}
