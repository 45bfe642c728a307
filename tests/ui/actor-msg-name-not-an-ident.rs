// Rule: `msg` on the impl block takes an identifier; a string (or a path)
// is one error at the value, and the handlers are still collected, so the
// spawn and the send raise no further errors.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor(msg = "PongerMessages")]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

#[actor]
pub struct Twice;

#[actor(msg = TwiceA, msg = TwiceB)]
impl Twice {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {
    let system = System::new();
    let ponger = system.spawn(Ponger).start();
    let _ = ponger.fast_send(Ping);
    let twice = system.spawn(Twice).start();
    let _ = twice.fast_send(Ping);
}
