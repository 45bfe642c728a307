// Rule: each message type has exactly one handler per actor; a second
// `#[handler(M)]` for the same `M` is rejected.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}

    #[handler(Ping)]
    fn on_ping_again(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
