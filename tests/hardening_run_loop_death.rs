//! Issue #25, row 1: a run loop must not die of a destructor that panics.
//!
//! Supervision posts a panicked message's panic payload to dead letters,
//! and a dead-lettered queued message travels there too; with no
//! subscriber the letter, payload and message included, is dropped right
//! there, on the run loop's thread and outside any `catch_unwind`. A
//! payload (or a message) whose `Drop` panics used to unwind the run loop
//! itself: the actor's thread died silently, sends were still accepted,
//! `Ask::wait` never returned, `is_stopped()` stayed false, watchers heard
//! nothing, and a thread-bound state was later dropped on whichever thread
//! let go of the last address.
//!
//! Guaranteed after the fix:
//!
//! * under the default supervision (resume) the actor survives such a
//!   payload and handles its next message;
//! * under [`Supervision::stop`] it stops as documented: `is_stopped()`,
//!   `Closed` for later sends (the message handed back), `Dropped` for an
//!   ask queued behind the panic, `Terminated` for its watchers;
//! * a thread-bound state is dropped on its own home thread in every case;
//! * queued messages whose own `Drop` panics are dead-lettered one by one,
//!   each counted exactly once, and the run loop goes on to stop normally.
//!
//! Every scenario runs under a watchdog: a hang fails the test.

use std::rc::Rc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};

use kaspar::prelude::*;
use kaspar::{AskError, Supervision, Terminated};

use kaspar_suite::watch::{eventually, watchdog, STEP};

/// A panic payload whose destructor panics too (unless it runs during an
/// unwind, where a second panic would abort the test process).
pub struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        if !thread::panicking() {
            panic!("Bomb: a panic payload whose drop panics");
        }
    }
}

/// A message whose destructor panics while it is armed. Defused when
/// handed back, so the test itself never trips over it.
pub struct Fragile {
    armed: bool,
}

impl Fragile {
    fn new() -> Self {
        Fragile { armed: true }
    }

    fn defuse(mut self) {
        self.armed = false;
    }
}

impl Drop for Fragile {
    fn drop(&mut self) {
        if self.armed && !thread::panicking() {
            panic!("Fragile: a message whose drop panics");
        }
    }
}

/// Panics with a [`Bomb`] as the payload.
pub struct Detonate;
/// Panics with a plain string payload.
pub struct Boom;
pub struct Get;
/// Blocks the actor's thread until the test sends on the channel, so that
/// messages queue up behind it.
pub struct Gate(pub Mutex<Receiver<()>>);

fn gate() -> (Sender<()>, Gate) {
    let (tx, rx) = mpsc::channel();
    (tx, Gate(Mutex::new(rx)))
}

#[actor]
pub struct Bomber {
    handled: u64,
}

#[actor]
impl Bomber {
    #[handler(Detonate)]
    fn detonate(&mut self, _msg: Detonate, _ctx: &mut Ctx<Self>) {
        std::panic::panic_any(Bomb);
    }

    #[handler(Boom)]
    fn boom(&mut self, _msg: Boom, _ctx: &mut Ctx<Self>) {
        panic!("boom");
    }

    #[handler(Get)]
    fn get(&mut self, _msg: Get, _ctx: &mut Ctx<Self>) -> u64 {
        self.handled += 1;
        self.handled
    }

    #[handler(Gate)]
    fn gate(&mut self, msg: Gate, _ctx: &mut Ctx<Self>) {
        msg.0
            .lock()
            .unwrap()
            .recv()
            .expect("the test opens the gate");
    }

    #[handler(Fragile)]
    fn fragile(&mut self, msg: Fragile, _ctx: &mut Ctx<Self>) {
        msg.defuse();
    }
}

/// Forwards what it hears of the actors it watches.
#[actor]
pub struct Watcher {
    out: Sender<Terminated>,
}

#[actor]
impl Watcher {
    #[handler(Terminated)]
    fn terminated(&mut self, msg: Terminated, _ctx: &mut Ctx<Self>) {
        let _ = self.out.send(msg);
    }
}

fn watcher(system: &System) -> (Addr<Watcher>, Receiver<Terminated>) {
    let (out, rx) = mpsc::channel();
    (system.spawn(Watcher { out }).start(), rx)
}

