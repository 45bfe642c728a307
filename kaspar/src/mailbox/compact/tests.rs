//! The compact queue's order, its word, its buffers and its wake-ups.

use std::sync::Arc;

use super::*;

#[test]
fn fifo_one_by_one_and_in_bulk() {
    let q = CompactMpsc::new();
    for i in 0..100 {
        assert_eq!(q.push(i).unwrap(), i + 1, "the length after the push");
    }
    assert_eq!(q.len(), 100);
    let mut out = Vec::new();
    // A few (one by one), many (the bulk move), a few, then the rest, more
    // than `FEW`, ending exactly at the last message. The batch is never
    // empty after the first, so each is moved, not traded.
    for (max, got) in [(5, 5), (FEW + 1, FEW + 1), (FEW, FEW), (usize::MAX, 62)] {
        assert_eq!(q.try_pop_batch(&mut out, max), got);
    }
    assert_eq!(q.try_pop_batch(&mut out, usize::MAX), 0);
    assert_eq!(out, (0..100).collect::<Vec<_>>());
    assert_eq!(q.len(), 0);
}

#[test]
fn the_word_holds_the_length_and_the_flags_and_releases_the_lock() {
    let q = CompactMpsc::new();
    q.push(1u8).unwrap();
    q.push(2).unwrap();
    assert_eq!(q.word.load(Ordering::Relaxed), 2 << SHIFT);
    q.close();
    assert_eq!(q.word.load(Ordering::Relaxed), (2 << SHIFT) | CLOSED);
    assert_eq!(q.push(3), Err(SendError::closed(3)));
    let mut out = Vec::new();
    assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Got(2));
    assert_eq!(q.pop_batch(&mut out, 8, IdleWait::Park), Drained::Closed);
    assert_eq!(out, [1, 2]);
    assert_eq!(q.word.load(Ordering::Relaxed), CLOSED);
}

/// A pooled consumer goes idle only on an empty, open queue; the next push
/// (and only it) schedules it; `close` schedules an idle one.
#[test]
fn a_pooled_consumer_is_scheduled_once_per_idle_period() {
    let q = CompactMpsc::new();
    let mut out = Vec::new();
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Idle);
    assert!(q.consumer_asleep());
    q.push(1).unwrap();
    q.push(2).unwrap();
    assert_eq!(q.wakeups(), 1, "one wake-up per idle period");
    assert!(!q.consumer_asleep());
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Got(2));
    out.clear();
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Idle);
    q.close();
    assert_eq!(q.wakeups(), 2, "close ends an idle period too");
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Closed);
}

/// Messages that come one activation at a time: the queue holds one
/// buffer while idle, the same one every time.
#[test]
fn fed_between_activations_it_cycles_one_buffer() {
    let q = CompactMpsc::new();
    let mut batch: Vec<u64> = Vec::new();
    q.push(0).unwrap();
    assert_eq!(q.poll_batch(&mut batch, 8), Polled::Got(1));
    let buffer = batch.as_ptr();
    for round in 1..=10 {
        assert_eq!(batch, [round - 1]);
        batch.clear();
        assert_eq!(q.poll_batch(&mut batch, 8), Polled::Idle);
        assert_eq!(batch.capacity(), 0, "round {round}: the batch kept it");
        assert!(q.room() > 0, "round {round}: the queue has it");
        q.push(round).unwrap();
        assert_eq!(q.poll_batch(&mut batch, 8), Polled::Got(1));
        assert_eq!(batch.as_ptr(), buffer, "round {round}: a new buffer");
    }
}

/// `poll`, the pooled actor's drain: a lone message comes back as itself
/// while the batch has no room, and the queue keeps its one buffer (no
/// trade); the idle poll leaves it there. Two messages, or a batch with
/// room, go the batch's way.
#[test]
fn a_lone_message_is_polled_as_itself_and_its_buffer_stays() {
    let q = CompactMpsc::new();
    let mut batch: Vec<u64> = Vec::new();
    q.push(0).unwrap();
    let buffer = q.slot_buffer().expect("one slot");
    for round in 0..10 {
        assert_eq!(q.poll(&mut batch, 8), Ok(round), "round {round}");
        assert_eq!(batch.capacity(), 0, "round {round}: nothing in the batch");
        assert_eq!(q.room(), 1, "round {round}: the queue kept its buffer");
        assert_eq!(q.poll(&mut batch, 8), Err(Polled::Idle));
        assert_eq!(q.room(), 1, "round {round}: and keeps it while idle");
        q.push(round + 1).unwrap();
        assert_eq!(q.wakeups(), round + 1, "one wake-up per idle period");
        assert_eq!(q.slot_buffer(), Some(buffer), "round {round}: a new buffer");
    }
    // Two queued: a batch, traded as `poll_batch` does.
    q.push(11).unwrap();
    assert_eq!(q.poll(&mut batch, 8), Err(Polled::Got(2)));
    assert_eq!(batch, [10, 11]);
    // One queued, but the batch has room: it goes there.
    batch.clear();
    q.push(12).unwrap();
    assert_eq!(q.poll(&mut batch, 8), Err(Polled::Got(1)));
    assert_eq!(batch, [12]);
    batch.clear();
    q.close();
    assert_eq!(q.poll(&mut batch, 8), Err(Polled::Closed));
}

