//! Issue #25, row 2: the run loop's `bump` must be visible to the deadlock
//! detector.
//!
//! Between two messages of a batch, a run loop lets a parked `fast_send`
//! caller in and then waits to take its lock back (`bump`). That wait used
//! to be invisible to the wait-for graph: a caller let in this way whose
//! handler then waited on an `ask` to the same actor (whose run loop is the
//! one waiting for the caller's lock) was never refused. `wait_timeout`
//! ran out with `Timeout`, and `wait()` hung forever.
//!
//! Guaranteed after the fix: such a wait returns
//! `Err(AskError::Deadlock(_))` at once, whichever way the caller got the
//! lock (through a bump or after the batch).
//!
//! The interleaving is made with gates: the actor's thread is held inside
//! the first message of a batch while the caller parks on the lock, then
//! let go, so its run loop bumps the caller in before the next message of
//! the batch. Whether the caller is parked yet cannot be observed through
//! the public API, so the test gives it a moment and runs the scenario a
//! few times; it requires `Deadlock` every time.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::AskError;

/// How long the caller's handler waits on its `ask` before giving up.
const ASK_WAIT: Duration = Duration::from_secs(2);
/// How long one step of the scenario may take before it counts as hung.
const STEP: Duration = Duration::from_secs(8);
/// How long the caller gets to park on the lock once it said it would.
const PARK: Duration = Duration::from_millis(50);
const ROUNDS: usize = 3;

/// Blocks the actor's thread until the test sends on `open`, after saying
/// it is in.
pub struct Hold {
    pub entered: Sender<()>,
    pub open: Mutex<Receiver<()>>,
}
/// The message after `Hold` in the same batch: the bump comes before it.
pub struct Other;
/// Handled by the run loop after the caller's handler asked for it.
pub struct X;
/// The caller's message: asks the actor itself, and waits.
pub struct SelfAsk;

#[actor(mailbox = MailboxKind::BQueueBatched { capacity: 64 })]
pub struct Looper {
    log: Arc<Mutex<Vec<&'static str>>>,
}

#[actor]
impl Looper {
    #[handler(Hold)]
    fn hold(&mut self, msg: Hold, _ctx: &mut Ctx<Self>) {
        msg.entered.send(()).unwrap();
        msg.open
            .lock()
            .unwrap()
            .recv()
            .expect("the test opens the gate");
    }

    #[handler(Other)]
    fn other(&mut self, _msg: Other, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push("other");
    }

    #[handler(X)]
    fn x(&mut self, _msg: X, _ctx: &mut Ctx<Self>) {}

    /// Runs on the `fast_send` caller's thread, under the actor's lock:
    /// the run loop that must answer the ask waits for that lock.
    #[handler(SelfAsk)]
    fn self_ask(&mut self, _msg: SelfAsk, ctx: &mut Ctx<Self>) -> Result<(), AskError> {
        self.log.lock().unwrap().push("self-ask");
        ctx.myself().ask(X).unwrap().wait_timeout(ASK_WAIT)
    }
}

fn gate() -> (Sender<()>, Receiver<()>, Hold) {
    let (entered_tx, entered) = mpsc::channel();
    let (open, open_rx) = mpsc::channel();
    let hold = Hold {
        entered: entered_tx,
        open: Mutex::new(open_rx),
    };
    (open, entered, hold)
}

/// One round; returns what the caller's handler saw of its wait, and
/// whether the caller got in through the bump (before `Other` ran).
fn round() -> (Result<(), AskError>, bool) {
    let system = System::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let a = system
        .spawn(Looper {
            log: Arc::clone(&log),
        })
        .start();

    // First hold the actor's thread, so that the next two messages are
    // queued together and drained as one batch.
    let (open_first, first_in, first) = gate();
    a.send(first).unwrap();
    first_in.recv_timeout(STEP).expect("the actor took Hold");
    let (open_second, second_in, second) = gate();
    a.send(second).unwrap();
    a.send(Other).unwrap();
    open_first.send(()).unwrap();
    second_in
        .recv_timeout(STEP)
        .expect("the actor took the second Hold");

    // The caller: parks on the lock the run loop holds for the batch.
    let (going_tx, going) = mpsc::channel();
    let (seen_tx, seen) = mpsc::channel();
    let caller = a.clone();
    thread::spawn(move || {
        going_tx.send(()).unwrap();
        let r = caller.fast_send(SelfAsk).map_err(|e| e.without_message());
        let _ = seen_tx.send(r);
    });
    going.recv_timeout(STEP).expect("the caller started");
    thread::sleep(PARK);
    // The run loop leaves `Hold`, finds the caller parked, and bumps.
    open_second.send(()).unwrap();

    let seen = seen
        .recv_timeout(STEP)
        .expect("watchdog: the caller's fast_send never returned");
    let inner = seen.unwrap_or_else(|e| panic!("the fast_send itself failed: {e:?}"));
    let bumped = log.lock().unwrap().first() == Some(&"self-ask");
    system.shutdown();
    (inner, bumped)
}

/// A `fast_send` caller let in by the run loop's bump, whose handler waits
/// on an `ask` to the same actor, is refused with `Deadlock` instead of
/// waiting out its timeout (or, with `wait()`, forever).
#[test]
fn an_ask_waited_on_by_a_caller_the_run_loop_bumped_in_is_refused_as_a_deadlock() {
    let (tx, rx) = mpsc::channel();
    let runner = thread::spawn(move || {
        for i in 0..ROUNDS {
            let _ = tx.send((i, round()));
        }
    });
    let mut bumped_rounds = 0;
    for _ in 0..ROUNDS {
        let (i, (seen, bumped)) = match rx.recv_timeout(STEP * 2) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => panic!("watchdog: a round hung"),
            Err(RecvTimeoutError::Disconnected) => match runner.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!(),
            },
        };
        bumped_rounds += usize::from(bumped);
        assert!(
            matches!(seen, Err(AskError::Deadlock(_))),
            "round {i} (caller bumped in: {bumped}): the caller's wait on its own actor's ask \
             returned {seen:?}, not Deadlock"
        );
    }
    assert!(
        bumped_rounds > 0,
        "no round let the caller in through a bump: the scenario did not run"
    );
}
