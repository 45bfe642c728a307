//! Recording handler service times allocates nothing per message: the
//! histograms are allocated at spawn. Counted exactly with a counting
//! global allocator; one test function, so no other test in this binary
//! allocates while it measures (see `tests/alloc.rs`).

use kaspar::prelude::*;

use kaspar_suite::alloc::{allocations, warm_parking, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

pub struct Order(pub u64);

#[actor]
pub struct Book {
    total: u64,
}

#[actor]
impl Book {
    #[handler(Order)]
    fn order(&mut self, msg: Order, _ctx: &mut Ctx<Self>) -> u64 {
        self.total += msg.0;
        self.total
    }
}

/// Routes each order to its group mate, inline.
pub struct Route(pub u64);
pub struct Wire(pub Addr<Book>);

#[actor]
pub struct Router {
    book: Option<Addr<Book>>,
}

#[actor]
impl Router {
    #[handler(Wire)]
    fn wire(&mut self, msg: Wire, _ctx: &mut Ctx<Self>) {
        self.book = Some(msg.0);
    }

    #[handler(Route)]
    fn route(&mut self, msg: Route, _ctx: &mut Ctx<Self>) {
        let book = self.book.as_ref().expect("wired");
        book.fast_send(Order(msg.0)).expect("a group mate");
    }
}

#[group]
pub struct Desk {
    pub router: Addr<Router>,
    pub book: Addr<Book>,
}

const N: u64 = 20_000;
/// Below the default ring capacity (1024): the ring never spills.
const CHUNK: u64 = 500;

/// Runs `N` messages of every kind through `book` (standalone) and the
/// desk (a group), waiting for the queues by reading counters (no lock).
fn traffic(book: &Addr<Book>, desk: &Desk, round: u64) {
    for i in 0..N {
        book.fast_send(Order(i)).unwrap();
        book.fast_send_void(Order(i)).unwrap();
        book.send(Order(i)).unwrap();
        desk.router.send(Route(i)).unwrap();
        if i % CHUNK == 0 {
            wait_handled(book, desk, round * 3 * N + 3 * i, round * N + i);
        }
    }
    wait_handled(book, desk, (round + 1) * 3 * N, (round + 1) * N);
}

fn wait_handled(book: &Addr<Book>, desk: &Desk, standalone: u64, routed: u64) {
    while book.stats().handled < standalone || desk.book.stats().handled < routed {
        std::thread::yield_now();
    }
}

#[test]
fn recording_latency_allocates_nothing_per_message() {
    // This thread may park on a lock a run loop holds: allocate its
    // parking record before counting.
    warm_parking();
    let system = System::new();
    let book = system.spawn(Book { total: 0 }).record_latency(true).start();
    let desk = system
        .spawn_group::<Desk>((Router { book: None }, Book { total: 0 }))
        .record_latency(true)
        .start();
    desk.router.fast_send(Wire(desk.book.clone())).unwrap();

    // Warm-up: thread-locals, parking_lot's tables, the run loops' batches.
    traffic(&book, &desk, 0);
    let before = allocations();
    traffic(&book, &desk, 1);
    let during = allocations() - before;
    system.shutdown();

    assert_eq!(
        during, 0,
        "recording allocated {during} times in 5 x {N} handler runs"
    );
    let standalone = book.latency().expect("recording");
    assert_eq!(standalone.class("Order").unwrap().count, 3 * 2 * N);
    let routed = desk.router.latency().expect("recording");
    assert_eq!(routed.class("Route").unwrap().count, 2 * N);
    let nested = desk.book.latency().expect("recording");
    assert_eq!(nested.class("Order").unwrap().count, 2 * N);
}
