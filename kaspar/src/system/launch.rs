//! How a [`Spawn`] becomes a running actor: on a thread of its own,
//! started by the thread start that groups share (it applies a placement
//! and reports it), or on the system's pool; and the vacant cells,
//! instances and names that spawns and `System::prepare` make.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::actor::addr::Addr;
use crate::actor::cell::ActorCell;
use crate::actor::instance::Instance;
use crate::actor::traits::{Actor, ActorConfig};
use crate::base::ids::Target;
use crate::base::sync::parking;
use crate::delivery::run_loop::{self, Init, LoopConfig};
use crate::guard::chain::CyclePolicy;
use crate::guard::lock::ActorLock;
use crate::mailbox::inbox::Inbox;
use crate::mailbox::{Mailbox, MailboxKind};
use crate::system::placement::{Placement, PlacementOutcome};
use crate::system::spawn::Spawn;
use crate::system::{Done, DoneOnExit, Role, Running, SystemInner};

/// A started thread: its handle, its exit flag, and where it reports how
/// its placement went (before it runs any hook or handler).
pub(super) struct Spawned {
    pub(super) thread: JoinHandle<()>,
    pub(super) done: Arc<Done>,
    pub(super) placed: mpsc::Receiver<PlacementOutcome>,
}

/// Spawns an actor or group thread that applies `placement`, reports the
/// outcome, runs `body`, and reports its exit to `done`.
pub(super) fn spawn_thread(
    name: String,
    placement: Placement,
    body: impl FnOnce() + Send + 'static,
) -> Spawned {
    let done = Arc::new(Done::default());
    let on_exit = DoneOnExit(Arc::clone(&done));
    let (report, placed) = mpsc::sync_channel(1);
    let thread = std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let _on_exit = on_exit;
            // Before anything can contend: the first lock this thread finds
            // taken must not allocate its parking record then.
            parking::warm();
            // The spawner may not wait for the report; that is fine.
            let _ = report.send(placement.apply_to_current_thread());
            body();
        })
        .expect("kaspar: the OS refused to spawn an actor thread");
    Spawned {
        thread,
        done,
        placed,
    }
}

/// Waits for a thread's placement report.
pub(super) fn placement_of(placed: &mpsc::Receiver<PlacementOutcome>) -> PlacementOutcome {
    // The thread sends before anything else; a closed channel means it
    // died before reporting, and nothing was applied.
    placed.recv().unwrap_or(PlacementOutcome {
        affinity: None,
        priority: None,
    })
}

/// A spawn taken apart for its start: its cell, ready for its first run
/// (the state's build for that run to do, with the lock handed over to
/// it, or the state already in), and what the start itself needs.
struct Ready<A: Actor> {
    cell: Arc<ActorCell<A>>,
    init: Init<A>,
    system: Arc<SystemInner>,
    looping: LoopConfig,
    placement: Placement,
}

