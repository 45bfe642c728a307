//! Every mailbox kind under fan-in: exactly-once delivery, per-producer FIFO,
//! exact counts, and no leaked or doubly dropped message, through the
//! public `Mailbox` API and through actors.
//!
//! Producers start together on a barrier; nothing here depends on timing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;

use kaspar::mailbox::{Drained, Mailbox, WhenFull};
use kaspar::prelude::*;

const PRODUCERS: [usize; 4] = [1, 2, 8, 32];
/// Messages per (kind, producer count) run, split across the producers.
const TOTAL: usize = 32_000;

fn kinds() -> Vec<MailboxKind> {
    vec![
        MailboxKind::BQueue { capacity: 256 },
        MailboxKind::BQueueBatched { capacity: 256 },
        MailboxKind::Sharded {
            lanes: 4,
            capacity: 256,
        },
        MailboxKind::LockFree {
            capacity: 64,
            when_full: WhenFull::Wait,
        },
        // Rejecting: the producers retry what comes back.
        MailboxKind::LockFree {
            capacity: 64,
            when_full: WhenFull::Reject,
        },
        MailboxKind::Compact,
    ]
}

/// Checks that `seen` holds, for each producer `p < producers`, exactly the
/// sequence `0..each` in order, and nothing else.
fn assert_exactly_once_in_order(
    kind: MailboxKind,
    seen: &[(usize, usize)],
    producers: usize,
    each: usize,
) {
    assert_eq!(seen.len(), producers * each, "{kind:?}: count");
    let mut next = vec![0usize; producers];
    for &(p, i) in seen {
        assert_eq!(
            i, next[p],
            "{kind:?}: producer {p} out of order or duplicated"
        );
        next[p] += 1;
    }
    assert!(
        next.iter().all(|&n| n == each),
        "{kind:?}: missing messages"
    );
}

/// Pushes, retrying a `Full` (the message comes back in the error).
fn push_retrying<T>(mut send: impl FnMut(T) -> Result<(), SendError<T>>, mut msg: T) {
    loop {
        match send(msg) {
            Ok(()) => return,
            Err(SendError::Full { msg: m, .. }) => {
                msg = m;
                thread::yield_now();
            }
            Err(SendError::Closed { .. }) => panic!("closed while producers run"),
            Err(e @ SendError::Deadlock { .. }) => panic!("no thread here waits: {e:?}"),
        }
    }
}

#[test]
fn mailbox_api_fan_in_exactly_once_fifo() {
    for kind in kinds() {
        for producers in PRODUCERS {
            let each = TOTAL / producers;
            let q = Arc::new(Mailbox::<(usize, usize)>::new(kind));
            let start = Arc::new(Barrier::new(producers + 1));
            let handles: Vec<_> = (0..producers)
                .map(|p| {
                    let (q, start) = (Arc::clone(&q), Arc::clone(&start));
                    thread::spawn(move || {
                        start.wait();
                        for i in 0..each {
                            push_retrying(|m| q.push(m).map(drop), (p, i));
                        }
                    })
                })
                .collect();
            let consumer = {
                let q = Arc::clone(&q);
                thread::spawn(move || {
                    let mut seen = Vec::with_capacity(TOTAL);
                    let mut batches = 0usize;
                    while let Drained::Got(n) = q.pop_batch(&mut seen, 64, IdleWait::Park) {
                        assert!((1..=64).contains(&n));
                        batches += 1;
                    }
                    (seen, batches)
                })
            };
            start.wait();
            for h in handles {
                h.join().unwrap();
            }
            q.close();
            let (seen, batches) = consumer.join().unwrap();
            assert!(batches >= 1);
            assert_exactly_once_in_order(kind, &seen, producers, each);
            assert!(q.is_empty());
        }
    }
}

struct Item {
    producer: usize,
    seq: usize,
}

#[derive(Default)]
struct Log {
    seen: Vec<(usize, usize)>,
}

#[actor]
pub struct Sink {
    log: Arc<Mutex<Log>>,
}

#[actor]
impl Sink {
    #[handler(Item)]
    fn on_item(&mut self, msg: Item, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().seen.push((msg.producer, msg.seq));
    }
}

