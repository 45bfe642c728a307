//! Asynchronous delivery: `send`, `ask`, `request`, lifecycle and shutdown.

use std::future::Future;
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::AskError;

pub struct Tagged {
    pub sender: usize,
    pub seq: u64,
}
pub struct Dump;

#[actor]
pub struct Recorder {
    seen: Vec<(usize, u64)>,
}

#[actor]
impl Recorder {
    #[handler(Tagged)]
    fn tagged(&mut self, msg: Tagged, _ctx: &mut Ctx<Self>) {
        self.seen.push((msg.sender, msg.seq));
    }

    #[handler(Dump)]
    fn dump(&mut self, _msg: Dump, _ctx: &mut Ctx<Self>) -> Vec<(usize, u64)> {
        std::mem::take(&mut self.seen)
    }
}

#[test]
fn send_is_fifo_per_sender() {
    const SENDERS: usize = 6;
    const EACH: u64 = 5_000;
    let system = System::new();
    let rec = system.spawn(Recorder { seen: Vec::new() }).start();
    let threads: Vec<_> = (0..SENDERS)
        .map(|sender| {
            let rec = rec.clone();
            thread::spawn(move || {
                for seq in 0..EACH {
                    rec.send(Tagged { sender, seq }).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // every sender is done, so Dump is queued behind all their messages
    let seen = rec.ask(Dump).unwrap().wait().unwrap();
    assert_eq!(seen.len(), SENDERS * EACH as usize);
    let mut next = [0u64; SENDERS];
    for (sender, seq) in seen {
        assert_eq!(seq, next[sender], "sender {sender} out of order");
        next[sender] += 1;
    }
    assert!(next.iter().all(|&n| n == EACH));
}

pub struct Slow {
    pub gate: mpsc::Receiver<()>,
}
pub struct Echo(pub u32);

#[actor]
pub struct Gated;

#[actor]
impl Gated {
    #[handler(Slow)]
    fn slow(&mut self, msg: Slow, _ctx: &mut Ctx<Self>) {
        msg.gate.recv().unwrap();
    }

    #[handler(Echo)]
    fn echo(&mut self, msg: Echo, _ctx: &mut Ctx<Self>) -> u32 {
        msg.0
    }
}

#[test]
fn ask_times_out_and_can_be_waited_again() {
    let system = System::new();
    let g = system.spawn(Gated).start();
    let (open, gate) = mpsc::channel();
    g.send(Slow { gate }).unwrap();
    let mut reply = g.ask(Echo(7)).unwrap();
    // Echo is queued behind Slow, which waits for the gate: no reply yet.
    assert_eq!(
        reply.wait_timeout(Duration::from_millis(20)),
        Err(AskError::Timeout(Some(g.target())))
    );
    assert_eq!(reply.try_take(), None);
    open.send(()).unwrap();
    assert_eq!(reply.wait_timeout(Duration::from_secs(30)), Ok(7));
}

#[test]
fn a_reply_in_hand_means_its_message_is_counted() {
    // The count used to be bumped after the reply was routed, so a fast
    // caller could hold the reply while `handled` still lagged (150-odd
    // times in 2,000 on a 2-core machine).
    let system = System::new();
    let g = system.spawn(Gated).start();
    for i in 1..=2_000u64 {
        assert_eq!(g.ask(Echo(1)).unwrap().wait(), Ok(1));
        assert!(g.stats().handled >= i, "reply {i} arrived before its count");
    }
    system.shutdown();
}

struct ThreadWaker(thread::Thread);
impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// A minimal executor: `Ask` needs no particular async runtime.
fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        thread::park();
    }
}

#[test]
fn ask_is_a_future() {
    let system = System::new();
    let g = system.spawn(Gated).start();
    let (open, gate) = mpsc::channel();
    g.send(Slow { gate }).unwrap();
    let reply = g.ask(Echo(11)).unwrap();
    let opener = thread::spawn(move || open.send(()).unwrap());
    assert_eq!(block_on(reply), Ok(11));
    opener.join().unwrap();
}

#[test]
fn a_panic_in_an_async_handler_does_not_stop_the_next() {
    let system = System::new();
    let g = system.spawn(Gated).start();
    let (open, gate) = mpsc::channel::<()>();
    g.send(Slow { gate }).unwrap();
    drop(open); // Slow's recv fails: the handler panics, Echo still runs
    let reply = g.ask(Echo(1)).unwrap();
    assert_eq!(reply.wait(), Ok(1));
    assert_eq!(g.stats().panics, 1);
}

// ---- request: the reply arrives as a message ----------------------------

pub struct Quote(pub u64);
pub struct Price(pub u64);
pub struct Kick {
    pub quoter: Addr<Quoter>,
    pub n: u64,
}
pub struct Collected;

#[actor]
pub struct Quoter;

#[actor]
impl Quoter {
    #[handler(Quote)]
    fn quote(&mut self, msg: Quote, _ctx: &mut Ctx<Self>) -> Price {
        Price(msg.0 * 10)
    }
}

#[actor]
pub struct Trader {
    prices: Vec<u64>,
}

#[actor]
impl Trader {
    #[handler(Kick)]
    fn kick(&mut self, msg: Kick, ctx: &mut Ctx<Self>) {
        let me = ctx.myself();
        for i in 0..msg.n {
            msg.quoter.request(Quote(i), &me).unwrap();
        }
    }

    #[handler(Price)]
    fn price(&mut self, msg: Price, _ctx: &mut Ctx<Self>) {
        self.prices.push(msg.0);
    }

    #[handler(Collected)]
    fn collected(&mut self, _msg: Collected, _ctx: &mut Ctx<Self>) -> Vec<u64> {
        self.prices.clone()
    }
}

#[test]
fn request_routes_the_reply_to_the_reply_to_mailbox() {
    let system = System::new();
    let quoter = system.spawn(Quoter).start();
    let trader = system.spawn(Trader { prices: Vec::new() }).start();
    trader.send(Kick { quoter, n: 100 }).unwrap();
    let expected: Vec<u64> = (0..100).map(|i| i * 10).collect();
    // Replies arrive asynchronously; poll the trader's state until complete
    // (bounded by time, not by a count of polls, which a loaded machine
    // can use up before the quoter has run at all).
    let mut prices = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        prices = trader.fast_send(Collected).unwrap();
        if prices.len() == expected.len() {
            break;
        }
        thread::sleep(std::time::Duration::from_micros(100));
    }
    assert_eq!(prices, expected);
}

// ---- lifecycle and shutdown ---------------------------------------------

pub struct Note(pub u32);

#[actor]
pub struct Lifecycle {
    log: Arc<Mutex<Vec<String>>>,
}

#[actor]
impl Lifecycle {
    #[started]
    fn started(&mut self, ctx: &mut Ctx<Self>) {
        let _ = ctx.myself();
        self.log.lock().unwrap().push("started".into());
    }

    #[handler(Note)]
    fn note(&mut self, msg: Note, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push(format!("note {}", msg.0));
    }

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push("stopped".into());
    }
}

#[test]
fn lifecycle_runs_in_order_and_shutdown_loses_nothing() {
    const N: u32 = 20_000;
    let log = Arc::new(Mutex::new(Vec::new()));
    let system = System::new();
    let a = system.spawn(Lifecycle { log: log.clone() }).start();
    for i in 0..N {
        a.send(Note(i)).unwrap();
    }
    let report = system.shutdown();
    assert_eq!(report.stopped.len(), 1);
    assert!(report.failed.is_empty());
    let log = log.lock().unwrap();
    assert_eq!(log.len(), N as usize + 2, "every accepted message handled");
    assert_eq!(log[0], "started");
    for (i, line) in log[1..=N as usize].iter().enumerate() {
        assert_eq!(line, &format!("note {i}"));
    }
    assert_eq!(log[N as usize + 1], "stopped");
    assert_eq!(a.stats().handled, u64::from(N));
    assert!(matches!(
        a.send(Note(0)),
        Err(SendError::Closed { msg: Note(0), .. })
    ));
}

pub struct Quit;

#[actor]
pub struct Quitter {
    handled: u32,
}

#[actor]
impl Quitter {
    #[handler(Quit)]
    fn quit(&mut self, _msg: Quit, ctx: &mut Ctx<Self>) {
        ctx.stop();
    }

    #[handler(Note)]
    fn note(&mut self, _msg: Note, _ctx: &mut Ctx<Self>) -> u32 {
        self.handled += 1;
        self.handled
    }
}

#[test]
fn ctx_stop_drains_what_was_accepted_then_refuses() {
    let system = System::new();
    let q = system.spawn(Quitter { handled: 0 }).start();
    q.send(Note(0)).unwrap();
    q.send(Quit).unwrap();
    // until Quit runs, sends are accepted; after it, they are handed back
    let mut accepted = 1;
    loop {
        match q.send(Note(accepted)) {
            Ok(()) => accepted += 1,
            Err(SendError::Closed { msg: Note(n), .. }) => {
                assert_eq!(n, accepted);
                break;
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    while !q.is_stopped() {
        thread::yield_now();
    }
    assert_eq!(
        q.stats().handled,
        u64::from(accepted) + 1,
        "Quit + every accepted Note"
    );
}
