//! Issue #25, row 6: waits that could never end, and used to hang.
//!
//! * `System::shutdown()` waits for every actor thread to finish; called
//!   from inside a handler, it waited for the very thread it runs on.
//!   Dropping the last `System` inside a handler does the same.
//! * An `ask` to a prepared actor that is never spawned has no thread to
//!   answer it. Waited on by the thread that holds the `Prepared` (the one
//!   thread that could spawn it), `Ask::wait` slept forever: the deadlock
//!   detector saw no consumer to follow.
//!
//! Guaranteed after the fix: the shutdown (or the drop) returns, and the
//! actor it ran in stops once its handler returns; the wait on the
//! prepared actor's ask returns `Err(AskError::Deadlock(_))`, and the
//! message is not lost: it becomes a dead letter when the `Prepared` is
//! dropped unspawned, or is handled when it is spawned.
//!
//! Every scenario runs under a watchdog: a hang fails the test.

use std::sync::Arc;

use kaspar::prelude::*;
use kaspar::AskError;

use kaspar_suite::watch::{eventually, watchdog, STEP};

// ---- (a) shutting the system down from inside a handler -------------------

/// Shuts the system down from the handler.
pub struct ShutDown(pub Arc<System>);
/// Hands the actor the system, to own.
pub struct Adopt(pub System);
/// Drops the system the actor owns.
pub struct LetGo;
pub struct Ping;

#[actor]
pub struct Closer {
    owned: Option<System>,
}

#[actor]
impl Closer {
    /// Returns once `shutdown` has returned.
    #[handler(ShutDown)]
    fn shut_down(&mut self, msg: ShutDown, _ctx: &mut Ctx<Self>) {
        msg.0.shutdown();
    }

    #[handler(Adopt)]
    fn adopt(&mut self, msg: Adopt, _ctx: &mut Ctx<Self>) {
        self.owned = Some(msg.0);
    }

    /// Returns once the last handle on the system is dropped.
    #[handler(LetGo)]
    fn let_go(&mut self, _msg: LetGo, _ctx: &mut Ctx<Self>) {
        drop(self.owned.take());
    }

    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

/// An actor that only has to be stopped.
#[actor]
pub struct Bystander;

#[actor]
impl Bystander {
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

/// `System::shutdown()` called from a handler returns instead of waiting
/// for its own thread; the other actors are stopped, and the calling
/// actor stops once its handler has returned.
#[test]
fn shutdown_called_from_a_handler_returns() {
    watchdog("shutdown from a handler", || {
        let system = Arc::new(System::new());
        let bystander = system.spawn(Bystander).start();
        let closer = system.spawn(Closer { owned: None }).start();
        let reply = closer
            .ask(ShutDown(Arc::clone(&system)))
            .unwrap()
            .wait_timeout(STEP);
        assert_eq!(
            reply,
            Ok(()),
            "System::shutdown() inside a handler did not return"
        );
        assert!(
            eventually(|| bystander.is_stopped()),
            "the shutdown did not stop the other actor"
        );
        assert!(
            eventually(|| closer.is_stopped()),
            "the actor that shut the system down did not stop after its handler"
        );
        // And the system's own drop, now on this thread, does not hang.
        drop(system);
    });
}

/// Dropping the last `System` from a handler returns too, and the actor
/// that dropped it stops once its handler has returned.
#[test]
fn dropping_the_last_system_in_a_handler_returns() {
    watchdog("dropping the last System in a handler", || {
        let system = System::new();
        let closer = system.spawn(Closer { owned: None }).start();
        closer.send(Adopt(system)).unwrap();
        let reply = closer.ask(LetGo).unwrap().wait_timeout(STEP);
        assert_eq!(
            reply,
            Ok(()),
            "dropping the last System inside a handler did not return"
        );
        assert!(
            eventually(|| closer.is_stopped()),
            "the actor that dropped its system did not stop after its handler"
        );
    });
}

// ---- (b) an ask to a prepared actor, waited on by its holder --------------

pub struct Count;

#[actor]
pub struct Tally {
    pings: u64,
}

#[actor]
impl Tally {
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {
        self.pings += 1;
    }

    #[handler(Count)]
    fn count(&mut self, _msg: Count, _ctx: &mut Ctx<Self>) -> u64 {
        self.pings
    }
}

/// The thread that holds a `Prepared` waits on an ask to it: nobody else
/// can spawn the actor, so the wait is refused as a deadlock instead of
/// sleeping forever. The message stays queued, and dropping the
/// `Prepared` unspawned turns it into exactly one dead letter.
#[test]
fn an_ask_to_an_unspawned_prepared_actor_waited_on_by_its_holder_is_refused() {
    watchdog("a wait on a prepared actor's ask", || {
        let system = System::new();
        let prepared = system.prepare::<Tally>();
        let asked = prepared.addr().ask(Ping).unwrap();
        let seen = asked.wait();
        assert!(
            matches!(seen, Err(AskError::Deadlock(_))),
            "the wait returned {seen:?}, not Deadlock"
        );
        assert_eq!(system.dead_letters().total(), 0, "nothing lost yet");
        drop(prepared);
        let d = system.dead_letters().counts();
        assert_eq!(
            (d.stopped, d.total()),
            (1, 1),
            "the asked message is one dead letter: {d:?}"
        );
    });
}

/// The same refused wait, but the holder then spawns the actor: the
/// message that was asked is handled (before anything sent later).
#[test]
fn an_ask_refused_on_a_prepared_actor_is_handled_once_it_is_spawned() {
    watchdog("a wait on a prepared actor's ask, then spawn", || {
        let system = System::new();
        let prepared = system.prepare::<Tally>();
        let asked = prepared.addr().ask(Ping).unwrap();
        let seen = asked.wait();
        assert!(
            matches!(seen, Err(AskError::Deadlock(_))),
            "the wait returned {seen:?}, not Deadlock"
        );
        let tally = prepared.spawn(Tally { pings: 0 }).start();
        assert_eq!(
            tally.ask(Count).unwrap().wait_timeout(STEP),
            Ok(1),
            "the refused ask's message was handled once"
        );
        assert_eq!(system.dead_letters().total(), 0);
        system.shutdown();
    });
}
