// Rule: a handler cannot be `unsafe` (the runtime calls it, and no caller
// upholds a contract), cannot have a `where` clause (the error points at
// the clause, not at `#[actor]`), and `#[handler()]` names no message (the
// error points at the attribute).
use kaspar::prelude::*;

pub struct Ping;
pub struct Pong;
pub struct Peng;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    unsafe fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}

    #[handler(Pong)]
    fn on_pong(&mut self, _msg: Pong, _ctx: &mut Ctx<Self>)
    where
        Self: Sized,
    {
    }

    #[handler()]
    fn on_peng(&mut self, _msg: Peng, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
