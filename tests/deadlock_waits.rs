//! Every blocking wait is in the wait-for graph, not only lock waits: an
//! `ask` being waited on waits for the thread that runs the target's queue,
//! and so does a send waiting for room in a full mailbox. A wait that would
//! close a cycle returns an error carrying the cycle instead of hanging.
//! Barriers line the threads up; a watchdog fails a test instead of letting
//! it hang.

use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{AskError, WaitKind};

/// What each side of a crossing ended with.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The call went through.
    Done,
    /// The call was refused as a deadlock, with a cycle of this many waits,
    /// the first of this kind.
    Deadlock(usize, WaitKind),
    Other(String),
}

pub struct Touch;
pub struct Query;

/// A's side: hold A, meet B at the barrier, then wait on an `ask` to B.
pub struct AskB {
    pub b: Addr<Bee>,
    pub both_in: Arc<Barrier>,
    pub report: mpsc::Sender<Outcome>,
}

/// A's side, variant: hold A, meet B, then send B more than its mailbox
/// holds (B's mailbox waits for room when full).
pub struct FloodB {
    pub b: Addr<Bee>,
    pub both_in: Arc<Barrier>,
    pub report: mpsc::Sender<Outcome>,
}

/// B's side: hold B, meet A, then `fast_send` A (whose lock A's side
/// holds).
pub struct TouchA {
    pub a: Addr<Ay>,
    pub both_in: Arc<Barrier>,
    pub report: mpsc::Sender<Outcome>,
}

#[actor]
pub struct Ay;

#[actor]
impl Ay {
    #[handler(AskB)]
    fn ask_b(&mut self, msg: AskB, _ctx: &mut Ctx<Self>) {
        msg.both_in.wait();
        let outcome = match msg.b.ask(Query).unwrap().wait() {
            Ok(()) => Outcome::Done,
            Err(AskError::Deadlock(cycle)) => Outcome::Deadlock(cycle.len(), cycle[0].kind),
            Err(e) => Outcome::Other(format!("{e:?}")),
        };
        msg.report.send(outcome).unwrap();
    }

    #[handler(FloodB)]
    fn flood_b(&mut self, msg: FloodB, _ctx: &mut Ctx<Self>) {
        msg.both_in.wait();
        // B is busy in `TouchA`, so nothing drains its two slots.
        let mut outcome = Outcome::Done;
        for _ in 0..3 {
            match msg.b.send(Query) {
                Ok(()) => {}
                Err(SendError::Deadlock {
                    msg: Query, cycle, ..
                }) => {
                    outcome = Outcome::Deadlock(cycle.len(), cycle[0].kind);
                    break;
                }
                Err(e) => {
                    outcome = Outcome::Other(format!("{e:?}"));
                    break;
                }
            }
        }
        msg.report.send(outcome).unwrap();
    }

    #[handler(Touch)]
    fn touch(&mut self, _msg: Touch, _ctx: &mut Ctx<Self>) {}
}

#[actor(mailbox = MailboxKind::LockFree { capacity: 2, when_full: WhenFull::Wait })]
pub struct Bee;

#[actor]
impl Bee {
    #[handler(TouchA)]
    fn touch_a(&mut self, msg: TouchA, _ctx: &mut Ctx<Self>) {
        msg.both_in.wait();
        let outcome = match msg.a.fast_send(Touch) {
            Ok(()) => Outcome::Done,
            Err(FastSendError::Deadlock { cycle, .. }) => {
                Outcome::Deadlock(cycle.len(), cycle[0].kind)
            }
            Err(e) => Outcome::Other(format!("{:?}", e.without_message())),
        };
        msg.report.send(outcome).unwrap();
    }

    #[handler(Query)]
    fn query(&mut self, _msg: Query, _ctx: &mut Ctx<Self>) {}
}

/// Starts B's side on B's thread and A's side as `start_a` says, and
/// collects both outcomes, A's first, under a watchdog.
fn crossing(
    start_a: impl FnOnce(Addr<Ay>, Addr<Bee>, Arc<Barrier>, mpsc::Sender<Outcome>) + Send + 'static,
) -> (Outcome, Outcome) {
    let (done_tx, done_rx) = mpsc::channel();
    let runner = thread::spawn(move || {
        let system = System::new();
        let a = system.spawn(Ay).start();
        let b = system.spawn(Bee).start();
        let both_in = Arc::new(Barrier::new(2));
        let (a_tx, a_rx) = mpsc::channel();
        let (b_tx, b_rx) = mpsc::channel();
        b.send(TouchA {
            a: a.clone(),
            both_in: Arc::clone(&both_in),
            report: b_tx,
        })
        .unwrap();
        start_a(a.clone(), b.clone(), both_in, a_tx);
        let outcomes = (a_rx.recv().unwrap(), b_rx.recv().unwrap());
        let deadlocks = a.stats().deadlocks + b.stats().deadlocks;
        done_tx.send((outcomes, deadlocks)).unwrap();
        system.shutdown();
    });
    let (outcomes, deadlocks) = done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("watchdog: the crossing hung instead of reporting a deadlock");
    runner.join().unwrap();
    // Counted where the refused call was aimed: an ask's refusal has no
    // actor to count it on (the asker holds only a handle).
    assert!(deadlocks <= 1, "{outcomes:?}, {deadlocks} counted");
    outcomes
}

