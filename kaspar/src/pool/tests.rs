//! Unit tests for the pool's tiers and for `Pooled<T>`. Miri runs them all
//! (`cargo +nightly miri test -p kaspar pool`), so iteration counts shrink
//! under it.
//!
//! Tests that inspect a global size class's counters each use a size class
//! no other test in this crate touches, so parallel tests cannot disturb
//! them.

use std::collections::HashSet;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;

use super::depot::Depot;
use super::magazine::ClassCache;
use super::*;

const N: usize = if cfg!(miri) { 300 } else { 20_000 };

/// A block address that may cross threads in a test.
struct Block(NonNull<u8>);
// SAFETY: the test hands each free block to exactly one thread at a time
// through a channel, which orders the accesses.
unsafe impl Send for Block {}

/// Every block ever carved is either in `caches` or in the depot, once.
fn assert_accounted(depot: &Depot, cached: usize) {
    let counts = depot.counts();
    assert_eq!(counts.free_blocks + cached, counts.carved);
    let addrs = depot.free_addresses();
    assert_eq!(addrs.len(), counts.free_blocks);
    let unique: HashSet<_> = addrs.iter().collect();
    assert_eq!(unique.len(), addrs.len(), "a block is in the depot twice");
}

#[test]
fn magazine_cache_exchanges_whole_magazines() {
    let depot = Depot::new(64, 4, 8);
    let mut cache = ClassCache::new();
    let blocks: Vec<_> = (0..10).map(|_| cache.alloc(&depot)).collect();
    // three refills of four blocks each: 12 carved, two left in `loaded`
    assert_eq!(depot.counts().carved, 12);
    assert_eq!(cache.cached(), 2);
    let unique: HashSet<_> = blocks.iter().collect();
    assert_eq!(unique.len(), 10);
    for b in blocks {
        cache.free(&depot, b);
    }
    // two magazines stay with the thread, the rest went back whole
    assert_eq!(cache.cached(), 8);
    assert_eq!(depot.counts().free_blocks, 4);
    assert_accounted(&depot, cache.cached());
    cache.drain_into(&depot);
    assert_accounted(&depot, 0);
    assert_eq!(depot.counts().free_blocks, 12);
}

#[test]
fn magazine_cache_does_not_thrash_at_a_boundary() {
    let depot = Depot::new(64, 4, 8);
    let mut cache = ClassCache::new();
    let first = cache.alloc(&depot);
    let magazines = depot.counts().magazines;
    let carved = depot.counts().carved;
    // alternate free/alloc around the point where `loaded` empties: the
    // spare magazine absorbs it, the depot sees nothing
    for _ in 0..100 {
        let b = cache.alloc(&depot);
        cache.free(&depot, b);
    }
    assert_eq!(depot.counts().carved, carved);
    assert_eq!(depot.counts().magazines, magazines);
    cache.free(&depot, first);
    cache.drain_into(&depot);
    assert_accounted(&depot, 0);
}

#[test]
fn depot_cross_thread_free_returns_every_block_once() {
    let depot = Arc::new(Depot::new(128, 8, 16));
    let (tx, rx) = mpsc::channel::<Block>();
    let producer = {
        let depot = Arc::clone(&depot);
        thread::spawn(move || {
            let mut cache = ClassCache::new();
            for i in 0..N {
                let b = cache.alloc(&depot);
                // SAFETY: a fresh block of 128 bytes, owned by this thread
                // until it is sent.
                unsafe { b.as_ptr().cast::<usize>().write(i) };
                tx.send(Block(b)).unwrap();
            }
            cache.drain_into(&depot);
        })
    };
    let consumer = {
        let depot = Arc::clone(&depot);
        thread::spawn(move || {
            let mut cache = ClassCache::new();
            for (i, Block(b)) in rx.iter().enumerate() {
                // SAFETY: the producer wrote this block before sending it;
                // the channel orders that write before this read.
                assert_eq!(unsafe { b.as_ptr().cast::<usize>().read() }, i);
                cache.free(&depot, b);
            }
            cache.drain_into(&depot);
        })
    };
    producer.join().unwrap();
    consumer.join().unwrap();
    assert_accounted(&depot, 0);
}

#[test]
fn depot_single_block_path_round_trips() {
    let depot = Depot::new(64, 2, 4);
    let a = depot.alloc_one();
    let b = depot.alloc_one();
    let c = depot.alloc_one();
    assert_eq!(depot.counts().carved, 3);
    for x in [a, b, c] {
        depot.free_one(x);
    }
    assert_accounted(&depot, 0);
    assert_eq!(depot.counts().free_blocks, 3);
    let again: HashSet<_> = (0..3).map(|_| depot.alloc_one()).collect();
    assert_eq!(again, HashSet::from([a, b, c]));
    assert_eq!(depot.counts().carved, 3);
    for x in again {
        depot.free_one(x);
    }
}

