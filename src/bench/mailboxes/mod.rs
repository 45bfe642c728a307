//! The five mailbox kinds, head to head (paper Table 7), and the batching
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
//!   consumer; the 99th percentile of a single `push`'s latency;
//! * `handoff_rt_p50_ns` (not in the paper): two threads hand one message
//!   to each other and back through two mailboxes, both consumers spinning;
//!   the median over samples of 100 round trips, per round trip. A pooled
//!   actor asked from a plain thread pays this hand-off once each way.
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
//!
//! Table 7's measurements are in `kinds.rs`, the actor ping-pong in
//! `pingpong.rs`, the sender-batching harness in `sender_batching.rs`;
//! here are the cases, the results, and their markdown and JSON lines.

mod kinds;
mod pingpong;
mod sender_batching;

use kaspar::mailbox::WhenFull;
use kaspar::prelude::*;

use super::{JsonLines, Machine};
use kinds::{burst_ns_per_msg, fanin_push_p99, handoff_rt_p50, single_thread_rt_p50};
use pingpong::pingpong;
use sender_batching::pingpong_threads;

const CASES: [(&str, MailboxKind); 6] = [
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
    ("segmented", MailboxKind::Segmented { capacity: 1024 }),
    ("compact", MailboxKind::Compact),
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
    pub handoff_rt_p50_ns: f64,
}

/// Everything one mailboxes run measured.
pub struct Mailboxes {
    pub quick: bool,
    pub sizes: Sizes,
    pub table7: Vec<KindRow>,
    /// `(case, M round trips/s)` for pop_one, batch_drain, lockfree,
    /// segmented.
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
const PINGPONG_ROWS: [(&str, MailboxKind); 5] = [
    ("pop_one", MailboxKind::BQueue { capacity: 1024 }),
    ("batch_drain", MailboxKind::BQueueBatched { capacity: 1024 }),
    (
        "lockfree",
        MailboxKind::LockFree {
            capacity: 1 << 14,
            when_full: WhenFull::Reject,
        },
    ),
    ("segmented", MailboxKind::Segmented { capacity: 1024 }),
    ("compact", MailboxKind::Compact),
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
            handoff_rt_p50_ns: handoff_rt_p50(kind, sizes.rt_samples / 4),
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
    println!(
        "| kind | single-thread rt p50 (ns) | burst (ns/msg) | fan-in 32 push p99 (ns) \
         | two-thread hand-off rt p50 (ns) |"
    );
    println!("|---|---:|---:|---:|---:|");
    for r in &m.table7 {
        println!(
            "| {} | {:.1} | {:.1} | {:.0} | {:.0} |",
            r.kind,
            r.single_thread_rt_p50_ns,
            r.burst_ns_per_msg,
            r.fanin32_push_p99_ns,
            r.handoff_rt_p50_ns
        );
    }
    println!(
        "\nfan-in p99, bqueue / sharded: {:.1}x",
        m.kind("bqueue").fanin32_push_p99_ns / m.kind("sharded").fanin32_push_p99_ns
    );
    println!(
        "two-thread hand-off, compact / segmented: {:.2}x\n",
        m.kind("compact").handoff_rt_p50_ns / m.kind("segmented").handoff_rt_p50_ns
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
        json.record(
            "table7",
            r.kind,
            "handoff_rt_p50_ns",
            r.handoff_rt_p50_ns,
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