/// (a) Under the default supervision (resume), a handler that panics with
/// a payload whose drop panics costs the actor nothing: its next message
/// is handled, an `ask` is answered, and the thread is still there at
/// shutdown.
#[test]
fn a_resumed_actor_survives_a_panic_payload_whose_drop_panics() {
    watchdog("the resumed actor after a Bomb", || {
        let system = System::new();
        let a = system.spawn(Bomber { handled: 0 }).start();
        a.send(Detonate).unwrap();
        let reply = a.ask(Get).unwrap().wait_timeout(STEP);
        assert_eq!(
            reply,
            Ok(1),
            "the actor's thread died of the payload's drop: the ask after the panic is never answered"
        );
        assert_eq!(a.stats().panics, 1);
        assert_eq!(system.dead_letters().counts().panicked, 1);
        let report = system.shutdown();
        assert!(report.failed.is_empty(), "{report:?}");
        assert!(a.is_stopped());
    });
}

/// (b) Under `Supervision::stop`, the same panic stops the actor as any
/// panic does: watchers hear `Terminated`, an `ask` queued behind the
/// panicking message resolves with `Dropped` (not a hang), the actor
/// reports itself stopped, and a later `send` hands the message back.
#[test]
fn a_stopping_actor_stops_after_a_panic_payload_whose_drop_panics() {
    watchdog("the stopping actor after a Bomb", || {
        let system = System::new();
        let (w, notes) = watcher(&system);
        let a = system
            .spawn(Bomber { handled: 0 })
            .supervise(Supervision::stop())
            .start();
        a.watch(&w);
        let (open, g) = gate();
        a.send(g).unwrap();
        a.send(Detonate).unwrap();
        let queued = a.ask(Get).unwrap();
        open.send(()).unwrap();

        let note = notes.recv_timeout(STEP);
        assert!(
            matches!(&note, Ok(t) if t.target == a.target()),
            "no Terminated for the actor: {note:?}"
        );
        assert_eq!(
            queued.wait(),
            Err(AskError::Dropped(Some(a.target()))),
            "the ask queued behind the panic"
        );
        assert!(
            eventually(|| a.is_stopped()),
            "the actor never reported itself stopped"
        );
        match a.send(Get) {
            Err(SendError::Closed { msg: Get, .. }) => {}
            other => panic!("a send after the stop was not handed back as Closed: {other:?}"),
        }
        let d = system.dead_letters().counts();
        assert_eq!((d.panicked, d.stopped), (1, 1), "{d:?}");
        let report = system.shutdown();
        assert!(report.failed.is_empty(), "{report:?}");
    });
}

// ---- (c) a thread-bound state is dropped on its home thread ---------------

/// Where a [`HomeBody`] was built and where it was dropped.
#[derive(Default)]
pub struct Threads {
    home: Mutex<Option<ThreadId>>,
    dropped_on: Mutex<Option<ThreadId>>,
}

/// A thread-bound state (its `Rc` is not `Send`) that records the thread
/// its `#[started]` hook ran on and the thread it is dropped on.
#[actor(thread_bound)]
pub struct HomeBody {
    _local: Rc<()>,
    threads: Arc<Threads>,
}

impl Drop for HomeBody {
    fn drop(&mut self) {
        *self.threads.dropped_on.lock().unwrap() = Some(thread::current().id());
    }
}

#[actor]
impl HomeBody {
    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {
        *self.threads.home.lock().unwrap() = Some(thread::current().id());
    }

    #[handler(Detonate)]
    fn detonate(&mut self, _msg: Detonate, _ctx: &mut Ctx<Self>) {
        std::panic::panic_any(Bomb);
    }

    #[handler(Get)]
    fn get(&mut self, _msg: Get, _ctx: &mut Ctx<Self>) -> u64 {
        Rc::strong_count(&self._local) as u64
    }
}

