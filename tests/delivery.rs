//! The delivery operations through the public API: replies, contention,
//! panics, stopped actors. Contention is made with channels, never sleeps.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread;

use kaspar::prelude::*;
use kaspar::AskError;

pub struct Add(pub u64);
pub struct Get;
/// Holds the actor's lock until told to go on.
pub struct Hold {
    pub entered: mpsc::Sender<()>,
    pub release: mpsc::Receiver<()>,
}
pub struct Boom;

#[actor]
pub struct Counter {
    total: u64,
    log: Vec<u64>,
}

#[actor]
impl Counter {
    #[handler(Add)]
    fn on_add(&mut self, msg: Add, _ctx: &mut Ctx<Self>) -> u64 {
        self.total += msg.0;
        self.log.push(msg.0);
        self.total
    }

    #[handler(Get)]
    fn on_get(&mut self, _msg: Get, _ctx: &mut Ctx<Self>) -> (u64, Vec<u64>) {
        (self.total, self.log.clone())
    }

    #[handler(Hold)]
    fn on_hold(&mut self, msg: Hold, _ctx: &mut Ctx<Self>) {
        msg.entered.send(()).unwrap();
        msg.release.recv().unwrap();
    }

    #[handler(Boom)]
    fn on_boom(&mut self, _msg: Boom, _ctx: &mut Ctx<Self>) -> u64 {
        self.total += 1000;
        panic!("boom (expected by the test)");
    }
}

fn counter(system: &System) -> Addr<Counter> {
    system
        .spawn(Counter {
            total: 0,
            log: Vec::new(),
        })
        .start()
}

/// Occupies `addr`'s lock on another thread until the returned sender is used.
fn hold(addr: &Addr<Counter>) -> (mpsc::Sender<()>, thread::JoinHandle<()>) {
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    let a = addr.clone();
    let t = thread::spawn(move || {
        a.fast_send(Hold {
            entered: entered_tx,
            release: release_rx,
        })
        .unwrap();
    });
    entered_rx.recv().unwrap();
    (release_tx, t)
}

#[test]
fn every_operation_reaches_the_same_handler() {
    let system = System::new();
    let c = counter(&system);
    assert_eq!(c.fast_send(Add(1)).unwrap(), 1);
    assert_eq!(c.fast_send_spin(Add(2)).unwrap(), 3);
    assert_eq!(c.fast_send_x(Add(3)).unwrap(), 6);
    assert_eq!(c.fast_send_adaptive(Add(4)).unwrap(), 10);
    assert_eq!(c.fast_send_void(Add(5)).unwrap(), Delivered::Inline);
    c.send(Add(6)).unwrap();
    assert_eq!(c.ask(Add(7)).unwrap().wait().unwrap(), 28);
    let (total, log) = c.fast_send(Get).unwrap();
    assert_eq!(total, 28);
    assert_eq!(log, vec![1, 2, 3, 4, 5, 6, 7]);
    let s = c.stats();
    assert_eq!(s.handled, 8);
    assert_eq!(s.void_inline, 1);
    assert_eq!(s.void_queued, 0);
}

#[test]
fn contended_try_is_busy_and_void_queues() {
    let system = System::new();
    let c = counter(&system);
    let (release, t) = hold(&c);

    let err = c.fast_send_x(Add(1)).unwrap_err();
    assert!(err.is_busy(), "{err:?}");
    assert_eq!(err.target().id, c.id());
    let Some(Add(1)) = err.into_message() else {
        panic!("busy must hand the message back")
    };

    assert_eq!(c.fast_send_void(Add(2)).unwrap(), Delivered::Queued);

    release.send(()).unwrap();
    t.join().unwrap();
    // the queued message runs on the actor's thread; ask queues behind it
    assert_eq!(c.ask(Add(0)).unwrap().wait().unwrap(), 2);
    let s = c.stats();
    assert_eq!((s.busy, s.void_queued, s.void_inline), (1, 1, 0));
}

/// How a waiting variant waits, as the kernel sees the waiting thread.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy, Debug, PartialEq)]
enum Waits {
    /// Asleep (`fast_send`, and `fast_send_adaptive` after its spins).
    Sleeps,
    /// Running the whole time (`fast_send_spin`).
    Spins,
}

