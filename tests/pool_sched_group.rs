//! A group on the pool is one schedulable unit: its members keep the one
//! queue (one total order of the group's inputs), the one lock (members'
//! calls to each other stay nested entries), their hooks and shutdown;
//! sends from outside and between members schedule the group. A group
//! whose members a factory builds on its thread is refused.

use std::sync::{Arc, Mutex};

use kaspar::prelude::*;
use kaspar::{PoolConfig, SystemConfig};

pub struct Tick(pub u64);
pub struct Total;

#[actor]
pub struct Feed {
    book: Option<Addr<Book>>,
    seen: Vec<u64>,
}

#[actor]
impl Feed {
    #[handler(Addr<Book>)]
    fn wire(&mut self, book: Addr<Book>, _ctx: &mut Ctx<Self>) {
        self.book = Some(book);
    }

    /// Records the tick, then hands it to the book twice: queued, and
    /// synchronously (a nested entry under the group's one lock).
    #[handler(Tick)]
    fn tick(&mut self, t: Tick, _ctx: &mut Ctx<Self>) -> u64 {
        self.seen.push(t.0);
        let book = self.book.as_ref().expect("wired");
        book.send(Tick(t.0)).unwrap();
        book.fast_send(Tick(t.0)).unwrap()
    }

    #[handler(Total)]
    fn total(&mut self, _t: Total, _ctx: &mut Ctx<Self>) -> Vec<u64> {
        self.seen.clone()
    }
}

#[actor]
pub struct Book {
    sum: u64,
    log: Arc<Mutex<Vec<String>>>,
}

#[actor]
impl Book {
    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push("book started".into());
    }

    #[handler(Tick)]
    fn tick(&mut self, t: Tick, _ctx: &mut Ctx<Self>) -> u64 {
        self.sum += t.0;
        self.sum
    }

    #[handler(Total)]
    fn total(&mut self, _t: Total, _ctx: &mut Ctx<Self>) -> u64 {
        self.sum
    }

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {
        self.log
            .lock()
            .unwrap()
            .push(format!("book stopped at {}", self.sum));
    }
}

#[group]
pub struct Desk {
    pub feed: Addr<Feed>,
    pub book: Addr<Book>,
}

fn pool_of(workers: usize) -> System {
    System::with_config(SystemConfig {
        pool: PoolConfig::new().workers(workers),
        ..SystemConfig::default()
    })
}

#[test]
fn a_pooled_group_keeps_its_order_its_lock_and_its_hooks() {
    let system = pool_of(2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let desk = system
        .spawn_group::<Desk>((
            Feed {
                book: None,
                seen: Vec::new(),
            },
            Book {
                sum: 0,
                log: Arc::clone(&log),
            },
        ))
        .pooled()
        .start();
    desk.feed.send(desk.book.clone()).unwrap();
    // From three threads at once: each sender's ticks in its order.
    let senders: Vec<_> = (0..3u64)
        .map(|s| {
            let feed = desk.feed.clone();
            std::thread::spawn(move || {
                for i in 0..100 {
                    feed.send(Tick(s * 1000 + i)).unwrap();
                }
            })
        })
        .collect();
    for t in senders {
        t.join().unwrap();
    }
    let seen = desk.feed.ask(Total).unwrap().wait().unwrap();
    assert_eq!(seen.len(), 300);
    for s in 0..3u64 {
        let mine: Vec<u64> = seen.iter().copied().filter(|v| v / 1000 == s).collect();
        assert_eq!(mine, (0..100).map(|i| s * 1000 + i).collect::<Vec<_>>());
    }
    let expected: u64 = seen.iter().sum::<u64>() * 2;
    // The queued half may still be in the group's queue: ask goes behind it.
    assert_eq!(desk.book.ask(Total).unwrap().wait().unwrap(), expected);
    assert_eq!(desk.book.fast_send(Tick(1)).unwrap(), expected + 1);
    assert_eq!(system.pooled_actors(), 1, "the group is one member");
    system.shutdown();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "book started".to_string(),
            format!("book stopped at {}", expected + 1)
        ]
    );
    assert!(desk.feed.is_stopped() && desk.book.is_stopped());
}

#[test]
fn a_group_built_on_its_own_thread_is_refused_by_the_pool() {
    let system = pool_of(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = system
            .spawn_group_with::<Desk>(move || {
                (
                    Feed {
                        book: None,
                        seen: Vec::new(),
                    },
                    Book { sum: 0, log },
                )
            })
            .pooled()
            .start();
    }))
    .unwrap_err();
    let msg = refused.downcast_ref::<String>().unwrap();
    assert!(msg.contains("cannot run on the pool"), "{msg}");
    system.shutdown();
}

pub struct Spin;
pub struct Note(pub u64);
pub struct Notes;

/// A member that sends itself the next `Spin` as it handles one: the
/// group's queue never empties.
#[actor]
pub struct Spinner {
    spins: Arc<std::sync::atomic::AtomicU64>,
}

#[actor]
impl Spinner {
    #[handler(Spin)]
    fn spin(&mut self, _s: Spin, ctx: &mut Ctx<Self>) {
        self.spins
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let _ = ctx.myself().send(Spin);
    }
}

#[actor]
pub struct Quiet {
    notes: Vec<u64>,
}

#[actor]
impl Quiet {
    #[handler(Note)]
    fn note(&mut self, n: Note, _ctx: &mut Ctx<Self>) {
        self.notes.push(n.0);
    }

    #[handler(Notes)]
    fn notes(&mut self, _n: Notes, _ctx: &mut Ctx<Self>) -> Vec<u64> {
        self.notes.clone()
    }
}

#[group]
pub struct Churn {
    pub spinner: Addr<Spinner>,
    pub quiet: Addr<Quiet>,
}

/// A pooled group serves on past its budget only while nothing else
/// waits: an actor beside it on the pool's one worker, sent to from
/// outside, still runs (its schedule waits in the injector, which ends
/// the group's activation at its next budget).
#[test]
fn a_busy_pooled_group_does_not_starve_an_actor_on_its_worker() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let system = System::with_config(SystemConfig {
            pool: PoolConfig::new().workers(1).budget(16),
            ..SystemConfig::default()
        });
        let spins = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let churn = system
            .spawn_group::<Churn>((
                Spinner {
                    spins: Arc::clone(&spins),
                },
                Quiet { notes: Vec::new() },
            ))
            .pooled()
            .start();
        for _ in 0..4 {
            churn.spinner.send(Spin).unwrap();
        }
        while spins.load(std::sync::atomic::Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        let beside = system.spawn(Quiet { notes: Vec::new() }).pooled().start();
        for i in 0..100 {
            beside.send(Note(i)).unwrap();
        }
        let notes = beside.ask(Notes).unwrap().wait().unwrap();
        churn.spinner.stop();
        system.shutdown();
        let _ = done.send(notes);
    });
    let notes = finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("watchdog: the actor beside a busy pooled group never ran");
    assert_eq!(notes, (0..100).collect::<Vec<_>>());
}
