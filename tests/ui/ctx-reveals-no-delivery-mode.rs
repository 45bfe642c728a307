// Rule (receiver transparency): a handler cannot learn how it was reached.
// `Ctx` is one type with the same methods whether the message was
// `fast_send` inline on the caller's thread or dequeued on the actor's own;
// it has no method that reveals the delivery mode or the thread's role.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, ctx: &mut Ctx<Self>) -> bool {
        let _ = ctx.mode();
        let _ = ctx.delivery();
        let _ = ctx.is_inline();
        ctx.is_sync()
    }
}

fn main() {}