/// Exactly one side was refused, the cycle it reports has two waits, and
/// the other side went through.
fn one_refused(outcomes: (Outcome, Outcome), a_kind: WaitKind) {
    match outcomes {
        (Outcome::Deadlock(2, kind), Outcome::Done) => assert_eq!(kind, a_kind),
        (Outcome::Done, Outcome::Deadlock(2, WaitKind::Lock)) => {}
        other => panic!("expected exactly one two-thread deadlock: {other:?}"),
    }
}

/// A's handler waits on `b.ask(..)` while B's handler `fast_send`s A: the
/// reply can never come, because B's thread waits for A's lock.
#[test]
fn an_ask_waited_on_against_a_fast_send_back_is_refused_not_hung() {
    let outcomes = crossing(|a, b, both_in, report| {
        a.send(AskB { b, both_in, report }).unwrap();
    });
    one_refused(outcomes, WaitKind::Reply);
}

/// A thread holding A (inside `fast_send`) sends into B's full mailbox,
/// which waits for room, while B's thread `fast_send`s A.
#[test]
fn a_send_waiting_for_room_against_a_fast_send_back_is_refused_not_hung() {
    let outcomes = crossing(|a, b, both_in, report| {
        // A plain thread enters A synchronously and floods B from there.
        thread::spawn(move || {
            a.fast_send(FloodB { b, both_in, report })
                .map_err(|e| e.without_message())
                .unwrap();
        });
    });
    one_refused(outcomes, WaitKind::Room);
}

pub struct AskMyself;
pub struct Ping;

#[actor]
pub struct Narcissus;

#[actor]
impl Narcissus {
    #[handler(AskMyself)]
    fn ask_myself(&mut self, _msg: AskMyself, ctx: &mut Ctx<Self>) -> Result<(), AskError> {
        // Queued behind the handler that is waiting for it.
        ctx.myself().ask(Ping).unwrap().wait()
    }

    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

#[test]
fn an_actor_waiting_on_its_own_ask_is_refused_not_hung() {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let system = System::new();
        let n = system.spawn(Narcissus).start();
        let r = n.ask(AskMyself).unwrap().wait();
        tx.send(r).unwrap();
        system.shutdown();
    });
    let r = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("watchdog: an actor waiting on its own reply hung");
    match r {
        Ok(Err(AskError::Deadlock(cycle))) => {
            assert_eq!(cycle.len(), 1, "{cycle:?}");
            assert_eq!(cycle[0].kind, WaitKind::Reply);
        }
        other => panic!("expected the inner wait refused: {other:?}"),
    }
}

pub struct AskMyselfInline;

#[actor]
pub struct Echo;

#[actor]
impl Echo {
    #[handler(AskMyselfInline)]
    fn ask_myself(&mut self, _msg: AskMyselfInline, ctx: &mut Ctx<Self>) -> Result<(), AskError> {
        // Run inline on a caller's thread, which holds this actor's lock:
        // the actor's own thread must take that lock to answer.
        ctx.myself().ask(Ping).unwrap().wait()
    }

    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

/// A caller inside `fast_send` to an actor waits on an `ask` to that same
/// actor: the reply needs the actor's lock, which the caller holds. The
/// wait is refused before it starts, as it is when the handler came from
/// the actor's own queue (a cycle of one edge: the caller waits for a
/// reply that only the lock it holds can let through), so the handler
/// cannot tell the two apart.
#[test]
fn an_ask_to_the_actor_a_fast_send_holds_is_refused_not_hung() {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let system = System::new();
        let e = system.spawn(Echo).start();
        let r = e
            .fast_send(AskMyselfInline)
            .map_err(|e| e.without_message());
        tx.send(r).unwrap();
        system.shutdown();
    });
    let r = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("watchdog: the inline ask hung");
    match r {
        Ok(Err(AskError::Deadlock(cycle))) => {
            let kinds: Vec<_> = cycle.iter().map(|e| e.kind).collect();
            assert_eq!(kinds, [WaitKind::Reply], "{cycle:?}");
        }
        other => panic!("expected the inline wait refused: {other:?}"),
    }
}

/// Without a cycle nothing is refused: a plain thread waits on an ask
/// whose handler itself waits on an ask to a third actor.
#[test]
fn a_chain_of_asks_without_a_cycle_is_answered() {
    let system = System::new();
    let b = system.spawn(Bee).start();
    let a = system.spawn(Ay).start();
    let both_in = Arc::new(Barrier::new(1));
    let (report, outcome) = mpsc::channel();
    a.send(AskB { b, both_in, report }).unwrap();
    assert_eq!(
        outcome.recv_timeout(Duration::from_secs(20)).unwrap(),
        Outcome::Done
    );
    system.shutdown();
}
