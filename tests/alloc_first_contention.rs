//! The first time an actor's lock is found taken allocates nothing, on
//! either side: the actor's thread parking for the lock, or a sender's
//! `fast_send_void` falling back to the mailbox. Counted exactly with a
//! counting global allocator; one test function, so nothing else in this
//! binary allocates while it measures (see `kaspar_suite::alloc`).
//!
//! Both once allocated. parking_lot makes a thread's parking record the
//! first time it parks and grows its global table as threads with a
//! record grow in number (at the 2nd, 3rd, 6th, 11th, 22nd ... thread);
//! the runtime now makes the record when each of its threads starts.
//! Before the window, this thread and the nine holders have records
//! (they warm themselves): ten. The eight run loops on threads of their
//! own parking for the first time inside it (nine with the group's) take
//! the count to at least 18, past 11, so without the warm-up at least one
//! allocation lands in the window (two, measured). And an actor's refusal
//! counters were made on its first refusal; an actor on a thread of its
//! own, or in a group, now makes them when it starts (nine first
//! fallbacks in the window: nine allocations without that). Each of
//! these failed the latency test (`latency_alloc.rs`) once: a run loop's
//! first park, or a `fast_send_void`'s first fallback, came in its
//! measured round rather than in its warm-up.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::IdleWait;

use kaspar_suite::alloc::{allocations, warm_parking, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Keeps the gate's lock, on the caller's thread, until `release`.
pub struct Hold {
    pub holding: Arc<AtomicBool>,
    pub release: Arc<AtomicBool>,
}
pub struct Ping;

#[actor]
pub struct Gate {
    pings: Arc<AtomicU64>,
}

#[actor]
impl Gate {
    #[handler(Hold)]
    fn hold(&mut self, msg: Hold, _ctx: &mut Ctx<Self>) {
        msg.holding.store(true, Ordering::Release);
        while !msg.release.load(Ordering::Acquire) {
            // Yield, not spin: the run loops need the cores to reach the
            // lock and park.
            std::thread::yield_now();
        }
    }

    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {
        self.pings.fetch_add(1, Ordering::Release);
    }
}

/// A group of one gate: a group member makes its refusal counters when
/// the group starts, as an actor on its own thread does.
#[group]
pub struct Booth {
    pub gate: Addr<Gate>,
}

/// Actors on threads of their own whose threads park for the first time
/// inside the window; one more gate is in a group.
const GATES: usize = 8;

#[test]
fn the_first_contention_for_an_actors_lock_allocates_nothing() {
    warm_parking();
    let system = System::new();
    let pings = Arc::new(AtomicU64::new(0));
    // Spinning while idle: their threads never park before the window.
    let mut gates: Vec<Addr<Gate>> = (0..GATES)
        .map(|_| {
            system
                .spawn(Gate {
                    pings: Arc::clone(&pings),
                })
                .idle(IdleWait::Spin)
                .start()
        })
        .collect();
    let booth = system
        .spawn_group::<Booth>((Gate {
            pings: Arc::clone(&pings),
        },))
        .idle(IdleWait::Spin)
        .start();
    gates.push(booth.gate.clone());
    let all = gates.len() as u64;
    // Warm-up without contention: each run loop's first drain (its batch,
    // the mailbox's first block) allocates here, not in the window.
    for gate in &gates {
        gate.send(Ping).unwrap();
    }
    while pings.load(Ordering::Acquire) < all {
        std::thread::yield_now();
    }
    let holding: Vec<Arc<AtomicBool>> = gates.iter().map(|_| Arc::default()).collect();
    let release = Arc::new(AtomicBool::new(false));
    let holders: Vec<_> = gates
        .iter()
        .zip(&holding)
        .map(|(gate, holding)| {
            let (gate, holding, release) =
                (gate.clone(), Arc::clone(holding), Arc::clone(&release));
            std::thread::spawn(move || {
                warm_parking();
                gate.fast_send(Hold { holding, release }).unwrap();
            })
        })
        .collect();
    for h in &holding {
        while !h.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
    }

    let before = allocations();
    for gate in &gates {
        gate.send(Ping).unwrap();
        // Busy: queued behind the first.
        assert!(matches!(
            gate.fast_send_void(Ping).unwrap(),
            kaspar::Delivered::Queued
        ));
    }
    // Long enough for each run loop to see its ping, find its lock held,
    // spin out and park.
    std::thread::sleep(Duration::from_millis(200));
    release.store(true, Ordering::Release);
    while pings.load(Ordering::Acquire) < 3 * all {
        std::thread::yield_now();
    }
    let during = allocations() - before;

    for holder in holders {
        holder.join().unwrap();
    }
    system.shutdown();
    assert_eq!(
        during, 0,
        "{all} actors' first contention allocated {during} times"
    );
}
