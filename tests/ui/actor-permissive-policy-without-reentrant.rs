// Rule: an actor's own cycle policy only matters if the actor can be
// re-entered, which needs `#[actor(reentrant)]`; `policy = permissive` on an
// actor that is not reentrant would silently do nothing, so it is an error.
use kaspar::prelude::*;

pub struct Ping;

#[actor(policy = permissive)]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
