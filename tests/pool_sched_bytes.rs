//! What an idle pooled actor costs in memory, counted exactly: heap bytes
//! live after spawning idle pooled actors (cell, mailbox, lock, the pool's
//! hook and member slot), per actor, beyond the actor's own state. A
//! pooled actor holds no thread and no stack, so this is all of it. One
//! test function: the count is process-wide.
//!
//! The design's aim is 512 bytes, and this test holds it: on x86-64, for
//! an 8-byte state, 440 at the last count (it was 2,107 before the cell's
//! layout was reworked). The breakdown that follows is from a count of
//! 424; later changes added 24 bytes, the last 8 of them the head of the
//! cell's list of reply ports (`reply::Ports`, for `request`), and then 8
//! came back (a thread-bound actor's home id, 32 bits, moved into the
//! padding of the cell's first band). Where they were: the cell, 304 with
//! its reference counts (its
//! `CompactMpsc` mailbox 120 of that: the consumer's spill is one pointer
//! until a deep drain needs room, and the padding that keeps the
//! consumer's half a cache line from the producers' is a niche where the
//! mailbox keeps its tag; its boxed counters and latency table one
//! pointer each until used); the actor's lock, 40; the pool's
//! hook, 72 (with the `journal` feature this suite builds with); its slot
//! in the pool's member list, 16; the spent start-up box is freed by the
//! first activation. Counted once the first activations have run: an
//! actor whose start-up has not run yet still holds its start-up box.
//! After a message it also keeps a one-slot buffer, 24 bytes here, and
//! stays within the budget.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use kaspar::prelude::*;
use kaspar::{PoolConfig, SystemConfig};

use kaspar_suite::alloc::{live_bytes, Live};

#[global_allocator]
static GLOBAL: Live = Live;

#[actor]
pub struct Idle {
    n: u64,
}

/// Actors whose first activation (start-up) has run.
static STARTED: AtomicUsize = AtomicUsize::new(0);

#[actor]
impl Idle {
    #[handler(u64)]
    fn add(&mut self, k: u64, _ctx: &mut Ctx<Self>) -> u64 {
        self.n += k;
        self.n
    }

    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {
        STARTED.fetch_add(1, Relaxed);
    }
}

/// Heap bytes per idle pooled actor, beyond its state, most allowed: the
/// issue's 512 in the default build. The `console` feature (opt-in, for
/// looking at a running system) adds the actor graph's table of senders
/// to every cell, and its registry entry: 279 bytes measured, budgeted
/// here at 288 so that a build with it is held too.
const BUDGET: usize = if cfg!(feature = "console") {
    512 + 288
} else {
    512
};

/// The live bytes once `started` actors have run their first activation
/// (which drops its spent start-up box) and the bytes stop changing for
/// 10 ms (the last activation returning), or after 10 s.
fn settled(started: usize) -> isize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while STARTED.load(Relaxed) < started && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let mut last = live_bytes();
    loop {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let now = live_bytes();
        if now == last || std::time::Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

#[test]
fn an_idle_pooled_actor_holds_no_thread_and_at_most_512_bytes_beyond_its_state() {
    let system = System::with_config(SystemConfig {
        pool: PoolConfig::new().workers(1),
        ..SystemConfig::default()
    });
    // The pool, its worker and the registries exist before the window.
    let first = system.spawn(Idle { n: 0 }).pooled().start();
    assert_eq!(first.ask(1).unwrap().wait().unwrap(), 1);
    let count = 8192;
    let mut addrs = Vec::with_capacity(count);
    let before = live_bytes();
    for _ in 0..count {
        addrs.push(system.spawn(Idle { n: 0 }).pooled().start());
    }
    // Idle means started: each actor's first activation (which builds
    // and drops its spent start-up box) has run on the worker.
    let after = settled(count + 1);
    let per_actor = (after - before) as usize / count;
    let state = std::mem::size_of::<Idle>();
    let beyond = per_actor - state;
    eprintln!("idle pooled actor: {per_actor} heap bytes, {beyond} beyond its {state}-byte state");
    assert!(
        beyond <= BUDGET,
        "an idle pooled actor costs {beyond} bytes beyond its state (budget {BUDGET})"
    );
    assert_eq!(system.pool_threads(), 1, "8193 actors, one worker thread");
    // Each still works; once idle again, each keeps a few slots of room.
    for a in &addrs {
        a.send(1).unwrap();
    }
    for a in &addrs {
        assert_eq!(a.ask(1).unwrap().wait().unwrap(), 2);
    }
    let used = (live_bytes() - before) as usize / count;
    eprintln!("after a message each, idle again: {used} heap bytes per actor");
    // It keeps one buffer between activations, which its mailbox and its
    // batch trade: one slot after one message (24 bytes here; 128 when
    // the first push took the deque's usual four, 264 when the mailbox and
    // the batch each kept their own). Still within the budget.
    // The slot holds one envelope, which the `tracing` feature makes
    // larger (it carries the sender's trace context): 130 bytes then.
    let slot_extra = if cfg!(feature = "tracing") { 128 } else { 0 };
    assert!(
        used - state <= BUDGET + slot_extra,
        "{used} bytes per actor after a message (budget {BUDGET} beyond the state)"
    );
    // A burst is given back when the actor goes idle again.
    let settled = live_bytes();
    for i in 0..10_000 {
        addrs[0].send(i).unwrap();
    }
    assert!(addrs[0].ask(0).unwrap().wait().unwrap() > 10_000);
    // The room goes back when the activation that answered finds the
    // mailbox empty and the actor goes idle: just after the reply, on the
    // worker's thread, so this thread may look before that.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut kept = live_bytes() - settled;
    while kept >= 1024 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
        kept = live_bytes() - settled;
    }
    eprintln!("after a burst of 10,000: {kept} bytes kept");
    assert!(kept < 1024, "a burst's room was kept: {kept} bytes");
    system.shutdown();
    assert!(addrs.iter().all(|a| a.is_stopped()));
}