/// Spawns a [`HomeBody`] under `policy`, detonates a [`Bomb`] in it, shuts
/// the system down and lets go of every address; returns where its state
/// was built and where it was dropped, and whether the actor's thread
/// died.
fn bomb_a_thread_bound_actor(policy: Supervision<HomeBody>) -> (ThreadId, Option<ThreadId>, bool) {
    let threads = Arc::new(Threads::default());
    let system = System::new();
    let for_state = Arc::clone(&threads);
    let a = system
        .spawn_with(move || HomeBody {
            _local: Rc::new(()),
            threads: for_state,
        })
        .supervise(policy)
        .start();
    // Answered once `started` ran: the home thread is known.
    let _ = a.ask(Get).unwrap().wait_timeout(STEP);
    a.send(Detonate).unwrap();
    let report = system.shutdown();
    drop(a);
    drop(system);
    let home = threads.home.lock().unwrap().expect("#[started] ran");
    let dropped_on = *threads.dropped_on.lock().unwrap();
    (home, dropped_on, !report.failed.is_empty())
}

/// (c) resume: the state of a thread-bound actor that survived a panic
/// payload whose drop panics is dropped on its home thread when the
/// system shuts down, not on the thread that lets go of the last address.
#[test]
fn a_resumed_thread_bound_state_is_dropped_on_its_home_thread_after_a_bomb() {
    let (home, dropped_on, died) = watchdog("the resumed thread-bound actor", || {
        bomb_a_thread_bound_actor(Supervision::resume())
    });
    assert_eq!(
        dropped_on,
        Some(home),
        "the thread-bound state was dropped off its home thread (actor thread died: {died})"
    );
    assert!(!died, "the actor's thread died");
}

/// (c) stop: the state of a thread-bound actor stopped by a panic whose
/// payload's drop panics is dropped on its home thread.
#[test]
fn a_stopped_thread_bound_state_is_dropped_on_its_home_thread_after_a_bomb() {
    let (home, dropped_on, died) = watchdog("the stopped thread-bound actor", || {
        bomb_a_thread_bound_actor(Supervision::stop())
    });
    assert_eq!(
        dropped_on,
        Some(home),
        "the thread-bound state was dropped off its home thread (actor thread died: {died})"
    );
    assert!(!died, "the actor's thread died");
}

/// Queued messages whose own `Drop` panics, dead-lettered by a run loop
/// after supervision stopped the actor: each becomes exactly one dead
/// letter, the run loop survives them and stops the actor, and a message
/// sent after the stop is handed back (not dropped inside the runtime).
#[test]
fn queued_messages_whose_drop_panics_are_each_dead_lettered_once() {
    const QUEUED: u64 = 5;
    watchdog("the run loop dead-lettering Fragile messages", || {
        let system = System::new();
        let (w, notes) = watcher(&system);
        let a = system
            .spawn(Bomber { handled: 0 })
            .supervise(Supervision::stop())
            .start();
        a.watch(&w);
        let (open, g) = gate();
        a.send(g).unwrap();
        a.send(Boom).unwrap();
        for _ in 0..QUEUED {
            if let Err(e) = a.send(Fragile::new()) {
                e.into_inner().defuse();
                panic!("the actor refused a message before it stopped");
            }
        }
        open.send(()).unwrap();

        assert!(
            notes.recv_timeout(STEP).is_ok(),
            "no Terminated for the actor"
        );
        assert!(
            eventually(|| a.is_stopped()),
            "the run loop died dead-lettering a message whose drop panics (dead letters: {:?})",
            system.dead_letters().counts()
        );
        // `is_stopped` is true as soon as supervision halts the actor; the
        // run loop hands the queued messages over after that.
        let expected = |d: kaspar::DeadLetterCounts| (d.panicked, d.stopped) == (1, QUEUED);
        assert!(
            eventually(|| expected(system.dead_letters().counts())),
            "each queued message is one dead letter: {:?}",
            system.dead_letters().counts()
        );
        assert_eq!(a.stats().dead_letters, 1 + QUEUED);
        match a.send(Fragile::new()) {
            Err(SendError::Closed { msg: f, .. }) => f.defuse(),
            Err(e) => {
                e.into_inner().defuse();
                panic!("a send after the stop was refused, but not as Closed");
            }
            Ok(()) => panic!("a stopped actor accepted a message"),
        }
        let report = system.shutdown();
        assert!(report.failed.is_empty(), "{report:?}");
        assert_eq!(system.dead_letters().counts().stopped, QUEUED);
    });
}
