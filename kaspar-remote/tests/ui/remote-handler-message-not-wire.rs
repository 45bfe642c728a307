// Rule: every handler of an `#[actor(remote)]` impl block is reachable
// remotely, so its message must be `Wire`; the error points at the
// message and says how to keep a handler local.
use kaspar::prelude::*;

pub struct Flush;

#[actor]
pub struct Desk;

#[actor(remote)]
impl Desk {
    #[handler(Flush)]
    fn on_flush(&mut self, _f: Flush, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
