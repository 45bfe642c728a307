// Rule: the message comes first, then the context; the macro names the
// misordering rather than reporting two unrelated type errors.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _ctx: &mut Ctx<Self>, _msg: Ping) {}
}

fn main() {}
