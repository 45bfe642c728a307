//! What a simulated run's steps share on its thread: the clock, the trace,
//! the fault dice, the sleeping clients. The runtime reaches it through
//! the pool's [`Watch`]; the simulated clients' futures through
//! [`Core::with`].

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::clients::Sleepers;
use super::faults::Faults;
use super::rng::Rng;
use super::trace::{Event, Trace, What};
use crate::base::clock::VirtualClock;
use crate::base::ids::Target;
use crate::base::sim_watch::Watch;

pub(crate) struct Core {
    pub(crate) clock: VirtualClock,
    pub(crate) trace: RefCell<Trace>,
    pub(crate) faults: Faults,
    pub(crate) fault_rng: RefCell<Rng>,
    pub(crate) client_rng: RefCell<Rng>,
    pub(crate) sleepers: RefCell<Sleepers>,
    /// The step being run.
    pub(crate) step: Cell<u64>,
    /// Messages handed to handlers so far (injected panics included).
    pub(crate) handled: Cell<u64>,
    /// Faults injected so far.
    pub(crate) injected: Cell<u64>,
    /// The client being run awaited a `yield_now`.
    pub(crate) yielded: Cell<bool>,
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<Core>>> = const { RefCell::new(None) };
}

impl Core {
    pub(crate) fn record(&self, what: What) {
        self.trace.borrow_mut().push(Event {
            step: self.step.get(),
            time: self.clock.now(),
            what,
        });
    }

    /// Runs `f` with the run the calling thread is inside.
    ///
    /// # Panics
    ///
    /// Outside a simulated run.
    pub(crate) fn with<R>(f: impl FnOnce(&Core) -> R) -> R {
        let core = CURRENT.with(|c| c.borrow().clone());
        let core = core.expect("kaspar::sim: used outside a simulated run (in a client, or a handler the simulator runs)");
        f(&core)
    }

    /// While alive, [`with`](Self::with) finds `core`.
    pub(crate) fn enter(core: &Rc<Core>) -> Entered {
        Entered(CURRENT.with(|c| c.borrow_mut().replace(Rc::clone(core))))
    }
}

pub(crate) struct Entered(Option<Rc<Core>>);

impl Drop for Entered {
    fn drop(&mut self) {
        CURRENT.with(|c| *c.borrow_mut() = self.0.take());
    }
}

impl Watch for Core {
    fn handling(&self, target: &Target, class: &'static str, inline: bool) -> bool {
        let n = self.handled.get();
        self.handled.set(n + 1);
        let inject = self.faults.panic_at == Some(n)
            || self.fault_rng.borrow_mut().chance(self.faults.panic_ppm);
        let actor = self.trace.borrow_mut().actor(target);
        if inject {
            self.injected.set(self.injected.get() + 1);
            self.record(What::InjectedPanic {
                actor,
                class,
                inline,
            });
        } else {
            self.record(What::Handled {
                actor,
                class,
                inline,
            });
        }
        inject
    }

    fn full(&self, target: &Target) -> bool {
        if !self.fault_rng.borrow_mut().chance(self.faults.full_ppm) {
            return false;
        }
        self.injected.set(self.injected.get() + 1);
        let actor = self.trace.borrow_mut().actor(target);
        self.record(What::InjectedFull { actor });
        true
    }
}