/// A push while the batch is out makes a second buffer once; from then on
/// the two trade places.
#[test]
fn a_push_during_an_activation_makes_a_second_buffer_once() {
    let q = CompactMpsc::new();
    let mut batch: Vec<u64> = Vec::new();
    q.push(0).unwrap();
    assert_eq!(q.poll_batch(&mut batch, 8), Polled::Got(1));
    let first = batch.as_ptr();
    q.push(1).unwrap();
    batch.clear();
    assert_eq!(q.poll_batch(&mut batch, 8), Polled::Got(1));
    let second = batch.as_ptr();
    assert_ne!(first, second);
    for next in (2..22).step_by(2) {
        batch.clear();
        q.push(next).unwrap();
        assert_eq!(q.poll_batch(&mut batch, 8), Polled::Got(1));
        assert!([first, second].contains(&batch.as_ptr()));
        batch.clear();
        assert_eq!(q.poll_batch(&mut batch, 8), Polled::Idle);
        q.push(next + 1).unwrap();
        assert_eq!(q.poll_batch(&mut batch, 8), Polled::Got(1));
        assert!([first, second].contains(&batch.as_ptr()));
    }
}

/// A burst's room is freed when the consumer goes idle; a few slots stay.
#[test]
fn a_bursts_room_goes_when_the_consumer_goes_idle() {
    let q = CompactMpsc::new();
    for i in 0..1000u64 {
        q.push(i).unwrap();
    }
    let mut seen = Vec::new();
    let mut batch = Vec::new();
    // Deeper than a drain: moved in order, not traded.
    while let Polled::Got(_) = q.poll_batch(&mut batch, 64) {
        seen.append(&mut batch);
    }
    assert_eq!(seen, (0..1000).collect::<Vec<_>>());
    assert_eq!(q.room(), 0, "the burst's room was kept");
    assert!(q.consumer_asleep());
}