impl<A: Actor> Spawn<'_, A> {
    /// The cell this spawn starts (the prepared one, or a new one the
    /// system observes), with its latency switch and supervision set.
    /// The state is built by the first run when there is a `started`
    /// hook, when the factory must run where the actor lives, or (with
    /// `home`, on an own thread) when the actor is thread-bound and its
    /// thread must record itself as home before anyone enters: the lock
    /// is then handed over to that run, so no synchronous caller gets in
    /// before the state and `started`. Otherwise the state goes in here,
    /// and the actor is open to `fast_send` as `start` returns.
    fn ready(self, home: bool) -> Ready<A> {
        let cell = match self.prepared {
            // Observed since it was prepared.
            Some(cell) => cell,
            None => {
                let cell = Arc::new(vacant_cell(
                    &self.system,
                    self.mailbox,
                    self.policy,
                    self.name,
                    false,
                ));
                self.system.observe(&cell);
                cell
            }
        };
        if self.latency {
            cell.record_latency();
        }
        if let Some(policy) = self.supervision {
            cell.sup.set(policy);
        }
        let build = if A::HAS_STARTED || self.thread_bound || (home && A::THREAD_BOUND) {
            cell.lock().hand_over();
            Some(self.build)
        } else {
            let held = cell.hold();
            cell.fill(&held, (self.build)());
            None
        };
        let init = Init {
            build,
            thread_bound: home && self.thread_bound,
            #[cfg(feature = "journal")]
            flight: self.flight,
        };
        Ready {
            cell,
            init,
            system: self.system,
            looping: self.looping,
            placement: self.placement,
        }
    }

    /// [`start`](Self::start) for a pooled actor: the cell joins the
    /// system's pool, and its first activation (its state's build and
    /// `started`, if any, then whatever is queued) is scheduled.
    #[track_caller]
    pub(super) fn launch_pooled(mut self) -> Addr<A> {
        assert!(
            !self.placed || self.system.simulated(),
            "kaspar: a pooled actor runs on the pool's workers; place them with `PoolConfig`, not `Spawn::placement`"
        );
        if !self.mailbox_chosen && self.prepared.is_none() {
            self.mailbox = MailboxKind::POOLED;
        }
        let Ready {
            cell,
            init,
            system,
            looping,
            ..
        } = self.ready(false);
        let addr = Addr::from_cell(Arc::clone(&cell));
        system.placed(cell.lock(), system.pool_thread_name(), None);
        let (pool, slot) =
            system.pool_member(Arc::clone(&cell) as Arc<dyn crate::delivery::sched::Member>);
        // After joining: a shutdown that began before has closed the
        // system first, and its `close_all` either saw this member or this
        // sees the system closed (as `register` does for a thread).
        if system.closed.load(std::sync::atomic::Ordering::SeqCst) {
            cell.inbox.close();
        }
        crate::delivery::sched::actor::attach(&cell, &pool, slot, looping.max_batch, init);
        addr
    }

    /// [`start`](Self::start) on a thread of the actor's own, placed as
    /// asked; the receiver hears how the placement went.
    pub(super) fn launch(self) -> (Addr<A>, mpsc::Receiver<PlacementOutcome>) {
        let Ready {
            cell,
            init,
            system,
            looping,
            placement,
        } = self.ready(true);
        // Its first refusal (a `fast_send_void` that finds it busy, say)
        // must not allocate, however late it comes.
        cell.stats.shared.make_rare();
        let addr = Addr::from_cell(Arc::clone(&cell));
        let thread_cell = Arc::clone(&cell);
        let target = cell.target();
        let thread = thread_name(&target);
        system.placed(cell.lock(), &thread, None);
        let spawned = spawn_thread(thread, placement, move || {
            run_loop::run(thread_cell, looping, init)
        });
        let close_cell = Arc::clone(&cell);
        system.register(Running {
            target,
            role: Role::Actor,
            close: Box::new(move |_| close_cell.inbox.close()),
            thread: spawned.thread,
            done: spawned.done,
        });
        (addr, spawned.placed)
    }
}

/// A standalone actor's cell without its state: the address exists, sends
/// queue up, and the state comes with the actor's thread. `late`: it may be
/// named after it is made (a prepared actor).
pub(crate) fn vacant_cell<A: Actor>(
    system: &Arc<SystemInner>,
    mailbox: MailboxKind,
    policy: CyclePolicy,
    name: Option<Arc<str>>,
    late: bool,
) -> ActorCell<A> {
    ActorCell::vacant(
        Arc::new(ActorLock::new(false)),
        policy,
        Inbox::Own(Mailbox::new(mailbox)),
        system.config.clock.clone(),
        system.dead.clone(),
        instance_of(system, name, late),
    )
}

/// What a cell of `system` knows of itself: `name`, and a weak handle on
/// `system` for its handlers' `Ctx::spawn`. `late`: it may be named
/// later (a prepared actor, a group).
pub(crate) fn instance_of(
    system: &Arc<SystemInner>,
    name: Option<Arc<str>>,
    late: bool,
) -> Instance {
    let strong: Arc<dyn std::any::Any + Send + Sync> = system.clone();
    let system = Arc::downgrade(&strong);
    if late {
        Instance::late(name, system)
    } else {
        Instance::new(name, system)
    }
}

/// Names the prepared actor `cell` (not started yet) `name`.
///
/// # Panics
///
/// If it has a name already.
#[track_caller]
pub(crate) fn name_prepared<A: Actor>(cell: &ActorCell<A>, name: Arc<str>) {
    if let Err(had) = cell.instance.set_name(name) {
        panic!(
            "kaspar: the prepared actor {} is named {had:?} already; an actor is given one name",
            <A as ActorConfig>::NAME
        );
    }
}

/// An instance name as given to `name`, checked.
#[track_caller]
pub(crate) fn checked_name(name: Arc<str>) -> Arc<str> {
    assert!(!name.is_empty(), "kaspar: an actor's name cannot be empty");
    assert!(
        !name.contains('\0'),
        "kaspar: an actor's name cannot hold a NUL character (it names a thread): {name:?}"
    );
    name
}

/// `kaspar:` and the instance name, or the type name and id.
fn thread_name(target: &Target) -> String {
    match &target.instance {
        Some(name) => format!("kaspar:{name}"),
        None => format!("kaspar:{}{:?}", target.name, target.id),
    }
}
