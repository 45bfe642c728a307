//! Timers fire from one process-wide thread. A timer whose target's
//! mailbox is full (here a bounded `LockFree` one that waits for room) must
//! not hold that thread: other actors' timers keep firing, and the full
//! one's message waits in the timer queue until room appears, then arrives
//! once. A periodic timer keeps at most one message waiting; cancelling a
//! waiting timer drops its message, and so does its actor stopping.
//!
//! Actor X's handler holds X on a gate while its two-slot mailbox is full;
//! actor Y, with an ordinary mailbox, arms a timer whose due time is at or
//! after every timer X armed, so by the time Y's timer fires, each of X's
//! has come due and found X full. The threads meet on channels; the only
//! durations are timer delays and generous watchdogs.

use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{TimerId, WhenFull};

/// How long any step may take before the test fails instead of hanging.
const WATCHDOG: Duration = Duration::from_secs(10);

/// What X armed while held, and when X's last timer (or Y's) is due.
#[derive(Clone, Copy)]
pub enum Plan {
    /// One `Ping`, 1 ms ahead.
    Once,
    /// One `Ping` 1 ms ahead, then one `Mark` 20 ms ahead.
    OnceThenMark,
    /// A `Tick` every millisecond, then one `Mark` 20 ms ahead.
    EveryThenMark,
}

/// Holds X in its handler: it reports that it is in, waits until the test
/// has filled its mailbox, arms its timers as `plan` says, reports their
/// ids, then waits on `gate`.
pub struct Hold {
    pub plan: Plan,
    pub entered: Sender<()>,
    pub filled: Receiver<()>,
    pub armed: Sender<Vec<TimerId>>,
    pub gate: Receiver<()>,
}

/// Takes up one slot of X's mailbox.
pub struct Filler;

/// X's one-shot timer message.
pub struct Ping;

/// X's periodic timer message.
#[derive(Clone)]
pub struct Tick;

/// X's last timer: it reports how many pings and ticks came before it.
pub struct Mark;

/// What X handled, in order.
#[derive(Debug, PartialEq, Eq)]
pub enum Seen {
    Filler,
    Ping,
    /// `Mark` arrived after this many pings and ticks; `cancelled`: the
    /// periodic timer (if any) was still live when `Mark` cancelled it.
    Mark {
        pings: u32,
        ticks: u32,
        cancelled: bool,
    },
    /// X's `stopped` hook ran, after this many pings.
    Stopped {
        pings: u32,
    },
}

/// How many pings X has handled.
pub struct Count;

#[actor(mailbox = MailboxKind::LockFree { capacity: 2, when_full: WhenFull::Wait })]
pub struct Ex {
    seen: Sender<Seen>,
    pings: u32,
    ticks: u32,
    periodic: Option<TimerId>,
}

impl Ex {
    fn new(seen: Sender<Seen>) -> Self {
        Ex {
            seen,
            pings: 0,
            ticks: 0,
            periodic: None,
        }
    }
}

#[actor]
impl Ex {
    #[handler(Hold)]
    fn hold(&mut self, msg: Hold, ctx: &mut Ctx<Self>) {
        msg.entered.send(()).unwrap();
        // The test sends two fillers meanwhile: the mailbox is full before
        // any timer is armed.
        if msg.filled.recv_timeout(WATCHDOG).is_err() {
            return;
        }
        let ms = Duration::from_millis;
        let ids = match msg.plan {
            Plan::Once => vec![ctx.schedule_once(ms(1), Ping)],
            Plan::OnceThenMark => vec![
                ctx.schedule_once(ms(1), Ping),
                ctx.schedule_once(ms(20), Mark),
            ],
            Plan::EveryThenMark => {
                let every = ctx.schedule_every(ms(1), Tick);
                self.periodic = Some(every);
                vec![every, ctx.schedule_once(ms(20), Mark)]
            }
        };
        msg.armed.send(ids).unwrap();
        // Until the test opens the gate (or drops it, failing).
        let _ = msg.gate.recv();
    }

