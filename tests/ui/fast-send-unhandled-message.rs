// Rule: `fast_send` compiles only for a message the target has a
// `#[handler]` for; there is no runtime "unhandled message" case.
//
// The error reads "`Ponger` has no handler for `Stray`"; an actor with a
// single handler gets the same (`fast-send-unhandled-message-single-handler.rs`).
use kaspar::prelude::*;

pub struct Ping;
pub struct Pong;
pub struct Stray;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}

    #[handler(Pong)]
    fn on_pong(&mut self, _msg: Pong, _ctx: &mut Ctx<Self>) {}
}

fn main() {
    let system = System::new();
    let ponger = system.spawn(Ponger).start();
    let _ = ponger.fast_send(Stray);
}
