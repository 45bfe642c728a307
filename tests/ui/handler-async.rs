// Rule: a handler cannot be `async`: it runs to completion under the
// actor's lock, inline on the caller's thread or on the actor's own.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    async fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
