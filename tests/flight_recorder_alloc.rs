//! A flight recorder allocates nothing per message: its ring is allocated
//! when it is made, and recording encodes into a slot of it. Counted
//! exactly with a counting global allocator, for a standalone actor and a
//! group. One test function, so no other test in this binary allocates
//! while it measures (see `kaspar_suite::alloc`).

use kaspar::journal::{FlightRecord, FlightRecorder, JournalReader};
use kaspar::prelude::*;
use kaspar_suite::alloc::{allocations, warm_parking, Counting};
use serde::{Deserialize, Serialize};

#[global_allocator]
static GLOBAL: Counting = Counting;

pub struct Order {
    pub id: u64,
    pub price: i64,
}
/// Sent by the router to the book through the group's queue: handled from
/// the queue, skipped by the encoder.
pub struct Booked(pub u64);

#[actor]
pub struct Book {
    notional: i64,
    booked: u64,
}

#[actor]
impl Book {
    #[handler(Order)]
    fn order(&mut self, msg: Order, _ctx: &mut Ctx<Self>) {
        self.notional += msg.price;
    }

    #[handler(Booked)]
    fn booked(&mut self, _msg: Booked, _ctx: &mut Ctx<Self>) {
        self.booked += 1;
    }
}

pub struct Route(pub Order);
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
        book.send(Booked(msg.0.id)).expect("member");
    }
}

#[group]
pub struct Desk {
    pub router: Addr<Router>,
    pub book: Addr<Book>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
enum Input {
    Order { id: u64, price: i64 },
}

fn encode_book(msg: &BookMsg, rec: FlightRecord<'_>) {
    if let BookMsg::Order(o, _) = msg {
        rec.input(&Input::Order {
            id: o.id,
            price: o.price,
        });
    }
}

fn encode_desk(msg: &DeskMsg, rec: FlightRecord<'_>) {
    if let DeskMsg::Router(RouterMsg::Route(r, _)) = msg {
        rec.input(&Input::Order {
            id: r.0.id,
            price: r.0.price,
        });
    }
}

const N: u64 = 20_000;
const CHUNK: u64 = 500;
/// Far fewer than `N`: the rings wrap many times while measured.
const KEEP: usize = 256;

fn wait_handled<A: kaspar::Actor>(a: &Addr<A>, n: u64) {
    while a.stats().handled < n {
        std::thread::yield_now();
    }
}

/// Sends `N` orders to the book in chunks, waiting for each; returns the
/// allocations made meanwhile.
fn burst_actor(book: &Addr<Book>) -> u64 {
    let base = book.stats().handled;
    let before = allocations();
    for id in 0..N {
        book.send(Order { id, price: 1 }).unwrap();
        if id % CHUNK == CHUNK - 1 {
            wait_handled(book, base + id + 1);
        }
    }
    wait_handled(book, base + N);
    allocations() - before
}

/// The same through the group: each order is one recorded input (the
/// router's) and one skipped message (the book's `Booked`).
fn burst_group(desk: &Desk) -> u64 {
    let base = desk.book.stats().handled;
    let before = allocations();
    for id in 0..N {
        desk.router.send(Route(Order { id, price: 1 })).unwrap();
        if id % CHUNK == CHUNK - 1 {
            wait_handled(&desk.book, base + id + 1);
        }
    }
    wait_handled(&desk.book, base + N);
    allocations() - before
}

#[test]
fn recording_allocates_nothing_per_message() {
    warm_parking();
    let system = System::new();

    let actor_recorder = FlightRecorder::with_slot_bytes(KEEP, 32, encode_book);
    let book = system
        .spawn(Book {
            notional: 0,
            booked: 0,
        })
        .flight_recorder(&actor_recorder)
        .start();
    let group_recorder = FlightRecorder::with_slot_bytes(KEEP, 32, encode_desk);
    let desk = system
        .spawn_group::<Desk>((
            Router { book: None },
            Book {
                notional: 0,
                booked: 0,
            },
        ))
        .flight_recorder(&group_recorder)
        .start();
    desk.router.send(Wire(desk.book.clone())).unwrap();

    // Warm up: the run loops' batches and the queues' blocks are
    // allocated here, and the rings fill.
    burst_actor(&book);
    burst_group(&desk);
    assert_eq!(actor_recorder.recorded(), N);
    assert_eq!(group_recorder.recorded(), N);

    let actor_allocs = burst_actor(&book);
    let group_allocs = burst_group(&desk);
    assert_eq!(actor_recorder.recorded(), 2 * N);
    assert_eq!(group_recorder.recorded(), 2 * N);
    assert_eq!(actor_recorder.lost() + group_recorder.lost(), 0);
    assert_eq!(
        (actor_allocs, group_allocs),
        (0, 0),
        "a recorded message allocated (actor, group)"
    );

    // The ring holds the newest orders, oldest first.
    let dump = actor_recorder.dump();
    assert_eq!(dump.records(), KEEP);
    assert!(!dump.from_start());
    let ids: Vec<Input> = JournalReader::<Input>::from_bytes(dump.into_bytes())
        .unwrap()
        .map(|r| r.unwrap().1)
        .collect();
    let newest: Vec<Input> = (N - KEEP as u64..N)
        .map(|id| Input::Order { id, price: 1 })
        .collect();
    assert_eq!(ids, newest);
    system.shutdown();
}
