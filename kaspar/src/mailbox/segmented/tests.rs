use super::*;
use crate::base::sync::Arc;
use std::sync::atomic::AtomicUsize as StdAtomicUsize;

#[test]
fn fifo_and_exact_lengths_across_blocks() {
    let q = SegmentedMpsc::new(0);
    let n = 3 * BLOCK_CAP + 7;
    for i in 0..n {
        // One thread: the head is current, so the length is exact.
        assert_eq!(q.push(i), Ok(i + 1));
    }
    assert_eq!(q.len(), n);
    let mut out = Vec::new();
    for (max, left) in [
        (5, n - 5),
        (BLOCK_CAP, n - 5 - BLOCK_CAP),
        (1, n - 6 - BLOCK_CAP),
    ] {
        assert_eq!(q.try_pop_batch(&mut out, max), max);
        assert_eq!(q.len(), left);
    }
    assert_eq!(
        q.pop_batch(&mut out, usize::MAX, IdleWait::Park),
        Drained::Got(n - 6 - BLOCK_CAP)
    );
    assert_eq!(out, (0..n).collect::<Vec<_>>());
    assert!(q.is_empty());
    assert_eq!(q.try_pop_batch(&mut out, 8), 0);
}

/// Reserving a block's last slot installs the next block; once drained,
/// blocks go back on the free stack and the next backlog of the same
/// depth allocates none.
#[test]
fn a_backlog_no_deeper_than_before_allocates_no_block() {
    let q = SegmentedMpsc::new(0);
    assert_eq!(q.blocks(), 1);
    let mut out = Vec::new();
    let mut next = 0..;
    for round in 0..4 {
        for _ in 0..3 * BLOCK_CAP {
            q.push(next.next().unwrap()).unwrap();
        }
        // Three installs: the first round allocates three blocks, later
        // rounds take the three the consumer freed.
        assert_eq!(q.blocks(), 4, "round {round}");
        assert_eq!(q.try_pop_batch(&mut out, usize::MAX), 3 * BLOCK_CAP);
    }
    // One message deeper than ever: one more block.
    for _ in 0..4 * BLOCK_CAP {
        q.push(next.next().unwrap()).unwrap();
    }
    assert_eq!(q.blocks(), 5);
    q.try_pop_batch(&mut out, usize::MAX);
    assert_eq!(out, (0..16 * BLOCK_CAP).collect::<Vec<_>>());
}

/// A trim frees the spare blocks beyond what it keeps, and the queue goes
/// on in order: the next backlog takes the kept spare, then allocates.
#[test]
fn a_trim_gives_back_spare_blocks_and_the_queue_goes_on() {
    let q = SegmentedMpsc::new(0);
    let mut out = Vec::new();
    let mut next = 0..;
    for _ in 0..10 * BLOCK_CAP {
        q.push(next.next().unwrap()).unwrap();
    }
    assert_eq!(q.blocks(), 11);
    assert_eq!(q.try_pop_batch(&mut out, usize::MAX), 10 * BLOCK_CAP);
    // Ten spent blocks on the stack, the eleventh in use.
    assert_eq!(q.trim(1), 9);
    assert_eq!(q.blocks(), 2);
    assert_eq!(q.trim(1), 0, "nothing more to give back");
    for _ in 0..3 * BLOCK_CAP {
        q.push(next.next().unwrap()).unwrap();
    }
    // Three installs: the spare, then two new blocks.
    assert_eq!(q.blocks(), 4);
    assert_eq!(q.try_pop_batch(&mut out, usize::MAX), 3 * BLOCK_CAP);
    assert_eq!(q.trim(0), 3, "keeping none, every spent block goes");
    assert_eq!(q.blocks(), 1);
    q.push(next.next().unwrap()).unwrap();
    q.try_pop_batch(&mut out, usize::MAX);
    assert_eq!(out, (0..13 * BLOCK_CAP + 1).collect::<Vec<_>>());
}

/// A pooled consumer that finds the queue empty gives back what a backlog
/// grew beyond the queue's capacity, keeping at least one spare block.
#[test]
fn a_pooled_consumer_going_idle_keeps_its_capacity_and_no_more() {
    for (capacity, kept) in [(0, 2), (BLOCK_CAP, 2), (3 * BLOCK_CAP, 3)] {
        let q = SegmentedMpsc::new(capacity);
        let mut out = Vec::new();
        for i in 0..10 * BLOCK_CAP {
            q.push(i).unwrap();
        }
        assert!(q.blocks() >= 11);
        while let Polled::Got(_) = q.poll_batch(&mut out, 64) {}
        assert_eq!(out.len(), 10 * BLOCK_CAP);
        assert_eq!(q.blocks(), kept, "capacity {capacity}");
    }
}

/// A trim does not wait for an installer that is taking a spare block,
/// nor the installer for a trim: whichever holds the stack, the other
/// gets out of its way (frees nothing, or allocates).
#[test]
fn a_trim_and_an_install_never_wait_for_each_other() {
    let q = SegmentedMpsc::new(0);
    let mut out = Vec::new();
    for i in 0..3 * BLOCK_CAP {
        q.push(i).unwrap();
    }
    q.try_pop_batch(&mut out, usize::MAX);
    // As if the installer were popping.
    q.free.0.popping.store(true, Ordering::Relaxed);
    assert_eq!(q.trim(0), 0);
    q.free.0.popping.store(false, Ordering::Relaxed);
    // As if a trim held the stack: the install allocates.
    let before = q.blocks();
    q.free.0.popping.store(true, Ordering::Relaxed);
    for i in 0..BLOCK_CAP {
        q.push(i).unwrap();
    }
    q.free.0.popping.store(false, Ordering::Relaxed);
    assert_eq!(q.blocks(), before + 1);
    assert_eq!(q.trim(0), 3);
}

