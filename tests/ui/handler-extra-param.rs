// Rule: a handler takes exactly the message and the context. It cannot ask
// the runtime for anything else (a sender, a thread, a delivery mode).
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>, _sync: bool) {}
}

fn main() {}
