//! Receiver transparency, proven by behaviour: a handler cannot tell how it
//! was reached.
//!
//! `transparency_surface.rs` keeps the *names* a handler can reach under
//! review; this test runs them. A probe actor's one handler performs, per
//! message, one operation a handler can reach (its `Ctx`, its own address,
//! an `Ask`, another actor's address, `Recipient`s, a child it spawns,
//! timers, stopping) and describes what it observed as plain text, free of
//! thread ids, times and actor ids. The whole table of operations is run
//! under every way a handler can be reached (`Way`): queued through its
//! mailbox (`send`, `ask`, `request`, a `Recipient`, a `fast_send_void`
//! that found the actor busy), inline on the caller's thread (`fast_send`
//! and its family, from the test thread or a third one, through a
//! `Recipient` or a `Call`, from another actor's handler), and as a member
//! of a `#[group]` (queued to the group, inline from outside, inline from
//! another member's handler on the group thread or on a caller's). Every
//! way must observe exactly the same thing, operation by operation.
//!
//! Each cell of the table (one operation under one way) gets a fresh system
//! and a fresh probe, warmed with one `fast_send` (so every way starts from
//! the same counters, with the actor's own thread idle), and runs under a
//! watchdog: a hang is reported as `HANG` within `CELL_BUDGET`.
//!
//! Besides what the handler returns, each cell records what happened
//! *later* because of it (self-sent messages handled, replies received,
//! timers fired, the `#[stopped]` hook), collected after barriers through
//! both actors' queues and after shutdown, sorted: a message queued by an
//! inline handler must be handled exactly as one queued by a dequeued one.
//!
//! The few differences allowed are listed in `PERMITTED`, each with why and
//! where the transparency chapter documents it: the handler's own
//! counters, and the diagnostic call chain a refusal carries (the refusal
//! itself is compared strictly). They are printed on every run, never
//! hidden, and an allowed row that no longer differs is reported as stale. Run with
//! `--nocapture` to see the whole table.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{AskError, CallChain, Clock, SystemConfig, Time, VirtualClock};

/// How long one cell (one operation under one way) may take, start to
/// shutdown, before it counts as hung.
const CELL_BUDGET: Duration = Duration::from_secs(10);
/// After this many hung cells, stop running the table.
const MAX_HANGS: usize = 3;
/// The virtual time the `Now` row's system starts at.
const VIRTUAL_START: u64 = 1_000;

// ---------------------------------------------------------------------------
// The operations a handler can reach.

/// One operation the probe's handler performs and describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    /// `Ctx`'s `Debug`, `myself()`'s name, target and instance name.
    Identity,
    /// `ctx.now()` on a virtual clock.
    Now,
    /// `myself().stats()`: every counter but the two below.
    Stats,
    /// `myself().stats().void_queued`.
    StatsVoidQueued,
    /// `myself().stats().mailbox_high_water`.
    StatsHighWater,
    /// `myself().latency()`: runs recorded per class.
    Latency,
    /// `myself().is_stopped()`, `other.is_stopped()`, `dead_letters()`.
    Liveness,
    /// `ctx.spawn(..).name(..).start()`, then every way into the child.
    SpawnChild,
    /// `ctx.spawn_group(..).start()`, then into its members.
    SpawnGroup,
    /// `schedule_once`/`schedule_every`, then `cancel` (twice).
    TimerCancel,
    /// `schedule_once(ZERO, Tick)`: the tick arrives later, queued.
    TimerFires,
    /// `myself().send(..)`.
    SelfSend,
    /// `myself().ask(..)` then `wait_timeout(ZERO)`.
    SelfAskWaitZero,
    /// `myself().ask(..)` then `wait_timeout(1 s)`.
    SelfAskWaitLong,
    /// `myself().ask(..)` then `wait()`.
    SelfAskWait,
    /// The shape of the refused self-ask: the cycle's edge kinds, and
    /// whether its first edge waits for this actor.
    SelfAskCycle,
    /// The call chain the refused self-ask's first edge reports.
    SelfAskCycleChain,
    /// `myself().ask(..)` then `try_take()`, and the handle dropped.
    SelfAskTryTake,
    /// Every synchronous operation on `myself()`: a cycle (or a queue).
    SelfFastSend,
    /// The call chain the refused `myself().fast_send` reports.
    SelfFastSendChain,
    /// `myself().request(.., &myself())`.
    SelfRequest,
    /// Every synchronous operation on another actor.
    OtherFastSend,
    /// `other.send`, then `other.ask(..).wait()`.
    OtherSendAsk,
    /// `other.request(.., &myself())`.
    OtherRequest,
    /// `other.stats()` and `other.latency()` after a `fast_send`.
    OtherStats,
    /// A `Recipient` of itself: every operation.
    RecipientSelf,
    /// A `Recipient` of itself: `ask(..).wait()`.
    RecipientSelfAskWait,
    /// A `Recipient` of another actor: every operation.
    RecipientOther,
    /// `ctx.stop()`, then what its own address answers.
    StopSelf,
}

