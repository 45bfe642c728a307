// Rule: `#[actor(policy = ..)]` takes one of the cycle policies by name,
// `conservative` or `permissive`; anything else is an error at the value.
use kaspar::prelude::*;

pub struct Ping;

#[actor(policy = relaxed)]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
