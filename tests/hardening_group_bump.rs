//! Issue #25, row 4: a group member halted by a thread that the group's
//! run loop let in through `bump` must not be entered intra-group again.
//!
//! The group's thread marks itself as the holder of a *clean* group (no
//! member has a flag set) when it takes the group's lock for a batch, and
//! calls between members then skip the flags check. Between two messages
//! of a batch it lets a parked `fast_send` caller in (`bump`). If that
//! caller's handler panicked under `Supervision::stop`, the member was
//! halted while the group's thread was away, yet the thread kept its mark
//! for the rest of the batch: the next member-to-member call into the
//! halted member ran its handler anyway (release builds), or tripped the
//! `debug_assert` "intra-group entry into a flagged member" inside the
//! caller's handler (debug builds).
//!
//! Guaranteed after the fix: once halted, the member never runs a handler
//! again; a member calling it from the group's thread gets
//! `FastSendError::Closed` (and does not panic), and sends to it are
//! handed back as `Closed`.
//!
//! Whether the outside caller is parked on the group's lock before the
//! batch goes on cannot be observed through the public API, so the test
//! gives it a moment and runs the scenario a few times; every round in
//! which the caller did get in through the bump must show the guarantee.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::Supervision;

/// How long one step of a round may take before it counts as hung.
const STEP: Duration = Duration::from_secs(4);
/// How long the outside caller gets to park on the lock.
const PARK: Duration = Duration::from_millis(50);
const ROUNDS: usize = 3;

/// What the members saw, shared with the test.
#[derive(Default)]
pub struct Shared {
    log: Mutex<Vec<&'static str>>,
    /// Set by the victim's panicking handler, just before it panics.
    halted: AtomicBool,
    /// Victim handlers entered after `halted` was set.
    entries_after_halt: AtomicUsize,
}

/// Blocks the group's thread until the test sends on `open`, after saying
/// it is in.
pub struct Hold {
    pub entered: Sender<()>,
    pub open: Mutex<Receiver<()>>,
}
/// The driver calls the victim synchronously, from the group's thread.
pub struct CallVictim;
/// Panics in the victim (which is supervised with `stop`).
pub struct Boom;
/// Any handler of the victim.
pub struct Touch;

#[actor]
pub struct Driver {
    victim: Addr<Victim>,
    shared: Arc<Shared>,
}

#[actor]
impl Driver {
    #[handler(Hold)]
    fn hold(&mut self, msg: Hold, _ctx: &mut Ctx<Self>) {
        msg.entered.send(()).unwrap();
        msg.open
            .lock()
            .unwrap()
            .recv()
            .expect("the test opens the gate");
    }

    /// What the intra-group `fast_send` into the victim returned.
    #[handler(CallVictim)]
    fn call_victim(&mut self, _msg: CallVictim, _ctx: &mut Ctx<Self>) -> String {
        self.shared.log.lock().unwrap().push("call");
        match self.victim.fast_send(Touch) {
            Ok(()) => "ran".into(),
            Err(e) if e.is_closed() => "closed".into(),
            Err(e) => format!("{:?}", e.without_message()),
        }
    }
}

#[actor]
pub struct Victim {
    shared: Arc<Shared>,
}

#[actor]
impl Victim {
    #[handler(Boom)]
    fn boom(&mut self, _msg: Boom, _ctx: &mut Ctx<Self>) {
        self.shared.log.lock().unwrap().push("boom");
        self.shared.halted.store(true, Ordering::SeqCst);
        panic!("the victim panics under Supervision::stop");
    }