#[cfg(target_os = "linux")]
#[test]
fn waiting_variants_wait_for_the_holder_each_its_own_way() {
    let system = System::new();
    let c = counter(&system);
    let cases = [(0, Waits::Sleeps), (1, Waits::Spins), (2, Waits::Sleeps)];
    for (op, expected) in cases {
        let (release, t) = hold(&c);
        let a = c.clone();
        let calling = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let calling2 = Arc::clone(&calling);
        let (me_tx, me_rx) = mpsc::channel();
        let waiter = thread::spawn(move || {
            me_tx.send(waiter_thread::me()).unwrap();
            // Nothing between this store and the call can sleep, so a
            // sleeping state seen after it is the wait inside the call.
            calling2.store(true, std::sync::atomic::Ordering::SeqCst);
            match op {
                0 => a.fast_send(Add(1)),
                1 => a.fast_send_spin(Add(1)),
                _ => a.fast_send_adaptive(Add(1)),
            }
            .map_err(|e| e.without_message())
        });
        let me = me_rx.recv().unwrap();
        while !calling.load(std::sync::atomic::Ordering::SeqCst) {
            thread::yield_now();
        }
        // The lock is held: the waiter must be seen waiting, its way.
        let seen = waiter_thread::watch(&me, expected);
        assert_eq!(seen, Some(expected), "op {op}: how the waiter waited");
        assert!(
            !waiter.is_finished(),
            "op {op} finished while the lock was held"
        );
        release.send(()).unwrap();
        t.join().unwrap();
        assert_eq!(waiter.join().unwrap().unwrap(), op + 1);
    }
}

/// The waiting thread's state, read from `/proc` (Linux).
#[cfg(target_os = "linux")]
mod waiter_thread {
    use super::Waits;
    use std::time::{Duration, Instant};

    /// This thread's `/proc/.../stat` path.
    pub fn me() -> String {
        let task = std::fs::read_link("/proc/thread-self").expect("Linux /proc");
        format!("/proc/{}/stat", task.display())
    }

    /// (state letter, user + system clock ticks).
    fn sample(stat: &str) -> (char, u64) {
        let text = std::fs::read_to_string(stat).unwrap();
        let rest = &text[text.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split(' ').collect();
        let ticks = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        (fields[0].chars().next().unwrap(), ticks)
    }

    /// Watches the thread for up to 10 s. `Sleeps`: it was seen asleep.
    /// `Spins`: it burned CPU for a second without ever being seen asleep.
    /// `None`: neither (the test then fails).
    pub fn watch(stat: &str, expected: Waits) -> Option<Waits> {
        let start = Instant::now();
        let (_, ticks0) = sample(stat);
        let mut slept = false;
        while start.elapsed() < Duration::from_secs(10) {
            let (state, ticks) = sample(stat);
            slept |= state == 'S' || state == 'D';
            match expected {
                Waits::Sleeps if slept => return Some(Waits::Sleeps),
                Waits::Spins if slept => return Some(Waits::Sleeps),
                Waits::Spins if start.elapsed() > Duration::from_secs(1) && ticks > ticks0 => {
                    return Some(Waits::Spins)
                }
                _ => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        None
    }
}

#[test]
fn a_panicking_handler_is_contained() {
    let system = System::new();
    let c = counter(&system);
    c.fast_send(Add(1)).unwrap();
    let err = c.fast_send(Boom).unwrap_err();
    assert!(err.is_panicked(), "{err:?}");
    assert!(
        err.into_message().is_none(),
        "the handler consumed the message"
    );
    // the lock was released and is not poisoned; the state was kept (resume)
    assert_eq!(c.fast_send(Add(1)).unwrap(), 1002);
    // an async panic does not stop the actor's thread either
    c.send(Boom).unwrap();
    let mut ask = c.ask(Boom).unwrap();
    assert_eq!(
        ask.wait_timeout(std::time::Duration::from_secs(30)),
        Err(AskError::Panicked(Some(c.target())))
    );
    assert_eq!(c.ask(Add(0)).unwrap().wait().unwrap(), 3002);
    assert_eq!(c.stats().panics, 3);
}

#[test]
fn a_stopped_actor_hands_messages_back() {
    let system = System::new();
    let c = counter(&system);
    c.fast_send(Add(1)).unwrap();
    system.shutdown();
    assert!(c.is_stopped());
    match c.send(Add(5)) {
        Err(SendError::Closed { msg: Add(5), .. }) => {}
        other => panic!("expected Closed(Add(5)), got {other:?}"),
    }
    let err = c.fast_send(Add(6)).unwrap_err();
    assert!(err.is_closed());
    assert!(matches!(err.into_message(), Some(Add(6))));
    assert!(matches!(
        c.fast_send_void(Add(7)),
        Err(SendError::Closed { msg: Add(7), .. })
    ));
    assert!(matches!(
        c.ask(Add(8)),
        Err(SendError::Closed { msg: Add(8), .. })
    ));
}
