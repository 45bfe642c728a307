//! Actor groups: one thread, one queue, one order; fast_send between
//! members without a second lock.

use std::sync::{Arc, Mutex};
use std::thread;

use kaspar::prelude::*;

type Log = Arc<Mutex<Vec<String>>>;

pub struct Tick(pub u64);
/// A member asks the book for its depth, synchronously.
pub struct Depth;
pub struct Forward(pub u64);
pub struct Connect(pub Addr<Book>);
pub struct Loop;

#[actor]
pub struct Feed {
    log: Log,
    book: Option<Addr<Book>>,
}

#[actor]
impl Feed {
    #[handler(Connect)]
    fn connect(&mut self, msg: Connect, _ctx: &mut Ctx<Self>) {
        self.book = Some(msg.0);
    }

    #[handler(Tick)]
    fn tick(&mut self, msg: Tick, _ctx: &mut Ctx<Self>) -> u64 {
        self.log.lock().unwrap().push(format!("feed {}", msg.0));
        let book = self.book.as_ref().expect("connected");
        // inline, on the group thread, under the lock it already holds
        let depth = book.fast_send(Forward(msg.0)).expect("book is a member");
        // and a queued hop: goes to the back of the group's one queue
        book.send(Tick(msg.0)).expect("book is open");
        depth
    }

    #[handler(Loop)]
    fn looped(&mut self, _msg: Loop, ctx: &mut Ctx<Self>) -> String {
        let book = self.book.as_ref().expect("connected");
        match book.fast_send(Loop) {
            Ok(s) => s,
            Err(e) => format!("{e}"),
        }
        .replace(&format!("{:?}", ctx.myself().id()), "#F")
    }

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push("feed stopped".into());
    }
}

#[actor]
pub struct Book {
    log: Log,
    depth: u64,
    feed: Option<Addr<Feed>>,
}

pub struct Back(pub Addr<Feed>);

#[actor]
impl Book {
    #[handler(Back)]
    fn back(&mut self, msg: Back, _ctx: &mut Ctx<Self>) {
        self.feed = Some(msg.0);
    }

    #[handler(Forward)]
    fn forward(&mut self, msg: Forward, _ctx: &mut Ctx<Self>) -> u64 {
        self.log
            .lock()
            .unwrap()
            .push(format!("book inline {}", msg.0));
        self.depth += 1;
        self.depth
    }

    #[handler(Tick)]
    fn tick(&mut self, msg: Tick, _ctx: &mut Ctx<Self>) {
        self.log
            .lock()
            .unwrap()
            .push(format!("book queued {}", msg.0));
    }

    #[handler(Depth)]
    fn get_depth(&mut self, _msg: Depth, _ctx: &mut Ctx<Self>) -> u64 {
        self.depth
    }

    #[handler(Loop)]
    fn looped(&mut self, _msg: Loop, _ctx: &mut Ctx<Self>) -> String {
        let feed = self.feed.as_ref().expect("connected");
        // The outcome goes back to the test thread, which checks it: an
        // assert here would only panic inside the handler.
        match feed.fast_send(Loop) {
            Ok(s) => s,
            Err(e) if e.is_cycle() => "cycle".into(),
            Err(e) => format!("not a cycle: {:?}", e.without_message()),
        }
    }

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push("book stopped".into());
    }
}

#[group]
pub struct Market {
    pub feed: Addr<Feed>,
    pub book: Addr<Book>,
}

fn market(system: &System, log: &Log) -> Market {
    let m = system
        .spawn_group::<Market>((
            Feed {
                log: log.clone(),
                book: None,
            },
            Book {
                log: log.clone(),
                depth: 0,
                feed: None,
            },
        ))
        .start();
    m.feed.send(Connect(m.book.clone())).unwrap();
    m.book.send(Back(m.feed.clone())).unwrap();
    m
}

#[test]
fn one_queue_gives_one_order_and_members_call_each_other_inline() {
    let log: Log = Arc::default();
    let system = System::new();
    let m = market(&system, &log);
    for i in 0..3 {
        m.feed.send(Tick(i)).unwrap();
    }
    // The ticks' queued hops join the queue while the ticks are handled,
    // so they are all in it before the first ask is answered and handled
    // before the second. (A shutdown closes the queue at once: hops sent
    // during the final drain would be refused as Closed.)
    m.book.ask(Depth).unwrap().wait().unwrap();
    assert_eq!(m.book.ask(Depth).unwrap().wait().unwrap(), 3);
    let report = system.shutdown();
    assert!(report.failed.is_empty());
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "feed 0",
            "book inline 0",
            "feed 1",
            "book inline 1",
            "feed 2",
            "book inline 2",
            // the queued hops went to the back of the one queue
            "book queued 0",
            "book queued 1",
            "book queued 2",
            // stopped hooks in field order, after everything accepted
            "feed stopped",
            "book stopped",
        ]
    );
    assert!(m.feed.is_stopped() && m.book.is_stopped());
    assert!(matches!(
        m.book.send(Tick(9)),
        Err(SendError::Closed { msg: Tick(9), .. })
    ));
}

#[test]
fn outsiders_reach_members_by_every_operation() {
    let log: Log = Arc::default();
    let system = System::new();
    let m = market(&system, &log);
    assert_eq!(m.feed.ask(Tick(1)).unwrap().wait().unwrap(), 1);
    // from another thread: takes the group's lock like any actor's
    let book = m.book.clone();
    let t = thread::spawn(move || book.fast_send(Forward(7)).unwrap());
    assert_eq!(t.join().unwrap(), 2);
    assert_eq!(m.book.fast_send_adaptive(Depth).unwrap(), 2);
    assert_eq!(
        m.book.fast_send_void(Forward(8)).unwrap(),
        Delivered::Inline
    );
    assert_eq!(m.book.fast_send(Depth).unwrap(), 3);
}

#[test]
fn a_cycle_between_members_is_refused() {
    let log: Log = Arc::default();
    let system = System::new();
    let m = market(&system, &log);
    // Feed/Loop -> Book/Loop -> Feed/Loop, on the group thread
    assert_eq!(m.feed.ask(Loop).unwrap().wait().unwrap(), "cycle");
    // and from outside, on the caller's thread
    assert_eq!(m.feed.fast_send(Loop).unwrap(), "cycle");
    assert_eq!(m.feed.stats().cycles, 2);
}
