// Rule: `fast_send` compiles only for a message the target has a
// `#[handler]` for, and an actor with a single handler gets the same
// "has no handler" error as one with several: the compiler is never left to
// infer the message type from the one handler and report a type mismatch.
use kaspar::prelude::*;

pub struct Ping;
pub struct Stray;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {
    let system = System::new();
    let ponger = system.spawn(Ponger).start();
    let _ = ponger.fast_send(Stray);
    let _ = ponger.fast_send_spin(Stray);
}
