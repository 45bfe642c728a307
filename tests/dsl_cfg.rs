//! `#[cfg]` on handlers and hooks. An attribute macro reads its item
//! before `cfg` is evaluated inside it, so `#[actor]` sees a method that
//! will be configured out; what it generates for that method (the enum's
//! variant, the dispatch arms, the `Handler` impl, the hook) carries the
//! method's `cfg` and goes with it. Before, a handler behind a disabled
//! feature failed to build: the generated enum named its message type,
//! which was configured out too, and its dispatch called a method that no
//! longer existed.
//!
//! A test build has `cfg(test)` and lacks `cfg(not(test))`: both sides of
//! a feature switch in one build.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use kaspar::prelude::*;
use kaspar::{Actor, Handler};

pub struct Here;

/// Exists only in builds that configure it in: never, here.
#[cfg(not(test))]
pub struct Gone;

/// Handled by one of two methods, whichever is configured in.
pub struct Which;

#[actor]
pub struct Gated {
    hooks: Arc<AtomicUsize>,
}

#[actor]
impl Gated {
    #[handler(Here)]
    fn here(&mut self, _: Here, _ctx: &mut Ctx<Self>) -> &'static str {
        "here"
    }

    #[cfg(not(test))]
    #[handler(Gone)]
    fn gone(&mut self, _: Gone, _ctx: &mut Ctx<Self>) -> &'static str {
        "gone"
    }

    #[cfg(test)]
    #[handler(Which)]
    fn which_in(&mut self, _: Which, _ctx: &mut Ctx<Self>) -> &'static str {
        "configured in"
    }

    #[cfg(not(test))]
    #[handler(Which)]
    fn which_out(&mut self, _: Which, _ctx: &mut Ctx<Self>) -> &'static str {
        "configured out"
    }

    /// Would count 100 if it ran.
    #[cfg(not(test))]
    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {
        self.hooks.fetch_add(100, Ordering::SeqCst);
    }

    /// The other side of the switch: counts 10.
    #[cfg(test)]
    #[started]
    fn started_in_tests(&mut self, _ctx: &mut Ctx<Self>) {
        self.hooks.fetch_add(10, Ordering::SeqCst);
    }

    #[cfg(test)]
    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {
        self.hooks.fetch_add(1, Ordering::SeqCst);
    }
}

/// An actor whose one handler is configured out: it has no messages.
#[actor]
pub struct Empty;

#[actor]
impl Empty {
    #[cfg(not(test))]
    #[handler(Here)]
    fn here(&mut self, _: Here, _ctx: &mut Ctx<Self>) {}
}

#[test]
fn configured_in_handlers_run_and_configured_out_ones_are_not_there() {
    let hooks = Arc::new(AtomicUsize::new(0));
    let system = System::new();
    let gated = system
        .spawn(Gated {
            hooks: hooks.clone(),
        })
        .start();
    assert_eq!(gated.ask(Here).unwrap().wait().unwrap(), "here");
    assert_eq!(gated.ask(Which).unwrap().wait().unwrap(), "configured in");
    // Classes are places in the impl block, as written: a configured-out
    // handler keeps its place, so the classes of the others do not move
    // with a feature switch.
    assert_eq!(<Gated as Handler<Here>>::CLASS.index(), 0);
    assert_eq!(<Gated as Handler<Which>>::CLASS.index(), 2);
    assert_eq!(Gated::CLASSES.len(), 4);
    // The enum has one variant per configured-in handler, no more: this
    // match, with no wildcard, would not build with a third.
    let variant = |m: &GatedMsg| match m {
        GatedMsg::Here(..) => "Here",
        GatedMsg::WhichIn(..) => "WhichIn",
    };
    let _ = variant;
    gated.stop();
    system.shutdown();
    // The configured-in started hook and the stopped hook ran, once each;
    // the configured-out started hook did not.
    assert_eq!(hooks.load(Ordering::SeqCst), 11);
}

/// A group member may carry a `cfg_attr` (a doc, a lint level); only a
/// `cfg` of its own is refused (`tests/ui/group-member-under-cfg.rs`).
#[group]
pub struct Desk {
    #[cfg_attr(test, doc = "Answers `Here` and `Which`.")]
    pub gated: Addr<Gated>,
}

#[test]
fn a_group_member_may_carry_a_cfg_attr() {
    let hooks = Arc::new(AtomicUsize::new(0));
    let system = System::new();
    let desk = system
        .spawn_group::<Desk>((Gated {
            hooks: hooks.clone(),
        },))
        .start();
    assert_eq!(desk.gated.ask(Here).unwrap().wait().unwrap(), "here");
    system.shutdown();
    assert_eq!(hooks.load(Ordering::SeqCst), 11);
}

#[test]
fn an_actor_whose_only_handler_is_configured_out_has_no_messages() {
    let system = System::new();
    let empty = system.spawn(Empty).start();
    let none: fn(EmptyMsg) -> ! = |m| match m {};
    let _ = none;
    empty.stop();
    let report = system.shutdown();
    assert!(
        report.failed.is_empty() && report.unfinished.is_empty(),
        "{report:?}"
    );
}