const OPS: &[Op] = &[
    Op::Identity,
    Op::Now,
    Op::Stats,
    Op::StatsVoidQueued,
    Op::StatsHighWater,
    Op::Latency,
    Op::Liveness,
    Op::SpawnChild,
    Op::SpawnGroup,
    Op::TimerCancel,
    Op::TimerFires,
    Op::SelfSend,
    Op::SelfAskWaitZero,
    Op::SelfAskWaitLong,
    Op::SelfAskWait,
    Op::SelfAskCycle,
    Op::SelfAskCycleChain,
    Op::SelfAskTryTake,
    Op::SelfFastSend,
    Op::SelfFastSendChain,
    Op::SelfRequest,
    Op::OtherFastSend,
    Op::OtherSendAsk,
    Op::OtherRequest,
    Op::OtherStats,
    Op::RecipientSelf,
    Op::RecipientSelfAskWait,
    Op::RecipientOther,
    Op::StopSelf,
];

/// Why a row may differ between ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Allowance {
    /// The contract says so (`book/src/transparency.md`). A difference the
    /// chapter does not list fails the test.
    Documented,
}

/// Rows whose difference between ways is allowed, and why. Printed
/// whenever they differ; one that no longer differs is reported as stale,
/// so that this list shrinks when it can.
const PERMITTED: &[(Op, Allowance, &str)] = &[
    (
        Op::StatsHighWater,
        Allowance::Documented,
        "the mailbox high-water mark counts what was queued: a queued delivery shows 1, an \
         inline one 0. Instrumentation, mode-revealing by design \
         (book/src/transparency.md, \"Its own counters\")",
    ),
    (
        Op::StatsVoidQueued,
        Allowance::Documented,
        "a fast_send_void that fell back to the queue is counted before its handler runs \
         there: a handler so reached sees 1, any other 0. Instrumentation, mode-revealing \
         by design (book/src/transparency.md, \"Its own counters\": inline versus queued \
         completions)",
    ),
    (
        Op::SelfAskCycleChain,
        Allowance::Documented,
        "AskError::Deadlock's cycle carries each waiting thread's call chain: a handler \
         reached by fast_send from another actor's handler finds that caller's frame before \
         its own in the first edge. Diagnostics for logs (book/src/transparency.md, \
         \"Calls back to its synchronous callers\"); the refusal itself (Deadlock) and the \
         cycle's kinds are compared strictly in SelfAskWait* and SelfAskCycle",
    ),
    (
        Op::SelfFastSendChain,
        Allowance::Documented,
        "FastSendError::Cycle's chain is the thread's whole call chain: a handler reached \
         by fast_send from another actor's handler sees that caller's frame before its \
         own. Diagnostics for logs (book/src/transparency.md, \"Calls back to its \
         synchronous callers\"); the refusal itself (Cycle) is compared strictly in \
         SelfFastSend",
    ),
];

// ---------------------------------------------------------------------------
// The actors.

/// What the probe tells the test: its handler's observation, or something
/// that happened later because of it.
#[derive(Debug)]
pub enum Ev {
    Result(String),
    Later(String),
}

pub struct Run(pub Op);
/// The probe's reply to `Run`: its observation.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed(pub String);
/// Delivered once by `fast_send` before the cell's delivery; with a gate,
/// it holds the probe (and its lock) until the gate opens.
pub struct Warm(pub Option<Gate>);

/// What a holding `Warm` waits on: it says it entered, then waits.
pub struct Gate {
    entered: Sender<()>,
    release: Receiver<()>,
}
/// A message the probe sends itself; its reply is `NoteReply`.
pub struct Note(pub u32);
pub struct NoteReply(pub u32);
#[derive(Clone)]
pub struct Tick;
/// Answered once everything queued before it was handled.
pub struct Barrier;

#[actor]
pub struct Probe {
    out: Sender<Ev>,
    other: Addr<Other>,
}

#[actor]
impl Probe {
    #[handler(Warm)]
    fn warm(&mut self, msg: Warm, _ctx: &mut Ctx<Self>) {
        if let Some(gate) = msg.0 {
            let _ = gate.entered.send(());
            let _ = gate.release.recv_timeout(CELL_BUDGET);
        }
    }

    #[handler(Run)]
    fn run(&mut self, msg: Run, ctx: &mut Ctx<Self>) -> Observed {
        let observed = Observed(observe(msg.0, &self.other, ctx));
        let _ = self.out.send(Ev::Result(observed.0.clone()));
        observed
    }

    #[handler(Note)]
    fn note(&mut self, msg: Note, _ctx: &mut Ctx<Self>) -> NoteReply {
        let _ = self.out.send(Ev::Later(format!("note {}", msg.0)));
        NoteReply(msg.0)
    }

