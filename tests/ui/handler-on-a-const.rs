// Rule: `#[handler(..)]` on something other than a method of an `#[actor]`
// impl block (here a const) says it goes on a method, at the attribute,
// rather than asking for an `#[actor]` block that is already there.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    const LIMIT: u32 = 3;

    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
