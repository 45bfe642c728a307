//! Handler service times (`Spawn::record_latency`, `Addr::latency`):
//! recorded per message class, in every delivery mode, only when asked.
//! Counts are exact; durations are checked only where a bound is certain
//! (a handler that sleeps 2 ms takes at least 2 ms), never as a speed.

use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{ClassLatency, Supervision};

pub struct Quote(pub u64);
pub struct Trade(pub u64);
pub struct Cancel;
pub struct Nap(pub Duration);
pub struct Boom;

#[actor]
pub struct Desk {
    seen: u64,
}

#[actor]
impl Desk {
    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {
        self.seen = 0;
    }

    #[handler(Quote)]
    fn quote(&mut self, msg: Quote, _ctx: &mut Ctx<Self>) -> u64 {
        self.seen += msg.0;
        self.seen
    }

    #[handler(Trade)]
    fn trade(&mut self, msg: Trade, _ctx: &mut Ctx<Self>) {
        self.seen += msg.0;
    }

    #[handler(Cancel)]
    fn cancel(&mut self, _msg: Cancel, _ctx: &mut Ctx<Self>) {}

    #[handler(Nap)]
    fn nap(&mut self, msg: Nap, _ctx: &mut Ctx<Self>) {
        std::thread::sleep(msg.0);
    }

    #[handler(Boom)]
    fn boom(&mut self, _msg: Boom, _ctx: &mut Ctx<Self>) {
        panic!("boom (expected by the test)");
    }

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {}
}

fn desk(system: &System, record: bool) -> Addr<Desk> {
    system
        .spawn(Desk { seen: 0 })
        .record_latency(record)
        .supervise(Supervision::resume())
        .start()
}

fn class(addr: &Addr<Desk>, name: &str) -> ClassLatency {
    *addr
        .latency()
        .expect("recording")
        .class(name)
        .unwrap_or_else(|| panic!("no class {name}"))
}

fn assert_ordered(c: &ClassLatency) {
    assert!(
        c.p50 <= c.p90 && c.p90 <= c.p99 && c.p99 <= c.p999 && c.p999 <= c.max,
        "percentiles out of order: {c:?}"
    );
    assert!(c.mean <= c.max, "mean above max: {c:?}");
}

#[test]
fn an_actor_spawned_without_record_latency_has_no_histogram() {
    let system = System::new();
    let quiet = desk(&system, false);
    let default = system.spawn(Desk { seen: 0 }).start();
    for addr in [&quiet, &default] {
        addr.fast_send(Quote(1)).unwrap();
        addr.send(Trade(1)).unwrap();
    }
    system.shutdown();
    assert_eq!(quiet.stats().handled, 2, "the handlers ran");
    assert_eq!(quiet.latency(), None);
    assert_eq!(default.latency(), None);
}

#[test]
fn every_handler_run_is_counted_once_under_its_class_in_every_mode() {
    let system = System::new();
    let desk = desk(&system, true);
    let mut quotes = 0;
    for i in 0..50 {
        desk.fast_send(Quote(i)).unwrap();
        desk.fast_send_x(Quote(i)).unwrap_or_else(|e| {
            // Busy (the run loop holds the lock): deliver it another way,
            // so the expected count stays exact.
            desk.fast_send(e.into_message().expect("busy hands it back"))
                .unwrap()
        });
        quotes += 2;
    }
    for i in 0..30 {
        desk.ask(Quote(i)).unwrap().wait().unwrap();
        quotes += 1;
    }
    for i in 0..40 {
        // Inline or queued: handled once either way.
        desk.fast_send_void(Trade(i)).unwrap();
        desk.send(Trade(i)).unwrap();
    }
    for _ in 0..7 {
        desk.send(Cancel).unwrap();
    }
    // Shutdown drains the mailbox and joins the actor's thread: every
    // recording is done once it returns.
    system.shutdown();

    let latency = desk.latency().expect("recording");
    let counts: Vec<(&str, u64)> = latency.classes.iter().map(|c| (c.class, c.count)).collect();
    assert_eq!(
        counts,
        [
            ("Quote", quotes),
            ("Trade", 80),
            ("Cancel", 7),
            ("Nap", 0),
            ("Boom", 0)
        ],
        "one entry per handler, in impl order; the lifecycle hooks are not counted"
    );
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    assert_eq!(total, desk.stats().handled);
    for c in &latency.classes {
        assert_ordered(c);
        if c.count > 0 {
            assert!(c.max > Duration::ZERO, "a run takes some time: {c:?}");
        }
    }
    let table = latency.to_string();
    for name in ["Quote", "Trade", "Cancel", "Nap", "Boom"] {
        assert!(table.contains(name), "{name} missing from\n{table}");
    }
}

#[test]
fn a_handler_that_sleeps_2_ms_shows_at_least_2_ms() {
    let system = System::new();
    let desk = desk(&system, true);
    let nap = Duration::from_millis(2);
    desk.fast_send(Nap(nap)).unwrap();
    desk.send(Nap(nap)).unwrap();
    desk.fast_send(Cancel).unwrap();
    system.shutdown();

    let c = class(&desk, "Nap");
    assert_eq!(c.count, 2);
    assert_ordered(&c);
    // Percentiles are never below the true value, so every one of them
    // is at least the shortest run.
    assert!(c.p50 >= nap, "{c:?}");
    assert!(c.max >= nap, "{c:?}");
    assert!(c.mean >= nap, "{c:?}");
    let cancel = class(&desk, "Cancel");
    assert_eq!(cancel.count, 1);
    assert!(cancel.max < c.max, "classes are kept apart: {cancel:?}");
}

