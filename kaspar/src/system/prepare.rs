//! Addresses before actors: [`Prepared`], for wiring actors that need each
//! other's addresses in their state, so no wiring message exists.

use std::fmt;
use std::sync::Arc;

use crate::actor::addr::Addr;
use crate::actor::cell::ActorCell;
use crate::actor::letters::abandon_unstarted;
use crate::actor::traits::{Actor, ActorConfig};
use crate::guard::chain;
use crate::guard::lock::Pledge;
use crate::mailbox::MailboxKind;
use crate::system::launch::{checked_name, name_prepared, vacant_cell};
use crate::system::spawn::Spawn;
use crate::system::System;

/// An actor's address, handed out before the actor exists.
///
/// [`System::prepare`] makes the mailbox and the address; the state comes
/// later, with [`spawn`](Prepared::spawn) or
/// [`spawn_with`](Prepared::spawn_with). Meanwhile:
///
/// * `send`, `ask` and `request` queue up, and are handled in order once
///   the actor starts (after its `#[started]` hook);
/// * a synchronous delivery is refused with
///   [`FastSendError::NotStarted`](crate::FastSendError::NotStarted), which
///   hands the message back (`fast_send_void` queues it instead).
///
/// Dropping a `Prepared` without spawning stops the actor: its queued
/// messages go to dead letters (pending asks resolve with `Dropped`).
///
/// A `Prepared` stays on the thread that made it (it is not `Send`): that
/// thread is the one that starts the actor, so its queue waits for that
/// thread, and an `ask` to the prepared actor waited on there is refused
/// with [`AskError::Deadlock`](crate::AskError::Deadlock) instead of
/// waiting for a start that can only come after the wait.
///
/// ```
/// use kaspar::prelude::*;
///
/// pub struct Order(pub u64);
/// pub struct Fill(pub u64);
///
/// #[actor]
/// pub struct Gateway { risk: Addr<Risk> }
/// #[actor]
/// impl Gateway {
///     #[handler(Order)]
///     fn order(&mut self, o: Order, _c: &mut Ctx<Self>) {
///         self.risk.send(Fill(o.0)).unwrap();
///     }
/// }
///
/// #[actor]
/// pub struct Risk { gateway: Addr<Gateway>, filled: u64 }
/// #[actor]
/// impl Risk {
///     #[handler(Fill)]
///     fn fill(&mut self, f: Fill, _c: &mut Ctx<Self>) { self.filled += f.0; }
///     #[handler(u8)]
///     fn filled(&mut self, _q: u8, _c: &mut Ctx<Self>) -> u64 { self.filled }
/// }
///
/// let system = System::new();
/// // Each needs the other's address: prepare one, build both, start both.
/// let risk = system.prepare::<Risk>();
/// let gateway = system.spawn(Gateway { risk: risk.addr() }).start();
/// let risk = risk.spawn(Risk { gateway: gateway.clone(), filled: 0 }).start();
/// gateway.fast_send(Order(7)).unwrap();
/// assert_eq!(risk.ask(0u8).unwrap().wait().unwrap(), 7);
/// system.shutdown();
/// ```
#[must_use = "a prepared actor that is never spawned stops, and its queued messages go to dead letters"]
pub struct Prepared<'s, A: Actor> {
    system: &'s System,
    /// `Some` until spawned.
    cell: Option<Arc<ActorCell<A>>>,
    /// Until spawned: this thread is the one the actor's queue waits for.
    /// (Which also keeps a `Prepared` on the thread that made it.)
    pledge: Option<Pledge>,
}

impl<A: Actor> fmt::Debug for Prepared<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prepared")
            .field("actor", &<A as ActorConfig>::NAME)
            .finish()
    }
}

impl<'s, A: Actor> Prepared<'s, A> {
    pub(crate) fn new(system: &'s System, mailbox: MailboxKind) -> Self {
        let policy = A::POLICY.unwrap_or(system.config().policy);
        // Named later, if at all (`Prepared::name`).
        let cell = Arc::new(vacant_cell(&system.inner, mailbox, policy, None, true));
        system.inner.observe(&cell);
        let pledge = Pledge::new(cell.lock(), chain::thread_token());
        Prepared {
            system,
            cell: Some(cell),
            pledge: Some(pledge),
        }
    }

