//! A `fast_send` made right after `start` waits for the actor's `started`
//! hook (`Spawn::start`), also when the actor is hosted on a tokio runtime
//! (`PoolConfig::tokio`), whose first activation may need the very thread
//! the `fast_send` would block: on a current-thread runtime, inside
//! `block_on` or from outside while nothing drives it, that thread runs
//! the activation itself. Inside a hosted handler, where blocking is
//! refused (`delivery/sched/tokio.rs`), the wait is refused as a deadlock
//! with the message handed back, on either kind of runtime. Before, each
//! of these hung.
//!
//! Every scenario runs on a helper thread under a watchdog, so a hang
//! fails the test instead of stalling the suite.

use kaspar::prelude::*;
use kaspar::FastSendError;
use tokio::runtime::{Builder, Runtime};

#[path = "support/hosted.rs"]
mod hosted;
use hosted::{hosted_on, watchdog};

fn current_thread() -> Runtime {
    Builder::new_current_thread().build().unwrap()
}

fn multi_thread() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap()
}

pub struct Started;

/// Answers whether its `started` hook has run.
#[actor]
pub struct Hooked {
    started: bool,
}

#[actor]
impl Hooked {
    #[started]
    fn started(&mut self, _c: &mut Ctx<Self>) {
        self.started = true;
    }

    #[handler(Started)]
    fn has_started(&mut self, _m: Started, _c: &mut Ctx<Self>) -> bool {
        self.started
    }
}

fn hooked() -> Hooked {
    Hooked { started: false }
}

#[test]
fn inside_block_on_on_a_current_thread_runtime() {
    let got = watchdog("current-thread, inside block_on", || {
        let rt = current_thread();
        let system = hosted_on(rt.handle().clone());
        let a = system.spawn(hooked()).pooled().start();
        let got = rt.block_on(async { a.fast_send(Started).ok() });
        system.shutdown();
        got
    });
    assert_eq!(got, Some(true));
}

#[test]
fn from_outside_a_current_thread_runtime_nobody_drives() {
    let got = watchdog("current-thread, outside", || {
        let rt = current_thread();
        let system = hosted_on(rt.handle().clone());
        let a = system.spawn(hooked()).pooled().start();
        let got = a.fast_send(Started).ok();
        system.shutdown();
        got
    });
    assert_eq!(got, Some(true));
}

#[test]
fn from_a_task_of_a_multi_thread_runtime() {
    let got = watchdog("multi-thread, in a task", || {
        let rt = multi_thread();
        let system = hosted_on(rt.handle().clone());
        let a = system.spawn(hooked()).pooled().start();
        let got = rt
            .block_on(rt.spawn(async move { a.fast_send(Started).ok() }))
            .unwrap();
        system.shutdown();
        got
    });
    assert_eq!(got, Some(true));
}

#[group]
pub struct One {
    pub hooked: Addr<Hooked>,
}

#[test]
fn to_a_member_of_a_hosted_group() {
    let got = watchdog("hosted group", || {
        let rt = current_thread();
        let system = hosted_on(rt.handle().clone());
        let group = system.spawn_group::<One>((hooked(),)).pooled().start();
        let got = rt.block_on(async { group.hooked.fast_send(Started).ok() });
        system.shutdown();
        got
    });
    assert_eq!(got, Some(true));
}

pub struct SpawnAndCall;

/// Spawns a hooked child, fast_sends it at once, and reports what came
/// back; then asks it (a queued message, which waits for nothing).
#[actor]
pub struct Parent;

#[actor]
impl Parent {
    #[handler(SpawnAndCall)]
    fn spawn_and_call(
        &mut self,
        _m: SpawnAndCall,
        ctx: &mut Ctx<Self>,
    ) -> (Result<bool, String>, Addr<Hooked>) {
        let child = ctx.spawn(hooked()).pooled().start();
        let sent = match child.fast_send(Started) {
            Ok(started) => Ok(started),
            Err(FastSendError::Deadlock { msg: Started, .. }) => Err("deadlock".into()),
            Err(other) => Err(format!("{other}")),
        };
        (sent, child)
    }
}

fn from_a_hosted_handler(rt: Runtime) -> (Result<bool, String>, bool) {
    let system = hosted_on(rt.handle().clone());
    let parent = system.spawn(Parent).pooled().start();
    let (sent, later) = rt.block_on(async {
        let (sent, child) = parent.ask(SpawnAndCall).unwrap().await.unwrap();
        // The child started all the same.
        (sent, child.ask(Started).unwrap().await.unwrap())
    });
    system.shutdown();
    (sent, later)
}

#[test]
fn from_a_hosted_handler_it_is_refused_with_the_message_back() {
    for (kind, rt) in [
        ("current-thread", current_thread as fn() -> Runtime),
        ("multi-thread", multi_thread),
    ] {
        let got = watchdog(kind, move || from_a_hosted_handler(rt()));
        assert_eq!(got, (Err("deadlock".to_owned()), true), "{kind}");
    }
}