#[test]
fn a_panicking_run_is_recorded_like_any_other() {
    let system = System::new();
    let desk = desk(&system, true);
    assert!(desk.fast_send(Boom).is_err());
    desk.send(Boom).unwrap();
    desk.fast_send(Quote(1)).unwrap();
    system.shutdown();
    assert_eq!(desk.stats().panics, 2);
    assert_eq!(class(&desk, "Boom").count, 2);
    assert_eq!(class(&desk, "Quote").count, 1);
}

#[test]
fn a_prepared_actor_records_from_its_start_though_its_address_was_out_before() {
    let system = System::new();
    let prepared = system.prepare::<Desk>();
    let early = prepared.addr();
    early.send(Trade(1)).unwrap();
    assert_eq!(early.latency(), None, "not spawned yet");
    let desk = prepared
        .spawn(Desk { seen: 0 })
        .record_latency(true)
        .start();
    desk.fast_send(Quote(1)).unwrap();
    system.shutdown();
    let latency = early.latency().expect("the early address sees it too");
    assert_eq!(
        latency.class("Trade").unwrap().count,
        1,
        "queued before the start"
    );
    assert_eq!(latency.class("Quote").unwrap().count, 1);
}

// A group: the router's handler `fast_send`s the book, nested on the
// group's thread (or on the caller's, for a `fast_send` from outside).

pub struct Route(pub u64);
pub struct Price(pub u64);

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

    #[handler(Route)]
    fn route(&mut self, msg: Route, _ctx: &mut Ctx<Self>) -> u64 {
        let book = self.book.as_ref().expect("wired");
        book.fast_send(Price(msg.0)).expect("a group mate")
    }
}

#[actor]
pub struct Book {
    last: u64,
}

#[actor]
impl Book {
    #[handler(Price)]
    fn price(&mut self, msg: Price, _ctx: &mut Ctx<Self>) -> u64 {
        // Long enough that the router's own work is small beside it.
        std::thread::sleep(Duration::from_micros(50));
        self.last = msg.0;
        self.last
    }
}

#[group]
pub struct Venue {
    pub router: Addr<Router>,
    pub book: Addr<Book>,
}

#[test]
fn group_members_record_their_own_handlers_and_a_nested_call_lies_inside_its_caller() {
    let system = System::new();
    let venue = system
        .spawn_group::<Venue>((Router { book: None }, Book { last: 0 }))
        .record_latency(true)
        .start();
    venue.router.fast_send(Wire(venue.book.clone())).unwrap();
    for i in 0..20 {
        venue.router.send(Route(i)).unwrap();
        assert_eq!(venue.router.fast_send(Route(i)).unwrap(), i);
    }
    system.shutdown();

    let router = venue.router.latency().expect("members record");
    let book = venue.book.latency().expect("members record");
    let route = *router.class("Route").unwrap();
    let price = *book.class("Price").unwrap();
    assert_eq!(router.class("Wire").unwrap().count, 1);
    assert_eq!((route.count, price.count), (40, 40));
    // Each routing run contains exactly one pricing run, timed by the same
    // clock, and the sums are exact: the router's mean cannot be lower.
    assert!(route.mean >= price.mean, "{route:?} vs {price:?}");
    assert!(route.max >= price.max, "{route:?} vs {price:?}");
    assert!(price.p50 >= Duration::from_micros(50), "{price:?}");
}

#[test]
fn a_group_spawned_without_record_latency_has_no_histograms() {
    let system = System::new();
    let venue = system
        .spawn_group::<Venue>((Router { book: None }, Book { last: 0 }))
        .start();
    venue.router.fast_send(Wire(venue.book.clone())).unwrap();
    assert_eq!(venue.router.fast_send(Route(3)).unwrap(), 3);
    system.shutdown();
    assert_eq!(venue.router.latency(), None);
    assert_eq!(venue.book.latency(), None);
}

#[test]
fn a_prepared_group_records_once_spawned_with_record_latency() {
    let system = System::new();
    let prepared = system.prepare_group::<Venue>();
    let early = prepared.group();
    early.router.send(Wire(early.book.clone())).unwrap();
    early.router.send(Route(7)).unwrap();
    let venue = prepared
        .spawn((Router { book: None }, Book { last: 0 }))
        .record_latency(true)
        .start();
    // Queued behind the early messages (a `fast_send` here could run
    // before the queued `Wire`: it does not join the queue).
    assert_eq!(venue.router.ask(Route(8)).unwrap().wait().unwrap(), 8);
    system.shutdown();
    let router = early.router.latency().expect("the early addresses see it");
    assert_eq!(router.class("Wire").unwrap().count, 1);
    assert_eq!(router.class("Route").unwrap().count, 2);
    assert_eq!(
        early.book.latency().unwrap().class("Price").unwrap().count,
        2
    );
}
