//! The pool's seam for a simulated system (feature `sim`; the simulator
//! itself is [`crate::sim`]).
//!
//! A simulated pool has no worker threads and no injector that anyone
//! drains by themselves: a schedule (a send that finds a pooled actor idle,
//! a close) puts the actor's activation on the [`Host`]'s ready list, and
//! the simulator, on its one thread, picks which ready activation runs
//! next, under its seed. The activation is the pool's own (`actor.rs`,
//! `group/pooled.rs`), run with a budget of one message, so a step is one
//! handled message and the simulator chooses between every two of them.
//!
//! A [`Scope`] makes the calling thread the simulator's: watched (see
//! `base/sim_watch.rs`), and with every blocking wait refused.

use std::rc::Rc;
use std::sync::Arc;

use super::{SchedConfig, Shared, Task};
use crate::base::ids::Target;
use crate::base::sim_watch::{self, Watch};
use crate::base::sync::Mutex;
use crate::guard::blocking::{self, BlockingHook};
use crate::guard::deadlock::WaitKind;

/// The ready list of a simulated pool: activations scheduled and not yet
/// run, in the order they were scheduled.
#[derive(Default)]
pub(crate) struct Host {
    ready: Mutex<Vec<Task>>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("ready", &self.ready.lock().len())
            .finish()
    }
}

impl Host {
    pub(crate) fn new() -> Self {
        Host::default()
    }

    /// A schedule: the activation joins the ready list.
    pub(super) fn push(&self, task: Task) {
        self.ready.lock().push(task);
    }

    /// How many activations are ready.
    pub(crate) fn len(&self) -> usize {
        self.ready.lock().len()
    }

    /// Who each ready activation runs, in list order, into `out`.
    pub(crate) fn targets(&self, out: &mut Vec<Target>) {
        out.clear();
        out.extend(self.ready.lock().iter().map(|t| t.target()));
    }

    /// Takes ready activation `i` off the list (the list keeps the
    /// others' order).
    pub(crate) fn take(&self, i: usize) -> Task {
        self.ready.lock().remove(i)
    }

    /// Runs `task` for one message (or its start, or its stop) on the
    /// calling thread; a task with more to do goes back on the list, at
    /// its end. One whose mailbox is empty now (its budget of one was
    /// spent on the last message) runs again at once, to find it empty
    /// and go idle (or, closed, to stop): that is the tail of this step,
    /// not a step of its own, so every step the simulator chooses is one
    /// that handles something.
    pub(crate) fn run(&self, task: Task) {
        let mut next = task.run(1);
        while let Some(again) = next.take() {
            if again.has_messages() {
                self.push(again);
            } else {
                next = again.run(1);
            }
        }
    }
}

/// A pool whose activations the simulator runs: no threads.
/// A simulated pool runs one message per activation, so that every
/// handled message is a step the simulator chose.
pub(crate) fn start(host: Arc<Host>) -> Arc<Shared> {
    Arc::new(Shared {
        sim: Some(host),
        ..Shared::threadless(SchedConfig {
            workers: 0,
            budget: 1,
            lifo_limit: 0,
            monitor: None,
        })
    })
}

/// While alive, the calling thread is the simulator's: it is watched by
/// `watch`, and no wait on it may block (the one thread would wait for
/// itself).
pub(crate) struct Scope {
    watch: Option<Rc<dyn Watch>>,
    hook: Option<Rc<dyn BlockingHook>>,
}

impl Scope {
    pub(crate) fn enter(watch: Rc<dyn Watch>) -> Scope {
        let watch = sim_watch::replace(Some(watch));
        let hook = blocking::replace_hook(Some(Rc::new(NoBlocking)));
        Scope { watch, hook }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        sim_watch::replace(self.watch.take());
        blocking::replace_hook(self.hook.take());
    }
}

/// The simulator's thread refuses every blocking wait: whatever it would
/// wait for can only happen on this same thread.
struct NoBlocking;

impl BlockingHook for NoBlocking {
    fn enter(&self) {}

    fn exit(&self) {}

    fn refuses(&self, _kind: WaitKind) -> bool {
        true
    }
}
