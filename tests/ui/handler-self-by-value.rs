// Rule: a handler borrows the actor's state (`&mut self`, or `&self` on a
// reentrant actor); it cannot take `self` by value and consume the actor.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