    fn cell(&self) -> &Arc<ActorCell<A>> {
        self.cell
            .as_ref()
            .expect("kaspar: a Prepared has its cell until spawned")
    }

    /// The actor's address, valid before and after it starts.
    pub fn addr(&self) -> Addr<A> {
        Addr::from_cell(Arc::clone(self.cell()))
    }

    /// The actor's instance name, as [`Spawn::name`] gives it (errors,
    /// dead letters, stats, its thread, the
    /// [`ShutdownReport`](crate::ShutdownReport)), before it starts. Name
    /// it before handing its address out, or what was made from the
    /// address until now (an error's [`Target`](crate::Target), a dead
    /// letter) names it by type and id alone; everything from now on names
    /// it by `name`. (`Spawn::name` on the spawn does the same.)
    ///
    /// ```
    /// use kaspar::prelude::*;
    ///
    /// #[actor]
    /// pub struct Risk;
    /// #[actor]
    /// impl Risk {
    ///     #[handler(u32)]
    ///     fn check(&mut self, _o: u32, _c: &mut Ctx<Self>) {}
    /// }
    ///
    /// let system = System::new();
    /// let risk = system.prepare::<Risk>().name("risk-eu");
    /// let addr = risk.addr();
    /// let err = addr.fast_send(1u32).unwrap_err(); // not started yet
    /// assert_eq!(
    ///     err.to_string(),
    ///     format!("risk-eu(Risk{:?}) is prepared but not started; message handed back", addr.id())
    /// );
    /// let addr = risk.spawn(Risk).start();
    /// assert_eq!(addr.target().instance.as_deref(), Some("risk-eu"));
    /// system.shutdown();
    /// ```
    ///
    /// # Panics
    ///
    /// If `name` is empty or holds a NUL character, and if the actor was
    /// named already: an actor is given one name.
    #[track_caller]
    pub fn name(self, name: impl Into<Arc<str>>) -> Self {
        name_prepared::<A>(self.cell(), checked_name(name.into()));
        self
    }

    /// The actor's state, moved to its thread; set options on the result and
    /// [`start`](Spawn::start) it. (Its mailbox and cycle policy were fixed
    /// by [`System::prepare`]; setting them again panics.)
    pub fn spawn(mut self, actor: A) -> Spawn<'s, A>
    where
        A: Send,
    {
        let cell = self.cell.take().expect("spawned once");
        drop(self.pledge.take());
        Spawn::of_value(Arc::clone(&self.system.inner), actor, Some(cell))
    }

    /// Like [`System::spawn_with`]: the state is built by `factory` on the
    /// actor's own thread.
    pub fn spawn_with(mut self, factory: impl FnOnce() -> A + Send + 'static) -> Spawn<'s, A> {
        let cell = self.cell.take().expect("spawned once");
        drop(self.pledge.take());
        Spawn::of_factory(Arc::clone(&self.system.inner), factory, Some(cell))
    }
}

impl<A: Actor> Drop for Prepared<'_, A> {
    fn drop(&mut self) {
        if let Some(cell) = self.cell.take() {
            // Not started, and never will be: the queue waits for nobody.
            drop(self.pledge.take());
            abandon_unstarted(&cell);
        }
    }
}

impl System {
    /// An address for an actor of type `A` that does not exist yet, with
    /// the mailbox `#[actor(mailbox = ...)]` declares or the system's
    /// default; see [`Prepared`].
    pub fn prepare<A: Actor>(&self) -> Prepared<'_, A> {
        Prepared::new(self, A::MAILBOX.unwrap_or(self.config().mailbox))
    }

    /// [`prepare`](Self::prepare) with the mailbox `kind`.
    pub fn prepare_with<A: Actor>(&self, kind: MailboxKind) -> Prepared<'_, A> {
        Prepared::new(self, kind)
    }
}