/// The lingering consumer's look agrees with what a drain would find, at
/// every offset of a block and across a block's end.
#[test]
fn nothing_published_agrees_with_the_drain() {
    let q = SegmentedMpsc::new(0);
    let mut out = Vec::new();
    for i in 0..2 * LAP + 3 {
        assert!(q.nothing_published(), "empty at {i}");
        q.push(i).unwrap();
        assert!(!q.nothing_published(), "one queued at {i}");
        q.push(i).unwrap();
        assert_eq!(q.try_pop_batch(&mut out, 1), 1);
        assert!(!q.nothing_published(), "one left at {i}");
        assert_eq!(q.try_pop_batch(&mut out, 1), 1);
    }
    assert!(q.nothing_published());
    // Looking takes nothing, and gives the consumer's side back.
    q.push(7).unwrap();
    assert!(!q.nothing_published());
    assert_eq!(q.try_pop_batch(&mut out, usize::MAX), 1);
    assert_eq!(out.last(), Some(&7));
}

#[test]
fn capacity_preallocates_whole_blocks() {
    let q = SegmentedMpsc::new(100);
    // 100 messages need four blocks; the fourth's last slot (the 124th
    // message) installs a fifth.
    assert_eq!(q.blocks(), 4);
    for i in 0..4 * BLOCK_CAP - 1 {
        q.push(i).unwrap();
    }
    assert_eq!(q.blocks(), 4);
    q.push(0).unwrap();
    assert_eq!(q.blocks(), 5);
}

/// S5: the tail's position, the head's and every stamp wrap together.
#[test]
fn positions_wrap_with_head_tail_and_stamps_together() {
    for laps_before_wrap in [1, 2] {
        let start = (POS_MASK & !(LAP - 1)) - (laps_before_wrap - 1) * LAP;
        let q = SegmentedMpsc::starting_at(start, 0);
        let mut out = Vec::new();
        let mut next = 0..;
        for round in 0..6 {
            for _ in 0..BLOCK_CAP + round {
                q.push(next.next().unwrap()).unwrap();
            }
            assert_eq!(q.len(), BLOCK_CAP + round, "round {round}");
            assert_eq!(q.try_pop_batch(&mut out, 7 + round), 7 + round);
            q.try_pop_batch(&mut out, usize::MAX);
        }
        let pushed = next.next().unwrap();
        assert_eq!(out, (0..pushed).collect::<Vec<_>>());
        // Drop walks what is left across the wrap.
        for _ in 0..2 * BLOCK_CAP {
            q.push(0).unwrap();
        }
    }
}

#[test]
fn closed_hands_back_and_drains() {
    let q = SegmentedMpsc::new(0);
    for i in 0..BLOCK_CAP + 2 {
        q.push(i).unwrap();
    }
    q.close();
    assert!(q.is_closed());
    assert_eq!(q.push(99), Err(SendError::closed(99)));
    let mut out = Vec::new();
    assert_eq!(
        q.pop_batch(&mut out, 64, IdleWait::Park),
        Drained::Got(BLOCK_CAP + 2)
    );
    assert_eq!(q.pop_batch(&mut out, 64, IdleWait::Park), Drained::Closed);
    assert_eq!(out, (0..BLOCK_CAP + 2).collect::<Vec<_>>());
}

struct Counted(Arc<StdAtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
fn drop_frees_queued_messages_once() {
    let drops = Arc::new(StdAtomicUsize::new(0));
    let dropped = || drops.load(std::sync::atomic::Ordering::Relaxed);
    let q = SegmentedMpsc::new(0);
    let n = 2 * BLOCK_CAP + 8;
    for _ in 0..n {
        q.push(Counted(Arc::clone(&drops))).unwrap();
    }
    let mut out = Vec::new();
    q.try_pop_batch(&mut out, BLOCK_CAP + 3);
    assert_eq!(dropped(), 0);
    drop(out);
    assert_eq!(dropped(), BLOCK_CAP + 3);
    // Handed back, not dropped, once closed.
    q.close();
    let refused = q.push(Counted(Arc::clone(&drops))).unwrap_err();
    assert_eq!(dropped(), BLOCK_CAP + 3);
    drop(refused);
    drop(q);
    assert_eq!(dropped(), n + 1);
}

#[test]
fn producers_and_a_sleeping_consumer() {
    let q = Arc::new(SegmentedMpsc::new(0));
    let per = if cfg!(miri) { 40 } else { 20_000 };
    let producers: Vec<_> = (0..3)
        .map(|p| {
            let q = Arc::clone(&q);
            std::thread::spawn(move || {
                for i in 0..per {
                    q.push((p, i)).unwrap();
                }
            })
        })
        .collect();
    let consumer = {
        let q = Arc::clone(&q);
        std::thread::spawn(move || {
            let mut out = Vec::new();
            while let Drained::Got(_) = q.pop_batch(&mut out, 5, IdleWait::Park) {}
            out
        })
    };
    for p in producers {
        p.join().unwrap();
    }
    q.close();
    let out = consumer.join().unwrap();
    assert_eq!(out.len(), 3 * per);
    for p in 0..3 {
        let seen: Vec<_> = out.iter().filter(|m| m.0 == p).map(|m| m.1).collect();
        assert_eq!(seen, (0..per).collect::<Vec<_>>());
    }
    // Never more blocks than the whole traffic could fill.
    assert!(q.blocks() <= 3 * per / BLOCK_CAP + 2);
}