#[test]
fn pooled_routes_by_size_and_alignment() {
    #[repr(align(128))]
    struct Aligned(#[allow(dead_code)] u8);

    assert_eq!(route(0, 1), Route::Nothing);
    assert_eq!(route(1, 1), Route::Class(0));
    assert_eq!(route(64, 8), Route::Class(0));
    assert_eq!(route(65, 8), Route::Class(1));
    assert_eq!(route(1024, 1), Route::Class(4));
    assert_eq!(route(MAX_BLOCK, 1), Route::Class(SIZE_CLASSES - 1));
    assert_eq!(route(MAX_BLOCK + 1, 1), Route::Global);
    assert_eq!(route(64, 128), Route::Global);
    assert_eq!(MemoryPool::of::<[u8; 1024]>().unwrap().block_size(), 1024);
    assert!(MemoryPool::of::<()>().is_none());
    assert!(MemoryPool::of::<Aligned>().is_none());
    assert_eq!(MemoryPool::all().len(), SIZE_CLASSES);
}

#[test]
fn pooled_value_semantics() {
    #[repr(align(128))]
    #[derive(Debug, PartialEq)]
    struct Aligned(u64);

    let mut p = Pooled::new([7u64; 8]);
    p[3] = 9;
    assert_eq!(p[3], 9);
    assert_eq!(&*p as *const _ as usize % BLOCK_ALIGN, 0);
    let q = p.clone();
    assert_eq!(p, q);
    assert_eq!(Pooled::into_inner(q)[3], 9);

    let unit = Pooled::new(());
    assert_eq!(Pooled::into_inner(unit), ());

    let a = Pooled::new(Aligned(5));
    assert_eq!(&*a as *const Aligned as usize % 128, 0);
    assert_eq!(*a, Aligned(5));
    drop(a);

    let big = Pooled::new(vec![1u8; 3]);
    assert_eq!(format!("{big:?}"), "[1, 1, 1]");
    let s: Pooled<String> = Pooled::from("hi".to_string());
    assert_eq!(s.to_string(), "hi");
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn pooled_is_send_and_sync_like_its_contents() {
    assert_send_sync::<Pooled<[u8; 1024]>>();
    assert_send_sync::<Pooled<String>>();
}

/// Counts drops; 1500 bytes puts it alone in the 2 KiB class.
struct Tracked {
    id: usize,
    _pad: [u8; 1500],
}

static TRACKED_DROPS: AtomicUsize = AtomicUsize::new(0);

impl Drop for Tracked {
    fn drop(&mut self) {
        TRACKED_DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn pooled_drops_each_value_once_and_exiting_threads_return_blocks() {
    const THREADS: usize = 3;
    let per_thread = if cfg!(miri) { 100 } else { 5_000 };
    let pool = MemoryPool::of::<Tracked>().unwrap();
    assert_eq!(pool.block_size(), 2048);

    // a ring of threads: each allocates, sends to the next, drops what it
    // receives, and exits still holding cached blocks
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..THREADS)
        .map(|_| mpsc::channel::<Pooled<Tracked>>())
        .unzip();
    let mut handles = Vec::new();
    for (i, rx) in rxs.into_iter().enumerate() {
        let tx = txs[(i + 1) % THREADS].clone();
        handles.push(thread::spawn(move || {
            let mut seen = 0;
            let mut drain = |rx: &mpsc::Receiver<Pooled<Tracked>>| {
                while let Ok(p) = rx.try_recv() {
                    seen += 1;
                    if p.id % 2 == 0 {
                        drop(p);
                    } else {
                        drop(Pooled::into_inner(p));
                    }
                }
            };
            for n in 0..per_thread {
                let item = Pooled::new(Tracked {
                    id: i * per_thread + n,
                    _pad: [0; 1500],
                });
                tx.send(item).unwrap();
                drain(&rx);
            }
            drop(tx);
            (rx, seen)
        }));
    }
    drop(txs);
    let mut left = Vec::new();
    let mut total_seen = 0;
    for h in handles {
        let (rx, seen) = h.join().unwrap();
        total_seen += seen;
        left.push(rx);
    }
    // every sender has exited; what is still queued is dropped here
    for rx in left {
        total_seen += rx.into_iter().count();
    }
    assert_eq!(total_seen, THREADS * per_thread);
    assert_eq!(TRACKED_DROPS.load(Ordering::Relaxed), THREADS * per_thread);

    // the worker threads exited holding magazines: their destructors gave
    // them back. After this thread flushes too, every block is in the depot.
    MemoryPool::flush_thread_cache();
    let stats = pool.stats();
    assert!(stats.carved_blocks > 0);
    assert_eq!(stats.depot_blocks, stats.carved_blocks);
    assert!(stats.reserved_bytes >= stats.carved_blocks * 2048);
}

#[test]
fn pooled_drop_releases_block_even_if_value_drop_panics() {
    // 3000 bytes: the 4 KiB class, used by no other test
    struct Bomb(#[allow(dead_code)] [u8; 3000]);
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("boom");
        }
    }
    let pool = MemoryPool::of::<Bomb>().unwrap();
    let p = Pooled::new(Bomb([0; 3000]));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(p)));
    assert!(r.is_err());
    MemoryPool::flush_thread_cache();
    let stats = pool.stats();
    assert_eq!(stats.depot_blocks, stats.carved_blocks);
}
