// Rule: `#[actor]` on an impl block needs `#[actor]` on the struct too: the
// struct attribute declares the actor and carries its options.
use kaspar::prelude::*;

pub struct Ping;

pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
