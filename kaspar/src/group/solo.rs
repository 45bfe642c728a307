//! `Solo<A>`: one actor as a group of one, so a single actor can be run in
//! a [`Simulation`](crate::Simulation) (or journaled) without declaring a
//! `#[group]` for it.

use std::fmt;

use crate::actor::addr::Addr;
use crate::actor::traits::Actor;
use crate::group::{group_tap, GroupBuilder, GroupHold, GroupSpec, GroupTap};

/// A group of exactly one actor: what `#[group]` would generate for a
/// struct with one `Addr<A>` field, for any `A`.
///
/// ```
/// use kaspar::prelude::*;
/// use kaspar::{Simulation, Solo, Time};
///
/// pub struct Add(pub u64);
///
/// #[actor]
/// pub struct Sum { total: u64 }
///
/// #[actor]
/// impl Sum {
///     #[handler(Add)]
///     fn add(&mut self, msg: Add, _ctx: &mut Ctx<Self>) -> u64 {
///         self.total += msg.0;
///         self.total
///     }
/// }
///
/// let mut sim = Simulation::<Solo<Sum>>::new((Sum { total: 0 },));
/// let sum = sim.group().actor.clone();
/// sim.deliver(Time::from_nanos(10), &sum, Add(2)).unwrap();
/// sim.deliver(Time::from_nanos(20), &sum, Add(3)).unwrap();
/// assert_eq!(sum.fast_send(Add(0)).unwrap(), 5);
/// sim.finish();
/// ```
pub struct Solo<A: Actor> {
    /// The one member.
    pub actor: Addr<A>,
}

impl<A: Actor> fmt::Debug for Solo<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Solo").field("actor", &self.actor).finish()
    }
}

impl<A: Actor> GroupSpec for Solo<A> {
    // The member's own enum is the group's: nothing to wrap.
    type Msg = A::Msg;
    type Members = (A,);
    const NAME: &'static str = <A as crate::ActorConfig>::NAME;

    fn reserve(builder: &mut GroupBuilder<'_, Self>) -> Self {
        Solo {
            actor: builder.member(|m| m, |g| g),
        }
    }

    fn fill(&self, members: Self::Members, held: &GroupHold<'_>) {
        held.fill(&self.actor, members.0);
    }

    fn duplicate(&self) -> Self {
        Solo {
            actor: self.actor.clone(),
        }
    }

    #[inline]
    fn dispatch(&self, msg: Self::Msg, held: &GroupHold<'_>) {
        held.serve(&self.actor, msg);
    }

    fn started(&self, held: &GroupHold<'_>) {
        held.started(&self.actor);
    }

    fn stopped(&self, held: &GroupHold<'_>) {
        held.stopped(&self.actor);
    }

    fn tap(&self) -> &GroupTap {
        group_tap::<Self, A>(&self.actor)
    }
}
