// Rule: `send` compiles only for a message the target has a `#[handler]`
// for; nothing can be queued that the actor cannot dispatch.
//
// The error reads "`Ponger` has no handler for `Stray`". When the target
// has exactly one handler, rustc instead infers the message type from that
// one impl and reports "expected `Ping`, found `Stray`" at the argument:
// the same rule, in the compiler's words. Both are shown below.
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

#[actor]
pub struct Single;

#[actor]
impl Single {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {
    let system = System::new();
    let ponger = system.spawn(Ponger).start();
    let _ = ponger.send(Stray);
    let single = system.spawn(Single).start();
    let _ = single.send(Stray);
}
