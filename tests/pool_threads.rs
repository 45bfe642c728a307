//! `Pooled<T>` through the public API: values cross threads and actors,
//! each is dropped exactly once, and blocks cached by exited threads go
//! back to the shared depot.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::thread;

use kaspar::pool::{MemoryPool, Pooled};
use kaspar::prelude::*;

const N: usize = 10_000;

/// 700 bytes: the 1 KiB class, used by nothing else in this binary.
pub struct Tracked {
    pub id: usize,
    _pad: [u8; 700],
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

impl Tracked {
    fn new(id: usize) -> Self {
        Tracked { id, _pad: [0; 700] }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Relaxed);
    }
}

pub struct Keep(pub Pooled<Tracked>);
pub struct Count;

#[actor]
pub struct Keeper {
    kept: Vec<Pooled<Tracked>>,
    seen: usize,
}

#[actor]
impl Keeper {
    /// Keeps every tenth value (dropped with the actor), drops the rest now.
    #[handler(Keep)]
    fn keep(&mut self, msg: Keep, _ctx: &mut Ctx<Self>) {
        self.seen += 1;
        if msg.0.id % 10 == 9 {
            self.kept.push(msg.0);
        }
    }

    #[handler(Count)]
    fn count(&mut self, _msg: Count, _ctx: &mut Ctx<Self>) -> usize {
        self.seen
    }
}

#[test]
fn every_value_is_dropped_once_and_exited_threads_give_blocks_back() {
    let pool = MemoryPool::of::<Tracked>().unwrap();
    assert_eq!(pool.block_size(), 1024);

    // producers on their own threads send to one actor, then exit
    let system = System::new();
    let keeper = system
        .spawn(Keeper {
            kept: Vec::new(),
            seen: 0,
        })
        .start();
    let producers: Vec<_> = (0..3)
        .map(|p| {
            let keeper = keeper.clone();
            thread::spawn(move || {
                for i in 0..N {
                    let value = Pooled::new(Tracked::new(p * N + i));
                    keeper.send(Keep(value)).map_err(|_| "send").unwrap();
                }
                // and some local churn, so this thread exits with a warm cache
                for i in 0..N {
                    let local = Pooled::new(Tracked::new(i));
                    assert_eq!(Pooled::into_inner(local).id, i);
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    while keeper.fast_send(Count).unwrap() < 3 * N {
        thread::yield_now();
    }
    // 3N sent and 3N moved out locally; the kept tenth dies with the actor
    assert_eq!(DROPS.load(Relaxed), 3 * N + 3 * N - 3 * N / 10);
    system.shutdown();
    drop(keeper); // the last handle: the actor, and what it kept, goes
    drop(system);
    assert_eq!(DROPS.load(Relaxed), 6 * N);

    // The producers and the actor's thread have exited: their caches went
    // back to the depot. Once this thread flushes too, the depot holds
    // every block the pool ever carved.
    MemoryPool::flush_thread_cache();
    let stats = pool.stats();
    assert!(stats.carved_blocks > 0);
    assert_eq!(stats.depot_blocks, stats.carved_blocks);
}
