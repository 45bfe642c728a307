// Rule (receiver transparency): a handler cannot read its mailbox depth,
// so it cannot behave differently under load than when idle. `Ctx` has no
// such method, under any name.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, ctx: &mut Ctx<Self>) -> usize {
        let _ = ctx.queue_depth();
        ctx.mailbox_len()
    }
}

fn main() {}
