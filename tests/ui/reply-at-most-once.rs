// Rule: a handler replies at most once, by construction. The reply is the
// handler's return value; there is no `ctx.reply(..)` (or `respond`) that
// could be called twice, or called in addition to returning.
use kaspar::prelude::*;

pub struct Ping;
pub struct Pong(pub u32);

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, ctx: &mut Ctx<Self>) -> Pong {
        ctx.reply(Pong(1));
        ctx.respond(Pong(2));
        Pong(3)
    }
}

fn main() {}
