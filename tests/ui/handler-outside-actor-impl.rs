// Rule: `#[handler]` only means something inside an `#[actor]` impl block
// (the impl attribute is what collects handlers); anywhere else it is an
// error rather than a silently ignored attribute. (The second error, that
// `Ponger` does not implement `Actor`, is the same fact seen from `Ctx<Self>`:
// without `#[actor]` on the impl block, `Ponger` has no handlers at all.)
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