    #[handler(Touch)]
    fn touch(&mut self, _msg: Touch, _ctx: &mut Ctx<Self>) {
        if self.shared.halted.load(Ordering::SeqCst) {
            self.shared
                .entries_after_halt
                .fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[group]
pub struct Desk {
    pub driver: Addr<Driver>,
    pub victim: Addr<Victim>,
}

fn hold() -> (Sender<()>, Receiver<()>, Hold) {
    let (entered_tx, entered) = mpsc::channel();
    let (open, open_rx) = mpsc::channel();
    let hold = Hold {
        entered: entered_tx,
        open: Mutex::new(open_rx),
    };
    (open, entered, hold)
}

/// What one round observed.
#[derive(Debug)]
pub struct Seen {
    /// The outside caller got in through the bump: the victim was halted
    /// before the driver's call in the same batch.
    bumped: bool,
    /// What the outside caller's `fast_send(Boom)` returned.
    outside: String,
    /// What the driver's intra-group call returned (its ask's reply).
    driver: Result<String, kaspar::AskError>,
    entries_after_halt: usize,
    driver_panics: u64,
    /// Whether a send to the halted victim was handed back as `Closed`.
    send_closed: bool,
}

fn round() -> Seen {
    let system = System::new();
    let shared = Arc::new(Shared::default());
    let prepared = system.prepare_group_with::<Desk>(MailboxKind::batched(64));
    let peers = prepared.group();
    let desk = prepared
        .spawn((
            Driver {
                victim: peers.victim.clone(),
                shared: Arc::clone(&shared),
            },
            Victim {
                shared: Arc::clone(&shared),
            },
        ))
        .start();
    desk.victim.supervise(Supervision::stop());

    // Hold the group's thread so that the next two messages queue up
    // together and are drained as one batch.
    let (open_first, first_in, first) = hold();
    desk.driver.send(first).unwrap();
    first_in.recv_timeout(STEP).expect("the group took Hold");
    let (open_second, second_in, second) = hold();
    desk.driver.send(second).unwrap();
    let mut call = desk.driver.ask(CallVictim).unwrap();
    open_first.send(()).unwrap();
    second_in
        .recv_timeout(STEP)
        .expect("the group took the second Hold");

    // The outside caller parks on the group's lock; the run loop bumps it
    // in between the second Hold and CallVictim.
    let (going_tx, going) = mpsc::channel();
    let (outside_tx, outside) = mpsc::channel();
    let victim = desk.victim.clone();
    thread::spawn(move || {
        going_tx.send(()).unwrap();
        let r = victim.fast_send(Boom).map_err(|e| e.without_message());
        let _ = outside_tx.send(format!("{r:?}"));
    });
    going.recv_timeout(STEP).expect("the caller started");
    thread::sleep(PARK);
    open_second.send(()).unwrap();

    let outside = outside
        .recv_timeout(STEP)
        .expect("watchdog: the outside fast_send never returned");
    let driver = call.wait_timeout(STEP);
    let send_closed = matches!(
        desk.victim.send(Touch),
        Err(SendError::Closed { msg: Touch, .. })
    );
    let bumped = shared.log.lock().unwrap().as_slice() == ["boom", "call"];
    let seen = Seen {
        bumped,
        outside,
        driver,
        entries_after_halt: shared.entries_after_halt.load(Ordering::SeqCst),
        driver_panics: desk.driver.stats().panics,
        send_closed,
    };
    system.shutdown();
    seen
}

/// A member halted by an outside `fast_send` that the group's run loop
/// bumped in mid-batch is never entered again: the next member-to-member
/// call into it in the same batch is refused as `Closed`, without running
/// its handler and without panicking in the calling member.
#[test]
fn a_member_halted_during_a_bump_is_not_entered_intra_group_again() {
    let (tx, rx) = mpsc::channel();
    let runner = thread::spawn(move || {
        for _ in 0..ROUNDS {
            let _ = tx.send(round());
        }
    });
    let mut bumped_rounds = 0;
    for i in 0..ROUNDS {
        let seen = match rx.recv_timeout(STEP * 3) {
            Ok(seen) => seen,
            Err(RecvTimeoutError::Timeout) => panic!("watchdog: round {i} hung"),
            Err(RecvTimeoutError::Disconnected) => match runner.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!(),
            },
        };
        assert!(
            seen.outside.contains("Panicked"),
            "round {i}: the outside Boom did not panic in the victim: {seen:?}"
        );
        assert!(
            seen.send_closed,
            "round {i}: the halted victim accepted a send: {seen:?}"
        );
        if !seen.bumped {
            // The caller got in after the batch: nothing to check here.
            continue;
        }
        bumped_rounds += 1;
        assert_eq!(
            seen.entries_after_halt, 0,
            "round {i}: the halted victim ran a handler: {seen:?}"
        );
        assert_eq!(
            seen.driver.as_deref(),
            Ok("closed"),
            "round {i}: the driver's intra-group call into the halted victim: {seen:?}"
        );
        assert_eq!(
            seen.driver_panics, 0,
            "round {i}: the driver panicked calling the halted victim: {seen:?}"
        );
    }
    assert!(
        bumped_rounds > 0,
        "no round let the caller in through a bump: the scenario did not run"
    );
}
