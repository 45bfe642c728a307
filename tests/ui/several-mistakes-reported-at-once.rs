// Rule: the macro reports every mistake in an impl block in one build, not
// just the first: here an async handler, a duplicate handler and an extra
// parameter each get their own error.
use kaspar::prelude::*;

pub struct Ping;
pub struct Pong;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    async fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}

    #[handler(Pong)]
    fn on_pong(&mut self, _msg: Pong, _ctx: &mut Ctx<Self>) {}

    #[handler(Pong)]
    fn on_pong_again(&mut self, _msg: Pong, _ctx: &mut Ctx<Self>) {}

    #[handler(Ping)]
    fn on_ping_extra(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>, _extra: u32) {}
}

fn main() {}
