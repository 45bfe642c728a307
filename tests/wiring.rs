//! Wiring before the first message: `start` lets no synchronous caller in
//! before `#[started]`, `System::prepare` hands out an address before the
//! actor exists, and `System::spawn_with` builds the state on the actor's
//! own thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{AskError, ExitReason, Terminated};

pub struct Probe;
pub struct Note(pub u32);

#[actor]
pub struct Slow {
    ready: bool,
    notes: Vec<u32>,
}

#[actor]
impl Slow {
    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {
        // Long enough that a caller racing `start` would get in first.
        std::thread::sleep(Duration::from_millis(2));
        self.ready = true;
    }

    #[handler(Probe)]
    fn probe(&mut self, _p: Probe, _ctx: &mut Ctx<Self>) -> (bool, Vec<u32>) {
        (self.ready, self.notes.clone())
    }

    #[handler(Note)]
    fn note(&mut self, n: Note, _ctx: &mut Ctx<Self>) {
        self.notes.push(n.0);
    }
}

fn slow() -> Slow {
    Slow {
        ready: false,
        notes: Vec::new(),
    }
}

#[test]
fn a_fast_send_right_after_start_finds_started_done() {
    let system = System::new();
    for _ in 0..50 {
        let addr = system.spawn(slow()).start();
        let (ready, _) = addr.fast_send(Probe).unwrap();
        assert!(ready, "fast_send overtook the #[started] hook");
    }
    system.shutdown();
}

#[test]
fn a_fast_send_x_right_after_start_is_busy_not_early() {
    let system = System::new();
    let addr = system.spawn(slow()).start();
    // Either busy (the hook still runs) or after it: never before.
    match addr.fast_send_x(Probe) {
        Ok((ready, _)) => assert!(ready),
        Err(e) => assert!(e.is_busy(), "{e}"),
    }
    system.shutdown();
}

#[test]
fn a_prepared_actor_queues_sends_and_refuses_synchronous_calls_until_spawned() {
    let system = System::new();
    let prepared = system.prepare::<Slow>();
    let addr = prepared.addr();
    addr.send(Note(1)).unwrap();
    let err = addr.fast_send(Note(2)).unwrap_err();
    assert!(err.is_not_started(), "{err}");
    assert!(err.to_string().contains("not started"), "{err}");
    let Some(Note(2)) = err.into_message() else {
        panic!("the message was not handed back")
    };
    assert_eq!(addr.fast_send_void(Note(3)).unwrap(), Delivered::Queued);
    let early = addr.ask(Probe).unwrap();
    let addr = prepared.spawn(slow()).start();
    let (ready, notes) = early.wait().unwrap();
    assert!(ready, "queued messages run after #[started]");
    assert_eq!(notes, [1, 3], "queued in order, the refused one not at all");
    let (_, notes) = addr.fast_send(Probe).unwrap();
    assert_eq!(notes, [1, 3]);
    system.shutdown();
}

#[test]
fn a_prepared_actor_that_is_dropped_hands_its_queue_to_dead_letters() {
    let system = System::new();
    let prepared = system.prepare::<Slow>();
    let addr = prepared.addr();
    addr.send(Note(1)).unwrap();
    let pending = addr.ask(Probe).unwrap();
    drop(prepared);
    assert_eq!(
        pending.wait().unwrap_err(),
        AskError::Dropped(Some(addr.target()))
    );
    assert_eq!(system.dead_letters().counts().stopped, 2);
    assert!(addr.send(Note(2)).unwrap_err().is_closed());
    assert!(addr.fast_send(Note(3)).unwrap_err().is_closed());
    system.shutdown();
}

pub struct Quote(pub u64);
pub struct Total;

#[actor]
pub struct Book {
    risk: Addr<Risk>,
}

#[actor]
impl Book {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) {
        // Synchronous: the risk actor exists and is wired by construction.
        self.risk.fast_send(q).unwrap();
    }
}

#[actor]
pub struct Risk {
    book: Addr<Book>,
    seen: u64,
}

#[actor]
impl Risk {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) {
        let _ = &self.book;
        self.seen += q.0;
    }

    #[handler(Total)]
    fn total(&mut self, _t: Total, _ctx: &mut Ctx<Self>) -> u64 {
        self.seen
    }
}

#[test]
fn actors_that_need_each_other_are_wired_before_the_first_message() {
    // The shape that used to race: the first synchronous message right
    // after start, into actors wired with each other's addresses.
    for _ in 0..200 {
        let system = System::new();
        let risk = system.prepare::<Risk>();
        let book = system.spawn(Book { risk: risk.addr() }).start();
        let risk = risk
            .spawn(Risk {
                book: book.clone(),
                seen: 0,
            })
            .start();
        book.fast_send(Quote(5)).unwrap();
        assert_eq!(risk.fast_send(Total).unwrap(), 5);
        system.shutdown();
    }
}

