//! Table 7's three measurements of one mailbox kind, through the public
//! `Mailbox` API with plain threads: a single-thread round trip, bursts
//! to an idle consumer, and 32 producers pushing at once; and beyond the
//! paper, one message at a time handed between two threads and back.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use kaspar::mailbox::{Drained, Mailbox};
use kaspar::prelude::*;

use super::{BURST, FANIN_PRODUCERS};
use crate::bench::{histogram, median};

pub(super) fn single_thread_rt_p50(kind: MailboxKind, samples: usize) -> f64 {
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

/// Two threads, two mailboxes of `kind`, one message in flight: the
/// first thread pushes into one and drains the other, the second echoes
/// what it drains. Both consumers spin while empty (`IdleWait::Spin`), so
/// no round trip pays a wake-up: what is left is the queue's own hand-off
/// between two cores, both ways, which a pooled actor asked from a plain
/// thread pays once each way. The median over samples of 100 round trips,
/// per round trip.
pub(super) fn handoff_rt_p50(kind: MailboxKind, samples: usize) -> f64 {
    const PER_SAMPLE: usize = 100;
    let there = Arc::new(Mailbox::<u64>::new(kind));
    let back = Arc::new(Mailbox::<u64>::new(kind));
    let echo = {
        let (there, back) = (Arc::clone(&there), Arc::clone(&back));
        std::thread::spawn(move || {
            let mut out = Vec::with_capacity(16);
            while let Drained::Got(_) = there.pop_batch(&mut out, 16, IdleWait::Spin) {
                for v in out.drain(..) {
                    // One in flight: a bounded kind is never full here.
                    assert!(back.push(v).is_ok(), "the echo's push was refused");
                }
            }
        })
    };
    let mut out = Vec::with_capacity(16);
    let mut per_rt = Vec::with_capacity(samples);
    let mut sent = 0u64;
    for s in 0..samples + samples / 10 {
        let t0 = Instant::now();
        for _ in 0..PER_SAMPLE {
            assert!(there.push(sent).is_ok(), "the push was refused");
            let got = back.pop_batch(&mut out, 16, IdleWait::Spin);
            assert!(
                matches!(got, Drained::Got(1)) && out[0] == sent,
                "lost or reordered"
            );
            out.clear();
            sent += 1;
        }
        let ns = t0.elapsed().as_nanos() as f64 / PER_SAMPLE as f64;
        if s >= samples / 10 {
            // The first tenth warms up caches and the branch predictor.
            per_rt.push(ns);
        }
    }
    there.close();
    echo.join().unwrap();
    median(&mut per_rt)
}

pub(super) fn burst_ns_per_msg(kind: MailboxKind, total: usize) -> f64 {
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

pub(super) fn fanin_push_p99(kind: MailboxKind, per_producer: usize) -> f64 {
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
