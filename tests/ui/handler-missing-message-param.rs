// Rule: a handler takes the message it handles as its first parameter
// after `self`; leaving it out is an error.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
