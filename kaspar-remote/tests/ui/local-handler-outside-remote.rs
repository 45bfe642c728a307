// Rule: `#[handler(M, local)]` keeps a handler out of a remote table; on
// an impl block that is not `#[actor(remote)]` it would mean nothing, so
// it is an error rather than ignored.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping, local)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
