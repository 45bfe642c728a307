//! Thread-bound actors: state that is not `Send`, built on the actor's own
//! thread by `spawn_with`, reached only there, and dropped there.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Mutex;

use kaspar::prelude::*;

pub struct Quote(pub u64);
pub struct Depth;

/// Where each `Levels` was dropped, by thread name.
static DROPPED_ON: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A book whose levels are shared through an `Rc`: not `Send`.
pub struct Levels(Rc<RefCell<Vec<u64>>>);

impl Drop for Levels {
    fn drop(&mut self) {
        let here = std::thread::current().name().unwrap_or("?").to_owned();
        DROPPED_ON.lock().unwrap().push(here);
    }
}

#[actor(thread_bound)]
pub struct RcBook {
    levels: Levels,
    view: Rc<RefCell<Vec<u64>>>,
}

#[actor]
impl RcBook {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) {
        self.levels.0.borrow_mut().push(q.0);
    }

    #[handler(Depth)]
    fn depth(&mut self, _d: Depth, _ctx: &mut Ctx<Self>) -> usize {
        self.view.borrow().len()
    }
}

fn rc_book() -> RcBook {
    let shared = Rc::new(RefCell::new(Vec::new()));
    RcBook {
        levels: Levels(Rc::clone(&shared)),
        view: shared,
    }
}

#[test]
fn a_state_that_is_not_send_is_served_on_its_own_thread() {
    let system = System::new();
    let book = system.spawn_with(rc_book).start();
    book.send(Quote(1)).unwrap();
    assert_eq!(book.fast_send_void(Quote(2)).unwrap(), Delivered::Queued);
    assert_eq!(book.ask(Depth).unwrap().wait().unwrap(), 2);
    system.shutdown();
}

#[test]
fn a_synchronous_delivery_from_another_thread_is_refused_and_hands_the_message_back() {
    let system = System::new();
    let book = system.spawn_with(rc_book).start();
    let err = book.fast_send(Quote(7)).unwrap_err();
    assert!(err.is_thread_bound(), "{err}");
    assert!(err.to_string().contains("bound to its own thread"), "{err}");
    let Some(Quote(7)) = err.into_message() else {
        panic!("the message was not handed back")
    };
    assert!(book.fast_send_x(Depth).unwrap_err().is_thread_bound());
    assert!(book.fast_send_spin(Depth).unwrap_err().is_thread_bound());
    assert!(book
        .fast_send_adaptive(Depth)
        .unwrap_err()
        .is_thread_bound());
    let err: kaspar::Error = book.fast_send(Depth).unwrap_err().into();
    assert!(matches!(err, kaspar::Error::ThreadBound(_)), "{err}");
    assert_eq!(book.ask(Depth).unwrap().wait().unwrap(), 0, "nothing ran");
    system.shutdown();
}

#[test]
fn the_state_is_dropped_on_its_own_thread_when_the_actor_stops() {
    let system = System::new();
    let book = system.spawn_with(rc_book).start();
    let name = format!("kaspar:RcBook{:?}", book.id());
    book.send(Quote(1)).unwrap();
    system.shutdown();
    let dropped = DROPPED_ON.lock().unwrap();
    assert!(dropped.contains(&name), "{dropped:?} lacks {name}");
}

// Group members: one thread, so members call each other synchronously.

#[actor(thread_bound)]
pub struct Strategy {
    book: Addr<RcBook>,
    local: Rc<u64>,
}

#[actor]
impl Strategy {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> usize {
        // Same thread: the thread-bound member is entered inline.
        self.book.fast_send(Quote(q.0 + *self.local)).unwrap();
        self.book.fast_send(Depth).unwrap()
    }
}

#[group]
pub struct Desk {
    pub book: Addr<RcBook>,
    pub strategy: Addr<Strategy>,
}

#[test]
fn thread_bound_group_members_call_each_other_on_the_group_thread() {
    let system = System::new();
    let prepared = system.prepare_group::<Desk>();
    let peers = prepared.group();
    let desk = prepared
        .spawn_with(move || {
            (
                rc_book(),
                Strategy {
                    book: peers.book.clone(),
                    local: Rc::new(1),
                },
            )
        })
        .start();
    assert_eq!(desk.strategy.ask(Quote(1)).unwrap().wait().unwrap(), 1);
    assert_eq!(desk.strategy.ask(Quote(2)).unwrap().wait().unwrap(), 2);
    assert!(desk.book.fast_send(Depth).unwrap_err().is_thread_bound());
    system.shutdown();
}

pub struct Outer;
pub struct Inner;

/// Thread-bound but `Send`, so it may be spawned by value; re-enterable,
/// so it can call itself synchronously on its own thread.
#[actor(thread_bound, reentrant, policy = permissive)]
pub struct Echo;

#[actor]
impl Echo {
    #[handler(Outer)]
    fn outer(&self, _o: Outer, ctx: &mut Ctx<Self>) -> bool {
        ctx.myself().fast_send(Inner).is_ok()
    }

    #[handler(Inner)]
    fn inner(&self, _i: Inner, _ctx: &mut Ctx<Self>) {}
}

#[test]
fn a_thread_bound_actor_spawned_by_value_is_at_home_on_its_thread() {
    let system = System::new();
    let echo = system.spawn(Echo).start();
    assert!(
        echo.ask(Outer).unwrap().wait().unwrap(),
        "its own thread was refused"
    );
    assert!(echo.fast_send(Inner).unwrap_err().is_thread_bound());
    system.shutdown();
}

pub struct Open;

#[actor]
pub struct Opener {
    books: Vec<Addr<RcBook>>,
}

#[actor]
impl Opener {
    #[handler(Open)]
    fn open(&mut self, _o: Open, ctx: &mut Ctx<Self>) -> Addr<RcBook> {
        let book = ctx.spawn_with(rc_book).start();
        self.books.push(book.clone());
        book
    }
}

#[test]
fn a_handler_spawns_a_thread_bound_actor_with_ctx_spawn_with() {
    let system = System::new();
    let opener = system.spawn(Opener { books: Vec::new() }).start();
    let book = opener.ask(Open).unwrap().wait().unwrap();
    book.send(Quote(1)).unwrap();
    assert_eq!(book.ask(Depth).unwrap().wait().unwrap(), 1);
    assert_eq!(system.shutdown().stopped.len(), 2);
}