    #[handler(NoteReply)]
    fn note_reply(&mut self, msg: NoteReply, _ctx: &mut Ctx<Self>) {
        let _ = self.out.send(Ev::Later(format!("note-reply {}", msg.0)));
    }

    #[handler(Count)]
    fn count(&mut self, msg: Count, _ctx: &mut Ctx<Self>) {
        let _ = self.out.send(Ev::Later(format!("count {}", msg.0)));
    }

    #[handler(Tick)]
    fn tick(&mut self, _msg: Tick, _ctx: &mut Ctx<Self>) {
        let _ = self.out.send(Ev::Later("tick".into()));
    }

    #[handler(Barrier)]
    fn barrier(&mut self, _msg: Barrier, _ctx: &mut Ctx<Self>) {}

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {
        let _ = self.out.send(Ev::Later("stopped".into()));
    }
}

pub struct Inc;
/// `Other`'s count after an `Inc`.
pub struct Count(pub u64);

/// Another actor, standalone, in the probe's system.
#[actor]
pub struct Other {
    n: u64,
}

#[actor]
impl Other {
    #[handler(Inc)]
    fn inc(&mut self, _msg: Inc, _ctx: &mut Ctx<Self>) -> Count {
        self.n += 1;
        Count(self.n)
    }

    #[handler(Barrier)]
    fn barrier(&mut self, _msg: Barrier, _ctx: &mut Ctx<Self>) {}
}

pub struct Square(pub u64);

/// What the probe spawns.
#[actor]
pub struct Child;

#[actor]
impl Child {
    #[handler(Square)]
    fn square(&mut self, msg: Square, _ctx: &mut Ctx<Self>) -> u64 {
        msg.0 * msg.0
    }
}

#[group]
pub struct Children {
    pub a: Addr<Child>,
    pub b: Addr<Child>,
}

/// Another member of the probe's group: reaches the probe from its own
/// handler, inline.
#[actor]
pub struct Driver {
    probe: Option<Addr<Probe>>,
}

pub struct Connect(pub Addr<Probe>);
pub struct Drive(pub Op);

#[actor]
impl Driver {
    #[handler(Connect)]
    fn connect(&mut self, msg: Connect, _ctx: &mut Ctx<Self>) {
        self.probe = Some(msg.0);
    }

    #[handler(Drive)]
    fn drive(&mut self, msg: Drive, _ctx: &mut Ctx<Self>) -> Result<Observed, String> {
        let probe = self.probe.as_ref().expect("connected");
        probe.fast_send(Run(msg.0)).map_err(|e| kind_fast(&e))
    }
}

#[group]
pub struct ProbeGroup {
    pub driver: Addr<Driver>,
    pub probe: Addr<Probe>,
}

/// Takes `request`ed replies (and drops them: the probe reports through
/// its channel).
#[actor]
pub struct Sink;

#[actor]
impl Sink {
    #[handler(Observed)]
    fn observed(&mut self, _msg: Observed, _ctx: &mut Ctx<Self>) {}
}

// ---------------------------------------------------------------------------
// What the handler does and observes, per operation.

// The kinds of refusal, by variant only: `{ .. }` patterns, so that what
// a variant carries (a target, a cycle) can change without this test.

fn kind_fast<M>(e: &FastSendError<M>) -> String {
    match e {
        FastSendError::Busy { .. } => "Busy",
        FastSendError::Cycle { .. } => "Cycle",
        FastSendError::Deadlock { .. } => "Deadlock",
        FastSendError::Panicked { .. } => "Panicked",
        FastSendError::Closed { .. } => "Closed",
        FastSendError::NotStarted { .. } => "NotStarted",
        FastSendError::ThreadBound { .. } => "ThreadBound",
    }
    .into()
}

fn kind_send<M>(e: &SendError<M>) -> String {
    match e {
        SendError::Full { .. } => "Full",
        SendError::Closed { .. } => "Closed",
        SendError::Deadlock { .. } => "Deadlock",
    }
    .into()
}

fn kind_ask(e: &AskError) -> String {
    match e {
        AskError::Timeout { .. } => "Timeout",
        AskError::Panicked { .. } => "Panicked",
        AskError::Dropped { .. } => "Dropped",
        AskError::Deadlock { .. } => "Deadlock",
        AskError::PeerLost => "PeerLost",
    }
    .into()
}

fn fast<R, M>(r: Result<R, FastSendError<M>>, ok: impl FnOnce(R) -> String) -> String {
    match r {
        Ok(v) => format!("Ok({})", ok(v)),
        Err(e) => format!("Err({})", kind_fast(&e)),
    }
}

fn sent<M>(r: Result<(), SendError<M>>) -> String {
    match r {
        Ok(()) => "Ok".into(),
        Err(e) => format!("Err({})", kind_send(&e)),
    }
}

