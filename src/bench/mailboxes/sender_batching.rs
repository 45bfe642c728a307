//! Sender batching: each side builds its whole burst and pushes it under
//! one lock of a bench-local queue, which no kaspar mailbox offers (by
//! design), in a two-thread harness that does what the run loop does; the
//! same harness over `BQueueBatched` is its control.

use std::sync::Arc;
use std::time::Instant;

use kaspar::mailbox::{Drained, Mailbox};
use kaspar::prelude::*;

use super::PINGPONG_BURST;

/// The batched queue, plus `push_burst`: the sender builds and pushes a
/// whole burst while holding the queue's lock.
#[derive(Default)]
struct LockedBurstQueue {
    state: parking_lot::Mutex<BurstState>,
    nonempty: parking_lot::Condvar,
}

#[derive(Default)]
struct BurstState {
    queue: std::collections::VecDeque<u64>,
    closed: bool,
    sleeping: bool,
}

impl LockedBurstQueue {
    fn push_burst(&self, balls: impl Iterator<Item = u64>) {
        let mut st = self.state.lock();
        let was_empty = st.queue.is_empty();
        for b in balls {
            st.queue.push_back(std::hint::black_box(b));
        }
        let wake = was_empty && st.sleeping;
        drop(st);
        if wake {
            self.nonempty.notify_one();
        }
    }

    fn pop_all(&self, out: &mut Vec<u64>) -> bool {
        let mut st = self.state.lock();
        loop {
            if !st.queue.is_empty() {
                out.extend(st.queue.drain(..));
                return true;
            }
            if st.closed {
                return false;
            }
            st.sleeping = true;
            self.nonempty.wait(&mut st);
            st.sleeping = false;
        }
    }

    fn close(&self) {
        self.state.lock().closed = true;
        self.nonempty.notify_all();
    }
}

/// One side's mailbox in the two-thread harness.
enum Side {
    Kaspar(Box<Mailbox<u64>>),
    SenderBatched(LockedBurstQueue),
}

impl Side {
    fn new(sender_batching: bool) -> Self {
        if sender_batching {
            Side::SenderBatched(LockedBurstQueue::default())
        } else {
            Side::Kaspar(Box::new(Mailbox::new(MailboxKind::BQueueBatched {
                capacity: 1024,
            })))
        }
    }

    fn send_all(&self, balls: impl Iterator<Item = u64>) {
        match self {
            Side::Kaspar(q) => {
                for b in balls {
                    q.push(b).expect("open");
                }
            }
            Side::SenderBatched(q) => q.push_burst(balls),
        }
    }

    fn drain(&self, out: &mut Vec<u64>) -> bool {
        match self {
            Side::Kaspar(q) => {
                q.pop_batch(out, PINGPONG_BURST as usize, IdleWait::Park) != Drained::Closed
            }
            Side::SenderBatched(q) => q.pop_all(out),
        }
    }

    fn close(&self) {
        match self {
            Side::Kaspar(q) => q.close(),
            Side::SenderBatched(q) => q.close(),
        }
    }
}

/// The ping-pong on two plain threads, each draining its queue and handling
/// a batch under one state lock, as the run loop does. Pong answers each
/// drained batch with one `send_all`.
pub(super) fn pingpong_threads(sender_batching: bool, rounds: u64) -> f64 {
    let rounds = rounds.max(PINGPONG_BURST) / PINGPONG_BURST * PINGPONG_BURST;
    let to_ping = Arc::new(Side::new(sender_batching));
    let to_pong = Arc::new(Side::new(sender_batching));
    let pong = {
        let (to_ping, to_pong) = (Arc::clone(&to_ping), Arc::clone(&to_pong));
        std::thread::spawn(move || {
            let state = parking_lot::Mutex::new(0u64);
            let mut batch = Vec::with_capacity(PINGPONG_BURST as usize);
            while to_pong.drain(&mut batch) {
                let mut handled = state.lock();
                *handled += batch.len() as u64;
                to_ping.send_all(batch.drain(..));
            }
        })
    };
    let t0 = Instant::now();
    let state = parking_lot::Mutex::new((0u64, 0u64)); // (fired, back in burst)
    to_pong.send_all(0..PINGPONG_BURST);
    state.lock().0 = PINGPONG_BURST;
    let mut batch = Vec::with_capacity(PINGPONG_BURST as usize);
    'run: while to_ping.drain(&mut batch) {
        let mut st = state.lock();
        for ball in batch.drain(..) {
            std::hint::black_box(ball);
            st.1 += 1;
            if st.1 == PINGPONG_BURST {
                st.1 = 0;
                if st.0 >= rounds {
                    break 'run;
                }
                let first = st.0;
                to_pong.send_all(first..first + PINGPONG_BURST);
                st.0 += PINGPONG_BURST;
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    to_pong.close();
    to_ping.close();
    pong.join().unwrap();
    rounds as f64 / secs / 1e6
}
