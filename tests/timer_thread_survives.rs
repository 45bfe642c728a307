//! The one thread that fires every live timer of the process must outlive
//! any one timer's message: a timer that fires into an actor that has
//! stopped drops its message on that thread, and a message whose
//! destructor panics must not end it (issue 25: "whatever unwinds ... a
//! timer, a user `Drop` of a message"). After such a firing, other actors'
//! timers still fire.

use std::sync::mpsc::{self, Sender};
use std::time::Duration;

use kaspar::prelude::*;

/// How long a step may take before the test fails instead of hanging.
const WATCHDOG: Duration = Duration::from_secs(10);

/// A timer message whose destructor panics (unless it is dropped during an
/// unwind, where a second panic would abort the test process).
pub struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("Bomb: a timer message whose drop panics");
        }
    }
}

/// Arms a `Bomb` for itself, then stops: the timer fires into a stopped
/// actor, whose mailbox refuses it, and the timer thread drops the message.
pub struct ArmAndStop(pub Duration);

#[actor]
pub struct Doomed;

#[actor]
impl Doomed {
    #[handler(ArmAndStop)]
    fn arm_and_stop(&mut self, msg: ArmAndStop, ctx: &mut Ctx<Self>) {
        ctx.schedule_once(msg.0, Bomb);
        ctx.stop();
    }

    #[handler(Bomb)]
    fn bomb(&mut self, msg: Bomb, _ctx: &mut Ctx<Self>) {
        // Never reached: the actor has stopped when the timer fires. Were
        // it reached, the bomb must not go off in the test's handler.
        std::mem::forget(msg);
    }
}

/// Arms a timer for itself; reports on `fired` when it arrives.
pub struct Arm(pub Duration, pub Sender<()>);

/// The timer message of [`Witness`].
pub struct Ring(pub Sender<()>);

#[actor]
pub struct Witness;

#[actor]
impl Witness {
    #[handler(Arm)]
    fn arm(&mut self, msg: Arm, ctx: &mut Ctx<Self>) {
        ctx.schedule_once(msg.0, Ring(msg.1));
    }

    #[handler(Ring)]
    fn ring(&mut self, msg: Ring, _ctx: &mut Ctx<Self>) {
        let _ = msg.0.send(());
    }
}

#[test]
fn a_timer_message_whose_drop_panics_does_not_end_the_timer_thread() {
    let system = System::new();
    let doomed = system.spawn(Doomed).start();
    doomed.send(ArmAndStop(Duration::from_millis(1))).unwrap();
    let witness = system.spawn(Witness).start();
    // Due well after the bomb: by then the bomb's firing has run.
    let (fired, rang) = mpsc::channel();
    witness.send(Arm(Duration::from_millis(50), fired)).unwrap();
    assert!(
        rang.recv_timeout(WATCHDOG).is_ok(),
        "the witness's timer never fired: the timer thread died dropping the bomb"
    );
    assert!(doomed.is_stopped());
    // And again, after the bomb: the thread still serves new timers.
    let (fired, rang) = mpsc::channel();
    witness.send(Arm(Duration::from_millis(1), fired)).unwrap();
    assert!(rang.recv_timeout(WATCHDOG).is_ok());
    system.shutdown();
}