#[test]
fn actors_fan_in_exactly_once_fifo() {
    for kind in kinds() {
        for producers in PRODUCERS {
            let each = TOTAL / producers;
            let log = Arc::new(Mutex::new(Log::default()));
            let system = System::new();
            let sink = system
                .spawn(Sink {
                    log: Arc::clone(&log),
                })
                .mailbox(kind)
                .start();
            let start = Arc::new(Barrier::new(producers));
            let handles: Vec<_> = (0..producers)
                .map(|p| {
                    let (sink, start) = (sink.clone(), Arc::clone(&start));
                    thread::spawn(move || {
                        start.wait();
                        for seq in 0..each {
                            push_retrying(|m| sink.send(m), Item { producer: p, seq });
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            // Shutdown drains what was accepted before the actor stops.
            let report = system.shutdown();
            assert_eq!(report.stopped.len(), 1);
            let log = log.lock().unwrap();
            assert_exactly_once_in_order(kind, &log.seen, producers, each);
        }
    }
}

/// Forwards each sequence number to the sink as its producer's item.
#[actor]
pub struct Forwarder {
    producer: usize,
    to: Addr<Sink>,
}

#[actor]
impl Forwarder {
    #[handler(usize)]
    fn forward(&mut self, seq: usize, _ctx: &mut Ctx<Self>) {
        let producer = self.producer;
        push_retrying(|m| self.to.send(m), Item { producer, seq });
    }
}

/// Per-sender FIFO holds for a pooled sender, whose activations move
/// between the pool's threads: its sends keep to one lane of a `Sharded`
/// mailbox (the lane was the thread's, and a pooled relay's items came out
/// of order), and to every other kind's order.
#[test]
fn pooled_senders_keep_their_order_into_every_kind() {
    const RELAYS: usize = 4;
    const EACH: usize = 20_000;
    for kind in kinds() {
        let log = Arc::new(Mutex::new(Log::default()));
        let system = System::with_config(kaspar::SystemConfig {
            pool: kaspar::PoolConfig::new().workers(2),
            ..kaspar::SystemConfig::default()
        });
        let sink = system
            .spawn(Sink {
                log: Arc::clone(&log),
            })
            .mailbox(kind)
            .max_batch(1)
            .start();
        let relays: Vec<_> = (0..RELAYS)
            .map(|producer| {
                system
                    .spawn(Forwarder {
                        producer,
                        to: sink.clone(),
                    })
                    .pooled()
                    .start()
            })
            .collect();
        for seq in 0..EACH {
            for relay in &relays {
                relay.send(seq).unwrap();
            }
        }
        drop((relays, sink));
        // Shutdown stops the relays (newest first), then the sink, each
        // draining what it accepted.
        system.shutdown();
        let log = log.lock().unwrap();
        assert_exactly_once_in_order(kind, &log.seen, RELAYS, EACH);
    }
}

// Mailboxes chosen by the attribute rather than at spawn.

#[actor(mailbox = MailboxKind::Sharded { lanes: 8, capacity: 128 })]
pub struct ShardedSink {
    log: Arc<Mutex<Log>>,
}

#[actor]
impl ShardedSink {
    #[handler(Item)]
    fn on_item(&mut self, msg: Item, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().seen.push((msg.producer, msg.seq));
    }
}

#[actor(mailbox = MailboxKind::BQueueBatched { capacity: 128 })]
pub struct BatchedSink {
    log: Arc<Mutex<Log>>,
}

#[actor]
impl BatchedSink {
    #[handler(Item)]
    fn on_item(&mut self, msg: Item, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().seen.push((msg.producer, msg.seq));
    }
}

#[test]
fn attribute_chosen_mailboxes_fan_in() {
    let producers = 8;
    let each = TOTAL / producers;
    let system = System::new();
    let (slog, blog) = (
        Arc::new(Mutex::new(Log::default())),
        Arc::new(Mutex::new(Log::default())),
    );
    let sharded = system
        .spawn(ShardedSink {
            log: Arc::clone(&slog),
        })
        .start();
    let batched = system
        .spawn(BatchedSink {
            log: Arc::clone(&blog),
        })
        .start();
    let start = Arc::new(Barrier::new(producers));
    let handles: Vec<_> = (0..producers)
        .map(|p| {
            let (sharded, batched, start) = (sharded.clone(), batched.clone(), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                for seq in 0..each {
                    sharded.send(Item { producer: p, seq }).unwrap();
                    batched.send(Item { producer: p, seq }).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    system.shutdown();
    let kind = MailboxKind::Sharded {
        lanes: 8,
        capacity: 128,
    };
    assert_exactly_once_in_order(kind, &slog.lock().unwrap().seen, producers, each);
    let kind = MailboxKind::BQueueBatched { capacity: 128 };
    assert_exactly_once_in_order(kind, &blog.lock().unwrap().seen, producers, each);
}

/// A message that counts its drops.
struct Counted {
    drops: Arc<AtomicUsize>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn mailbox_api_drops_each_message_exactly_once() {
    for kind in kinds() {
        let drops = Arc::new(AtomicUsize::new(0));
        let made = Arc::new(AtomicUsize::new(0));
        let q = Arc::new(Mailbox::new(kind));
        let new_msg = || {
            made.fetch_add(1, Ordering::Relaxed);
            Counted {
                drops: Arc::clone(&drops),
            }
        };
        // More than a bounded ring holds: the rest come back as `Full`
        // (or spill, for the unbounded kinds).
        let mut handed_back = 0;
        for _ in 0..100 {
            match q.try_push_for_test(new_msg()) {
                Ok(()) => {}
                Err(e) => {
                    assert!(e.is_full(), "{kind:?}");
                    handed_back += 1;
                    drop(e.into_inner());
                }
            }
        }
        assert_eq!(drops.load(Ordering::Relaxed), handed_back, "{kind:?}");
        let mut out = Vec::new();
        let taken = q.try_pop_batch(&mut out, 10);
        drop(out);
        assert_eq!(
            drops.load(Ordering::Relaxed),
            handed_back + taken,
            "{kind:?}"
        );
        q.close();
        let refused = q.push(new_msg()).unwrap_err();
        assert!(refused.is_closed(), "{kind:?}");
        drop(refused);
        // Still queued at drop time: dropped with the mailbox, once each.
        drop(Arc::try_unwrap(q).ok().expect("one owner left"));
        assert_eq!(
            drops.load(Ordering::Relaxed),
            made.load(Ordering::Relaxed),
            "{kind:?}"
        );
    }
}

trait TryPushForTest<T> {
    /// `push`, except that a `LockFree` mailbox configured to wait is not
    /// allowed to (nobody drains here): it is tried once.
    fn try_push_for_test(&self, msg: T) -> Result<(), SendError<T>>;
}

impl<T> TryPushForTest<T> for Mailbox<T> {
    fn try_push_for_test(&self, msg: T) -> Result<(), SendError<T>> {
        match self {
            Mailbox::LockFree(q) => q.try_push(msg).map(drop),
            other => other.push(msg).map(drop),
        }
    }
}

#[actor]
pub struct CountingSink {
    handled: Arc<AtomicUsize>,
}

struct Job(#[allow(dead_code)] Counted);

#[actor]
impl CountingSink {
    #[handler(Job)]
    fn on_job(&mut self, _job: Job, _ctx: &mut Ctx<Self>) {
        self.handled.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn actors_drain_at_shutdown_and_drop_each_message_once() {
    for kind in kinds() {
        let drops = Arc::new(AtomicUsize::new(0));
        let handled = Arc::new(AtomicUsize::new(0));
        let system = System::new();
        let sink = system
            .spawn(CountingSink {
                handled: Arc::clone(&handled),
            })
            .mailbox(kind)
            .start();
        let sent = 5_000;
        for _ in 0..sent {
            let job = Job(Counted {
                drops: Arc::clone(&drops),
            });
            push_retrying(|m| sink.send(m), job);
        }
        // Many may still be queued: shutdown must handle them, not drop them.
        system.shutdown();
        assert_eq!(handled.load(Ordering::Relaxed), sent, "{kind:?}");
        let late = sink
            .send(Job(Counted {
                drops: Arc::clone(&drops),
            }))
            .unwrap_err();
        assert!(late.is_closed(), "{kind:?}");
        drop(late);
        drop(sink);
        assert_eq!(drops.load(Ordering::Relaxed), sent + 1, "{kind:?}");
    }
}

#[actor(mailbox = MailboxKind::LockFree { capacity: 2, when_full: kaspar::mailbox::WhenFull::Reject })]
pub struct Gate {
    entered: std::sync::mpsc::Sender<()>,
    release: Arc<Mutex<std::sync::mpsc::Receiver<()>>>,
}

struct Hold;
struct Pass(#[allow(dead_code)] u32);

#[actor]
impl Gate {
    #[handler(Hold)]
    fn on_hold(&mut self, _msg: Hold, _ctx: &mut Ctx<Self>) {
        self.entered.send(()).unwrap();
        self.release.lock().unwrap().recv().unwrap();
    }

    #[handler(Pass)]
    fn on_pass(&mut self, _msg: Pass, _ctx: &mut Ctx<Self>) {}
}

/// The attribute's bounded, rejecting ring is the one the actor got: while
/// its handler is held, the third queued message is handed back as `Full`.
#[test]
fn attribute_lockfree_reject_hands_back_full() {
    let (entered_tx, entered_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel();
    let system = System::new();
    let gate = system
        .spawn(Gate {
            entered: entered_tx,
            release: Arc::new(Mutex::new(release_rx)),
        })
        .start();
    gate.send(Hold).unwrap();
    entered_rx.recv().unwrap();
    gate.send(Pass(1)).unwrap();
    gate.send(Pass(2)).unwrap();
    let full = gate.send(Pass(3)).unwrap_err();
    assert!(full.is_full());
    let Pass(n) = full.into_inner();
    assert_eq!(n, 3);
    release_tx.send(()).unwrap();
    system.shutdown();
}
