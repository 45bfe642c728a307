//! The five mailbox kinds, head to head (paper Table 7), and the batching
//! measurements (companion note): async burst ping-pong between two actors.
//!
//! `cargo bench --bench mailboxes [-- --quick]`. Prints markdown tables with
//! ratios measured in this run and writes
//! `target/kaspar-bench/mailboxes.jsonl`. The measuring code lives in
//! `src/bench/mailboxes.rs`, shared with `paper.rs`.
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
//! * `segmented`: `Segmented` queues (lock-free, unbounded);
//! * `sender_batching`: `BQueueBatched`, but each side builds its whole burst
//!   first and pushes it as one message (one mailbox lock per burst); the
//!   receiver handles the balls one by one. The receiver cannot start before
//!   the sender has built the whole burst.

use kaspar_suite::bench;

fn main() {
    let machine = bench::Machine::detect();
    let m = bench::mailboxes::measure(bench::quick());
    bench::mailboxes::print(&m, &machine);
    let mut json = bench::JsonLines::new("mailboxes");
    bench::mailboxes::record(&m, &mut json);
    let path = json.write();
    println!("\nwrote {}", path.display());
}
