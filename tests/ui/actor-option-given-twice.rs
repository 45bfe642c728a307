// Rule: an option given twice is an error at the second, not a silent
// "last one wins"; an empty name is refused too.
use kaspar::prelude::*;

pub struct Ping;

#[actor(name = "first", name = "second")]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

#[actor(name = "")]
pub struct Nameless;

#[actor]
impl Nameless {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
