//! Spawning from a handler: `Ctx::spawn`, `Ctx::spawn_with` and
//! `Ctx::spawn_group`. They live
//! here, with the builders they return, because the actor layer (where
//! `Ctx` is) sits below the system layer and cannot name it; the cell
//! holds its system type-erased, and this is where it is recovered.

use std::sync::Arc;

use crate::actor::ctx::Ctx;
use crate::actor::instance::Instance;
use crate::actor::traits::Actor;
use crate::group::GroupSpec;
use crate::system::group_spawn::GroupSpawn;
use crate::system::spawn::Spawn;
use crate::system::SystemInner;

impl<A: Actor> Ctx<'_, A> {
    /// Prepares `actor` to run on its own thread in the [`System`] this
    /// actor runs in, exactly as [`System::spawn`] does: set options on the
    /// result (`name`, `mailbox`, `supervise`, ...), then
    /// [`start`](Spawn::start) it. The new actor is the system's like any
    /// other: [`System::shutdown`] stops it (before the actors spawned
    /// earlier, so before this one) and lists it in its report.
    ///
    /// If the system is shutting down or shut down, the actor starts
    /// closed: it runs its hooks and every send to it returns `Closed`.
    /// So it does for an actor that no system started (one in a
    /// [`Simulation`](crate::Simulation)): there is no system to start in,
    /// and nothing waits for its thread.
    ///
    /// ```
    /// use kaspar::prelude::*;
    ///
    /// pub struct Square(pub u64);
    /// pub struct Open(pub u64);
    ///
    /// #[actor]
    /// pub struct Worker;
    /// #[actor]
    /// impl Worker {
    ///     #[handler(Square)]
    ///     fn square(&mut self, Square(n): Square, _c: &mut Ctx<Self>) -> u64 { n * n }
    /// }
    ///
    /// #[actor]
    /// pub struct Desk { workers: Vec<Addr<Worker>> }
    /// #[actor]
    /// impl Desk {
    ///     #[handler(Open)]
    ///     fn open(&mut self, Open(n): Open, ctx: &mut Ctx<Self>) -> u64 {
    ///         let worker = ctx.spawn(Worker).name(format!("worker-{n}")).start();
    ///         let squared = worker.fast_send(Square(n)).unwrap();
    ///         self.workers.push(worker);
    ///         squared
    ///     }
    /// }
    ///
    /// let system = System::new();
    /// let desk = system.spawn(Desk { workers: Vec::new() }).start();
    /// assert_eq!(desk.ask(Open(7)).unwrap().wait().unwrap(), 49);
    /// let report = system.shutdown();
    /// assert_eq!(report.stopped.len(), 2); // the worker, then the desk
    /// assert_eq!(report.stopped[0].instance.as_deref(), Some("worker-7"));
    /// ```
    ///
    /// [`System`]: crate::System
    /// [`System::spawn`]: crate::System::spawn
    /// [`System::shutdown`]: crate::System::shutdown
    pub fn spawn<B: Actor + Send>(&self, actor: B) -> Spawn<'static, B> {
        Spawn::of_value(system_of(self.instance()), actor, None)
    }

    /// Like [`spawn`](Self::spawn), with the state built by `factory` on
    /// the new actor's own thread, as
    /// [`System::spawn_with`](crate::System::spawn_with) does (for a
    /// `#[actor(thread_bound)]` state that is not `Send`).
    pub fn spawn_with<B: Actor>(
        &self,
        factory: impl FnOnce() -> B + Send + 'static,
    ) -> Spawn<'static, B> {
        Spawn::of_factory(system_of(self.instance()), factory, None)
    }

    /// Prepares a group in the system this actor runs in, as
    /// [`System::spawn_group`](crate::System::spawn_group) does; see
    /// [`spawn`](Self::spawn) for what becomes of it.
    pub fn spawn_group<G: GroupSpec>(&self, members: G::Members) -> GroupSpawn<'static, G>
    where
        G::Members: Send,
    {
        GroupSpawn::of_value(system_of(self.instance()), members)
    }
}

/// The system an actor runs in, or a closed stand-in if it has none.
fn system_of(instance: &Instance) -> Arc<SystemInner> {
    instance
        .system
        .upgrade()
        .and_then(|system| system.downcast::<SystemInner>().ok())
        .unwrap_or_else(|| Arc::new(SystemInner::closed()))
}
