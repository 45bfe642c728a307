//! Heap allocations on the delivery paths (standalone and grouped), counted exactly with a counting
//! global allocator. One test function, so no other test in this binary
//! allocates while it measures.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use kaspar::prelude::*;

use kaspar_suite::alloc::{allocations, warm_parking, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A message a little bigger than a pointer, with a reply.
pub struct Order {
    pub id: u64,
    pub price: i64,
    pub qty: u32,
}
pub struct Ack(pub u64);

/// Holds the book's lock (from the thread that `fast_send`s it) until
/// `release` is set, so its run loop cannot drain while a burst queues.
pub struct HoldUntil {
    pub holding: Arc<AtomicBool>,
    pub release: Arc<AtomicBool>,
}

#[actor]
pub struct Book {
    handled: u64,
    notional: i64,
}

#[actor]
impl Book {
    #[handler(HoldUntil)]
    fn hold(&mut self, msg: HoldUntil, _ctx: &mut Ctx<Self>) {
        msg.holding.store(true, Ordering::Release);
        while !msg.release.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
    }

    #[handler(Order)]
    fn order(&mut self, msg: Order, _ctx: &mut Ctx<Self>) -> Ack {
        self.handled += 1;
        self.notional += msg.price * i64::from(msg.qty);
        Ack(msg.id)
    }
}

/// Forwards every order to its group mate, inline and queued.
pub struct Relay(pub Order);

#[actor]
pub struct Router {
    book: Option<Addr<Book>>,
}

pub struct Wire(pub Addr<Book>);

#[actor]
impl Router {
    #[handler(Wire)]
    fn wire(&mut self, msg: Wire, _ctx: &mut Ctx<Self>) {
        self.book = Some(msg.0);
    }

    #[handler(Relay)]
    fn relay(&mut self, msg: Relay, _ctx: &mut Ctx<Self>) {
        let book = self.book.as_ref().expect("wired");
        let Ack(id) = book.fast_send(msg.0).expect("member");
        book.send(Order {
            id,
            price: 1,
            qty: 1,
        })
        .expect("member");
    }
}

/// Takes the book's acks as messages: `request`'s reply route.
#[actor]
pub struct Clerk {
    acked: Arc<AtomicU64>,
}

#[actor]
impl Clerk {
    #[handler(Ack)]
    fn ack(&mut self, _msg: Ack, _ctx: &mut Ctx<Self>) {
        self.acked.fetch_add(1, Ordering::Release);
    }
}

/// `n` requests from `from` on, in chunks below the ring's capacity,
/// each reply routed to `clerk`; returns once the clerk has them all.
fn requests(book: &Addr<Book>, clerk: &Addr<Clerk>, acked: &AtomicU64, from: u64, n: u64) {
    let mut sent = 0;
    while sent < n {
        for _ in 0..CHUNK {
            let id = from + sent;
            book.request(
                Order {
                    id,
                    price: 1,
                    qty: 1,
                },
                clerk,
            )
            .unwrap();
            sent += 1;
        }
        while acked.load(Ordering::Acquire) < from + sent {
            std::thread::yield_now();
        }
    }
}

#[group]
pub struct Desk {
    pub router: Addr<Router>,
    pub book: Addr<Book>,
}

const N: u64 = 20_000;
/// Ten times the default ring capacity (1024).
const BURST: u64 = 10 * 1024;

/// A thread that, on command, enters the book with `HoldUntil` and keeps
/// its lock until told to let go. Commands are plain atomics: nothing is
/// allocated to drive it while allocations are counted.
struct Holder {
    command: Arc<AtomicU64>,
    holding: Arc<AtomicBool>,
    release: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

const IDLE: u64 = 0;
const HOLD: u64 = 1;
const EXIT: u64 = 2;

impl Holder {
    fn start(book: &Addr<Book>) -> Holder {
        let command = Arc::new(AtomicU64::new(IDLE));
        let holding = Arc::new(AtomicBool::new(false));
        let release = Arc::new(AtomicBool::new(false));
        let (book, c, h, r) = (
            book.clone(),
            Arc::clone(&command),
            Arc::clone(&holding),
            Arc::clone(&release),
        );
        let thread = std::thread::spawn(move || {
            // This thread may park waiting for the lock inside a measured
            // burst: allocate its parking record now.
            warm_parking();
            Self::serve(&book, &c, &h, &r);
        });
        Holder {
            command,
            holding,
            release,
            thread,
        }
    }

    fn serve(book: &Addr<Book>, c: &AtomicU64, h: &Arc<AtomicBool>, r: &Arc<AtomicBool>) {
        loop {
            match c.load(Ordering::Acquire) {
                HOLD => {
                    book.fast_send(HoldUntil {
                        holding: Arc::clone(h),
                        release: Arc::clone(r),
                    })
                    .unwrap();
                    c.store(IDLE, Ordering::Release);
                }
                EXIT => return,
                _ => std::thread::yield_now(),
            }
        }
    }

    /// Returns once the holder is inside the book's handler.
    fn hold(&self) {
        self.holding.store(false, Ordering::Relaxed);
        self.release.store(false, Ordering::Relaxed);
        self.command.store(HOLD, Ordering::Release);
        while !self.holding.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
    }

    fn release(&self) {
        self.release.store(true, Ordering::Release);
        while self.command.load(Ordering::Acquire) != IDLE {
            std::thread::yield_now();
        }
    }

    fn stop(self) {
        self.command.store(EXIT, Ordering::Release);
        self.thread.join().unwrap();
    }
}
/// Below the default ring capacity (1024), so the ring never spills.
const CHUNK: u64 = 500;

/// Waits for the actor's thread by reading its counters, which takes no
/// lock: the measured phases then never contend, and the contended slow
/// path (parking) stays out of the count.
fn wait_handled(book: &Addr<Book>, n: u64) {
    while book.stats().handled < n {
        std::thread::yield_now();
    }
}

/// Sends `N` orders in chunks below the ring's capacity, waiting for each
/// chunk: the run loop's batch and the mailbox's first blocks or rings are
/// allocated here, before anything is counted.
fn warm_up_sends(book: &Addr<Book>) {
    let base = book.stats().handled;
    for id in 0..N {
        book.send(Order {
            id,
            price: 1,
            qty: 1,
        })
        .unwrap();
        if id % CHUNK == 0 {
            wait_handled(book, base + id);
        }
    }
    wait_handled(book, base + N);
}

/// Steady-state sends, in chunks below the ring's capacity: they must
/// allocate nothing.
fn steady_sends_allocate_nothing(book: &Addr<Book>, what: &str) {
    let base = book.stats().handled;
    let before = allocations();
    let mut sent = 0;
    while sent < N {
        for _ in 0..CHUNK {
            book.send(Order {
                id: sent,
                price: 2,
                qty: 3,
            })
            .unwrap();
            sent += 1;
        }
        wait_handled(book, base + sent);
    }
    let sends = allocations() - before;
    assert_eq!(sends, 0, "{what}: steady-state send must not allocate");
}

/// A burst of ten times the ring's capacity queued behind a held lock,
/// twice: the second must allocate nothing.
fn bursts_allocate_nothing(book: &Addr<Book>, what: &str) {
    // A burst of ten times the ring's capacity spills into the overflow
    // (`BQueueBatched`) or grows the queue by blocks (`Segmented`). The
    // first such burst may allocate; a second one no deeper must not (the
    // overflow keeps its capacity, the blocks are recycled). A holder
    // thread keeps the book's lock while each burst queues. The run loop
    // may still take one batch (up to `max_batch`) off the queue before it
    // waits for that lock, so how deep a burst of `n` gets varies by up to
    // a batch, and how many `Segmented` blocks a depth spans varies by one
    // with where in its block the burst starts. The warm-up burst is two
    // batches longer, so that it needs at least as much room as the
    // measured one whatever the scheduler does.
    let batch = kaspar::SystemConfig::default().max_batch as u64;
    let holder = Holder::start(book);
    let burst = |n: u64| {
        let handled_before = book.stats().handled;
        holder.hold();
        for id in 0..n {
            book.send(Order {
                id,
                price: 1,
                qty: 1,
            })
            .unwrap();
        }
        holder.release();
        wait_handled(book, handled_before + n + 1);
    };
    burst(BURST + 2 * batch); // warm-up: the queue grows past the burst's depth
    let before = allocations();
    burst(BURST);
    let bursts = allocations() - before;
    assert_eq!(
        bursts, 0,
        "{what}: a burst no deeper than an earlier one must not allocate"
    );
    // The run loop may hold one drained batch while it waits for the
    // lock (every unbounded kind drains up to `max_batch` at once);
    // everything else queued.
    assert!(book.stats().mailbox_high_water >= BURST - batch, "{what}");
    holder.stop();
}

#[test]
fn fast_send_and_steady_state_send_allocate_nothing() {
    let system = System::new();
    let book = system
        .spawn(Book {
            handled: 0,
            notional: 0,
        })
        .start();

    // This thread's sends may find a locked mailbox held by a drain
    // (`BQueueBatched`, below, drains whole batches under its lock) and
    // park once.
    warm_parking();
    // warm-up: thread-locals, parking_lot's tables, the run loop's batch
    for id in 0..N {
        book.fast_send(Order {
            id,
            price: 1,
            qty: 1,
        })
        .unwrap();
        book.fast_send_void(Order {
            id,
            price: 1,
            qty: 1,
        })
        .unwrap();
        book.send(Order {
            id,
            price: 1,
            qty: 1,
        })
        .unwrap();
        if id % CHUNK == 0 {
            wait_handled(&book, 3 * id);
        }
    }
    wait_handled(&book, 3 * N);

    let before = allocations();
    for id in 0..N {
        let Ack(a) = book
            .fast_send(Order {
                id,
                price: 2,
                qty: 3,
            })
            .unwrap();
        assert_eq!(a, id);
    }
    let fast = allocations() - before;
    assert_eq!(fast, 0, "fast_send (request + reply) must not allocate");

    // the same through a type-erased recipient (made before counting: a
    // recipient allocates once, when it is made)
    let recipient: Recipient<Order, Ack> = book.recipient();
    let before = allocations();
    for id in 0..N {
        let Ack(a) = recipient
            .fast_send(Order {
                id,
                price: 2,
                qty: 3,
            })
            .unwrap();
        assert_eq!(a, id);
    }
    let through_recipient = allocations() - before;
    assert_eq!(
        through_recipient, 0,
        "fast_send through a Recipient must not allocate"
    );

    steady_sends_allocate_nothing(&book, "the default mailbox");

    // ask: the reply slot is recycled through the asking thread's cache
    for id in 0..1_000 {
        book.ask(Order {
            id,
            price: 1,
            qty: 1,
        })
        .unwrap()
        .wait()
        .unwrap();
    }
    let before = allocations();
    for id in 0..N {
        let Ack(a) = book
            .ask(Order {
                id,
                price: 1,
                qty: 1,
            })
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(a, id);
    }
    let asks = allocations() - before;
    assert_eq!(
        asks, 0,
        "steady-state ask (request + reply handle) must not allocate"
    );

    // request: the reply goes to the clerk's mailbox through the port the
    // clerk's cell keeps for `Ack`, made by the first request (warm-up)
    let acked = Arc::new(AtomicU64::new(0));
    let clerk = system
        .spawn(Clerk {
            acked: Arc::clone(&acked),
        })
        .start();
    requests(&book, &clerk, &acked, 0, N);
    let before = allocations();
    requests(&book, &clerk, &acked, N, N);
    let requested = allocations() - before;
    assert_eq!(
        requested, 0,
        "steady-state request (the reply routed to an actor) must not allocate"
    );

    bursts_allocate_nothing(&book, "the default mailbox");
    // The same for each unbounded kind the default may be, explicitly.
    for kind in [MailboxKind::batched(1024), MailboxKind::segmented(1024)] {
        let other = system
            .spawn(Book {
                handled: 0,
                notional: 0,
            })
            .mailbox(kind)
            .start();
        let what = format!("{kind:?}");
        warm_up_sends(&other);
        steady_sends_allocate_nothing(&other, &what);
        bursts_allocate_nothing(&other, &what);
    }

    // A group: outside sends into its one queue, a member's inline
    // fast_send to its mate, and a member's send back onto the queue.
    let desk = system
        .spawn_group::<Desk>((
            Router { book: None },
            Book {
                handled: 0,
                notional: 0,
            },
        ))
        .start();
    desk.router.send(Wire(desk.book.clone())).unwrap();
    let relay = |id| {
        Relay(Order {
            id,
            price: 1,
            qty: 1,
        })
    };
    let run = |from: u64| {
        let mut sent = 0;
        while sent < N {
            for _ in 0..CHUNK / 2 {
                desk.router.send(relay(sent)).unwrap();
                sent += 1;
            }
            // each relay: one inline order and one queued order for the book
            wait_handled(&desk.book, 2 * (from + sent));
        }
    };
    run(0); // warm-up
    let before = allocations();
    run(N);
    let grouped = allocations() - before;
    assert_eq!(grouped, 0, "the group's envelope must not allocate");
    drop(system);
}