#[test]
fn spawn_with_builds_the_state_on_the_actors_thread() {
    #[actor]
    pub struct Where {
        built_on: String,
    }
    #[actor]
    impl Where {
        #[handler(Probe)]
        fn probe(&mut self, _p: Probe, _ctx: &mut Ctx<Self>) -> (String, String) {
            let here = std::thread::current().name().unwrap_or("").to_owned();
            (self.built_on.clone(), here)
        }
    }
    let system = System::new();
    let addr = system
        .spawn_with(|| Where {
            built_on: std::thread::current().name().unwrap_or("").to_owned(),
        })
        .start();
    let (built_on, handled_on) = addr.ask(Probe).unwrap().wait().unwrap();
    assert!(built_on.starts_with("kaspar:Where"), "{built_on}");
    assert_eq!(built_on, handled_on);
    system.shutdown();
}

#[actor]
pub struct Watcher {
    seen: Arc<AtomicBool>,
}

#[actor]
impl Watcher {
    #[handler(Terminated)]
    fn terminated(&mut self, t: Terminated, _ctx: &mut Ctx<Self>) {
        assert_eq!(t.reason, ExitReason::Panicked);
        self.seen.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_factory_that_panics_stops_the_actor_before_it_started() {
    let system = System::new();
    let seen = Arc::new(AtomicBool::new(false));
    let watcher = system
        .spawn(Watcher {
            seen: Arc::clone(&seen),
        })
        .start();
    let prepared = system.prepare::<Slow>();
    let addr = prepared.addr();
    addr.watch(&watcher);
    let pending = addr.ask(Probe).unwrap();
    let _addr = prepared.spawn_with(|| panic!("the factory failed")).start();
    assert_eq!(
        pending.wait().unwrap_err(),
        AskError::Dropped(Some(addr.target()))
    );
    assert!(addr.fast_send(Probe).unwrap_err().is_closed());
    let report = system.shutdown();
    assert!(seen.load(Ordering::SeqCst), "watchers hear Panicked");
    assert_eq!(report.unfinished.len(), 0);
    assert_eq!(addr.stats().panics, 1);
}

// Groups: the same guarantees for members that need each other.

pub struct Tick(pub u64);

#[actor]
pub struct Strategy {
    orders: Addr<Orders>,
    ready: bool,
}

#[actor]
impl Strategy {
    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {
        std::thread::sleep(Duration::from_millis(2));
        self.ready = true;
    }

    #[handler(Tick)]
    fn tick(&mut self, t: Tick, _ctx: &mut Ctx<Self>) -> bool {
        // A member calling a member: wired at construction.
        self.orders.fast_send(Tick(t.0)).unwrap();
        self.ready
    }
}

#[actor]
pub struct Orders {
    strategy: Addr<Strategy>,
    sent: u64,
}

#[actor]
impl Orders {
    #[handler(Tick)]
    fn tick(&mut self, t: Tick, _ctx: &mut Ctx<Self>) {
        let _ = &self.strategy;
        self.sent += t.0;
    }

    #[handler(Total)]
    fn total(&mut self, _t: Total, _ctx: &mut Ctx<Self>) -> u64 {
        self.sent
    }
}

#[group]
pub struct Desk {
    pub strategy: Addr<Strategy>,
    pub orders: Addr<Orders>,
}

#[test]
fn group_members_that_need_each_other_are_wired_before_the_first_message() {
    for _ in 0..50 {
        let system = System::new();
        let prepared = system.prepare_group::<Desk>();
        let peers = prepared.group();
        let desk = prepared
            .spawn((
                Strategy {
                    orders: peers.orders.clone(),
                    ready: false,
                },
                Orders {
                    strategy: peers.strategy.clone(),
                    sent: 0,
                },
            ))
            .start();
        assert!(
            desk.strategy.fast_send(Tick(3)).unwrap(),
            "started ran first"
        );
        assert_eq!(desk.orders.fast_send(Total).unwrap(), 3);
        system.shutdown();
    }
}

#[test]
fn a_prepared_group_queues_and_refuses_like_a_prepared_actor() {
    let system = System::new();
    let prepared = system.prepare_group::<Desk>();
    let desk = prepared.group();
    desk.orders.send(Tick(2)).unwrap();
    assert!(desk.orders.fast_send(Total).unwrap_err().is_not_started());
    let total = desk.orders.ask(Total).unwrap();
    let peers = prepared.group();
    prepared
        .spawn_with({
            move || {
                (
                    Strategy {
                        orders: peers.orders.clone(),
                        ready: false,
                    },
                    Orders {
                        strategy: peers.strategy.clone(),
                        sent: 0,
                    },
                )
            }
        })
        .start();
    assert_eq!(total.wait().unwrap(), 2);
    system.shutdown();
}

#[test]
fn a_prepared_group_dropped_unspawned_hands_its_queue_to_dead_letters() {
    let system = System::new();
    let prepared = system.prepare_group::<Desk>();
    let desk = prepared.group();
    desk.orders.send(Tick(2)).unwrap();
    let pending = desk.orders.ask(Total).unwrap();
    drop(prepared);
    assert_eq!(
        pending.wait().unwrap_err(),
        AskError::Dropped(Some(desk.orders.target()))
    );
    assert_eq!(system.dead_letters().counts().stopped, 2);
    assert!(desk.strategy.send(Tick(1)).unwrap_err().is_closed());
    system.shutdown();
}