    #[handler(Filler)]
    fn filler(&mut self, _msg: Filler, _ctx: &mut Ctx<Self>) {
        let _ = self.seen.send(Seen::Filler);
    }

    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {
        self.pings += 1;
        let _ = self.seen.send(Seen::Ping);
    }

    #[handler(Tick)]
    fn tick(&mut self, _msg: Tick, _ctx: &mut Ctx<Self>) {
        self.ticks += 1;
    }

    #[handler(Mark)]
    fn mark(&mut self, _msg: Mark, ctx: &mut Ctx<Self>) {
        let cancelled = self.periodic.take().is_some_and(|t| ctx.cancel(t));
        let _ = self.seen.send(Seen::Mark {
            pings: self.pings,
            ticks: self.ticks,
            cancelled,
        });
    }

    #[handler(Count)]
    fn count(&mut self, _msg: Count, _ctx: &mut Ctx<Self>) -> u32 {
        self.pings
    }

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {
        let _ = self.seen.send(Seen::Stopped { pings: self.pings });
    }
}

/// Arms Y's one-shot timer, `after` from now; its firing is reported on
/// `ring`.
pub struct Arm {
    pub after: Duration,
    pub ring: Sender<()>,
}

/// Y's timer message.
pub struct Ring;

/// Cancels a timer (any actor's: timer ids are the clock's), returning
/// whether it was still pending.
pub struct CancelTimer(pub TimerId);

#[actor]
pub struct Why {
    ring: Option<Sender<()>>,
}

#[actor]
impl Why {
    #[handler(Arm)]
    fn arm(&mut self, msg: Arm, ctx: &mut Ctx<Self>) {
        self.ring = Some(msg.ring);
        ctx.schedule_once(msg.after, Ring);
    }

    #[handler(Ring)]
    fn ring(&mut self, _msg: Ring, _ctx: &mut Ctx<Self>) {
        if let Some(ring) = &self.ring {
            let _ = ring.send(());
        }
    }

    #[handler(CancelTimer)]
    fn cancel_timer(&mut self, msg: CancelTimer, ctx: &mut Ctx<Self>) -> bool {
        ctx.cancel(msg.0)
    }
}

/// X alone in a group: its timers go through the group's queue.
#[group]
pub struct Lone {
    pub x: Addr<Ex>,
}

/// X held in its handler with a full mailbox and its timers armed, and Y.
/// Fields drop in order: the gate first, so that a failing test lets X go
/// before the system's drop waits for it.
struct Held {
    gate: Option<Sender<()>>,
    system: System,
    x: Addr<Ex>,
    y: Addr<Why>,
    seen: Receiver<Seen>,
    ids: Vec<TimerId>,
}

impl Held {
    fn new(plan: Plan) -> Self {
        Self::spawned(plan, |system, x| system.spawn(x).start())
    }

    /// X as the one member of a group whose queue is X's kind of mailbox.
    fn in_group(plan: Plan) -> Self {
        Self::spawned(plan, |system, x| {
            system
                .spawn_group::<Lone>((x,))
                .mailbox(MailboxKind::LockFree {
                    capacity: 2,
                    when_full: WhenFull::Wait,
                })
                .start()
                .x
        })
    }

    fn spawned(plan: Plan, spawn_x: impl FnOnce(&System, Ex) -> Addr<Ex>) -> Self {
        let system = System::new();
        let (seen_tx, seen) = mpsc::channel();
        let x = spawn_x(&system, Ex::new(seen_tx));
        let y = system.spawn(Why { ring: None }).start();
        let (entered_tx, entered) = mpsc::channel();
        let (filled, filled_rx) = mpsc::channel();
        let (armed_tx, armed) = mpsc::channel();
        let (gate, gate_rx) = mpsc::channel();
        x.send(Hold {
            plan,
            entered: entered_tx,
            filled: filled_rx,
            armed: armed_tx,
            gate: gate_rx,
        })
        .unwrap();
        entered
            .recv_timeout(WATCHDOG)
            .expect("X entered its handler");
        // X is in its handler and has taken `Hold` out: two fillers fill
        // its two slots, and nothing drains them until the gate opens.
        x.send(Filler).unwrap();
        x.send(Filler).unwrap();
        filled.send(()).unwrap();
        let ids = armed.recv_timeout(WATCHDOG).expect("X armed its timers");
        Held {
            gate: Some(gate),
            system,
            x,
            y,
            seen,
            ids,
        }
    }