/// A thread consumer sleeps on an empty queue and the push that ends the
/// sleep wakes it, once; producers on other threads keep their order.
#[test]
fn a_sleeping_thread_consumer_is_woken_once_and_sees_every_message() {
    let q = Arc::new(CompactMpsc::new());
    let consumer = {
        let q = Arc::clone(&q);
        std::thread::spawn(move || {
            let mut out = Vec::new();
            while let Drained::Got(_) = q.pop_batch(&mut out, 16, IdleWait::Park) {}
            out
        })
    };
    while !q.consumer_asleep() {
        std::thread::yield_now();
    }
    let per = if cfg!(miri) { 20 } else { 10_000 };
    let producers: Vec<_> = (0..3u64)
        .map(|p| {
            let q = Arc::clone(&q);
            std::thread::spawn(move || {
                for i in 0..per {
                    q.push((p, i)).unwrap();
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    q.close();
    let out = consumer.join().unwrap();
    assert_eq!(out.len() as u64, 3 * per, "each message once");
    for p in 0..3 {
        let mine: Vec<_> = out.iter().filter(|m| m.0 == p).map(|m| m.1).collect();
        assert_eq!(mine, (0..per).collect::<Vec<_>>(), "producer {p}'s order");
    }
    assert!(q.wakeups() >= 1);
}

/// A drain that finds more queued than it may take takes all of it into
/// the spill in one trade of buffers, and hands it out from there, first
/// (C5): `len` counts it, pushes meanwhile land in the queue behind it,
/// and the order is kept. The busy period's first deep drain finds the
/// spill without its box: it takes its `max` under the lock and makes
/// the box after releasing it, for the next deep drain.
#[test]
fn a_deep_drain_spills_the_whole_queue_and_hands_it_out_first() {
    let q = CompactMpsc::new();
    for i in 0..14u64 {
        q.push(i).unwrap();
    }
    let mut out = Vec::new();
    assert!(!q.spill_has_room());
    assert_eq!(q.poll_batch(&mut out, 4), Polled::Got(4));
    assert_eq!(q.word.load(Ordering::Relaxed) >> SHIFT, 10, "four taken");
    assert!(q.spill_has_room(), "the first deep drain made the box");
    assert_eq!(q.spilled(), 0);
    assert_eq!(q.poll_batch(&mut out, 4), Polled::Got(4));
    assert_eq!(
        q.word.load(Ordering::Relaxed) >> SHIFT,
        0,
        "the queue was taken whole"
    );
    assert_eq!(q.spilled(), 6);
    assert_eq!(q.len(), 6, "len counts the spill");
    q.push(14).unwrap();
    q.push(15).unwrap();
    assert_eq!(q.len(), 8);
    for want in [4, 2] {
        let before = out.len();
        assert_eq!(q.poll_batch(&mut out, 4), Polled::Got(want));
        assert_eq!(
            out.len() - before,
            want,
            "the spill first, without the queue"
        );
    }
    assert_eq!(q.poll_batch(&mut out, 4), Polled::Got(2));
    assert_eq!(out, (0..16).collect::<Vec<_>>());
    assert_eq!(q.len(), 0);
}

/// The spill's box and buffer are freed when the consumer goes idle;
/// while the consumer keeps up with a stream, the queue and the spill
/// trade the same two buffers.
#[test]
fn the_spill_keeps_its_room_while_busy_and_frees_it_when_idle() {
    let q = CompactMpsc::new();
    let mut out = Vec::new();
    for round in 0..4u64 {
        for i in 0..100 {
            q.push(round * 100 + i).unwrap();
        }
        while q.try_pop_batch(&mut out, 64) > 0 {}
        assert!(q.spill_has_room(), "round {round}: the spill kept its box");
        // Round 0's first deep drain made the box and traded nothing, so
        // the queue kept its buffer; round 1's traded it for the new
        // box's none; from then on the two trade buffers.
        assert_eq!(
            q.room() >= 100,
            round != 1,
            "round {round}: the queue's buffer"
        );
    }
    assert_eq!(out, (0..400).collect::<Vec<_>>());
    out.clear();
    assert_eq!(q.poll_batch(&mut out, 64), Polled::Idle);
    assert!(!q.spill_has_room(), "an idle consumer keeps no spill");
    assert_eq!(q.room(), 0, "nor the burst's room in the queue");
}

/// The idle consumer frees the spill's box after it has released the
/// lock, when a push may already have scheduled it again and a new drain
/// may have filled the spill: a spill that holds messages keeps them.
#[test]
fn freeing_the_spills_room_never_drops_spilled_messages() {
    let q = CompactMpsc::new();
    for i in 0..14u64 {
        q.push(i).unwrap();
    }
    let mut out = Vec::new();
    assert_eq!(q.poll_batch(&mut out, 4), Polled::Got(4));
    assert_eq!(q.poll_batch(&mut out, 4), Polled::Got(4));
    assert_eq!(q.spilled(), 6);
    q.free_spill_room();
    assert_eq!(q.spilled(), 6, "the spill kept its messages");
    while q.try_pop_batch(&mut out, 4) > 0 {}
    assert_eq!(out, (0..14).collect::<Vec<_>>());
    assert!(q.spill_has_room());
    q.free_spill_room();
    assert!(!q.spill_has_room(), "an empty spill's box goes");
}

/// Two threads draining one queue (not how a mailbox is used, but safe
/// code can) while a producer pushes: every message comes out once. (The
/// order holds for one consumer only: two drains split it between them.)
#[test]
fn two_drains_and_a_producer_lose_nothing_and_duplicate_nothing() {
    let n: u64 = if cfg!(miri) { 200 } else { 20_000 };
    let q = Arc::new(CompactMpsc::new());
    let producer = {
        let q = Arc::clone(&q);
        std::thread::spawn(move || {
            for i in 0..n {
                q.push(i).unwrap();
            }
            q.close();
        })
    };
    let drains: Vec<_> = (0..2)
        .map(|_| {
            let q = Arc::clone(&q);
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut batch = Vec::new();
                loop {
                    let n = q.try_pop_batch(&mut batch, 7);
                    got.append(&mut batch);
                    if n == 0 {
                        if q.is_closed() && q.is_empty() {
                            return got;
                        }
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    producer.join().unwrap();
    let mut all = Vec::new();
    for drain in drains {
        all.extend(drain.join().unwrap());
    }
    assert_eq!(q.len(), 0, "nothing left behind");
    all.sort_unstable();
    assert_eq!(all, (0..n).collect::<Vec<_>>());
}

/// What the docs promise of its size: the queue, inline in every pooled
/// actor's cell, is a word, a `VecDeque`, the wake-up, the padding that
/// keeps its two halves a cache line apart, and the drain's word and
/// spill.
#[test]
fn it_is_144_bytes() {
    eprintln!(
        "CompactMpsc {} B, Mailbox {} B",
        std::mem::size_of::<CompactMpsc<u64>>(),
        std::mem::size_of::<super::super::Mailbox<u64>>()
    );
    assert!(std::mem::size_of::<CompactMpsc<u64>>() <= 144);
}

/// The spill's backlog hands a traded-in deque out oldest first, in
/// shares, also when the deque had wrapped; the emptied buffer goes back
/// to be traded into the queue at the next fill, so a stream keeps
/// reusing the same two buffers.
#[test]
fn the_backlog_hands_out_oldest_first_and_keeps_its_buffer() {
    let mut backlog = spill::Backlog::default();
    let mut queue = VecDeque::with_capacity(8);
    // Wrapped: the front is at the buffer's end.
    for i in 0..6 {
        queue.push_back(100 + i);
    }
    for _ in 0..6 {
        queue.pop_front();
    }
    queue.extend(0..8);
    assert!(!queue.as_slices().1.is_empty(), "the deque wraps");
    let buffer = queue.capacity();
    // A fill is a trade: the queue gets the backlog's empty buffer.
    std::mem::swap(backlog.deque_mut(), &mut queue);
    assert_eq!(backlog.len(), 8);
    let mut out = Vec::new();
    for (max, got) in [(3, 3), (1, 1), (8, 4)] {
        assert_eq!(backlog.take(&mut out, max), got);
        assert_eq!(backlog.len(), 8 - out.len());
    }
    assert_eq!(out, (0..8).collect::<Vec<_>>());
    assert!(backlog.is_empty());
    assert_eq!(backlog.take(&mut out, 8), 0);
    assert_eq!(
        backlog.deque_mut().capacity(),
        buffer,
        "the buffer is back, for the next trade"
    );
}

/// A pooled consumer's hook for the lane's tests: counts its schedules.
#[derive(Default)]
struct Count(std::sync::atomic::AtomicUsize);

impl super::super::Schedule for Arc<Count> {
    fn schedule(&self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A compact queue with a pooled consumer, and its schedules.
fn pooled<T>() -> (CompactMpsc<T>, Arc<Count>) {
    let q = CompactMpsc::new();
    let count = Arc::new(Count::default());
    assert!(q.wake.task.set(Box::new(Arc::clone(&count))).is_ok());
    (q, count)
}

fn schedules(count: &Count) -> usize {
    count.0.load(std::sync::atomic::Ordering::Relaxed)
}

/// Inflated, a queue takes every push in its lane, in order, and its word
/// stays as it was (no push or drain writes it): the length, wake-ups,
/// the idle period and its one schedule all go through the lane.
#[test]
fn inflated_it_queues_in_the_lane_and_leaves_the_word_alone() {
    let (q, count) = pooled::<u64>();
    let mut out = Vec::new();
    q.push(0).unwrap();
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Got(1));
    assert!(q.inflate());
    assert!(!q.inflate(), "once");
    let word = q.word.load(Ordering::Relaxed);
    assert_eq!(word, LANE, "empty, open, awake, inflated");
    for i in 1..=100 {
        assert_eq!(q.push(i).unwrap(), i as usize, "the length after the push");
    }
    assert_eq!(q.len(), 100);
    assert_eq!(q.word.load(Ordering::Relaxed), word, "the word untouched");
    assert_eq!(q.room(), 0, "the queue's buffer freed");
    assert_eq!(q.poll(&mut out, 1000), Err(Polled::Got(100)));
    assert_eq!(out, (0..=100).collect::<Vec<_>>());
    out.clear();
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Idle);
    assert!(q.consumer_asleep());
    q.push(101).unwrap();
    q.push(102).unwrap();
    assert_eq!(schedules(&count), 1, "one schedule per idle period");
    assert_eq!(q.wakeups(), 1);
    assert_eq!(q.try_pop_batch(&mut out, 8), 2);
    assert_eq!(out, [101, 102]);
    assert_eq!(q.word.load(Ordering::Relaxed), word);
}

/// An inflated queue's pooled consumer gives back the blocks a backlog
/// grew its lane by when it goes idle, keeping one spare.
#[test]
fn an_inflated_queue_gives_back_its_backlogs_room_when_idle() {
    let (q, _count) = pooled::<u64>();
    let mut out = Vec::new();
    assert!(q.inflate());
    let lane = q.lane().expect("inflated");
    assert_eq!(lane.blocks(), 1);
    for i in 0..10_000 {
        q.push(i).unwrap();
    }
    assert!(lane.blocks() > 300, "{} blocks", lane.blocks());
    while let Polled::Got(_) = q.poll_batch(&mut out, 256) {}
    assert_eq!(out, (0..10_000).collect::<Vec<_>>());
    assert_eq!(lane.blocks(), 2, "the block in use and one spare");
}

/// `close` reaches the lane: an idle consumer is scheduled once, later
/// pushes are handed back, what was accepted is still drained.
#[test]
fn an_inflated_queue_closes_through_its_lane() {
    let (q, count) = pooled::<u64>();
    let mut out = Vec::new();
    assert!(q.inflate());
    q.push(1).unwrap();
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Got(1));
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Idle);
    q.close();
    assert_eq!(schedules(&count), 1, "close ends the idle period");
    assert!(q.is_closed());
    assert_eq!(q.push(2), Err(SendError::closed(2)));
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Closed);
    assert_eq!(out, [1]);
    // A second close schedules nothing more.
    q.close();
    assert_eq!(schedules(&count), 1);
}

/// It does not inflate for a thread consumer (whose sleep the lane would
/// not know), nor while a message is queued, nor once closed.
#[test]
fn it_inflates_only_empty_open_and_pooled() {
    let q = CompactMpsc::<u64>::new();
    assert!(!q.inflate(), "a thread's queue");
    let (q, _) = pooled::<u64>();
    q.push(1).unwrap();
    assert!(!q.inflate(), "a message queued");
    let mut out = Vec::new();
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Got(1));
    q.close();
    assert!(!q.inflate(), "closed");
    assert!(q.lane().is_none());
}

/// A stream's consumer inflates with messages still queued: up to `max`
/// of them come out to it in push order, every later push goes to the
/// lane behind them, and more than `max` queued (or a spill not yet handed
/// out) refuses without taking any.
#[test]
fn inflating_into_a_batch_takes_what_is_queued_first() {
    let (q, _) = pooled::<u64>();
    let mut out = Vec::new();
    for i in 0..5 {
        q.push(i).unwrap();
    }
    assert_eq!(
        q.inflate_into(&mut out, 4),
        None,
        "five queued, four taken at most"
    );
    assert!(out.is_empty());
    assert_eq!(q.len(), 5);
    assert_eq!(q.inflate_into(&mut out, 5), Some(5));
    assert_eq!(out, [0, 1, 2, 3, 4]);
    assert_eq!(
        q.word.load(Ordering::Relaxed),
        LANE,
        "empty, open, awake, inflated"
    );
    assert_eq!(q.inflate_into(&mut out, 5), None, "once");
    q.push(5).unwrap();
    q.push(6).unwrap();
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Got(2));
    assert_eq!(out, (0..7).collect::<Vec<_>>());
    // A deep drain leaves a spill behind: it refuses until that is out.
    let (q, _) = pooled::<u64>();
    out.clear();
    for i in 0..40 {
        q.push(i).unwrap();
    }
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Got(8));
    assert_eq!(q.poll_batch(&mut out, 8), Polled::Got(8));
    assert!(q.spilled() > 0, "a deep drain spilled");
    assert_eq!(q.inflate_into(&mut out, 64), None, "the spill first");
    while q.spilled() > 0 {
        assert!(matches!(q.poll_batch(&mut out, 8), Polled::Got(_)));
    }
    q.push(40).unwrap();
    assert_eq!(q.inflate_into(&mut out, 64), Some(1));
    assert_eq!(out, (0..=40).collect::<Vec<_>>());
}

/// Messages left in the lane are dropped with the queue, each once.
#[test]
fn dropping_an_inflated_queue_drops_what_its_lane_holds() {
    let drops = Arc::new(());
    let (q, _) = pooled::<Arc<()>>();
    assert!(q.inflate());
    for _ in 0..40 {
        q.push(Arc::clone(&drops)).unwrap();
    }
    assert_eq!(Arc::strong_count(&drops), 41);
    drop(q);
    assert_eq!(Arc::strong_count(&drops), 1);
}

/// Producers pushing while the consumer inflates lose nothing, repeat
/// nothing, and keep their order.
#[test]
fn producers_racing_the_inflation_keep_their_order() {
    race_the_inflation(|q, _| q.inflate());
}

/// The same with the consumer inflating as a stream's does, taking what
/// is still queued as it switches (`inflate_into`). With no bound on what
/// it takes (a pooled activation takes up to a batch), the first try
/// switches, with the producers' messages in the queue: left there, they
/// would be lost, and the test fails (checked).
#[test]
fn producers_racing_an_inflation_that_takes_keep_their_order() {
    race_the_inflation(|q, out| q.inflate_into(out, usize::MAX).is_some());
}

/// How a race's consumer inflates: may append to its batch.
type Inflate = fn(&CompactMpsc<(u64, u64)>, &mut Vec<(u64, u64)>) -> bool;

/// Three producers push while the consumer drains, and from a third of
/// the way on tries `inflate` before each drain until it has.
fn race_the_inflation(inflate: Inflate) {
    const EACH: u64 = if cfg!(miri) { 200 } else { 20_000 };
    /// What the consumer pushes itself after going idle, to be scheduled
    /// again (nobody runs this test's activations): not counted.
    const MARK: u64 = 9;
    let (q, _) = pooled::<(u64, u64)>();
    let q = Arc::new(q);
    let producers: Vec<_> = (0..3)
        .map(|p| {
            let q = Arc::clone(&q);
            std::thread::spawn(move || {
                for i in 0..EACH {
                    q.push((p, i)).unwrap();
                }
            })
        })
        .collect();
    let mut next = [0; 3];
    let mut out = Vec::new();
    let mut take = |out: &mut Vec<(u64, u64)>| {
        for (p, i) in out.drain(..).filter(|&(p, _)| p != MARK) {
            assert_eq!(i, next[p as usize], "producer {p}'s order");
            next[p as usize] += 1;
        }
        next.iter().sum::<u64>()
    };
    let mut inflated = false;
    let mut done = 0;
    while done < 3 * EACH {
        if !inflated && done >= EACH {
            inflated = inflate(&q, &mut out);
        }
        match q.poll_batch(&mut out, 7) {
            Polled::Got(_) | Polled::Busy => {}
            Polled::Idle => {
                q.push((MARK, 0)).unwrap();
            }
            Polled::Closed => unreachable!(),
        }
        done = take(&mut out);
    }
    for p in producers {
        p.join().unwrap();
    }
    // Where the queue was never empty enough at a try (the producers kept
    // ahead), it inflates now, with no race: still checked, what matters
    // ran.
    inflated = inflated || q.inflate();
    assert!(inflated && q.lane().is_some());
}

/// The line a push asks for ahead of the next ones: inside the buffer,
/// `AHEAD` bytes past the end of the slot just written, while the buffer
/// has room for the slots up to it; none for a one-slot buffer (an actor
/// that gets a message at a time) or a buffer about to fill.
#[test]
fn a_push_fetches_a_line_ahead_only_inside_a_buffer_with_room() {
    type Slot = [u64; 4];
    let size = mem::size_of::<Slot>();
    let mut lone: VecDeque<Slot> = VecDeque::new();
    lone.reserve_exact(1);
    lone.push_back([0; 4]);
    assert_eq!(line_ahead(&lone), None, "one slot: nothing to fetch");

    let mut q: VecDeque<Slot> = VecDeque::with_capacity(64);
    assert_eq!(line_ahead(&q), None, "empty: no slot written yet");
    let cap = q.capacity();
    let ahead = prefetch::AHEAD / size;
    for i in 0..cap {
        q.push_back([i as u64; 4]);
        let start = q.as_slices().0.as_ptr() as usize;
        let end = start + cap * size;
        match line_ahead(&q) {
            Some(at) => {
                assert!(
                    q.len() + ahead < cap,
                    "len {}: fetched without room",
                    q.len()
                );
                let last = q.back().unwrap() as *const Slot as usize;
                assert_eq!(at as usize, last + size + prefetch::AHEAD);
                assert!(
                    at as usize >= start && (at as usize) < end,
                    "len {}",
                    q.len()
                );
            }
            None => assert!(q.len() + ahead >= cap, "len {}: room, not fetched", q.len()),
        }
    }
    assert_eq!(line_ahead(&VecDeque::from(vec![(); 8])), None, "zero-sized");
}
