//! Loom model of the pool's depot tier: magazine refill and flush racing
//! between threads.
//!
//! Run (always with its own target dir, so the `--cfg loom` build does not
//! clobber the normal one):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_pool --target-dir target/loom
//! ```
//!
//! The depot's lock comes from `kaspar`'s `sync` shim, so loom explores the
//! interleavings of the code that ships. The thread caches are plain
//! per-thread data; what can race is their exchanges with the depot. Each
//! model checks that no block is lost or handed out twice: at the end every
//! carved block is back in the depot exactly once.
#![cfg(loom)]

use std::collections::HashSet;
use std::ptr::NonNull;

use kaspar::pool::__loom::{ClassCache, Depot};
use loom::sync::Arc;
use loom::thread;

/// A free block crossing threads in the model.
struct Block(NonNull<u8>);
// SAFETY: each block is owned by exactly one thread at a time; it moves
// between threads only by value, through `thread::spawn`/`join`.
unsafe impl Send for Block {}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// Every carved block is in the depot, once.
fn assert_all_home(depot: &Depot) {
    let counts = depot.counts();
    assert_eq!(counts.free_blocks, counts.carved);
    let addrs = depot.free_addresses();
    assert_eq!(addrs.len(), counts.carved);
    let unique: HashSet<_> = addrs.iter().collect();
    assert_eq!(unique.len(), addrs.len(), "a block was handed out twice");
}

/// Two threads each allocate past one magazine (refill races refill) and
/// free everything (flush races flush), then exit and give their
/// magazines back.
#[test]
fn loom_pool_refill_and_flush_race() {
    model(|| {
        // magazines of 2 blocks, slabs of 2: every third alloc refills
        let depot = Arc::new(Depot::new(64, 2, 2));
        let worker = |depot: Arc<Depot>| {
            move || {
                let mut cache = ClassCache::new();
                let blocks: Vec<_> = (0..3).map(|_| cache.alloc(&depot)).collect();
                for b in blocks {
                    cache.free(&depot, b);
                }
                cache.drain_into(&depot);
            }
        };
        let a = thread::spawn(worker(Arc::clone(&depot)));
        worker(Arc::clone(&depot))();
        a.join().unwrap();
        assert_all_home(&depot);
    });
}

/// The cross-thread pattern: blocks allocated on one thread are freed on
/// another, whose flushes race the first thread's refills.
#[test]
fn loom_pool_cross_thread_free_races_refill() {
    model(|| {
        let depot = Arc::new(Depot::new(64, 2, 2));
        let mut producer = ClassCache::new();
        let handed: Vec<Block> = (0..3).map(|_| Block(producer.alloc(&depot))).collect();

        let consumer = {
            let depot = Arc::clone(&depot);
            thread::spawn(move || {
                let mut cache = ClassCache::new();
                for Block(b) in handed {
                    cache.free(&depot, b);
                }
                cache.drain_into(&depot);
            })
        };
        // meanwhile the producer keeps allocating, and refills
        let more: Vec<_> = (0..3).map(|_| producer.alloc(&depot)).collect();
        for b in more {
            producer.free(&depot, b);
        }
        producer.drain_into(&depot);
        consumer.join().unwrap();
        assert_all_home(&depot);
    });
}

/// The single-block path (a thread whose cache is gone) against a
/// magazine flush.
#[test]
fn loom_pool_single_block_path_races_flush() {
    model(|| {
        let depot = Arc::new(Depot::new(64, 2, 2));
        let other = {
            let depot = Arc::clone(&depot);
            thread::spawn(move || {
                let b = depot.alloc_one();
                depot.free_one(b);
            })
        };
        let mut cache = ClassCache::new();
        let blocks: Vec<_> = (0..3).map(|_| cache.alloc(&depot)).collect();
        for b in blocks {
            cache.free(&depot, b);
        }
        cache.drain_into(&depot);
        other.join().unwrap();
        assert_all_home(&depot);
    });
}