    /// Arms Y's timer `after` from now and waits for it to fire, which
    /// must happen while X stays full.
    fn ring_y(&self, after: Duration) {
        let (ring, rang) = mpsc::channel();
        self.y.send(Arm { after, ring }).unwrap();
        rang.recv_timeout(WATCHDOG)
            .expect("Y's timer fired while X's mailbox was full");
        assert!(
            self.seen.try_recv().is_err(),
            "X handled nothing yet: it is still held, its mailbox full"
        );
    }

    fn open_gate(&mut self) {
        self.gate.take().expect("closed").send(()).unwrap();
    }

    fn next_seen(&self) -> Seen {
        self.seen.recv_timeout(WATCHDOG).expect("X handled more")
    }
}

#[test]
fn a_full_mailbox_does_not_hold_back_another_actors_timer() {
    let mut held = Held::new(Plan::Once);
    // X's ping (due in 1 ms) found X full; Y's timer, due later, fires
    // anyway.
    held.ring_y(Duration::from_millis(5));
    held.open_gate();
    // The ping waited for room, behind the two fillers, and arrives once.
    assert_eq!(held.next_seen(), Seen::Filler);
    assert_eq!(held.next_seen(), Seen::Filler);
    assert_eq!(held.next_seen(), Seen::Ping);
    let pings = held.x.ask(Count).unwrap().wait().unwrap();
    assert_eq!(pings, 1, "the waiting ping arrived exactly once");
    let still_pending = held.y.ask(CancelTimer(held.ids[0])).unwrap();
    assert!(
        !still_pending.wait().unwrap(),
        "the delivered timer is over: nothing left to deliver twice"
    );
    held.system.shutdown();
}

#[test]
fn a_periodic_timer_into_a_full_mailbox_keeps_one_tick_waiting() {
    let mut held = Held::new(Plan::EveryThenMark);
    // Y's timer is due no earlier than X's `Mark`: by the time it fires,
    // about 20 ticks of X's periodic timer have come due with X full.
    held.ring_y(Duration::from_millis(20));
    held.open_gate();
    assert_eq!(held.next_seen(), Seen::Filler);
    assert_eq!(held.next_seen(), Seen::Filler);
    // One tick waited for room (the ones due meanwhile were coalesced
    // into it), then `Mark`, which waited behind it: timers into one
    // mailbox arrive in (due time, scheduling order).
    assert_eq!(
        held.next_seen(),
        Seen::Mark {
            pings: 0,
            ticks: 1,
            cancelled: true
        }
    );
    held.system.shutdown();
}

#[test]
fn a_full_group_queue_does_not_hold_back_another_actors_timer() {
    let mut held = Held::in_group(Plan::EveryThenMark);
    held.ring_y(Duration::from_millis(20));
    held.open_gate();
    assert_eq!(held.next_seen(), Seen::Filler);
    assert_eq!(held.next_seen(), Seen::Filler);
    assert_eq!(
        held.next_seen(),
        Seen::Mark {
            pings: 0,
            ticks: 1,
            cancelled: true
        }
    );
    held.system.shutdown();
}

#[test]
fn cancelling_a_timer_that_waits_for_room_drops_its_message() {
    let mut held = Held::new(Plan::OnceThenMark);
    held.ring_y(Duration::from_millis(20));
    // Both the ping and the mark wait for room; cancel the ping (from Y:
    // any actor on the clock may cancel a timer by its id).
    let cancelled = held.y.ask(CancelTimer(held.ids[0])).unwrap();
    assert!(cancelled.wait().unwrap(), "the waiting ping was pending");
    held.open_gate();
    assert_eq!(held.next_seen(), Seen::Filler);
    assert_eq!(held.next_seen(), Seen::Filler);
    // The mark waited behind the ping; with the ping cancelled, it comes
    // right after the fillers, and the ping never does.
    assert_eq!(
        held.next_seen(),
        Seen::Mark {
            pings: 0,
            ticks: 0,
            cancelled: false
        }
    );
    held.system.shutdown();
}