fn void<M>(r: Result<Delivered, SendError<M>>) -> String {
    match r {
        Ok(d) => format!("Ok({d:?})"),
        Err(e) => format!("Err({})", kind_send(&e)),
    }
}

fn answered<R>(r: Result<R, AskError>, ok: impl FnOnce(R) -> String) -> String {
    match r {
        Ok(v) => format!("Ok({})", ok(v)),
        Err(e) => format!("Err({})", kind_ask(&e)),
    }
}

/// `ask` then `f` on the handle.
fn asked<R: Send + 'static, M>(
    r: Result<kaspar::Ask<R>, SendError<M>>,
    f: impl FnOnce(kaspar::Ask<R>) -> String,
) -> String {
    match r {
        Ok(a) => f(a),
        Err(e) => format!("ask Err({})", kind_send(&e)),
    }
}

/// `#12` -> `#N`: actor ids differ between cells, legitimately.
fn scrub(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '#' && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push('N');
        }
    }
    out
}

/// A call chain as `Actor/Message` frames, outermost first.
fn frames(chain: &CallChain) -> String {
    chain
        .frames()
        .iter()
        .map(|f| format!("{}/{}", f.actor_name(), f.class_name()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn count(c: Count) -> String {
    c.0.to_string()
}

fn observe(op: Op, other: &Addr<Other>, ctx: &mut Ctx<Probe>) -> String {
    let me = ctx.myself();
    match op {
        Op::Identity => {
            let t = me.target();
            format!(
                "ctx={} addr={:?} name={} target={}/{:?} recipient_id_eq={}",
                scrub(&format!("{ctx:?}")),
                scrub(&format!("{me:?}")),
                me.name(),
                t.name,
                t.instance,
                me.recipient::<Note>().id() == me.id(),
            )
        }
        Op::Now => format!("now={}", ctx.now().as_nanos()),
        Op::Stats => {
            let s = me.stats();
            format!(
                "name={:?} handled={} void_inline={} busy={} cycles={} deadlocks={} \
                 panics={} dead_letters={} restarts={}",
                s.name,
                s.handled,
                s.void_inline,
                s.busy,
                s.cycles,
                s.deadlocks,
                s.panics,
                s.dead_letters,
                s.restarts
            )
        }
        Op::StatsVoidQueued => format!("void_queued={}", me.stats().void_queued),
        Op::StatsHighWater => format!("mailbox_high_water={}", me.stats().mailbox_high_water),
        Op::Latency => match me.latency() {
            None => "None".into(),
            Some(l) => l
                .classes
                .iter()
                .map(|c| format!("{}:{}", c.class, c.count))
                .collect::<Vec<_>>()
                .join(" "),
        },
        Op::Liveness => format!(
            "me.is_stopped={} other.is_stopped={} dead_letters={}",
            me.is_stopped(),
            other.is_stopped(),
            me.dead_letters().counts().total()
        ),
        Op::SpawnChild => {
            let child = ctx.spawn(Child).name("child").start();
            let f = fast(child.fast_send(Square(3)), |v| v.to_string());
            let x = fast(child.fast_send_x(Square(4)), |v| v.to_string());
            let v = void(child.fast_send_void(Square(5)));
            let s = sent(child.send(Square(6)));
            let a = asked(child.ask(Square(7)), |a| {
                answered(a.wait(), |v| v.to_string())
            });
            let st = child.stats();
            format!(
                "fast_send={f} fast_send_x={x} fast_send_void={v} send={s} ask={a} \
                 target={} name={:?} handled={}",
                scrub(&format!("{:?}", child.target())),
                st.name,
                st.handled
            )
        }
        Op::SpawnGroup => {
            let g = ctx
                .spawn_group::<Children>((Child, Child))
                .name("children")
                .start();
            let f = fast(g.a.fast_send(Square(3)), |v| v.to_string());
            let a = asked(g.b.ask(Square(4)), |a| {
                answered(a.wait(), |v| v.to_string())
            });
            format!(
                "a.fast_send={f} b.ask={a} a={}",
                scrub(&format!("{:?}", g.a.target()))
            )
        }
        Op::TimerCancel => {
            let once = ctx.schedule_once(Duration::from_secs(3600), Tick);
            let every = ctx.schedule_every(Duration::from_secs(3600), Tick);
            format!(
                "once: cancel={} again={}; every: cancel={} again={}; distinct={}",
                ctx.cancel(once),
                ctx.cancel(once),
                ctx.cancel(every),
                ctx.cancel(every),
                once != every
            )
        }
        Op::TimerFires => {
            let _ = ctx.schedule_once(Duration::ZERO, Tick);
            "scheduled".into()
        }
        Op::SelfSend => format!("send={}", sent(me.send(Note(1)))),
        Op::SelfAskWaitZero => asked(me.ask(Note(2)), |mut a| {
            answered(a.wait_timeout(Duration::ZERO), |_| "reply".into())
        }),
        Op::SelfAskWaitLong => asked(me.ask(Note(3)), |mut a| {
            answered(a.wait_timeout(Duration::from_secs(1)), |_| "reply".into())
        }),
        Op::SelfAskWait => asked(me.ask(Note(4)), |a| answered(a.wait(), |_| "reply".into())),
        Op::SelfAskCycle => asked(me.ask(Note(5)), |a| match a.wait() {
            Err(AskError::Deadlock(cycle)) => format!(
                "kinds={:?} first_waits_for_me={}",
                cycle.iter().map(|e| e.kind).collect::<Vec<_>>(),
                cycle.first().is_some_and(|e| e.waits_for.id == me.id()),
            ),
            other => format!("not a deadlock: {}", answered(other, |_| "reply".into())),
        }),
        Op::SelfAskCycleChain => asked(me.ask(Note(5)), |a| match a.wait() {
            Err(AskError::Deadlock(cycle)) => format!(
                "first_chain=[{}]",
                cycle.first().map(|e| frames(&e.chain)).unwrap_or_default()
            ),
            other => format!("not a deadlock: {}", answered(other, |_| "reply".into())),
        }),
        Op::SelfAskTryTake => asked(me.ask(Note(6)), |mut a| match a.try_take() {
            None => "None".into(),
            Some(r) => format!("Some({})", answered(r, |_| "reply".into())),
        }),
        Op::SelfFastSend => format!(
            "fast_send={} spin={} x={} adaptive={} with_policy={} void={}",
            fast(me.fast_send(Note(7)), |_| "reply".into()),
            fast(me.fast_send_spin(Note(7)), |_| "reply".into()),
            fast(me.fast_send_x(Note(7)), |_| "reply".into()),
            fast(me.fast_send_adaptive(Note(7)), |_| "reply".into()),
            fast(
                me.with_policy(CyclePolicy::Conservative).fast_send(Note(7)),
                |_| "reply".into()
            ),
            void(me.fast_send_void(Note(8))),
        ),
        Op::SelfFastSendChain => match me.fast_send(Note(9)) {
            Err(FastSendError::Cycle { chain, target, .. }) => format!(
                "target_is_me={} chain=[{}]",
                target.id == me.id(),
                frames(&chain)
            ),
            other => format!("not a cycle: {}", fast(other, |_| "reply".into())),
        },
        Op::SelfRequest => format!("request={}", sent(me.request(Note(10), &me))),
        Op::OtherFastSend => format!(
            "fast_send={} spin={} x={} adaptive={} void={} with_policy={}",
            fast(other.fast_send(Inc), count),
            fast(other.fast_send_spin(Inc), count),
            fast(other.fast_send_x(Inc), count),
            fast(other.fast_send_adaptive(Inc), count),
            void(other.fast_send_void(Inc)),
            fast(
                other.with_policy(CyclePolicy::Conservative).fast_send(Inc),
                count
            ),
        ),
        Op::OtherSendAsk => format!(
            "send={} ask={}",
            sent(other.send(Inc)),
            asked(other.ask(Inc), |a| answered(a.wait(), count))
        ),
        Op::OtherRequest => format!("request={}", sent(other.request(Inc, &me))),
        Op::OtherStats => {
            let f = fast(other.fast_send(Inc), count);
            let s = other.stats();
            format!(
                "fast_send={f} handled={} name={:?} latency={:?} type_name={}",
                s.handled,
                s.name,
                other.latency().map(|l| l.classes.len()),
                other.name()
            )
        }
        Op::RecipientSelf => {
            let r: Recipient<Note, NoteReply> = me.recipient();
            format!(
                "id_eq={} fast_send={} spin={} x={} adaptive={} with_policy={} void={} \
                 send={} ask+wait_zero={} request={}",
                r.id() == me.id(),
                fast(r.fast_send(Note(11)), |_| "reply".into()),
                fast(r.fast_send_spin(Note(11)), |_| "reply".into()),
                fast(r.fast_send_x(Note(11)), |_| "reply".into()),
                fast(r.fast_send_adaptive(Note(11)), |_| "reply".into()),
                fast(
                    r.fast_send_with_policy(CyclePolicy::Conservative, Note(11)),
                    |_| "reply".into()
                ),
                void(r.fast_send_void(Note(12))),
                sent(r.send(Note(13))),
                asked(r.ask(Note(14)), |mut a| answered(
                    a.wait_timeout(Duration::ZERO),
                    |_| "reply".into()
                )),
                sent(r.request(Note(15), &me)),
            )
        }
        Op::RecipientSelfAskWait => {
            let r: Recipient<Note, NoteReply> = me.recipient();
            asked(r.ask(Note(16)), |a| answered(a.wait(), |_| "reply".into()))
        }
        Op::RecipientOther => {
            let r: Recipient<Inc, Count> = other.recipient();
            format!(
                "fast_send={} x={} void={} send={} ask={} request={}",
                fast(r.fast_send(Inc), count),
                fast(r.fast_send_x(Inc), count),
                void(r.fast_send_void(Inc)),
                sent(r.send(Inc)),
                asked(r.ask(Inc), |a| answered(a.wait(), count)),
                sent(r.request(Inc, &me)),
            )
        }
        Op::StopSelf => {
            ctx.stop();
            format!(
                "is_stopped={} send={} ask={} fast_send={} void={}",
                me.is_stopped(),
                sent(me.send(Note(17))),
                asked(me.ask(Note(18)), |_| "handle".into()),
                fast(me.fast_send(Note(19)), |_| "reply".into()),
                void(me.fast_send_void(Note(20))),
            )
        }
    }
}

// ---------------------------------------------------------------------------
// The ways a handler is reached.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// `send` from the test thread; the observation through the channel.
    Send,
    /// `ask(..).wait()` from the test thread.
    AskWait,
    /// `request(.., &sink)` from the test thread.
    Request,
    /// `Recipient::send` from the test thread.
    RecipientSend,
    /// `fast_send` from the test thread.
    FastSend,
    /// `fast_send` from a third thread, the actor's own thread idle.
    FastSendThirdThread,
    /// `fast_send_void` from the test thread (must run inline).
    FastSendVoid,
    /// `fast_send_void` from the test thread while another thread holds
    /// the actor (must fall back to the queue).
    FastSendVoidQueued,
    /// `fast_send_x` from the test thread (retried while busy).
    FastSendX,
    /// `fast_send_spin` from the test thread.
    FastSendSpin,
    /// `fast_send_adaptive` from the test thread.
    FastSendAdaptive,
    /// `Recipient::fast_send` from the test thread.
    RecipientFastSend,
    /// `with_policy(Conservative).fast_send` (a `Call`) from the test
    /// thread.
    CallFastSend,
    /// `fast_send` from another standalone actor's handler, on that
    /// actor's own thread (that actor reached by `ask`).
    ActorQueued,
    /// `fast_send` from another standalone actor's handler run inline on
    /// the test thread (that actor reached by `fast_send`): two locks held.
    ActorInline,
    /// Group member, queued: `ask(..).wait()` to the member.
    GroupQueued,
    /// Group member, `fast_send` from the test thread (the group's lock).
    GroupFastSend,
    /// Group member, `fast_send` from another member's handler on the
    /// group thread (that member reached by `ask`).
    GroupIntraQueued,
    /// Group member, `fast_send` from another member's handler run inline
    /// on the test thread (that member reached by `fast_send`).
    GroupIntraInline,
}

const WAYS: &[Way] = &[
    Way::Send,
    Way::AskWait,
    Way::Request,
    Way::RecipientSend,
    Way::FastSend,
    Way::FastSendThirdThread,
    Way::FastSendVoid,
    Way::FastSendVoidQueued,
    Way::FastSendX,
    Way::FastSendSpin,
    Way::FastSendAdaptive,
    Way::RecipientFastSend,
    Way::CallFastSend,
    Way::ActorQueued,
    Way::ActorInline,
    Way::GroupQueued,
    Way::GroupFastSend,
    Way::GroupIntraQueued,
    Way::GroupIntraInline,
];

impl Way {
    fn grouped(self) -> bool {
        matches!(
            self,
            Way::GroupQueued | Way::GroupFastSend | Way::GroupIntraQueued | Way::GroupIntraInline
        )
    }
}

/// What one cell observed: the handler's own result, and what followed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Cell {
    result: String,
    later: String,
}

/// Waits for the handler's result on `rx`, keeping later events seen
/// meanwhile.
fn result_from(rx: &Receiver<Ev>, later: &mut Vec<String>) -> String {
    loop {
        match rx.recv_timeout(CELL_BUDGET) {
            Ok(Ev::Result(s)) => return s,
            Ok(Ev::Later(s)) => later.push(s),
            Err(_) => return "NO RESULT".into(),
        }
    }
}

/// Runs `op` under `way` in a fresh system; returns what was observed.
fn run_cell(way: Way, op: Op) -> Cell {
    let config = if op == Op::Now {
        SystemConfig {
            clock: Clock::Virtual(VirtualClock::new(Time::from_nanos(VIRTUAL_START))),
            ..SystemConfig::default()
        }
    } else {
        SystemConfig::default()
    };
    let system = System::with_config(config);
    let (tx, rx) = mpsc::channel();
    let other = system.spawn(Other { n: 0 }).name("other").start();
    let sink = system.spawn(Sink).start();
    let state = Probe {
        out: tx,
        other: other.clone(),
    };
    let (probe, driver) = if way.grouped() {
        let g = system
            .spawn_group::<ProbeGroup>((Driver { probe: None }, state))
            .name("probe")
            .record_latency(true)
            .start();
        g.driver
            .fast_send(Connect(g.probe.clone()))
            .expect("driver connects");
        (g.probe, Some(g.driver))
    } else {
        let p = system
            .spawn(state)
            .name("probe")
            .record_latency(true)
            .start();
        let driver = matches!(way, Way::ActorQueued | Way::ActorInline).then(|| {
            let d = system.spawn(Driver { probe: None }).start();
            d.fast_send(Connect(p.clone())).expect("driver connects");
            d
        });
        (p, driver)
    };
    // The same start in every way: one handler run, and the lock free
    // once it returns (a parked fast_send waits out the actor's own start).
    // `FastSendVoidQueued` warms up with the probe held, below.
    if way != Way::FastSendVoidQueued {
        probe.fast_send(Warm(None)).expect("warm-up");
    }

    let mut later = Vec::new();
    // The reply as the sender saw it, where the way has one: it must be
    // the handler's own observation.
    let replied: Option<String> = match way {
        Way::Send => {
            probe.send(Run(op)).expect("send");
            None
        }
        Way::AskWait => Some(answered(probe.ask(Run(op)).expect("ask").wait(), |o| o.0)),
        Way::Request => {
            probe.request(Run(op), &sink).expect("request");
            None
        }
        Way::RecipientSend => {
            let r: Recipient<Run, Observed> = probe.recipient();
            r.send(Run(op)).expect("send");
            None
        }
        Way::FastSend => Some(fast(probe.fast_send(Run(op)), |o| o.0)),
        Way::FastSendThirdThread => {
            let p = probe.clone();
            Some(
                thread::spawn(move || fast(p.fast_send(Run(op)), |o| o.0))
                    .join()
                    .unwrap_or_else(|_| "third thread panicked".into()),
            )
        }
        Way::FastSendVoid => match probe.fast_send_void(Run(op)) {
            Ok(Delivered::Inline) => None,
            // Not reached inline: the cell does not test what it claims.
            other => return not_exercised(&system, format!("fast_send_void: {other:?}")),
        },
        Way::FastSendVoidQueued => {
            let (entered, entered_rx) = mpsc::channel();
            let (release_tx, release) = mpsc::channel();
            let p = probe.clone();
            let holder =
                thread::spawn(move || p.fast_send(Warm(Some(Gate { entered, release }))).is_ok());
            if entered_rx.recv_timeout(CELL_BUDGET).is_err() {
                return not_exercised(&system, "the holder never entered".into());
            }
            let delivered = probe.fast_send_void(Run(op));
            let _ = release_tx.send(());
            let _ = holder.join();
            match delivered {
                Ok(Delivered::Queued) => None,
                other => {
                    return not_exercised(&system, format!("fast_send_void: {other:?}"));
                }
            }
        }
        Way::FastSendX => {
            let mut msg = Run(op);
            loop {
                match probe.fast_send_x(msg) {
                    Err(FastSendError::Busy { msg: m, .. }) => {
                        msg = m;
                        thread::yield_now();
                    }
                    r => break Some(fast(r, |o| o.0)),
                }
            }
        }
        Way::FastSendSpin => Some(fast(probe.fast_send_spin(Run(op)), |o| o.0)),
        Way::FastSendAdaptive => Some(fast(probe.fast_send_adaptive(Run(op)), |o| o.0)),
        Way::RecipientFastSend => {
            let r: Recipient<Run, Observed> = probe.recipient();
            Some(fast(r.fast_send(Run(op)), |o| o.0))
        }
        Way::CallFastSend => Some(fast(
            probe
                .with_policy(CyclePolicy::Conservative)
                .fast_send(Run(op)),
            |o| o.0,
        )),
        Way::GroupQueued => Some(answered(probe.ask(Run(op)).expect("ask").wait(), |o| o.0)),
        Way::GroupFastSend => Some(fast(probe.fast_send(Run(op)), |o| o.0)),
        Way::GroupIntraQueued | Way::ActorQueued => {
            let d = driver.as_ref().expect("a driver");
            Some(match d.ask(Drive(op)).expect("ask").wait() {
                Ok(Ok(o)) => format!("Ok({})", o.0),
                Ok(Err(kind)) => format!("Err({kind})"),
                Err(e) => format!("driver Err({})", kind_ask(&e)),
            })
        }
        Way::GroupIntraInline | Way::ActorInline => {
            let d = driver.as_ref().expect("a driver");
            Some(match d.fast_send(Drive(op)) {
                Ok(Ok(o)) => format!("Ok({})", o.0),
                Ok(Err(kind)) => format!("Err({kind})"),
                Err(e) => format!("driver Err({})", kind_fast(&e)),
            })
        }
    };
    let mut result = result_from(&rx, &mut later);
    if let Some(replied) = replied {
        if replied != format!("Ok({result})") {
            result = format!("{result} BUT THE SENDER GOT {replied}");
        }
    }

    // What the handler set in motion: barriers through both queues, twice
    // (a reply pushed while a queued message is handled lands behind the
    // first barrier).
    let mut barriers = Vec::new();
    for _ in 0..2 {
        barriers.push(match other.ask(Barrier) {
            Ok(a) => answered(a.wait(), |()| "Ok".into()),
            Err(e) => format!("Err({})", kind_send(&e)),
        });
        barriers.push(match probe.ask(Barrier) {
            Ok(a) => answered(a.wait(), |()| "Ok".into()),
            Err(e) => format!("Err({})", kind_send(&e)),
        });
    }
    if op == Op::TimerFires && !later.iter().any(|e| e == "tick") {
        // Fired by the live timer thread, queued to the probe: wait for it.
        loop {
            match rx.recv_timeout(Duration::from_secs(5)) {
                Ok(Ev::Later(s)) => {
                    let tick = s == "tick";
                    later.push(s);
                    if tick {
                        break;
                    }
                }
                Ok(Ev::Result(s)) => later.push(format!("a second result: {s}")),
                Err(_) => {
                    later.push("no tick".into());
                    break;
                }
            }
        }
    }
    system.shutdown();
    loop {
        match rx.try_recv() {
            Ok(Ev::Later(s)) => later.push(s),
            Ok(Ev::Result(s)) => later.push(format!("a second result: {s}")),
            Err(_) => break,
        }
    }
    later.sort();
    Cell {
        result,
        later: format!("[{}] barriers={}", later.join(", "), barriers.join(",")),
    }
}

fn not_exercised(system: &System, why: String) -> Cell {
    system.shutdown();
    Cell {
        result: format!("NOT EXERCISED ({why})"),
        later: String::new(),
    }
}

/// `run_cell` on its own thread, under the watchdog.
fn watched(way: Way, op: Op) -> Option<Cell> {
    let (tx, rx) = mpsc::channel();
    thread::Builder::new()
        .name(format!("cell {way:?} {op:?}"))
        .spawn(move || {
            let _ = tx.send(run_cell(way, op));
        })
        .expect("spawn a cell");
    match rx.recv_timeout(CELL_BUDGET) {
        Ok(cell) => Some(cell),
        Err(RecvTimeoutError::Disconnected) => Some(Cell {
            result: "PANICKED (see the output above)".into(),
            later: String::new(),
        }),
        Err(RecvTimeoutError::Timeout) => None,
    }
}

// ---------------------------------------------------------------------------
// The test.

#[test]
fn every_way_of_reaching_a_handler_observes_the_same() {
    let mut table: BTreeMap<(Op, &'static str), Vec<(Way, String)>> = BTreeMap::new();
    let mut hangs = Vec::new();
    'ways: for &way in WAYS {
        for &op in OPS {
            let cell = match watched(way, op) {
                Some(cell) => cell,
                None => {
                    hangs.push(format!("{op:?} under {way:?}"));
                    if hangs.len() >= MAX_HANGS {
                        break 'ways;
                    }
                    Cell {
                        result: format!("HANG (> {CELL_BUDGET:?})"),
                        later: String::new(),
                    }
                }
            };
            table
                .entry((op, "result"))
                .or_default()
                .push((way, cell.result));
            table
                .entry((op, "later"))
                .or_default()
                .push((way, cell.later));
        }
    }

    let mut report = String::new();
    let mut leaks = Vec::new();
    let mut stale = Vec::new();
    for ((op, aspect), cells) in &table {
        // Group the ways by what they observed.
        let mut by_value: BTreeMap<&str, Vec<Way>> = BTreeMap::new();
        for (way, value) in cells {
            by_value.entry(value).or_default().push(*way);
        }
        let allowed = PERMITTED
            .iter()
            .find(|(p, _, _)| p == op)
            .map(|&(_, a, why)| (a, why));
        let differs = by_value.len() > 1;
        let mark = match (differs, allowed) {
            (false, _) => "same",
            (true, Some((Allowance::Documented, _))) => "DIFFERS (permitted: documented)",
            (true, None) => "DIFFERS",
        };
        report.push_str(&format!("{op:?} / {aspect}: {mark}\n"));
        for (value, ways) in &by_value {
            report.push_str(&format!("    {value}\n        <- {ways:?}\n"));
        }
        match (differs, allowed) {
            (true, Some((kind, why))) => {
                report.push_str(&format!("    {kind:?}: {why}\n"));
            }
            (true, None) => leaks.push(format!("{op:?} / {aspect}")),
            (false, Some(_)) if *aspect == "result" => stale.push(format!("{op:?}")),
            (false, _) => {}
        }
    }
    println!("{report}");
    if !stale.is_empty() {
        println!(
            "note: allowed differences that no longer differ (remove them from PERMITTED): \
             {stale:?}"
        );
    }
    assert!(
        leaks.is_empty() && hangs.is_empty(),
        "receiver transparency broken: a handler observes differently depending on how it \
         was reached.\n\
         rows that differ: {leaks:?}\n\
         hung cells: {hangs:?}\n\n{report}"
    );
}