#[test]
fn a_timer_that_waits_for_room_in_a_stopped_actor_is_not_delivered() {
    let mut held = Held::new(Plan::Once);
    held.ring_y(Duration::from_millis(5));
    // X stops accepting while its ping waits for room: what X accepted
    // (the two fillers) is still handled, the ping is not.
    held.x.stop();
    held.open_gate();
    assert_eq!(held.next_seen(), Seen::Filler);
    assert_eq!(held.next_seen(), Seen::Filler);
    assert_eq!(held.next_seen(), Seen::Stopped { pings: 0 });
    held.system.shutdown();
}

// ---- in simulation ----------------------------------------------------------

/// Arms one-shot `Ring`s, (milliseconds, name) each.
pub struct ArmRings(pub Vec<(u64, &'static str)>);

/// A simulated timer's message: its name.
pub struct Named(pub &'static str);

/// Asks `Slow` for its log.
pub struct ReadLog;

/// The simulated group's one member; idle.
#[actor]
pub struct Idle;

#[actor]
impl Idle {
    #[handler(Filler)]
    fn filler(&mut self, _msg: Filler, _ctx: &mut Ctx<Self>) {}
}

/// An actor outside the simulated group, with a two-slot mailbox that
/// waits for room: it logs what it handles, at what virtual time.
#[actor(mailbox = MailboxKind::LockFree { capacity: 2, when_full: WhenFull::Wait })]
pub struct Slow {
    log: Vec<(u64, &'static str)>,
}

#[actor]
impl Slow {
    #[handler(ArmRings)]
    fn arm(&mut self, msg: ArmRings, ctx: &mut Ctx<Self>) {
        for (ms, name) in msg.0 {
            ctx.schedule_once(Duration::from_millis(ms), Named(name));
        }
    }

    #[handler(Filler)]
    fn filler(&mut self, _msg: Filler, ctx: &mut Ctx<Self>) {
        self.log.push((ctx.now().as_nanos() / 1_000_000, "filler"));
    }

    #[handler(Named)]
    fn named(&mut self, msg: Named, ctx: &mut Ctx<Self>) {
        self.log.push((ctx.now().as_nanos() / 1_000_000, msg.0));
    }

    #[handler(ReadLog)]
    fn read_log(&mut self, _msg: ReadLog, _ctx: &mut Ctx<Self>) -> Vec<(u64, &'static str)> {
        self.log.clone()
    }
}

/// Fills `Slow`'s mailbox behind the simulator's back, then moves virtual
/// time past its timers: the first finds it full and waits until the
/// simulator has drained it, at the same virtual time.
fn simulate_full_outside_actor() -> Vec<(u64, &'static str)> {
    use kaspar::{Simulation, Solo, Time};
    let ms = |n: u64| Time::from_nanos(n * 1_000_000);
    let mut sim = Simulation::<Solo<Idle>>::new((Idle,));
    let slow = sim.spawn(Slow { log: Vec::new() });
    sim.deliver(
        ms(0),
        &slow,
        ArmRings(vec![(10, "a"), (20, "c"), (10, "b")]),
    )
    .unwrap();
    slow.send(Filler).unwrap();
    slow.send(Filler).unwrap();
    sim.advance_to(ms(30));
    let log = slow.fast_send(ReadLog).unwrap();
    sim.finish();
    log
}

#[test]
fn a_simulated_timer_into_a_full_mailbox_waits_and_the_run_repeats() {
    // on a thread of its own, so that a hang fails the watchdog
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || {
        let runs = [simulate_full_outside_actor(), simulate_full_outside_actor()];
        let _ = done.send(runs);
    });
    let [first, second] = result
        .recv_timeout(WATCHDOG)
        .expect("the simulation did not hang on the full mailbox");
    assert_eq!(
        first,
        [
            (10, "filler"),
            (10, "filler"),
            (10, "a"),
            (10, "b"),
            (20, "c")
        ]
    );
    assert_eq!(first, second, "two runs of one input diverged");
}
